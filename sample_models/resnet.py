"""ResNet-50 (He et al. 2016, torchvision layout) in plain PyTorch: bottleneck blocks [3, 4, 6, 3]."""

from __future__ import annotations

import torch
from torch import nn

from sample_models._common import calibrate_bn, conv_bn


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, c_in: int, width: int, stride: int):
        super().__init__()
        c_out = width * self.expansion
        self.body = nn.Sequential(
            conv_bn(c_in, width, 1),
            conv_bn(width, width, 3, stride),  # stride on the 3x3 conv (ResNet v1.5, as torchvision)
            conv_bn(width, c_out, 1, act=None),
        )
        self.shortcut = conv_bn(c_in, c_out, 1, stride, act=None) if stride != 1 or c_in != c_out else None
        self.relu = nn.ReLU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x if self.shortcut is None else self.shortcut(x)
        return self.relu(self.body(x) + identity)


class ResNet(nn.Module):
    def __init__(self, blocks: list[int], widths: list[int], stem: int, num_classes: int):
        super().__init__()
        layers: list[nn.Module] = [conv_bn(3, stem, 7, 2), nn.MaxPool2d(3, 2, 1)]
        c_in = stem
        for i, (n, width) in enumerate(zip(blocks, widths, strict=True)):
            for j in range(n):
                layers.append(Bottleneck(c_in, width, 2 if j == 0 and i > 0 else 1))
                c_in = width * Bottleneck.expansion
        self.features = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(c_in, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.flatten(self.pool(self.features(x)), 1))


def build(tiny: bool = False) -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """ResNet-50 at 1x3x224x224, or a tiny one (one bottleneck per stage, narrow, 1x3x32x32)."""
    torch.manual_seed(0)
    if tiny:
        model, shape = ResNet([1, 1, 1, 1], [8, 16, 32, 64], 8, 10), (1, 3, 32, 32)
    else:
        model, shape = ResNet([3, 4, 6, 3], [64, 128, 256, 512], 64, 1000), (1, 3, 224, 224)
    calibrate_bn(model, (2, *shape[1:]))
    return model, (torch.randn(shape, generator=torch.Generator().manual_seed(1)),)
