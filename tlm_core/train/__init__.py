"""Training the TLM: pre-training on sampled sentences, fine-tuning on the best measured programs.

Beside the pipeline: tlm_core.dataset's data in, the checkpoint tlm_core.generator decodes with (step 5) out.

write_corpus(CORPUS_MODELS, "corpus.jsonl", per_task=48)         # random legal sentences, no measurement
pretrain(["corpus.jsonl"], "ckpt/", TrainSettings(steps=1500))   # resumable; log.jsonl in the folder
finetune(measured_examples(["data/cpu-znver5"])[0], "ft/", settings, init_from="ckpt/")
write_teacher_corpus("teacher.jsonl", ["zoo"], VALIDATION_MODELS)  # the heuristic's programs, no measurement
run_rounds(tasks, target, "out/rounds", "assets/tlm-small", 3, AdaptSettings())  # generate -> measure -> fine-tune
(the model splits: tlm_core.dataset.splits)
"""

from .corpus import random_sentences, read_corpus, write_corpus
from .data import Example, batches, decision_example, lm_example
from .finetune import finetune
from .loop import LOG_FILE, TrainSettings, train
from .measured import measured_examples, merged_programs
from .pretrain import pretrain
from .rounds import pack_rounds, run_rounds
from .teacher import teacher_examples, write_teacher_corpus

__all__ = [
    "LOG_FILE",
    "Example",
    "TrainSettings",
    "batches",
    "decision_example",
    "finetune",
    "lm_example",
    "measured_examples",
    "merged_programs",
    "pack_rounds",
    "pretrain",
    "random_sentences",
    "read_corpus",
    "run_rounds",
    "teacher_examples",
    "train",
    "write_corpus",
    "write_teacher_corpus",
]
