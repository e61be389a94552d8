"""Records: every measured program, in MetaSchedule's JSONDatabase format.

Beside the pipeline: what tlm_core.measure timed (step 7), kept for search, datasets, compile and compare.
"""

from tlm_core.records.store import FAILED_RUN_SECS, Record, RecordStore

__all__ = ["FAILED_RUN_SECS", "Record", "RecordStore"]
