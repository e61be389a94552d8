"""Records: every measured program, in MetaSchedule's JSONDatabase format."""

from tlm_core.records.store import FAILED_RUN_SECS, Record, RecordStore

__all__ = ["FAILED_RUN_SECS", "Record", "RecordStore"]
