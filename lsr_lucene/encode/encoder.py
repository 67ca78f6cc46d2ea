"""SparseEncoder: a masked-LM turned into sparse {term: weight} vectors (SPLADE or signed SNReLU).

Fast path: the vocabulary projection is done in chunks of the vocabulary and pooled over positions on
RAW logits (activations are monotone, so pooling commutes with them), never materialising a
batch × length × vocabulary tensor; texts are encoded in length-sorted batches (order restored).
``dtype="int8"`` (CPU, documents): the projection in int8 (lsr_lucene.encode.int8), the transformer a bf16 copy with
eager attention where the CPU has native bf16, else fp32.
On CPUs with native bf16, a bf16 projection screens out the terms that are provably zero and only
the few hundred remaining terms per text are computed in fp32 (see ``SparseEncoder._screened``).
Documents' transformer and SoftSDM top-k projection run in fp32 (the default) or bf16 (``dtype="bf16"``, or
``"auto"``: whichever is faster on this machine); queries always in fp32, so that a query's vector does not depend
on the batch it is padded in (lsr_lucene.encode.precision).
With ``threads`` > 1, batches run in parallel worker threads (one torch thread each).
The result equals the naive ``pool(activate(model(...).logits))`` computation (``encode_naive``).

CLI: ``lsr-lucene encode`` (lsr_lucene.encode.cli).
"""
from __future__ import annotations

import dataclasses
import itertools
import json
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import torch

from lsr_lucene.encode import activations as act
from lsr_lucene.encode import negative_head as nh
from lsr_lucene.encode import precision as prec
from lsr_lucene.encode.choices import DEFAULT_BATCH_SIZE
from lsr_lucene.encode.projection import SCREEN_BOUND, bf16_matmul_is_fast, swap_output_embeddings
from lsr_lucene.errors import InputError, SetupError

MODEL_CONFIG = "lsr_lucene.json"  # optional file in a model directory: activation, pooling, epsilon, negative_head
DTYPES = prec.DTYPES  # resolved precisions (recorded in outputs); SparseEncoder also takes "auto"
# elements of one (positions × vocabulary chunk) logits block: small enough to stay in cache
_BLOCK_ELEMENTS = 1 << 20
_DEVICE_BLOCK_ELEMENTS = 1 << 27  # on a GPU: few, large products (256 MB of bf16 logits at most)


def model_config(model: str) -> dict:
    """Activation/pooling/epsilon saved beside a local model (``lsr_lucene.json``); {} when none."""
    from lsr_lucene.encode.models import resolve

    try:
        target = Path(resolve(model))
    except SetupError:
        return {}
    path = target / MODEL_CONFIG
    if not path.is_file():
        return {}
    try:
        config = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise SetupError(f"{path}: malformed JSON ({exc.msg})") from None
    if not isinstance(config, dict):
        raise SetupError(f"{path}: expected a JSON object")
    return {k: config[k] for k in ("activation", "pooling", "epsilon", "negative_head") if config.get(k) is not None}


