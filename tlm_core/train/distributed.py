"""Data-parallel training with plain torch.distributed: one process per GPU (or per CPU worker) under torchrun.

    torchrun --standalone --nproc_per_node 2 .venv/bin/tlm train pretrain corpus.jsonl --out ckpt/ ...

torchrun starts the processes and sets RANK, LOCAL_RANK, WORLD_SIZE and the rendezvous address; each process
runs the same command. Rank r trains on GPU r of its machine with NCCL when CUDA is available, else on the
CPU with gloo. Every rank draws the same global batch (world size x --batch-size sentences, from the same
seed) and trains on its own slice of it, and DistributedDataParallel averages the gradients, so a run on N
processes takes the same steps as one process with N times the batch size. Without torchrun (WORLD_SIZE
unset or 1) nothing here talks to other processes: the loop is the plain single-process one.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import torch
import torch.distributed as dist


@dataclass(frozen=True)
class Ranks:
    """This process's place in the run: rank 0 of 1 (on the CPU, or CUDA when available) without torchrun."""

    rank: int = 0
    world_size: int = 1
    device: torch.device = torch.device("cpu")

    @property
    def main(self) -> bool:
        """The one process that writes the log and the checkpoints (the ranks' weights are identical)."""
        return self.rank == 0

    @property
    def parallel(self) -> bool:
        return self.world_size > 1

    def wrap(self, model: torch.nn.Module) -> torch.nn.Module:
        """The module to run forward/backward through: DDP all-reduces the gradients during backward."""
        if not self.parallel:
            return model
        ids = [self.device] if self.device.type == "cuda" else None
        return torch.nn.parallel.DistributedDataParallel(model, device_ids=ids)

    def shard(self, batch: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor, ...]:
        """This rank's rows of a global batch, on its device."""
        n = len(batch[0]) // self.world_size
        return tuple(t[self.rank * n : (self.rank + 1) * n].to(self.device) for t in batch)

    def mean(self, value: torch.Tensor) -> float:
        """The mean of a scalar over the ranks (e.g. the loss of the whole global batch, for the log)."""
        if not self.parallel:
            return float(value.detach())
        value = value.detach().clone()
        dist.all_reduce(value)
        return float(value) / self.world_size

    def rank0_says(self, flag: bool) -> bool:
        """Rank 0's flag on every rank: a decision all must take together (e.g. the time budget is spent),
        or the ranks that go on would wait forever for the others in the next all-reduce."""
        if not self.parallel:
            return flag
        t = torch.tensor([int(flag)], device=self.device)
        dist.broadcast(t, src=0)
        return bool(t.item())

    def barrier(self) -> None:
        if self.parallel:
            dist.barrier()


@contextmanager
def ranks() -> Iterator[Ranks]:
    """This process's Ranks; under torchrun (WORLD_SIZE > 1) with the process group up for the duration
    (joined, not set up again, when the caller already started one)."""
    cuda = torch.cuda.is_available()
    joined = dist.is_available() and dist.is_initialized()
    if int(os.environ.get("WORLD_SIZE", "1")) <= 1 and not joined:
        yield Ranks(device=torch.device("cuda" if cuda else "cpu"))
        return
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    device = torch.device(f"cuda:{local_rank}" if cuda else "cpu")
    if cuda:
        torch.cuda.set_device(device)
    owned = not joined
    if owned:
        dist.init_process_group("nccl" if cuda else "gloo")
    try:
        yield Ranks(dist.get_rank(), dist.get_world_size(), device)
    finally:
        if owned:
            dist.destroy_process_group()
