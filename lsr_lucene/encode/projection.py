"""The MLM vocabulary projection apart from the model: detaching it, and when bf16 products may screen it.

The encoder projects hidden states onto the vocabulary itself (chunk by chunk, see ``SparseEncoder``), so the
model's decoder is swapped for Identity; on CPUs with native bf16, a bf16 projection whose error is bounded
by ``SCREEN_BOUND`` finds the terms that can be non-zero before fp32 recomputes them.
"""
from __future__ import annotations

import torch

from lsr_lucene.errors import SetupError

# |bf16 logit - fp32 logit| <= SCREEN_BOUND·||h||·||w||: 2^-7 (inputs) + 2^-8 (output) + fp32 accumulation, rounded up
SCREEN_BOUND = 0.0125


def bf16_matmul_is_fast(device: torch.device) -> bool:
    """Whether to screen with bf16 products: CPUs where oneDNN runs bf16 natively (AVX512/AMX).

    Not on CUDA: fp32 is fast there, and cuBLAS may reduce bf16 products in reduced precision,
    which would void the error bound the screening relies on.
    """
    if device.type != "cpu":
        return False
    try:
        return bool(torch.backends.mkldnn.is_available() and torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):
        return False


def swap_output_embeddings(model) -> tuple[torch.Tensor, torch.Tensor]:
    """Replace the MLM decoder by Identity (so ``.logits`` are the transformed hidden states); return (W, b)."""
    decoder = model.get_output_embeddings()
    if decoder is None or not hasattr(decoder, "weight"):
        raise SetupError(f"model {type(model).__name__} has no vocabulary projection (not a masked-LM model)")
    weight = decoder.weight.detach()
    bias = getattr(decoder, "bias", None)
    bias = torch.zeros(weight.shape[0], dtype=weight.dtype) if bias is None else bias.detach()
    for _name, module in model.named_modules():
        for child_name, child in module.named_children():
            if child is decoder:
                setattr(module, child_name, torch.nn.Identity())
                return weight, bias
    raise SetupError(f"could not locate the vocabulary projection of {type(model).__name__}")
