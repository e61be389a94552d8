"""The error for a decision vector that does not describe a legal program."""

from __future__ import annotations


class InvalidDecisions(ValueError):
    """A decision vector is illegal for its sketch, or the postprocessors reject the program it gives.

    `index` is the offending decision's position (None when no single decision is to blame, e.g. a
    postprocessor rejected the program); `reason` says why in words.
    """

    def __init__(self, index: int | None, reason: str):
        super().__init__(reason)
        self.index = index
        self.reason = reason
