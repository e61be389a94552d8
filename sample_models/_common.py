"""Helpers shared by the sample CNNs: seeded construction and BatchNorm calibration."""

from __future__ import annotations

import torch
from torch import nn


def conv_bn(c_in: int, c_out: int, k: int, stride: int = 1, groups: int = 1, act: type | None = nn.ReLU):
    """Conv (no bias) -> BatchNorm -> activation: the unit whose BN TVM folds into the conv task."""
    layers: list[nn.Module] = [
        nn.Conv2d(c_in, c_out, k, stride, (k - 1) // 2, groups=groups, bias=False),
        nn.BatchNorm2d(c_out),
    ]
    if act is not None:
        layers.append(act())
    return nn.Sequential(*layers)


@torch.no_grad()
def calibrate_bn(model: nn.Module, shape: tuple[int, ...], batches: int = 2, seed: int = 0) -> nn.Module:
    """Give every BatchNorm real running statistics (and non-trivial affine weights), then switch to eval.

    Freshly initialised BN has mean 0 / var 1 / weight 1 / bias 0, which makes BN folding an identity; running
    a few seeded random batches in train mode (cumulative average) gives the statistics a trained model has.
    """
    gen = torch.Generator().manual_seed(seed)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.reset_running_stats()
            m.momentum = None  # cumulative moving average over the calibration batches
            m.weight.copy_(torch.empty_like(m.weight).uniform_(0.5, 1.5, generator=gen))
            m.bias.copy_(torch.randn(m.bias.shape, generator=gen) * 0.1)
    model.train()
    for _ in range(batches):
        model(torch.randn(shape, generator=gen))
    return model.eval()
