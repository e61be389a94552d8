"""What a checkpoint learnt from: the kinds, layouts and sizes of the tasks in its training data (learnt.json).

learnt = learnt_from_prompts(prompts)          # token lists: training sentences or their prompts
save_learnt(checkpoint_dir, learnt)            # learnt.json beside the weights (a few KB)
novelty(task_signature(task), load_learnt(d))  # what is new about a task, [] when it is like the data

One entry per kind ("conv2d SSSSRRR") and layout, with the range of each main-block iterator's extent and of
the task's work (log2 FLOPs), and per iterator the largest prime extent above PRIME_MIN seen (0: none). A task
is outside what the model learnt when its kind never occurred, its layout never occurred for that kind, an
extent (or its work) lies more than SIZE_FACTOR beyond the range, or an extent is a prime above PRIME_MIN where
the training tasks had none: such a loop splits only as 1 x p, and fine-tuning 21, which never saw one, wrote
untiled programs 20-30x slower than the heuristic's for ViT's 197 tokens (docs/results.md, the test split).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from pathlib import Path

from ..language.signature import UNKNOWN, Signature, prompt_signature

LEARNT = "learnt.json"
SIZE_FACTOR = 8  # an extent 8x beyond any trained one (or 2^3 x the work) counts as "far outside"
SMALL_WORK = 16  # tasks under 2^16 FLOPs run in microseconds whatever the schedule: "smaller" is not said of them
PRIME_MIN = 16  # a prime extent above this cannot be tiled (only 1 x p); below it a loop is short anyway


def learnt_from_prompts(prompts: Iterable[list[str]], sources: list[str] | None = None) -> dict:
    """The learnt set of training prompts (whole sentences are fine: the decisions are ignored)."""
    kinds: dict[str, dict[str, dict]] = {}
    count = 0
    for tokens in prompts:
        sig = prompt_signature(tokens)
        if sig is None:
            continue
        count += 1
        primes = [e if e is not None and e > PRIME_MIN and is_prime(e) else 0 for e in sig.extents]
        ranges = [None if e is None else [e, e] for e in sig.extents]
        _widen(kinds, sig.kind, sig.layout, 1, ranges, primes, None if sig.work is None else [sig.work, sig.work])
    return {"version": 2, "prompts": count, "sources": sources or [], "kinds": kinds}


def merge_learnt(base: dict | None, more: dict) -> dict:
    """What a checkpoint fine-tuned from `base` has learnt: base's set and the new examples' together (a short
    fine-tuning on a few hundred examples does not forget the corpus its start learnt)."""
    if not base:
        return more
    kinds = json.loads(json.dumps(base["kinds"]))
    for kind, layouts in more["kinds"].items():
        for layout, e in layouts.items():
            _widen(kinds, kind, layout, e["prompts"], e["extents"], e["primes"], e["work"])
    sources = [*base["sources"], *more["sources"]]
    return {"version": 2, "prompts": base["prompts"] + more["prompts"], "sources": sources, "kinds": kinds}


def _widen(kinds: dict, kind: str, layout: str, prompts: int, ranges: list, primes: list[int], work) -> None:
    """Widen a (kind, layout) entry by `prompts` prompts whose extents span `ranges` ([lo, hi] or None per
    dimension), whose largest primes are `primes` and whose work spans `work`."""
    entry = kinds.setdefault(kind, {}).setdefault(layout, {"prompts": 0, "extents": [], "primes": [], "work": None})
    entry["prompts"] += prompts
    have = entry["extents"]
    for i, r in enumerate(ranges):
        if i == len(have):
            have.append(None)
            entry["primes"].append(0)
        if r is not None:
            have[i] = list(r) if have[i] is None else [min(have[i][0], r[0]), max(have[i][1], r[1])]
        entry["primes"][i] = max(entry["primes"][i], primes[i])
    if work is not None:
        w = entry["work"]
        entry["work"] = list(work) if w is None else [min(w[0], work[0]), max(w[1], work[1])]


def save_learnt(directory: str | Path, learnt: dict) -> Path:
    path = Path(directory) / LEARNT
    path.write_text(json.dumps(learnt, separators=(",", ":"), sort_keys=True) + "\n")
    return path


def load_learnt(directory: str | Path) -> dict | None:
    """A checkpoint's learnt set, or None when it has none (then nothing is said about tasks)."""
    path = Path(directory) / LEARNT
    return json.loads(path.read_text()) if path.exists() else None


