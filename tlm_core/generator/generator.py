"""The Generator: a TLM writes every decision of a task's space, always legally.

gen = Generator.from_checkpoint("assets/tlm-small")          # or Generator(new_model(preset("tiny")))
best = gen.greedy(space)                                     # deterministic
cands = gen.candidates(space, 10)                            # best-of-k: greedy, then beam search's most likely
samples = gen.generate(space, candidates=10, temperature=1.0)  # k distinct samples
again = gen.override(space, best, index=2, value=(4, 8, 1, 4)) # force decision 2, re-decode the rest

Sketch choice: the model picks the sketch itself (token s<i> right after the prompt, masked to the task's
sketches), so greedy decoding gives one program per task and candidates may come from different sketches.
"""

from __future__ import annotations

from pathlib import Path

import torch

from ..language import Prompt, hardware_differences, hardware_of, hardware_tokens, make_prompt
from ..language.operator import blocks_of
from ..language.signature import task_signature
from ..model.learnt import novelty
from ..partition.task import Task
from ..space import Decision, Space
from .beam import beam_search
from .decode import Policy, decode_one, prompt_stream
from .lm import TokenStream, torch_threads, warm_up
from .record import Generation


class Generator:
    def __init__(self, model, threads: int | None = 1, wide_threads: int | None = 2) -> None:
        """threads: torch intra-op threads while generating (None: leave torch's setting alone);
        wide_threads: for feeds of >= 8 tokens (the prompt, most decision contexts), whose matmuls split well
        over cores (greedy per task on the 2-core Zen 4: median 42 ms with 2 here, 48 ms with 1)."""
        self.model = model.eval()
        self.threads = threads
        self.wide_threads = wide_threads
        self.hardware: list[str] = []  # hardware prompts it was trained on (train_state.json); [] = unknown
        self.learnt: dict | None = None  # the kinds, layouts and sizes of its training tasks (learnt.json)

    def prompt(self, space: Space) -> Prompt:
        """The space's prompt as this model reads it (a CPU it never learnt named "cpu?" where it learnt that)."""
        return make_prompt(space, trained=self.hardware)

    def _stream(self, prompt: Prompt) -> TokenStream:
        return prompt_stream(self.model, prompt, self.wide_threads)

    @classmethod
    def from_checkpoint(cls, directory: str | Path, threads: int | None = 1, wide_threads: int | None = 2) -> Generator:
        from ..model import load_checkpoint, train_state
        from ..model.learnt import load_learnt

        gen = cls(load_checkpoint(directory), threads, wide_threads)
        gen.hardware = list(train_state(directory).get("hardware", []))
        gen.learnt = load_learnt(directory)
        gen.warm_up()
        return gen

    def warm_up(self) -> None:
        """Prepares the model for generating under this generator's thread settings (from_checkpoint does):
        the first generation in a process then runs about as fast as later ones."""
        warm_up(self.model, self.threads, self.wide_threads)

    def unseen_hardware(self, space: Space) -> str | None:
        """A warning when the space's target is not hardware this model was trained on (None: it is, or the
        checkpoint does not say), naming what differs from the nearest trained hardware: the prompt is then one
        it never saw, so its programs (greedy ones too) may change, and they are untested guesses."""
        here = hardware_of(hardware_tokens(space.target, self.hardware))
        if not self.hardware or here in self.hardware:
            return None
        diffs = min((hardware_differences(h, here) for h in self.hardware), key=len)
        what = "; ".join(diffs) or here  # (fields alike, spelled differently: show the whole prompt)
        if "cpu?" in here.split() and "cpu?" not in hardware_tokens(space.target):
            what += " (it never learnt this CPU's name and reads it as cpu?, by its numbers)"
        return (f"this TLM was not trained on this target's hardware; the nearest it was trained on differs in "
                f"{what}. Its prompt here is one it never saw, so its schedules are untested guesses: "
                "run `tlm adapt MODEL` to fine-tune it on programs measured on this machine (or tlm dataset "
                "collect, tlm train), or compare with the heuristic")  # fmt: skip

    def unseen_task(self, space: Space | Task) -> str | None:
        """A warning when a task lies outside what this model learnt (learnt.json): an operator kind, a layout
        or sizes far beyond those of its training tasks. None: it is like them, it has nothing to decide, or the
        checkpoint does not say. Outside them its programs have been up to 200x slower than the heuristic's."""
        task = space.task if isinstance(space, Space) else space
        if self.learnt is None or isinstance(space, Space) and not space.num_points and len(space.sketches) < 2:
            return None
        sig = task_signature(task)
        if not isinstance(space, Space) and sig is not None and "R" not in sig.pattern:
            return None  # without its space: a task without a reduction has no decisions on a CPU (elementwise)
        what = novelty(sig, self.learnt)
        if not what:
            return None
        blocks = ", ".join(b.name_hint for b in blocks_of(task.func)[:6])
        return (f"task {task.name} ({task.id}; blocks {blocks}) lies outside what this TLM learnt: new "
                f"{'; '.join(what)}. Its schedules here are untested guesses, possibly far slower than the "
                f"heuristic's: compare them (`tlm compare MODEL --task {task.id}`) or fine-tune it on this "
                "model's tasks (`tlm adapt MODEL`)")  # fmt: skip

    def greedy(self, space: Space, sketch_index: int | None = None) -> Generation:
        """The most likely token at every step: the same input always gives the same output."""
        with torch_threads(self.threads):
            prompt = self.prompt(space)
            stream = self._stream(prompt)
            return decode_one(self.model, space, prompt, Policy(), sketch_index=sketch_index, stream=stream)

    def sample(
        self,
        space: Space,
        k: int = 1,
        temperature: float = 1.0,
        top_k: int | None = None,
        seed: int = 0,
        max_attempts: int | None = None,
    ) -> list[Generation]:
        """Up to k distinct programs, sampled (seeded: reproducible). Fewer when the space (or the model's
        support under top-k) has fewer than k programs within `max_attempts` (default 4k) samples."""
        prompt = self.prompt(space)
        policy = Policy(max(temperature, 1e-6), top_k, torch.Generator().manual_seed(seed))
        found: dict[tuple, Generation] = {}
        with torch_threads(self.threads):
            base = self._stream(prompt)  # one pass over the prompt, forked for every sample
            for _ in range(max_attempts or 4 * k):
                g = decode_one(self.model, space, prompt, policy, stream=base.fork())
                g.method = "sample"
                found.setdefault(g.key, g)
                if len(found) == k:
                    break
        return sorted(found.values(), key=lambda g: -g.logprob)

    def beam(self, space: Space, k: int = 4) -> list[Generation]:
        """The k most likely distinct programs by beam search, best first."""
        with torch_threads(self.threads):
            return beam_search(self.model, space, self.prompt(space), k)

    def candidates(self, space: Space, k: int) -> list[Generation]:
        """The k distinct programs a best-of-k measures: the greedy one first (top-1 is always among them),
        then beam search's most likely others. Measured on held-out tasks, beam search's ten hold faster
        programs than samples at temperature 1, which repeat the few a confident model favours (2-10 distinct
        in 40 draws)."""
        greedy = self.greedy(space)
        if k <= 1:
            return [greedy]
        others = [g for g in self.beam(space, k) if g.key != greedy.key]
        return [greedy, *others][:k]

    def generate(
        self, space: Space, candidates: int = 1, temperature: float = 0.0, top_k: int | None = None, seed: int = 0
    ) -> list[Generation]:
        """One greedy program, or k distinct candidates: `candidates` at temperature 0, sampling above it."""
        if temperature <= 0:
            return self.candidates(space, candidates)
        return self.sample(space, candidates, temperature, top_k, seed)

    def override(self, space: Space, generation: Generation, index: int, value: Decision) -> Generation:
        """`generation` with decision `index` forced to `value`: earlier decisions and the sketch are kept,
        later ones re-decoded greedily under the same constraints. ValueError when `value` is illegal there."""
        forced = {i: d for i, d in enumerate(generation.decisions[:index])}
        forced[index] = value
        return self.force(space, forced, generation.sketch_index)

    def force(self, space: Space, forced: dict[int, Decision], sketch_index: int | None = None) -> Generation:
        """Greedy decoding with some decisions fixed by the caller (any subset, by decision index)."""
        with torch_threads(self.threads):
            prompt = self.prompt(space)
            return decode_one(self.model, space, prompt, Policy(), forced, sketch_index, self._stream(prompt))
