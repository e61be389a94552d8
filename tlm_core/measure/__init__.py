"""Measurement: build scheduled programs, run them in isolated workers, check them, time them."""

from tlm_core.measure.measurer import Measurer
from tlm_core.measure.result import MeasureResult

__all__ = ["MeasureResult", "Measurer"]
