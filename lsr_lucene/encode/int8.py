"""int8 document encoding on CPU (``--dtype int8``): the vocabulary projection as an int8 product pooled in int32.

The masked-LM head (hidden → vocabulary logits at every position) is most of an encoder's work. Here its weights
are int8 with one scale per vocabulary term, a document's hidden states int8 with one scale for the document (so
its vector does not depend on the documents it is batched with), and ``torch._int_mm`` (VNNI/AMX int8 kernels;
exact float64 products on CPUs where it saturates, see :func:`int_mm_is_exact`) gives int32 logits (terms ×
positions) whose max (and min) over positions is taken before scaling back: ``max_p(s_d·s_v·acc) =
s_d·s_v·max_p(acc)`` for positive scales, so only the pooled row is converted.
The transformer runs as a bf16 copy with eager attention where the CPU has native bf16 (``bf16_transformer``), else
in fp32: dynamic int8 quantisation of its Linear layers (``torch.ao.quantization.quantize_dynamic``, deprecated
by torch) moved splade-tiny's SciFact weights by 4 units of 1/100 on average (max 41) and was no faster
than bf16 (1.79 against 1.76 ms per SciFact abstract, one thread, AVX512_BF16).
"""
from __future__ import annotations

import copy
import time

import torch

CHUNK = 4096  # vocabulary terms per int8 product (a text's int32 logits block: CHUNK × positions)
_QMAX = 127
_EXACT_INT_MM: list[bool] = []  # whether torch._int_mm is exact on this CPU (probed once)
LAYOUTS = ("terms x positions", "positions x terms")  # of a text's int32 logits block (``Int8Projection``)
_LAYOUT: dict[tuple, str] = {}  # the faster layout per block shape on this CPU (timed once)


def int_mm_is_exact() -> bool:
    """Whether ``torch._int_mm`` gives exact int32 products here: without VNNI/AMX, oneDNN's AVX2 int8 kernels add
    u8×s8 pairs in saturating int16 (vpmaddubsw), so large products come out wrong (weights off by up to 116/100)."""
    if not _EXACT_INT_MM:
        generator = torch.Generator().manual_seed(0)
        a = torch.randint(-_QMAX, _QMAX + 1, (32, 256), generator=generator, dtype=torch.int8)
        b = torch.randint(-_QMAX, _QMAX + 1, (256, 64), generator=generator, dtype=torch.int8)
        a[0], b[:, 0] = _QMAX, _QMAX  # the largest pair sums, where int16 saturates
        try:
            exact = bool(torch.equal(torch._int_mm(a, b).long(), (a.double() @ b.double()).long()))
        except RuntimeError:  # no int8 kernel at all
            exact = False
        _EXACT_INT_MM.append(exact)
    return _EXACT_INT_MM[0]


