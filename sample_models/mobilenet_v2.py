"""MobileNetV2 (Sandler et al. 2018) in plain PyTorch: inverted residuals with the paper's settings table."""

from __future__ import annotations

import torch
from torch import nn

from sample_models._common import calibrate_bn, conv_bn

# (expansion t, output channels c, repeats n, first stride s): Table 2 of the paper.
SETTINGS = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]
TINY_SETTINGS = [(1, 8, 1, 1), (6, 12, 2, 2), (6, 16, 1, 2), (6, 24, 1, 1)]


class InvertedResidual(nn.Module):
    def __init__(self, c_in: int, c_out: int, stride: int, t: int):
        super().__init__()
        hidden = c_in * t
        layers = [conv_bn(c_in, hidden, 1, act=nn.ReLU6)] if t != 1 else []
        layers += [
            conv_bn(hidden, hidden, 3, stride, groups=hidden, act=nn.ReLU6),  # depthwise
            conv_bn(hidden, c_out, 1, act=None),  # linear bottleneck: no activation
        ]
        self.body = nn.Sequential(*layers)
        self.residual = stride == 1 and c_in == c_out

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.body(x) if self.residual else self.body(x)


class MobileNetV2(nn.Module):
    def __init__(self, settings: list[tuple[int, int, int, int]], stem: int, last: int, num_classes: int):
        super().__init__()
        layers: list[nn.Module] = [conv_bn(3, stem, 3, 2, act=nn.ReLU6)]
        c_in = stem
        for t, c, n, s in settings:
            for i in range(n):
                layers.append(InvertedResidual(c_in, c, s if i == 0 else 1, t))
                c_in = c
        layers.append(conv_bn(c_in, last, 1, act=nn.ReLU6))
        self.features = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(last, num_classes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(torch.flatten(self.pool(self.features(x)), 1))


def build(tiny: bool = False) -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """MobileNetV2 (width 1.0) at 1x3x224x224, or a tiny one (4 stages, narrow, 1x3x32x32)."""
    torch.manual_seed(0)
    if tiny:
        model, shape = MobileNetV2(TINY_SETTINGS, 8, 64, 10), (1, 3, 32, 32)
    else:
        model, shape = MobileNetV2(SETTINGS, 32, 1280, 1000), (1, 3, 224, 224)
    calibrate_bn(model, (2, *shape[1:]))
    return model, (torch.randn(shape, generator=torch.Generator().manual_seed(1)),)
