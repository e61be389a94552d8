"""The paper-size samples at other shapes, so that training tasks cover several shapes of each operator.

Each builder takes (batch, size, layers) and is registered as its sample's `variants` (SampleSpec.build_variant);
tlm_core.dataset names the shapes it collects (TRAIN_VARIANTS) and reaches these through the registry. They use
the samples' classes and configs, seeded the same way. Transformers keep `layers` layers (2 by default): every
layer of BERT or GPT-2 has the same tasks, so 2 give the full model's unique workloads at a fraction of the
import time (the task weights are the 2-layer model's, which training does not use).
"""

from __future__ import annotations

from typing import Any

Built = tuple[Any, tuple[Any, ...]]


def resnet50(batch: int = 1, size: int | None = None, layers: int = 2) -> Built:
    """ResNet-50 at batch x 3 x size x size (default 224); all 16 bottleneck blocks, whatever `layers` says."""
    import torch

    from sample_models._common import calibrate_bn
    from sample_models.resnet import ResNet

    size = size or 224
    torch.manual_seed(0)
    model = ResNet([3, 4, 6, 3], [64, 128, 256, 512], 64, 1000)
    calibrate_bn(model, (2, 3, size, size))
    return model, (torch.randn((batch, 3, size, size), generator=torch.Generator().manual_seed(1)),)


def bert(batch: int = 1, size: int | None = None, layers: int = 2) -> Built:
    """BERT-base's encoder with `layers` layers at batch x size tokens (default 128)."""
    return _transformer("bert", batch, size or 128, layers)


def gpt2(batch: int = 1, size: int | None = None, layers: int = 2) -> Built:
    """GPT-2 small with `layers` layers and its LM head at batch x size tokens (default 128)."""
    return _transformer("gpt2", batch, size or 128, layers)


def _transformer(family: str, batch: int, seq: int, layers: int) -> Built:
    import torch

    from sample_models import transformers_models as tm

    if family == "bert":
        from transformers import BertConfig, BertModel

        config = BertConfig(**{**tm.BERT_BASE, "num_hidden_layers": layers})
        config._attn_implementation = "eager"
        torch.manual_seed(0)
        model = tm.LastHidden(BertModel(config, add_pooling_layer=False).eval(), config.vocab_size)
    else:
        from transformers import GPT2Config, GPT2LMHeadModel

        config = GPT2Config(**{**tm.GPT2_SMALL, "n_layer": layers})
        config._attn_implementation = "eager"
        torch.manual_seed(0)
        model = tm.Logits(GPT2LMHeadModel(config).eval(), config.vocab_size)
    ids = torch.randint(0, config.vocab_size, (batch, seq), generator=torch.Generator().manual_seed(1))
    return model, ((ids,) if family == "bert" else (ids, torch.ones(batch, seq, dtype=torch.int64)))
