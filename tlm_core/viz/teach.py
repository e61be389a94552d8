"""Short explanations of compiler concepts, written about the example on screen (markdown strings)."""

from __future__ import annotations

import math

import networkx as nx

from tlm_core.space import CATEGORICAL, COMPUTE_LOCATION, TILE, Decision, DecisionPoint
from tlm_core.viz.loopnest import LoopRow
from tlm_core.viz.summary import fused_bytes_saved


def fusion_text(graph: nx.DiGraph, node: int) -> str:
    d = graph.nodes[node]
    ops = d["ops"]
    same = sum(1 for _, x in graph.nodes(data=True) if x["task"] == d["task"])
    text = (
        "**Fusion** merges a heavy operator with the cheap elementwise operators around it into one kernel, "
        "so intermediate tensors never travel through memory. "
    )
    if len(ops) > 1:
        saved = fused_bytes_saved(graph, node)
        text += (
            f"Here, subgraph #{node} `{d['func']}` runs **{' + '.join(ops)}** as one loop nest: unfused, "
            f"{len(ops)} kernels would write and re-read {len(ops) - 1} intermediate tensor(s) of shape "
            f"{d['outputs'][0]['shape']}, about {saved / 1024:,.0f} KiB of memory traffic per call. "
        )
    else:
        text += f"Subgraph #{node} `{d['func']}` holds a single operator ({ops[0]}): nothing around it could join. "
    text += f"Identical subgraphs are tuned once: this one is task `{d['task']}`, called {same} time(s) in the model."
    return text


def tiling_text(points: list[DecisionPoint], decisions: list[Decision], structures: dict[str, str]) -> str:
    tiles = [p for p in points if p.kind == TILE and (p.extent or 1) > 1]
    text = (
        "**Tiling** splits one loop into several nested loops whose trip counts multiply to the original extent, "
        "then reorders them so the innermost loops touch a small block of data that stays in cache and registers. "
    )
    if not tiles:
        return text + "This sketch has no loop with more than one iteration to tile."
    p = max(tiles, key=lambda q: q.extent or 0)
    factors = list(decisions[p.index])  # type: ignore[arg-type]
    text += (
        f"Here loop `{p.loop}` of block `{p.block}` (extent {p.extent}) becomes {len(factors)} loops of "
        f"{' × '.join(map(str, factors))} = {math.prod(factors)} iterations; {len(p.choices)} such splits are legal "
        f"(the innermost factor is capped at {p.max_innermost_factor}). "
    )
    structure = structures.get(p.block or "")
    if structure:
        text += (
            f"The block's tiling structure `{structure}` orders the levels outer to inner (S = spatial loop tile, "
            "R = reduction loop tile): the table below shows where each factor lands."
        )
    return text


def parallel_text(rows: list[LoopRow], annotations: dict[str, dict[str, str]]) -> str:
    par = [r for r in rows if r.kind == "parallel"]
    limit = next((a["parallel"] for a in annotations.values() if "parallel" in a), None)
    text = "**Parallelisation** runs the iterations of an outer loop on different CPU cores at once. "
    if limit:
        text += (
            f"The sketch allows up to {limit} parallel iterations per core; after the decisions, the postprocessor "
            "fuses the outermost spatial loops into one loop and marks it parallel. "
        )
    if par:
        names = ", ".join(f"`{r.name}` ({r.extent} iterations)" for r in par)
        text += f"In this program: {names}."
    else:
        text += "No loop of this program runs in parallel."
    return text


def vectorize_text(rows: list[LoopRow]) -> str:
    vec = [r for r in rows if r.kind == "vectorized"]
    text = (
        "**Vectorisation** turns the innermost loop into SIMD instructions that process several elements per "
        "instruction (e.g. 8 float32 lanes with AVX2, 16 with AVX-512). "
    )
    if vec:
        names = ", ".join(f"`{r.name}` ({r.extent} elements)" for r in vec)
        return text + f"In this program the vectorised loops are {names}; their extent comes from the tile factors."
    return text + "No loop of this program is vectorised (the innermost loops are reductions or too irregular)."


def unroll_text(points: list[DecisionPoint], decisions: list[Decision], rows: list[LoopRow]) -> str:
    text = (
        "**Unrolling** copies a loop's body instead of branching back, removing loop overhead and exposing "
        "independent instructions to the CPU. "
    )
    unroll = [p for p in points if p.kind == CATEGORICAL and "unroll" in (p.used_by or "")]
    for p in unroll:
        value = p.candidates[decisions[p.index]]  # type: ignore[index]
        text += f"Decision #{p.index} picks `{p.describe(decisions[p.index])}` from {list(p.candidates or ())}: "
        if value == 0:
            text += "no automatic unrolling. "
        else:
            text += f"inner loop nests of up to {value} iterations in total are unrolled. "
    marked = [r for r in rows if "auto-unroll" in r.note]
    if marked:
        text += f"The program carries it on loop `{marked[0].name}` ({marked[0].note})."
    return text


def compute_location_text(points: list[DecisionPoint], decisions: list[Decision]) -> str:
    text = (
        "**Compute location** decides where a producer block runs relative to its consumer: `inline` folds it "
        "into the consumer's expression (recomputed where used), `root` computes the whole tensor first, and "
        "*at loop L* computes only the slice needed by each iteration of L (small, cache-friendly buffers). "
    )
    locs = [p for p in points if p.kind == COMPUTE_LOCATION]
    if not locs:
        return text + "This sketch has no compute-location decision."
    for p in locs:
        text += (
            f"Here block `{p.block}` is computed **{p.describe(decisions[p.index])}**; "
            f"{len(p.choices)} locations are legal after the earlier decisions "
            f"({', '.join(p.describe(c) for c in p.choices)}). "
        )
    return text
