"""Measurement: build scheduled programs, run them in isolated workers, check them, time them.

Pipeline step 7 of 8, after tlm_core.program: tlm_core.compile builds the whole model from the chosen programs.
"""

from tlm_core.measure.measurer import Measurer
from tlm_core.measure.result import MeasureResult
from tlm_core.measure.screen import SCREEN, Screened, fastest_again

__all__ = ["SCREEN", "MeasureResult", "Measurer", "Screened", "fastest_again"]
