"""Repeated blocks of a call graph, found from its structure: a transformer's layer stack, a ResNet's stages.

Relax import keeps no module names (no nn_module_stack), so the blocks are found in the calls themselves: the
graph's nodes in execution order, each named by its tuning task (same task = same workload), and a run of
copies of one sequence of tasks that repeats back to back (a tandem repeat) is one group: BERT-base's 12 layers
of 24 calls, ResNet-50's [3, 4, 6, 3] bottlenecks. A group's copies are its children, so a view can collapse
the whole run into one box ("layer ×12"), or show the copies, or one copy's calls.

How a run is chosen, greedily, largest first:
  * the run covering the most calls (copies × calls per copy), then the shortest copy (6 × AB, not 3 × ABAB);
  * among its rotations (BERT's layer could start at its LayerNorm or just after it), the one whose two ends
    cut the data flow most cleanly: fewest calls whose result is still read across the two boundaries (GPT-2's
    pre-norm layer starts at its LayerNorm, where only the residual stream crosses; BERT's post-norm one ends
    with it, after which nothing is read), then the earliest start;
  * a stage: the block just before a run that starts on as clean a cut, does the same kinds of work (its kinds
    include all of the copy's) and is at most twice as long joins the run as its first block (ResNet's first
    block of a stage downsamples: other shapes, an extra convolution, hence other tasks);
  * then the calls before and after the run are searched the same way.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import networkx as nx
import numpy as np

MIN_PERIOD = 2  # calls per copy: a run of one repeated call (three reshapes) is no block
MIN_CALLS = 4  # a run covering fewer calls is not worth a box


@dataclass(frozen=True)
class Group:
    id: str  # "g0" a run, "g0.3" its fourth child; unique within one graph
    label: str  # "layer ×12", "stage 3: block ×6", "layer 4", "stage 3 · block 1"
    nodes: tuple[int, ...]  # its calls, in execution order (a contiguous stretch of it)
    children: tuple[Group, ...] = field(default=())  # a run's copies (a stage's first block first)
    copies: int = 1  # a run: how many copies of one block it holds (with a stage's first block)
    unit: str = ""  # what one copy is called: "layer" or "block"

    def walk(self) -> Iterator[Group]:
        yield self
        for c in self.children:
            yield from c.walk()

    def describe(self) -> str:
        """The label with the range of calls: unique, for a picker."""
        return f"{self.label} (#{self.nodes[0]}–#{self.nodes[-1]})"


def data_flow_cuts(graph: nx.DiGraph, order: list[int]) -> list[int]:
    """cuts[b]: how many calls before position b (of `order`) have a result read at b or later."""
    pos = {n: i for i, n in enumerate(order)}
    delta = [0] * (len(order) + 2)
    for n in order:
        last = max((pos[s] for s in graph.successors(n)), default=-1)
        if last > pos[n]:  # live across the boundaries pos[n]+1 .. last
            delta[pos[n] + 1] += 1
            delta[last + 1] -= 1
    cuts, live = [], 0
    for b in range(len(order) + 1):
        live += delta[b]
        cuts.append(live)
    return cuts


def _best_run(codes: np.ndarray, lo: int, hi: int, cuts: list[int]) -> tuple[int, int, int] | None:
    """(start, period, copies) of the best tandem repeat inside positions [lo, hi), or None."""
    best, best_key = None, None
    cut = np.asarray(cuts)
    for p in range(MIN_PERIOD, (hi - lo) // 2 + 1):
        eq = codes[lo : hi - p] == codes[lo + p : hi]  # eq[i]: position lo+i equals the one a period later
        idx = np.arange(len(eq))
        next_diff = np.minimum.accumulate(np.where(eq, len(eq), idx)[::-1])[::-1]
        copies = 1 + (next_diff - idx) // p  # copies of codes[lo+i : lo+i+p] starting at lo+i
        ok = np.flatnonzero((copies >= 2) & (p * copies >= MIN_CALLS))
        if not len(ok):
            continue
        starts, covered = lo + ok, p * copies[ok]
        cost = cut[starts] + cut[starts + covered]
        i = np.lexsort((starts, cost, -covered))[0]  # most calls, then the cleanest cut, then the earliest
        key = (int(covered[i]), -p, -int(cost[i]), -int(starts[i]))
        if best_key is None or key > best_key:
            best, best_key = (int(starts[i]), p, int(copies[ok][i])), key
    return best


def _kinds(graph: nx.DiGraph, nodes: list[int]) -> set[str]:
    return {graph.nodes[n].get("kind", "") for n in nodes}


def _unit(graph: nx.DiGraph, nodes: list[int]) -> str:
    """A transformer layer attends (a softmax); anything else is a block."""
    return "layer" if "softmax" in _kinds(graph, nodes) else "block"


def repeated_groups(graph: nx.DiGraph) -> list[Group]:
    """The graph's runs of repeated blocks, in execution order (see the module's docstring); [] if none."""
    order = sorted(graph.nodes)
    if len(order) < MIN_CALLS:
        return []
    ids: dict[str, int] = {}
    codes = np.array([ids.setdefault(graph.nodes[n].get("task", str(n)), len(ids)) for n in order])
    cuts = data_flow_cuts(graph, order)
    found: list[tuple[int, int, int, int]] = []  # (first position, head start, period, copies)

    def search(lo: int, hi: int) -> None:
        run = _best_run(codes, lo, hi, cuts) if hi - lo >= MIN_CALLS else None
        if run is None:
            return
        s, p, k = run
        head = s
        clean = [b for b in range(lo, s) if cuts[b] <= cuts[s]]
        if clean:
            h = clean[-1]
            block = order[s : s + p]
            if s - h <= 2 * p and _kinds(graph, order[h:s]) >= _kinds(graph, block):
                head = h
        found.append((head, s, p, k))
        search(lo, head)
        search(s + p * k, hi)

    search(0, len(order))
    groups, stage = [], 0
    for head, s, p, k in sorted(found):
        unit = _unit(graph, order[s : s + p])
        stretches = ([order[head:s]] if head < s else []) + [order[s + i * p : s + (i + 1) * p] for i in range(k)]
        gid = f"g{len(groups)}"
        if head < s:
            stage += 1
            label, child = f"stage {stage}: {unit} ×{len(stretches)}", f"stage {stage} · {unit} {{}}"
        else:
            label, child = f"{unit} ×{k}", f"{unit} {{}}"
        children = tuple(
            Group(f"{gid}.{i}", child.format(i + 1), tuple(nodes), unit=unit) for i, nodes in enumerate(stretches)
        )
        groups.append(Group(gid, label, tuple(order[head : s + p * k]), children, len(stretches), unit))
    return groups


def all_groups(groups: list[Group]) -> dict[str, Group]:
    """Every group and child group, by id, runs before their children."""
    return {g.id: g for top in groups for g in top.walk()}


def group_of(groups: list[Group]) -> dict[int, list[str]]:
    """Call -> the ids of the groups holding it, outermost first."""
    out: dict[int, list[str]] = {}
    for top in groups:
        for g in top.walk():
            for n in g.nodes:
                out.setdefault(n, []).append(g.id)
    return out
