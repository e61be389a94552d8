"""EfficientNet-B0 (Tan & Le 2019) in plain PyTorch: MBConv blocks with squeeze-excite and SiLU."""

from __future__ import annotations

import torch
from torch import nn

from sample_models._common import calibrate_bn, conv_bn

# (expansion, kernel, first stride, output channels, repeats): Table 1 of the paper (B0).
B0 = [(1, 3, 1, 16, 1), (6, 3, 2, 24, 2), (6, 5, 2, 40, 2), (6, 3, 2, 80, 3), (6, 5, 1, 112, 3),
      (6, 5, 2, 192, 4), (6, 3, 1, 320, 1)]  # fmt: skip
TINY = [(1, 3, 1, 8, 1), (6, 3, 2, 12, 2), (6, 5, 2, 16, 1)]


class SqueezeExcite(nn.Module):
    def __init__(self, channels: int, squeezed: int):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.reduce = nn.Conv2d(channels, squeezed, 1)
        self.expand = nn.Conv2d(squeezed, channels, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scale = torch.sigmoid(self.expand(nn.functional.silu(self.reduce(self.pool(x)))))
        return x * scale


class MBConv(nn.Module):
    def __init__(self, c_in: int, c_out: int, kernel: int, stride: int, expansion: int):
        super().__init__()
        hidden = c_in * expansion
        layers = [conv_bn(c_in, hidden, 1, act=nn.SiLU)] if expansion != 1 else []
        layers += [
            conv_bn(hidden, hidden, kernel, stride, groups=hidden, act=nn.SiLU),  # depthwise
            SqueezeExcite(hidden, max(1, c_in // 4)),  # SE ratio 0.25 of the block's input channels
            conv_bn(hidden, c_out, 1, act=None),
        ]
        self.body = nn.Sequential(*layers)
        self.residual = stride == 1 and c_in == c_out  # stochastic depth is training-only

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.body(x) if self.residual else self.body(x)


class EfficientNet(nn.Module):
    def __init__(self, table: list[tuple[int, int, int, int, int]], stem: int, head: int, num_classes: int):
        super().__init__()
        layers: list[nn.Module] = [conv_bn(3, stem, 3, 2, act=nn.SiLU)]
        c_in = stem
        for e, k, s, c, n in table:
            for i in range(n):
                layers.append(MBConv(c_in, c, k, s if i == 0 else 1, e))
                c_in = c
        layers.append(conv_bn(c_in, head, 1, act=nn.SiLU))
        self.features = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(head, num_classes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(torch.flatten(self.pool(self.features(x)), 1))


def build(tiny: bool = False) -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    """EfficientNet-B0 at 1x3x224x224, or a tiny one (3 stages, narrow, 1x3x32x32)."""
    torch.manual_seed(0)
    if tiny:
        model, shape = EfficientNet(TINY, 8, 64, 10), (1, 3, 32, 32)
    else:
        model, shape = EfficientNet(B0, 32, 1280, 1000), (1, 3, 224, 224)
    calibrate_bn(model, (2, *shape[1:]))
    return model, (torch.randn(shape, generator=torch.Generator().manual_seed(1)),)
