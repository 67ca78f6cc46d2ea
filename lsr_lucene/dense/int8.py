"""int8 dense encoding on CPU (``--dtype int8``, the dense leg's default): every Linear layer of the transformer as an
int8 × int8 → int32 product (``encode.int8.int8_product``: VNNI kernels, exact float64 where they saturate).

Weights are int8 with one scale per output channel; activations int8 with one scale per token row, so a text's
vector depends on its own tokens only (not on the texts or the padding it is batched with, unlike torch's dynamic
quantisation, whose one scale per batch moved all-MiniLM-L6-v2's NPL vectors to a mean cosine of 0.93 with fp32).
Attention products, softmax, LayerNorm and GELU stay in fp32.
"""
from __future__ import annotations

import copy
import threading

import torch

from lsr_lucene.encode.int8 import int8_product

_QMAX = 127
_LAST = threading.local()  # per thread: (input, int8 rows, scales) of the latest shared-input Int8Linear call
SHARED = ("attention.self.query", "attention.self.key", "attention.self.value")


class Int8Linear(torch.nn.Module):
    """``x @ W.T + b`` with W int8 (per output channel) and x int8 per row, accumulated in int32."""

    def __init__(self, linear: torch.nn.Linear, shared_input: bool = False):
        super().__init__()
        self.shared_input = shared_input  # attention's query, key and value: the same input, quantised once
        weight = linear.weight.detach().float()
        self.weight_scales = weight.abs().amax(dim=1).clamp_min(1e-12) / _QMAX
        self.weight_t = torch.round(weight / self.weight_scales[:, None]).clamp_(-_QMAX, _QMAX).to(torch.int8).T
        self.weight_t = self.weight_t.contiguous()  # in × out, the right operand of the int8 product
        self.bias = None if linear.bias is None else linear.bias.detach().float()
        self.out_features = linear.out_features

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shape = x.shape
        quantised, scales = _quantised_rows(x, self.shared_input)
        out = int8_product(quantised, self.weight_t).float().mul_(scales)
        out = torch.addcmul(self.bias, out, self.weight_scales) if self.bias is not None else out.mul_(
            self.weight_scales)
        return out.reshape(*shape[:-1], self.out_features)


def _quantised_rows(x: torch.Tensor, shared: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """x's rows as int8 with one scale each; with ``shared``, the thread's last shared input is reused when x is
    that very tensor (attention's query, key and value layers read the same hidden states, unchanged in between)."""
    last = getattr(_LAST, "entry", None) if shared else None
    if last is not None and last[0] is x:
        return last[1], last[2]
    rows = x.reshape(-1, x.shape[-1]).float()
    # max |x| per row (amax and amin: a tenth of the time of vector_norm's inf norm on CPU); |round(x / (max|x| /
    # 127))| <= 127, so no clamp is needed
    scales = torch.maximum(rows.amax(dim=1, keepdim=True), rows.amin(dim=1, keepdim=True).neg_())
    scales = scales.clamp_min_(1e-12).div_(_QMAX)
    quantised = rows.div(scales).round_().to(torch.int8)
    if shared:
        _LAST.entry = (x, quantised, scales)
    return quantised, scales


def int8_transformer(net: torch.nn.Module) -> torch.nn.Module:
    """A copy of ``net`` whose encoder's Linear layers are :class:`Int8Linear` (the pooler, unused here, is left)."""
    quantised = copy.deepcopy(net).eval()
    for name, module in list(quantised.named_modules()):
        for child_name, child in list(module.named_children()):
            path = f"{name}.{child_name}"
            if isinstance(child, torch.nn.Linear) and "pooler" not in path:
                setattr(module, child_name, Int8Linear(child, path.endswith(SHARED)))
    return quantised
