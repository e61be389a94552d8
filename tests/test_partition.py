"""Partition: fused subgraphs, the call graph along the real data flow, tasks and weights."""

import networkx as nx
import pytest
import torch

from tlm_core.frontend.torch_program import import_exported
from tlm_core.partition import partition
from tlm_core.target import host_target


class TwoBranch(torch.nn.Module):
    """x -> conv -> relu -+-> add -> pool -> linear -> relu -> linear (same shape: one task, two calls)
    x -> mean ------------'"""

    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.fc1 = torch.nn.Linear(8, 8)
        self.fc2 = torch.nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.conv(x)) + x.mean(1, keepdim=True)
        y = y.mean((2, 3))
        return self.fc2(torch.relu(self.fc1(y)))


@pytest.fixture(scope="module")
def two_branch():
    torch.manual_seed(0)
    ep = torch.export.export(TwoBranch().eval(), (torch.randn(1, 3, 16, 16),))
    return partition(import_exported(ep, "two-branch", "sample"), host_target())


def test_graph_is_a_dag_in_execution_order(two_branch):
    g = two_branch.graph
    assert nx.is_directed_acyclic_graph(g)
    assert all(p < c for p, c in g.edges)
    assert sorted(g.nodes) == list(range(g.number_of_nodes()))


def test_edges_follow_the_data_flow(two_branch):
    g = two_branch.graph
    for node, data in g.nodes(data=True):
        from_calls = [i for i in data["inputs"] if i["from"] == "call"]
        preds = list(g.predecessors(node))
        assert bool(preds) == bool(from_calls)
        for p in preds:  # every producer's output is one of this call's inputs
            assert g.nodes[p]["outputs"][0]["shape"] in [i["shape"] for i in from_calls]
        if data["model_inputs"]:
            assert data["model_inputs"] == ["x"]
    # the mean of x and the conv both read x; the conv's fused subgraph also reads the mean's result
    readers_of_x = [n for n, d in g.nodes(data=True) if d["model_inputs"]]
    assert len(readers_of_x) == 2
    conv = next(n for n, d in g.nodes(data=True) if d["kind"] == "conv")
    assert any(g.nodes[p]["ops"] == ["mean"] for p in g.predecessors(conv))
    assert [n for n, d in g.nodes(data=True) if d["is_output"]] == [g.number_of_nodes() - 1]


def test_tasks_are_unique_and_weights_add_up_to_the_calls(two_branch):
    tasks = two_branch.tasks
    assert sum(t.weight for t in tasks) == two_branch.graph.number_of_nodes()
    assert len({t.id for t in tasks}) == len(tasks)
    dense = [t for t in tasks if "matmul" in t.ops]
    # fc1 (+relu) and fc2 differ by the fused relu; a task's calls all point at nodes with its id
    for t in tasks:
        assert all(two_branch.graph.nodes[c]["task"] == t.id for c in t.calls)
        assert t.flops >= 0
    assert dense and all(t.mod["main"].params for t in dense)


def test_identical_layers_share_one_task():
    class Repeated(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layers = torch.nn.ModuleList(torch.nn.Linear(16, 16) for _ in range(3))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            for layer in self.layers:
                x = torch.tanh(layer(x))
            return x

    ep = torch.export.export(Repeated().eval(), (torch.randn(4, 16),))
    part = partition(import_exported(ep, "repeated", "sample"), host_target())
    assert part.graph.number_of_nodes() == 3
    assert len(part.tasks) == 1 and part.tasks[0].weight == 3
    assert part.task(part.tasks[0].id[:6]) is part.tasks[0]
    with pytest.raises(KeyError, match="no task"):
        part.task("nonexistent")


def test_task_ids_are_stable_across_runs(two_branch):
    torch.manual_seed(1)  # other weights, same structure: same workloads
    ep = torch.export.export(TwoBranch().eval(), (torch.randn(1, 3, 16, 16),))
    again = partition(import_exported(ep, "two-branch", "sample"), host_target())
    assert [t.id for t in again.tasks] == [t.id for t in two_branch.tasks]


def test_a_head_with_no_vector_factor_is_padded_and_still_matches_pytorch(space_builder):
    """GPT-2's 50257-word head left no vector tile (4 GFLOP/s): its weight is padded to a multiple of 16 columns
    and the product sliced back in a subgraph of its own, so the matmul stays a plain matmul task."""
    from tlm_core.compile import compile_model, heuristic_schedules, run_model
    from tlm_core.partition.pad import padded_columns

    class Head(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.proj = torch.nn.Linear(32, 32)
            self.head = torch.nn.Linear(32, 257, bias=False)  # 257: prime

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.head(torch.tanh(self.proj(x)))

    assert [padded_columns(n) for n in (257, 256, 1000, 100)] == [272, 256, 1000, 100]
    torch.manual_seed(0)
    model = import_exported(torch.export.export(Head().eval(), (torch.randn(4, 32),)), "head", "sample")
    part = partition(model, host_target())
    ops = {tuple(t.ops): t for t in part.tasks}
    assert ("strided_slice",) in ops and ("matmul",) in ops
    assert tuple(ops[("matmul",)].params[-1][1]) == (4, 272)
    assert tuple(ops[("strided_slice",)].params[-1][1]) == (4, 257)
    run = run_model(model, compile_model(part, heuristic_schedules(part, space_builder.build), host_target()), repeat=1)
    assert run.ok and run.max_rel_error < 1e-4, run
