"""What a generation produced, and every step of it, for the GUI and the CLI."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ..language import Sentence
from ..space import Decision, decision_to_json


@dataclass
class Step:
    """One generated token: a choice of the model, a token the mask left no alternative to, or a token of a
    decision the caller forced. Context tokens (written before each decision, see tlm_core.language) are
    given, not generated: they have no step, but they are in the sentence at the positions in between."""

    position: int  # index of the token in the sentence
    point: int | None  # decision point index; None for the sketch choice and the end
    token: str  # the chosen token
    prob: float  # its probability after masking (temperature 1)
    top: list[tuple[str, float]]  # the most likely legal tokens, after masking (temperature 1)
    num_legal: int  # tokens the mask allowed here
    num_masked: int  # tokens the mask removed (vocabulary - legal)
    entropy: float  # of the masked distribution, in nats (0 when only one token is legal)
    forced: bool = False  # no choice: one legal token, or the decision was forced by the caller

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Generation:
    task_id: str
    sketch_index: int
    decisions: list[Decision]
    sentence: Sentence
    steps: list[Step] = field(repr=False)
    logprob: float  # sum of the chosen tokens' masked log-probabilities (temperature 1)
    seconds: float  # wall time of this generation (replay included; a sample forked from a shared prompt: after it)
    model_seconds: float  # of which forward passes of the model
    method: str = "greedy"  # greedy | sample | beam | override

    @property
    def key(self) -> tuple:
        """What makes two candidates the same program."""
        return (self.sketch_index, tuple(self.decisions))

    def to_dict(self, steps: bool = False) -> dict[str, Any]:
        out = {
            "task_id": self.task_id,
            "sketch": self.sketch_index,
            "decisions": [decision_to_json(d) for d in self.decisions],
            "sentence": self.sentence.text,
            "prompt_tokens": self.sentence.prompt_len,
            "tokens": len(self.sentence.tokens),
            "logprob": self.logprob,
            "seconds": self.seconds,
            "model_seconds": self.model_seconds,
            "method": self.method,
        }
        if steps:
            out["steps"] = [s.to_dict() for s in self.steps]
        return out