def novelty(sig: Signature | None, learnt: dict | None) -> list[str]:
    """What about a task lies outside the learnt set, one phrase each ([]: nothing, or nothing to compare)."""
    if sig is None or not learnt:
        return []
    kinds = learnt.get("kinds", {})
    layouts = kinds.get(sig.kind)
    if layouts is None:
        return [f"operator kind {sig.describe()}{_known_as(sig, kinds)}"]
    if sig.layout not in layouts:
        seen = ", ".join(sorted(f"{lay or 'unnamed'}" for lay in layouts))
        return [f"layout {sig.layout or 'unnamed'} of {sig.family} (it learnt {seen})"]
    # the same loops with names hidden: fine-tuning saw every kind that way, and TOPI-built operators come so
    unnamed = kinds.get(f"{UNKNOWN} {sig.pattern}", {}).get("", {}).get("primes") or []
    return _sizes(sig, layouts[sig.layout], unnamed)


def _known_as(sig: Signature, kinds: dict) -> str:
    """A hint at the nearest kinds it did learn: the same name with other loops, or other names' count."""
    same = sorted(k.split()[1] for k in kinds if k.split()[0] == sig.family and sig.family != UNKNOWN)
    if same:
        return f"; it learnt {sig.family} only with loops {', '.join(same)}"
    return ""


def _sizes(sig: Signature, entry: dict, unnamed_primes: list[int]) -> list[str]:
    out = []
    primes = entry.get("primes")  # absent in version 1: not compared
    if primes and unnamed_primes:
        primes = [max(a, b) for a, b in zip(primes, unnamed_primes, strict=False)]
    small_ok = sig.work is not None and sig.work < SMALL_WORK
    for i, (extent, seen) in enumerate(zip(sig.extents, entry.get("extents", []), strict=False)):
        if extent is None or seen is None:
            continue
        lo, hi = seen
        if extent > hi * SIZE_FACTOR or (extent * SIZE_FACTOR < lo and not small_ok):
            out.append(f"loop {i} ({sig.pattern[i]}) of {extent}, where it learnt {lo}-{hi}")
        elif primes and i < len(primes) and not primes[i] and extent > PRIME_MIN and is_prime(extent) and not small_ok:
            out.append(f"loop {i} ({sig.pattern[i]}) of {extent}, a prime (it splits only as 1 x {extent}), where "
                       f"it learnt no prime extent above {PRIME_MIN}")  # fmt: skip
    work, margin = entry.get("work"), round(math.log2(SIZE_FACTOR))
    if sig.work is not None and work and (sig.work > work[1] + margin or sig.work < work[0] - margin and not small_ok):
        out.append(f"about 2^{sig.work} FLOPs, where it learnt 2^{work[0]}-2^{work[1]}")
    return [f"sizes of {sig.family}: " + "; ".join(out)] if out else []


def is_prime(n: int) -> bool:
    return n > 1 and all(n % d for d in range(2, math.isqrt(n) + 1))


def example_prompts(examples: Iterable) -> list[list[str]]:
    """The distinct prompts of training examples (tlm_core.train.data.Example: token ids), in order."""
    from ..language import PROMPT_END, decode_ids, token_ids

    end = token_ids()[PROMPT_END]
    seen: set[tuple[int, ...]] = set()
    out = []
    for e in examples:
        ids = tuple(e.ids[: e.ids.index(end)] if end in e.ids else e.ids)
        if ids not in seen:
            seen.add(ids)
            out.append(decode_ids(list(ids)))
    return out


def corpus_prompts(paths: Iterable[str | Path], anonymous: str | None = None) -> list[list[str]]:
    """The prompts of teacher corpus files, with the name-hidden copies fine-tuning adds (--anonymous)."""
    from ..train.corpus import read_corpus
    from ..train.teacher import HIDDEN_NAMES, anonymized

    out = []
    for row in read_corpus(list(paths)):
        tokens = row["text"].split()
        prompt = tokens[: row.get("prompt_len", len(tokens))]
        out.append(prompt)
        out += [anonymized(prompt, len(prompt), hide) for hide in HIDDEN_NAMES[anonymous]] if anonymous else []
    return out