class SparseEncoder:
    """SPLADE-style sparse encoder: text -> {WordPiece term: weight}, with SPLADE or signed SNReLU activation."""

    def __init__(self, model: str = "splade-tiny", max_length: int = 512, query_max_length: int = 64,
                 threads: int | None = None, dtype: str = prec.DEFAULT, activation: str | None = None,
                 pooling: str | None = None, epsilon: float | None = None, device: str | None = None,
                 screen: bool | None = None, device_quantise: bool | None = None):
        from lsr_lucene.encode.models import load

        if dtype not in prec.PRECISIONS:
            raise InputError(f"dtype must be one of {', '.join(prec.PRECISIONS)}, got {dtype!r}")
        saved = model_config(model)
        self.activation = activation or saved.get("activation", "splade")
        self.pooling = pooling or saved.get("pooling", "max")
        self.epsilon = float(epsilon if epsilon is not None else saved.get("epsilon", act.DEFAULT_EPSILON))
        if self.activation not in act.ACTIVATIONS:
            raise InputError(f"activation must be one of {', '.join(act.ACTIVATIONS)}, got {self.activation!r}")
        if self.pooling not in act.POOLINGS:
            raise InputError(f"pooling must be one of {', '.join(act.POOLINGS)}, got {self.pooling!r}")
        if threads is not None and int(threads) < 1:
            raise InputError(f"threads must be at least 1, got {threads}")
        self.threads = int(threads) if threads else torch.get_num_threads()
        self.model_name = model
        self.max_length = int(max_length)
        self.query_max_length = int(query_max_length)
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        self.tokenizer, net = load(model)
        self._weight, self._bias = swap_output_embeddings(net)
        self.net = net.to(self.device).eval()
        self._weight = self._weight.to(self.device, torch.float32).contiguous()
        self._bias = self._bias.to(self.device, torch.float32)
        self.precision = prec.resolve(dtype, self.device, self._weight.shape[1], self._weight.shape[0])
        self.dtype = self.precision.dtype  # resolved: fp32 or bf16 (recorded with outputs, compared on resume)
        self._head: Any = None  # a torch.nn.Module: signed head (negative_head.py), when the model was trained with one
        self._head_kind = saved.get("negative_head")
        self._int8 = None  # --dtype int8: the int8 vocabulary projection (documents only)
        if self.dtype == "int8":
            from lsr_lucene.encode.int8 import Int8Projection

            if self._head_kind:
                raise InputError(f"--dtype int8: model {model!r} has a negative head; use fp32 or bf16")
            self._int8 = Int8Projection(self._weight, self._bias)
            # the logits layout timed faster on this CPU (same vectors either way), recorded with the outputs
            self.precision = dataclasses.replace(
                self.precision, reason=f"{self.precision.reason}, int8 logits {self._int8.layout}")
        # int8 documents: the transformer as a bf16 copy (eager attention) where the CPU computes bf16 natively
        self._documents_net = None
        if self.dtype == "int8" and prec.native_bf16(prec.cpu_features()):
            from lsr_lucene.encode.int8 import bf16_transformer

            self._documents_net = bf16_transformer(self.net)
        prec.announce(self.precision)
        if self._head_kind:
            from lsr_lucene.encode.models import resolve

            if self.activation != "snrelu":
                raise InputError(f"model {model!r} has a negative head, which needs the snrelu activation")
            nh.check_kind(self._head_kind, f"model {model!r} ({MODEL_CONFIG})")
            self._head = nh.load(resolve(model), self._head_kind).to(self.device).eval()
            if self._head_kind == "scope":
                self._scope = nh.NegationScope(self.tokenizer, int(self._head.window))
        # bf16 screening: its error bound covers the MLM logits only, so not with a negative head; on a GPU too
        # (with fp32 accumulation of bf16 products, which the bound assumes)
        cuda = self.device.type == "cuda"
        if screen is None:
            screen = bf16_matmul_is_fast(self.device) or cuda
        self._screen = self._head is None and bool(screen)
        if cuda and self._screen:
            torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
        # documents quantised and selected on the device (``encode_documents_quantised``), several windows in flight
        self.quantises_on_device = cuda if device_quantise is None else bool(device_quantise)
        self.pipeline_depth = 3 if cuda else 1
        # worker processes that tokenise and format JSON lines for ``write_vectors`` (lsr_lucene.encode.pipeline;
        # 0: windows in threads of this process, as on CPU)
        from lsr_lucene.encode.pipeline import default_workers

        self.host_workers = default_workers(self.device) if self.quantises_on_device else 0
        self._pipeline = None
        # while windows are in flight: Python's GIL switch interval (5 ms by default), so that the thread launching
        # kernels gets the GIL back quickly from the threads tokenising and formatting JSON
        self.switch_interval = 1e-4
        self._fast_tokenizers: dict[int, Any] = {}  # encode.device.FastTokenizer by max length
        self._weight_bf16 = self._weight.to(torch.bfloat16) if self._screen else None
        self._weight_norms = self._weight.norm(dim=-1)
        self._dense_fraction = 0.25  # above this share of candidate terms, screening falls back to plain fp32
        vocab = self.tokenizer.get_vocab()
        self.vocab = [""] * max(len(vocab), self._weight.shape[0])
        for token, index in vocab.items():
            if index < len(self.vocab):
                self.vocab[index] = token
        self._pad_id = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0
        self._special_ids = set(self.tokenizer.all_special_ids)
        model_limit = getattr(getattr(net, "config", None), "max_position_embeddings", None)
        for name, value in (("max_length", self.max_length), ("query_max_length", self.query_max_length)):
            if value < 2 or (model_limit and value > model_limit):
                raise InputError(f"{name} (--{name.replace('_', '-')}) {value} is outside "
                                 f"2..{model_limit or 'model limit'}, the model's positions")

    # ---- settings -------------------------------------------------------------------------------------
    def adopt_dtype(self, recorded: str | None) -> bool:
        """Under ``auto``, switch to the precision an output being resumed was made with; True when it changed."""
        if self.precision.requested != "auto" or recorded not in ("fp32", "bf16") or recorded == self.dtype:
            return False
        topk = recorded if self.device.type == "cpu" else self.precision.topk
        self.precision = prec.Precision("auto", recorded, topk, self.precision.capability,
                                        "resuming an output made in this precision", self.precision.processor)
        self.dtype = recorded
        prec.announce(self.precision)
        return True

    def window_pipeline(self):
        """The process pipeline ``io.vectors.write_vectors`` hands windows to (``encode.pipeline.WindowPipeline``,
        kept for later calls), or None: with ``host_workers`` 0, without device quantisation or a fast tokenizer."""
        if self.host_workers < 1 or not self.quantises_on_device or not self.tokenizer.is_fast:
            return None
        if self._pipeline is None or self._pipeline.workers != self.host_workers:
            from lsr_lucene.encode.pipeline import WindowPipeline

            if self._pipeline is not None:
                self._pipeline.close()
            try:
                self._pipeline = WindowPipeline(self, self.host_workers)
            except OSError as exc:  # no process support here (e.g. no /dev/shm for its locks): threads instead
                print(f"warning: no worker processes for encoding ({exc}); tokenising in threads", file=sys.stderr)
                self._pipeline, self.host_workers = None, 0
        return self._pipeline

    def close(self) -> None:
        """Stop the worker processes of ``window_pipeline`` (they also stop when this process exits)."""
        if self._pipeline is not None:
            self._pipeline.close()
            self._pipeline = None

    def settings(self) -> dict:
        """Encoder settings recorded with vectors (and checked when resuming)."""
        from lsr_lucene.encode.models import REGISTRY

        model = self.model_name
        if model not in REGISTRY and Path(model).is_dir():
            model = str(Path(model).resolve())
        return {"model": model, "max_length": self.max_length, "activation": self.activation,
                "pooling": self.pooling, "epsilon": self.epsilon, "dtype": self.dtype}

    # ---- internals ------------------------------------------------------------------------------------
    def _tokenize(self, texts: Sequence[str], max_length: int) -> list[list[int]]:
        enc = self.tokenizer(list(texts), max_length=max_length, truncation=True, padding=False,
                             return_attention_mask=False, return_token_type_ids=False)
        return enc["input_ids"]

    def _pad(self, ids: Sequence[Sequence[int]]) -> tuple[torch.Tensor, torch.Tensor]:
        lengths = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
        length = int(lengths.max())
        input_ids = np.full((len(ids), length), self._pad_id, dtype=np.int64)
        mask = (np.arange(length)[None, :] < lengths[:, None])
        input_ids[mask] = np.fromiter(itertools.chain.from_iterable(ids), dtype=np.int64, count=int(lengths.sum()))
        return self._to_device(input_ids, mask.astype(np.int64))

    def _to_device(self, input_ids: np.ndarray, mask: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
        """A padded batch's int64 ids and mask as tensors on the encoder's device, in plain blocking copies: each batch
        is a few hundred KB and waits for its results anyway, and pinning each one first (``pin_memory()`` with a
        non-blocking copy) made the copies-in 9x slower on an H100 and fp32 end to end 1.8x slower
        (runs/encode/README.md, device run 8)."""
        return torch.from_numpy(input_ids).to(self.device), torch.from_numpy(mask).to(self.device)

    def _hidden(self, input_ids: torch.Tensor, mask: torch.Tensor, queries: bool = False) -> torch.Tensor:
        """Transformed hidden states fed to the vocabulary projection (batch, length, hidden); for ``queries``
        always in fp32, for documents in the encoder's precision."""
        dtype = prec.QUERY_DTYPE if queries else self.dtype
        if dtype == "int8" and self._documents_net is not None:
            out = self._documents_net(input_ids=input_ids, attention_mask=mask)
            return out.logits if hasattr(out, "logits") else out[0]
        with torch.autocast(self.device.type, dtype=torch.bfloat16, enabled=dtype == "bf16"):
            out = self.net(input_ids=input_ids, attention_mask=mask)
        return out.logits if hasattr(out, "logits") else out[0]

    def _pooled_raw(self, hidden: torch.Tensor, mask: torch.Tensor, need_min: bool, weight: torch.Tensor,
                    sign: torch.Tensor | None = None):
        """Per-term max (and min) of raw logits over unmasked positions, projected chunk by chunk
        (of ``sign * gate(logit)`` when a scope head's ``sign`` is given)."""
        batch, length, dim = hidden.shape
        keep = mask.bool()
        if not bool(keep.all()):
            # padded positions get a copy of position 0's state: a duplicate changes neither max nor min
            hidden = torch.where(keep.unsqueeze(-1), hidden, hidden[:, :1])
            if sign is not None:
                sign = torch.where(keep, sign, sign[:, :1])
        flat = hidden.reshape(batch * length, dim).to(weight.dtype)
        vocab = weight.shape[0]
        block = _BLOCK_ELEMENTS if hidden.device.type == "cpu" else _DEVICE_BLOCK_ELEMENTS
        chunk = max(256, min(vocab, block // max(1, batch * length)))
        raw_max = torch.empty((batch, vocab), dtype=torch.float32, device=hidden.device)
        raw_min = torch.empty((batch, vocab), dtype=torch.float32, device=hidden.device) if need_min else None
        for start in range(0, vocab, chunk):
            end = min(vocab, start + chunk)
            logits = (flat @ weight[start:end].T).view(batch, length, end - start)
            if sign is not None:
                logits = nh.scoped(logits + self._bias[start:end], sign, self.epsilon)
            raw_max[:, start:end] = logits.amax(dim=1)
            if raw_min is not None:  # need_min (separate reductions: aminmax is far slower on bf16)
                raw_min[:, start:end] = logits.amin(dim=1)
        if sign is None:
            raw_max += self._bias
            if raw_min is not None:
                raw_min += self._bias
        return raw_max, raw_min

    def _signs(self, hidden: torch.Tensor, input_ids: torch.Tensor) -> torch.Tensor | None:
        """A scope head's per-position signs (batch, length), or None for other models."""
        return self._head(hidden, self._scope(input_ids)) if self._head_kind == "scope" else None

    def _weights(self, hidden: torch.Tensor, mask: torch.Tensor, input_ids: torch.Tensor,
                 queries: bool = False) -> torch.Tensor:
        """Pooled, activated term weights (batch, vocabulary) for a padded batch (``queries``: never int8)."""
        need_min = act.needs_min(self.activation, self.pooling)
        hidden = hidden.float()
        if self._int8 is not None and not queries:
            raw_max, raw_min = self._int8.pooled(hidden, mask.sum(dim=1).tolist(), need_min)
            return act.pool_raw(raw_max, raw_min, self.activation, self.pooling, self.epsilon)
        if self._screen:
            return self._screened(hidden, mask, need_min)
        raw_max, raw_min = self._pooled_raw(hidden, mask, need_min, self._weight, self._signs(hidden, input_ids))
        if self._head_kind == "mean":
            raw_max, raw_min = nh.pooled_out(raw_max, raw_min, self._head(hidden, mask), self.epsilon)
        return act.pool_raw(raw_max, raw_min, self.activation, self.pooling, self.epsilon)

    def _screened(self, hidden: torch.Tensor, mask: torch.Tensor, need_min: bool) -> torch.Tensor:
        """Exact fp32 weights at bf16 cost: a bf16 projection finds the terms that can be non-zero, fp32 redoes those.

        The bf16 logit of term v differs from the fp32 one by at most SCREEN_BOUND·||h||·||w_v||
        (two bf16 input roundings, one bf16 output rounding, fp32 accumulation), so a term whose bf16
        max (min) stays outside the non-zero region by that margin is exactly zero; the others
        (a few hundred per text) are recomputed in fp32 over the text's own positions.
        """
        approx_max, approx_min = self._pooled_raw(hidden, mask, need_min, self._weight_bf16)
        keep = mask.bool()
        norms = hidden.norm(dim=-1).masked_fill(~keep, 0).amax(dim=1)  # (batch,)
        margin = SCREEN_BOUND * norms[:, None] * self._weight_norms[None, :]
        if self.activation == "splade":
            candidates = approx_max + margin > 0
        else:
            low = approx_min if need_min else approx_max
            candidates = (approx_max + margin > self.epsilon) | (low - margin < -self.epsilon)
        count = int(candidates.sum(dim=1).max())
        if count == 0:
            return torch.zeros_like(approx_max)
        if count > self._dense_fraction * approx_max.shape[1]:
            # not sparse (e.g. an untrained signed model): the plain fp32 projection is cheaper
            raw_max, raw_min = self._pooled_raw(hidden, mask, need_min, self._weight)
            return act.pool_raw(raw_max, raw_min, self.activation, self.pooling, self.epsilon)
        # candidate term ids per text, padded to the largest count (padding slots flagged invalid)
        index = torch.topk(candidates.to(torch.float32), count, dim=1, sorted=False).indices  # (batch, count)
        valid = candidates.gather(1, index)
        if not bool(keep.all()):  # padded positions copy position 0: neither max nor min changes
            hidden = torch.where(keep.unsqueeze(-1), hidden, hidden[:, :1])
        logits = torch.bmm(hidden, self._weight[index].transpose(1, 2)) + self._bias[index].unsqueeze(1)
        raw_max = logits.amax(dim=1)
        raw_min = logits.amin(dim=1) if need_min else None
        exact = act.pool_raw(raw_max, raw_min, self.activation, self.pooling, self.epsilon)
        weights = torch.zeros_like(approx_max)
        weights.scatter_(1, index, torch.where(valid, exact, torch.zeros_like(exact)))
        return weights

    @staticmethod
    def _batches(lengths: Sequence[int], batch_size: int, unpadded: bool = False,
                 groups: Sequence | None = None) -> list[list[int]]:
        """The batches (lists of text indices) of ``_run_batches``: texts sorted by decreasing length (ties in input
        order), cut every ``batch_size``; never mixing ``groups`` keys, and with ``unpadded`` never mixing lengths."""
        if groups is not None:
            keys = list(dict.fromkeys(groups))  # in order of first appearance
            rank = {key: number for number, key in enumerate(keys)}
            order = sorted(range(len(lengths)), key=lambda i: (rank[groups[i]], -lengths[i], i))
            runs = [list(run) for _, run in itertools.groupby(order, key=lambda i: rank[groups[i]])]
        else:
            order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
            runs = [order]
        if unpadded:
            runs = [list(group) for run in runs for _, group in itertools.groupby(run, key=lambda i: lengths[i])]
        return [run[start:start + batch_size] for run in runs for start in range(0, len(run), batch_size)]

    def _run_batches(self, ids: list[list[int]], batch_size: int, work, progress=None,
                     unpadded: bool = False, groups: Sequence | None = None) -> list:
        """Apply ``work(input_ids, mask) -> per-row results`` to length-sorted batches; results in input order.

        ``groups``: a key per text; a batch never mixes keys (longdocs batches a segment with segments of the same
        number only, so that raising the segment cap leaves the batches of the first segments as they were).

        ``unpadded``: each batch holds texts of one length only (queries), so no text is padded and its result
        does not depend on the texts it is batched with (padding moves fp32 results by an ulp or so).
        On CPU with several threads, batches run in parallel Python threads with one torch thread each:
        independent batches scale better than intra-op threads (no barrier per small operation).
        """
        batches = self._batches([len(i) for i in ids], batch_size, unpadded, groups)

        def run(rows: list[int]) -> list:
            with torch.inference_mode():
                input_ids, mask = self._pad([ids[i] for i in rows])
                return work(input_ids, mask)

        results: list = [None] * len(ids)
        # on CPU every batch runs on one torch thread (in ``threads`` worker threads): a batch's result then depends on
        # its texts alone, not on the thread count or on how many batches its window has (MKL sums differ by threads)
        cpu = self.device.type == "cpu"
        parallel = cpu and self.threads > 1 and len(batches) > 1
        previous = torch.get_num_threads()
        if cpu:
            torch.set_num_threads(1)
        try:
            if parallel:
                pool = ThreadPoolExecutor(max_workers=self.threads, thread_name_prefix="lsr-encode")
                outputs = pool.map(run, batches)
            else:
                pool, outputs = None, map(run, batches)
            try:
                for rows, batch_results in zip(batches, outputs):
                    for row, value in zip(rows, batch_results):
                        results[row] = value
                    if progress is not None:
                        progress.update(len(rows))
            finally:
                if pool is not None:
                    pool.shutdown(wait=True, cancel_futures=True)
        finally:
            if cpu:
                torch.set_num_threads(previous)
        return results

    def _encode_ids(self, ids: list[list[int]], batch_size: int, desc: str | None = None,
                    queries: bool = False) -> list[dict[str, float]]:
        progress = None
        if desc:
            from lsr_lucene.progress import progress_bar

            progress = progress_bar(total=len(ids), desc=desc, unit=" texts", file=sys.stderr, leave=False)
        try:
            return self._run_batches(ids, batch_size, lambda input_ids, mask: self._to_dicts(
                self._weights(self._hidden(input_ids, mask, queries), mask, input_ids, queries)), progress,
                unpadded=queries)
        finally:
            if progress is not None:
                progress.close()

    def _to_dicts(self, weights: torch.Tensor) -> list[dict[str, float]]:
        weights = weights.float().cpu()
        out = []
        for row in weights:
            index = torch.nonzero(row).squeeze(1)
            values = row[index].tolist()
            out.append({self.vocab[i]: v for i, v in zip(index.tolist(), values)})
        return out

    # ---- public API -----------------------------------------------------------------------------------
    def encode_documents(self, texts: Sequence[str], batch_size: int = DEFAULT_BATCH_SIZE,
                         progress: bool = False) -> list[dict[str, float]]:
        """Sparse vectors {term: float weight} of documents (truncated at ``max_length`` tokens), in input order."""
        if not texts:
            return []
        ids = self._tokenize(texts, self.max_length)
        return self._encode_ids(ids, batch_size, "encoding" if progress else None)

    def encode_documents_quantised(self, texts: Sequence[str], scale: float, batch_size: int = DEFAULT_BATCH_SIZE
                                   ) -> list[dict[str, int] | None]:
        """Impact vectors {term: round(|w| × scale)} of documents (``neg_<term>`` for negative weights; None for a
        document with a non-finite weight), pooled, rounded and selected on the device (lsr_lucene.encode.device):
        the same as ``io.vectors.quantise`` of ``encode_documents``, with only nonzero impacts copied back."""
        from lsr_lucene.encode import device as dev

        if not texts:
            return []
        if self.tokenizer.is_fast:
            if self.max_length not in self._fast_tokenizers:
                self._fast_tokenizers[self.max_length] = dev.FastTokenizer(self.tokenizer, self.max_length)
            ids = self._fast_tokenizers[self.max_length].ids(texts)
        else:
            ids = self._tokenize(texts, self.max_length)
        return self._run_batches(ids, batch_size, lambda input_ids, mask: dev.quantised_batch(
            self, input_ids, mask, scale))

    def encode_queries(self, texts: Sequence[str], batch_size: int = 64) -> list[dict[str, float]]:
        """Sparse vectors {term: float weight} of queries (truncated at ``query_max_length``), in input order;
        always in fp32 (whatever the documents' precision) and unpadded, so a query's vector does not depend on
        the queries it is encoded with."""
        if not texts:
            return []
        return self._encode_ids(self._tokenize(texts, self.query_max_length), batch_size, queries=True)

    def encode_naive(self, texts: Sequence[str], max_length: int | None = None,
                     batch_size: int = DEFAULT_BATCH_SIZE) -> list[dict[str, float]]:
        """Reference path: padded batches in input order, full batch × length × vocabulary logits, then pooling."""
        max_length = max_length or self.max_length
        out: list[dict[str, float]] = []
        with torch.inference_mode():
            for start in range(0, len(texts), batch_size):
                enc = self.tokenizer(list(texts[start:start + batch_size]), max_length=max_length, truncation=True,
                                     padding=True, return_tensors="pt", return_token_type_ids=False)
                input_ids, mask = enc["input_ids"].to(self.device), enc["attention_mask"].to(self.device)
                hidden = self._hidden(input_ids, mask)
                logits = hidden.float() @ self._weight.T + self._bias
                if self._head_kind == "mean":  # per position: gate(logit) + the text's offset
                    logits = nh.gate(logits, self.epsilon) + self._head(hidden.float(), mask).unsqueeze(1)
                elif self._head_kind == "scope":  # per position: sign * gate(logit)
                    logits = nh.scoped(logits, self._signs(hidden.float(), input_ids), self.epsilon)
                values = act.activate(logits, self.activation, self.epsilon)
                out.extend(self._to_dicts(act.pool(values, mask, self.pooling)))
        return out

    def mean_hidden(self, texts: Sequence[str], max_length: int | None = None,
                    batch_size: int = DEFAULT_BATCH_SIZE, queries: bool = False) -> np.ndarray:
        """Per text, the mean of its transformed hidden states (float32, texts × hidden size): the input of the
        mean negative head, and the features of scripts.studies.nevir_probe (``queries``: as ``encode_queries``,
        fp32 and unpadded)."""
        if not texts:
            return np.zeros((0, self._weight.shape[1]), dtype=np.float32)
        ids = self._tokenize(texts, max_length or self.max_length)
        rows = self._run_batches(ids, batch_size, lambda input_ids, mask: list(
            nh.mean_state(self._hidden(input_ids, mask, queries).float(), mask).cpu().numpy()), unpadded=queries)
        return np.stack(rows)

    def token_weights(self, texts: Sequence[str], max_length: int | None = None,
                      batch_size: int = DEFAULT_BATCH_SIZE, queries: bool = False) -> list[list[tuple[str, float]]]:
        """Per position (special tokens excluded): the WordPiece token and the weight given to it at its own position
        (``queries``: fp32 and unpadded, as ``encode_queries``).

        The weight is the positive part of the activation of the token's own logit at that position
        (log(1+ReLU(x)) for SPLADE, log(1+ReLU(x-eps)) for SNReLU), so it is never negative.
        """
        self._require_no_head("token_weights")
        max_length = max_length or self.max_length
        ids = self._tokenize(texts, max_length)

        return self._run_batches(ids, batch_size, lambda input_ids, mask: self._own_weights(
            self._hidden(input_ids, mask, queries), input_ids, mask), unpadded=queries)

    def encode_with_token_weights(self, texts: Sequence[str], batch_size: int = DEFAULT_BATCH_SIZE
                                  ) -> tuple[list[dict[str, float]], list[list[tuple[str, float]]]]:
        """``encode_documents`` and ``token_weights`` (at ``max_length``) from one transformer pass."""
        segments = self.encode_segments(texts, 0, batch_size)
        return [s[0] for s in segments], [s[1] for s in segments]

    def encode_segments(self, texts: Sequence[str], top_k: int = 0, batch_size: int = DEFAULT_BATCH_SIZE,
                        groups: Sequence | None = None
                        ) -> list[tuple[dict[str, float], list[tuple[str, float]], tuple | None]]:
        """Per text, from one transformer pass at ``max_length``: its vector (``encode_documents``), its own-token
        weights (``token_weights``) and, when ``top_k`` > 0, its ``position_topk`` entries (else None).
        ``groups``: a key per text; batches never mix keys (``_run_batches``)."""
        self._require_no_head("token_weights")
        if not texts:
            return []
        topk = self._topk_work(top_k) if top_k > 0 else None

        def work(input_ids: torch.Tensor, mask: torch.Tensor) -> list:
            hidden = self._hidden(input_ids, mask)
            tops = topk(hidden, input_ids, mask) if topk else [None] * len(input_ids)
            return list(zip(self._to_dicts(self._weights(hidden, mask, input_ids)),
                            self._own_weights(hidden, input_ids, mask), tops))

        return self._run_batches(self._tokenize(texts, self.max_length), batch_size, work, groups=groups)

    def position_topk(self, texts: Sequence[str], top_k: int, batch_size: int = 16
                      ) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per text, each non-special position's ``top_k`` vocabulary terms by activated MLM logit (SoftSDM):
        (term ids int32 [L, k], weights float16 [L, k]), positions in the order of ``token_weights``.

        The projection runs in the resolved top-k precision (fp32 or bf16: it ranks the top terms, and the
        stored weights are float16 anyway).
        """
        self._require_no_head("position_topk")
        if not texts:
            return []
        topk = self._topk_work(top_k)
        return self._run_batches(self._tokenize(texts, self.max_length), batch_size,
                                 lambda input_ids, mask: topk(self._hidden(input_ids, mask), input_ids, mask))

    def _topk_work(self, top_k: int):
        """``(hidden, input_ids, mask) -> per-text position_topk entries`` for padded batches (projection in
        the resolved top-k precision)."""
        special = torch.tensor(sorted(self._special_ids), dtype=torch.long)
        dtype = prec.TORCH_DTYPES[self.precision.topk]
        weight = self._weight.to(dtype)
        bias = self._bias.to(dtype)

        def work(hidden: torch.Tensor, input_ids: torch.Tensor, mask: torch.Tensor) -> list:
            out = []
            for row, length in enumerate(mask.sum(dim=1).tolist()):
                seq = input_ids[row, :length].cpu()
                keep = ~torch.isin(seq, special)
                states = hidden[row, :length][keep.to(hidden.device)].to(dtype)
                top = torch.topk(torch.addmm(bias, states, weight.T), min(top_k, weight.shape[0]), dim=1)
                values = act.positive_part(top.values.float(), self.activation, self.epsilon)
                out.append((top.indices.to(torch.int32).cpu().numpy(), values.to(torch.float16).cpu().numpy()))
            return out

        return work

    def _require_no_head(self, what: str) -> None:
        """Per-position weights are defined on the MLM logits only: models with a negative head are refused."""
        if self._head is not None:
            raise InputError(f"{what}: model {self.model_name!r} has a negative head; per-position weights are "
                             f"only defined for models without one")

    def _own_weights(self, hidden: torch.Tensor, input_ids: torch.Tensor, mask: torch.Tensor
                     ) -> list[list[tuple[str, float]]]:
        """Per text: (token, positive activation of the token's own logit) at each non-special position."""
        hidden = hidden.float()
        own = (hidden * self._weight[input_ids]).sum(-1) + self._bias[input_ids]
        weights = act.positive_part(own, self.activation, self.epsilon).cpu().tolist()
        tokens = input_ids.cpu().tolist()
        lengths = mask.sum(dim=1).tolist()
        return [[(self.vocab[t], w) for t, w in zip(tokens[row][:n], weights[row][:n]) if t not in self._special_ids]
                for row, n in enumerate(lengths)]
