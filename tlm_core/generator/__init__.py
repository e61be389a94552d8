"""Constrained decoding: the TLM fills in a task's decisions under a legality mask (see generator.py).

Pipeline step 5 of 8, after tlm_core.language: tlm_core.program turns its decisions into a program next.
"""

from .beam import PathOracle, beam_search
from .decode import Policy, decode_one
from .generator import Generator
from .record import Generation, Step
from .trie import point_trie, sketch_trie

__all__ = [
    "Generation",
    "Generator",
    "PathOracle",
    "Policy",
    "Step",
    "beam_search",
    "decode_one",
    "point_trie",
    "sketch_trie",
]
