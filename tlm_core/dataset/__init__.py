"""Data for the TLM: measured random programs per task, resumable collection, export for training.

Beside the pipeline: space -> program -> measure over many tasks, and the model splits; tlm_core.train reads it.

directory, stats = collect(["resnet50", "bert"], "data/collect", per_task=128)   # local or --rpc
rows = export_rows(directory)            # one row per distinct program: task, sketch, decisions, latency
pack(directory, "data/cpu-znver5")      # compressed copy for the repository
"""

from .catalog import Catalog, CatalogTask
from .collect import Collector, CollectStats, Searcher, Source, collect_tasks, sample_seed
from .collection import collect, target_dir_name
from .export import export_rows, pack, read_rows, stats, unpack, write_rows
from .splits import CORPUS_MODELS, TEST_MODELS, TRAIN_MODELS, VALIDATION_MODELS
from .variants import TRAIN_VARIANTS, Variant, variants_for

__all__ = [
    "CORPUS_MODELS",
    "TEST_MODELS",
    "TRAIN_MODELS",
    "VALIDATION_MODELS",
    "TRAIN_VARIANTS",
    "Catalog",
    "CatalogTask",
    "CollectStats",
    "Collector",
    "Searcher",
    "Source",
    "Variant",
    "collect",
    "collect_tasks",
    "export_rows",
    "pack",
    "read_rows",
    "sample_seed",
    "stats",
    "target_dir_name",
    "unpack",
    "variants_for",
    "write_rows",
]
