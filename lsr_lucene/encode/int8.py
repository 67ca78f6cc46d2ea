"""int8 document encoding on CPU (``--dtype int8``): the vocabulary projection as an int8 product pooled in int32.

The masked-LM head (hidden → vocabulary logits at every position) is most of an encoder's work. Here its weights
are int8 with one scale per vocabulary term, a document's hidden states int8 with one scale for the document (so
its vector does not depend on the documents it is batched with), and ``torch._int_mm`` (VNNI/AMX int8 kernels)
gives int32 logits whose max (and min) over positions is taken before scaling back: ``max_p(s_d·s_v·acc) =
s_d·s_v·max_p(acc)`` for positive scales, so only the pooled row is converted. The transformer stays fp32:
dynamic int8 quantisation of its Linear layers (``torch.ao.quantization.quantize_dynamic``) moved splade-tiny's
SciFact weights by 4 units of 1/100 on average (max 41), the int8 projection alone by 1.1 (max 11).
"""
from __future__ import annotations

import torch

CHUNK = 1024  # vocabulary terms per int8 product: a position block's int32 logits stay in cache
_QMAX = 127


class Int8Projection:
    """The vocabulary projection ``h @ W.T + b`` in int8, pooled (max, and min when asked) over a text's positions."""

    def __init__(self, weight: torch.Tensor, bias: torch.Tensor, chunk: int = CHUNK):
        weight = weight.detach().float()
        self.vocab, self.hidden = weight.shape
        self.scales = weight.abs().amax(dim=1).clamp_min(1e-12) / _QMAX  # one per vocabulary term
        quantised = torch.round(weight / self.scales[:, None]).clamp_(-_QMAX, _QMAX).to(torch.int8)
        self.bias = bias.detach().float()
        self.chunks: list[tuple[int, int, torch.Tensor]] = []
        for start in range(0, self.vocab, chunk):
            end = min(self.vocab, start + chunk)
            block = quantised[start:end]
            if (end - start) % 8:  # int8 kernels want whole groups of 8 columns: zero terms, sliced off
                block = torch.cat([block, block.new_zeros(8 - (end - start) % 8, self.hidden)])
            self.chunks.append((start, end, block.T.contiguous()))

    def pooled(self, hidden: torch.Tensor, lengths: list[int], need_min: bool
               ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Per text (its first ``lengths[i]`` positions of ``hidden``), the max (and min) raw logit of every term."""
        batch = hidden.shape[0]
        raw_max = torch.empty((batch, self.vocab), dtype=torch.float32)
        raw_min = torch.empty((batch, self.vocab), dtype=torch.float32) if need_min else None
        acc_max = torch.empty(self.vocab, dtype=torch.int32)
        acc_min = torch.empty(self.vocab, dtype=torch.int32) if need_min else None
        for row, length in enumerate(lengths):
            states = hidden[row, :length].float()
            scale = states.abs().amax().clamp_min(1e-12) / _QMAX  # the text's own scale: batch-independent
            states = torch.round(states / scale).clamp_(-_QMAX, _QMAX).to(torch.int8)
            for start, end, block in self.chunks:
                logits = torch._int_mm(states, block)
                acc_max[start:end] = logits.amax(dim=0)[:end - start]
                if acc_min is not None:
                    acc_min[start:end] = logits.amin(dim=0)[:end - start]
            factor = scale * self.scales
            raw_max[row] = acc_max.float() * factor + self.bias  # int32 sums stay exact in fp32 (< 2^24)
            if raw_min is not None:
                raw_min[row] = acc_min.float() * factor + self.bias
        return raw_max, raw_min