def int8_product(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``a @ b`` of int8 matrices as exact int32: ``torch._int_mm`` where it is exact, else in float64 (exact for
    every int8 product of these sizes; no faster than fp32, but never wrong)."""
    if int_mm_is_exact():
        return torch._int_mm(a, b)
    return (a.double() @ b.double()).to(torch.int32)


def time_layouts(blocks: list[torch.Tensor], length: int = 240, repeats: int = 3) -> dict[str, float]:
    """Seconds (one thread's CPU time, best of ``repeats``, interleaved) to project and pool one random ``length``-token
    text with ``blocks`` (terms × hidden) in each layout of ``LAYOUTS``."""
    hidden = blocks[0].shape[1]
    text = torch.randint(-_QMAX, _QMAX + 1, (length, hidden), generator=torch.Generator().manual_seed(0),
                         dtype=torch.int8)
    columns = text.T.contiguous()
    transposed = [block.T.contiguous() for block in blocks]
    runs = {"terms x positions": lambda: [int8_product(b, columns).amax(dim=1) for b in blocks],
            "positions x terms": lambda: [int8_product(text, b).amax(dim=0) for b in transposed]}
    best = dict.fromkeys(runs, float("inf"))
    previous = torch.get_num_threads()
    torch.set_num_threads(1)  # as the encoder's workers run
    try:
        with torch.inference_mode():
            for run in runs.values():  # warm-up
                run()
            for _ in range(repeats):
                for name, run in runs.items():
                    started = time.thread_time()
                    run()
                    best[name] = min(best[name], time.thread_time() - started)
    finally:
        torch.set_num_threads(previous)
    return best


def choose_layout(blocks: list[torch.Tensor], timer=time_layouts) -> str:
    """The faster layout on this CPU (cached per shape): the results are the same int32 maxima either way, only the
    speed differs (terms × positions 2.43 against 2.76 ms per 240-token text on AVX512_VNNI, one thread). With the
    float64 fallback (no exact int8 kernels) there is nothing to gain: terms × positions."""
    if not int_mm_is_exact():
        return LAYOUTS[0]
    key = (len(blocks), *blocks[0].shape)
    if key not in _LAYOUT:
        seconds = timer(blocks)
        _LAYOUT[key] = min(LAYOUTS, key=lambda name: seconds[name])
    return _LAYOUT[key]


class Int8Projection:
    """The vocabulary projection ``h @ W.T + b`` in int8, pooled (max, and min when asked) over a text's positions.

    ``layout``: "terms x positions" (int32 logits with a row per term, pooled along rows) or "positions x terms"
    (pooled down columns); None picks the faster on this CPU (``choose_layout``). Both give the same maxima."""

    def __init__(self, weight: torch.Tensor, bias: torch.Tensor, chunk: int = CHUNK, layout: str | None = None):
        weight = weight.detach().float()
        self.vocab, self.hidden = weight.shape
        self.scales = weight.abs().amax(dim=1).clamp_min(1e-12) / _QMAX  # one per vocabulary term
        quantised = torch.round(weight / self.scales[:, None]).clamp_(-_QMAX, _QMAX).to(torch.int8)
        self.bias = bias.detach().float()
        blocks = []  # terms × hidden int8 blocks
        for start in range(0, self.vocab, chunk):
            block = quantised[start:start + chunk]
            if len(block) % 8:  # whole groups of 8 terms for the int8 kernels: zero terms, sliced off at the end
                block = torch.cat([block, block.new_zeros(8 - len(block) % 8, self.hidden)])
            blocks.append(block.contiguous())
        if layout is not None and layout not in LAYOUTS:
            raise ValueError(f"layout must be one of {LAYOUTS}, got {layout!r}")
        self.layout = layout or choose_layout(blocks)
        self.by_terms = self.layout == LAYOUTS[0]
        # (first term, block): terms × hidden for "terms x positions", hidden × terms for "positions x terms"
        self.chunks = [(start, block if self.by_terms else block.T.contiguous())
                       for start, block in zip(range(0, self.vocab, chunk), blocks)]
        self.width = self.chunks[-1][0] + len(blocks[-1])

    def pooled(self, hidden: torch.Tensor, lengths: list[int], need_min: bool
               ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Per text (its first ``lengths[i]`` positions of ``hidden``), the max (and min) raw logit of every term."""
        batch, length, _ = hidden.shape
        hidden = hidden.float()
        keep = torch.arange(length)[None, :] < torch.tensor(lengths)[:, None]
        # each text's own scale (not the batch's): its vector does not depend on the texts it is batched with
        scale = hidden.abs().masked_fill(~keep[..., None], 0).amax(dim=(1, 2)).clamp_min(1e-12) / _QMAX
        states = torch.round(hidden / scale[:, None, None]).clamp_(-_QMAX, _QMAX).to(torch.int8)
        acc_max = torch.empty((batch, self.width), dtype=torch.int32)
        acc_min = torch.empty((batch, self.width), dtype=torch.int32) if need_min else None
        axis = 1 if self.by_terms else 0  # positions: the rows' length (terms × positions) or the columns'
        for row, count in enumerate(lengths):
            # positions padded to whole groups of 8 with copies of the first, which change neither max nor min
            text = states[row, :count]
            if count % 8:
                text = torch.cat([text, text[:1].expand(8 - count % 8, -1)])
            columns = text.T.contiguous() if self.by_terms else text
            for start, block in self.chunks:
                terms = block.shape[1 - axis]
                logits = int8_product(block, columns) if self.by_terms else int8_product(columns, block)
                torch.amax(logits, dim=axis, out=acc_max[row, start:start + terms])
                if acc_min is not None:
                    torch.amin(logits, dim=axis, out=acc_min[row, start:start + terms])
        factor = scale[:, None] * self.scales[None, :]
        # int32 sums are exact in fp32 below 2^24 (127·127·hidden: hidden sizes up to 1040)
        raw_max = acc_max[:, :self.vocab].float() * factor + self.bias
        raw_min = acc_min[:, :self.vocab].float() * factor + self.bias if acc_min is not None else None
        return raw_max, raw_min


def bf16_transformer(net: torch.nn.Module) -> torch.nn.Module:
    """A bf16 copy of ``net`` with eager attention, for documents on CPUs with native bf16: no per-call weight casts
    (autocast's), and bf16 batched products and softmax instead of torch's CPU flash-attention kernel, which is
    slow for BERT's padded batches (splade-tiny, SciFact abstracts, one thread, AVX512_BF16: 1.32 ms per text against
    1.85 under autocast). The original ``net`` (queries, fp32) is left as it is."""
    documents = copy.deepcopy(net).to(torch.bfloat16).eval()
    if hasattr(documents, "set_attn_implementation"):  # transformers 5; older versions keep their default
        documents.set_attn_implementation("eager")
    return documents
