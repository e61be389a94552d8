"""A task's signature, read from its prompt: what kind of operator it is, in which layout, at which sizes.

    conv2d SSSSRRR, layout nchw, extents (1, 64, 56, 56, 64, 3, 3), work w27

Read from the prompt's operator part (tlm_core.language.operator), so a checkpoint's training sentences and a
new task are described alike, by what the model itself sees. The main block is the block with a reduction
(else any block) over the most iterations; its kind is its name stem (the prompt's "blk:" token, "?" for a
name outside the vocabulary) with the layout suffix cut off, plus its iterator kinds in order (S spatial,
R reduction, O other). The layout is that suffix ("nchw", "nhwc", "NT" for a matmul reading B as B[n, k]; ""
where the name gives none).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from .numbers import read_number

# layout suffixes of TVM's block names (conv2d_nchw, conv3d_ndhwc, matmul_NT, ...): cut off the kind
_LAYOUT = re.compile(r"_(n[a-z]*c[a-z]*|[a-z]*hwcn|NT|TN|TT|NN)$")
UNKNOWN = "?"  # a block name outside the vocabulary ("blk?")


@dataclass(frozen=True)
class Signature:
    family: str  # the main block's name stem without its layout: "conv2d", "matmul", "?"
    pattern: str  # its iterator kinds in order: "SSSSRRR"
    layout: str  # "nchw", "nhwc", "NT", "" (none named)
    extents: tuple[int | None, ...]  # its iterators' extents (None: symbolic)
    work: int | None  # k of the prompt's "work w<k>" (about 2^k FLOPs)
    block: int  # the main block's number in the prompt (b<i>)
    name: str = ""  # the main block's own name, when read from a task (a prompt may hide it)

    @property
    def kind(self) -> str:
        """What kind of operator, e.g. "conv2d SSSSRRR" (a conv2d in any layout)."""
        return f"{self.family} {self.pattern}"

    def describe(self) -> str:
        """E.g. "conv2d (loops: 4 spatial, 3 reduction)"."""
        counts = [f"{self.pattern.count(k)} {w}" for k, w in (("S", "spatial"), ("R", "reduction"), ("O", "other"))
                  if k in self.pattern]  # fmt: skip
        name = self.name or ("unnamed block" if self.family == UNKNOWN else self.family)
        return f"{name} (loops: {', '.join(counts)})"


def split_layout(stem: str) -> tuple[str, str]:
    """ "conv2d_nchw" -> ("conv2d", "nchw"), "matmul_NT" -> ("matmul", "NT"), "matmul" -> ("matmul", "")."""
    m = _LAYOUT.search(stem)
    return (stem[: m.start()], m.group(1)) if m else (stem, "")


def prompt_signature(tokens: list[str]) -> Signature | None:
    """The signature of a prompt (or a whole sentence): None when it has no operator part or no block."""
    blocks, work = _blocks(tokens)
    if not blocks:
        return None
    reducing = [i for i, b in enumerate(blocks) if "R" in b[1]]
    index = max(reducing or range(len(blocks)), key=lambda i: _size(blocks[i][2]))
    stem, kinds, extents = blocks[index]
    family, layout = split_layout(stem)
    return Signature(family, "".join(kinds), layout, tuple(extents), work, index)


def task_signature(task) -> Signature | None:
    """The signature of a task (tlm_core.partition.Task), from the operator part of its prompt."""
    from dataclasses import replace

    from .operator import blocks_of, operator_tokens

    sig = prompt_signature(operator_tokens(task))
    return sig and replace(sig, name=blocks_of(task.func)[sig.block].name_hint)


def _size(extents: list[int | None]) -> int:
    return math.prod(e or 1 for e in extents)


def _blocks(tokens: list[str]) -> tuple[list[tuple[str, list[str], list[int | None]]], int | None]:
    """The operator part's blocks as (stem, iterator kinds, extents), and the work exponent."""
    if "<op>" not in tokens:
        return [], None
    i, end = tokens.index("<op>") + 1, len(tokens)
    blocks: list[tuple[str, list[str], list[int | None]]] = []
    work = None
    while i < end:
        tok = tokens[i]
        if tok == "block" and i + 2 < end:
            stem = tokens[i + 2].removeprefix("blk:") if tokens[i + 2] != "blk?" else UNKNOWN
            kinds: list[str] = []
            extents: list[int | None] = []
            i += 3
            while i < end and tokens[i] in ("S", "R", "O"):
                kinds.append(tokens[i])
                if i + 1 < end and tokens[i + 1] == "sym":
                    extents.append(None)
                    i += 2
                else:
                    value, i = read_number(tokens, i + 1)
                    extents.append(value)
            blocks.append((stem, kinds, extents))
        elif tok == "work" and i + 1 < end:
            work = int(tokens[i + 1][1:]) if tokens[i + 1][1:].isdigit() else None
            i += 2
        elif tok in ("sketches", "<dec>"):
            break
        else:
            i += 1
    return blocks, work
