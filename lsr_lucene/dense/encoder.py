"""DenseEncoder: texts -> L2-normalised mean-pooled transformer embeddings (sentence-transformers' recipe for
all-MiniLM-L6-v2: mean over non-padding tokens, then unit length).

Texts are tokenised once, batched by token length (longest first, so a batch pads little) and on CPU the batches
run in ``threads`` parallel threads of one torch thread each (independent batches scale better than intra-op
threads, as for the sparse encoder; order restored). Documents in int8 (the dense leg's default,
:mod:`lsr_lucene.dense.int8`), fp32 or bf16; queries in int8 when the documents are (a text's int8 vector depends on
its own tokens only), else in fp32, and in batches of one token length (lsr_lucene.encode.precision).
"""
from __future__ import annotations

import itertools
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Sequence

import numpy as np
import torch

from lsr_lucene.encode import precision as prec
from lsr_lucene.errors import InputError

DEFAULT_MAX_LENGTH = 256  # all-MiniLM-L6-v2's max_seq_length
DEFAULT_BATCH_SIZE = 32
DEFAULT_DTYPE = "int8"  # documents (and then queries) of a new dense leg: runs/dense/encode_speed_*.md
DTYPES = ("int8", "fp32", "bf16", "auto")


def query_dtype(documents: object) -> str:
    """The precision queries are encoded in, whatever ``documents`` (an embeddings folder's ``dtype``) says: fp32,
    as the sparse encoder's queries (issue 65: an int8 query moved a BoolQuestions near-tie of the negation default;
    a query is one short text, so fp32 costs little)."""
    return prec.QUERY_DTYPE


class DenseEncoder:
    """Mean pooling + L2 normalisation over a Hugging Face encoder; documents in ``dtype`` (int8, fp32, bf16, or
    ``auto``: fp32 or bf16, the faster), queries (``encode_queries``) in :func:`query_dtype` of it."""

    def __init__(self, model: str | None = None, max_length: int = DEFAULT_MAX_LENGTH, threads: int | None = None,
                 dtype: str = prec.DEFAULT, device: str | None = None):
        from lsr_lucene.dense.models import DEFAULT_DENSE_MODEL, load

        self.model_name = model or DEFAULT_DENSE_MODEL
        if dtype not in DTYPES:
            raise InputError(f"dtype must be one of {', '.join(DTYPES)} for a dense encoder, got {dtype!r}")
        if threads is not None and int(threads) < 1:
            raise InputError(f"threads must be at least 1, got {threads}")
        self.threads = int(threads) if threads else torch.get_num_threads()
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        if dtype == "int8" and self.device.type != "cpu":
            raise InputError(f"dtype int8 runs on the CPU only, not on {self.device}; use fp32 or bf16 there")
        self.tokenizer, net = load(self.model_name)
        self.net = net.to(self.device).eval()
        config = net.config
        limit = getattr(config, "max_position_embeddings", None)
        if max_length < 2 or (limit and max_length > limit):
            raise InputError(f"max_length (--max-length) {max_length} is outside 2..{limit or 'model limit'}, the "
                             "model's positions")
        self.max_length = int(max_length)
        self.dim = int(config.hidden_size)
        if dtype == "int8":
            from lsr_lucene.dense.int8 import int8_transformer

            self.precision = prec.Precision("int8", "int8", "fp32", prec.capability_string(),
                                            "int8 Linear layers (per-token activation scales)")
            self.int8_net = int8_transformer(self.net)
        else:
            # the transformer's own largest matmul (hidden -> feed-forward) decides fp32/bf16 under auto
            self.precision = prec.resolve(dtype, self.device, self.dim, int(getattr(config, "intermediate_size",
                                                                                     4 * self.dim)))
        prec.announce(self.precision)
        self.dtype = self.precision.dtype
        self.query_dtype = query_dtype(self.dtype)

    def settings(self) -> dict:
        """What embeddings record in metadata.json (queries are encoded with the same settings)."""
        from lsr_lucene.dense.models import REGISTRY

        model = self.model_name
        if model not in REGISTRY and Path(model).is_dir():
            model = str(Path(model).resolve())
        return {"model": model, "max_length": self.max_length, "dtype": self.dtype, "query_dtype": self.query_dtype,
                "dim": self.dim, "pooling": "mean", "normalised": True}

    def _batch(self, ids: Sequence[Sequence[int]], dtype: str) -> np.ndarray:
        """Unit vectors of one batch of token id lists (padded to the longest)."""
        width = max(len(row) for row in ids)
        input_ids = np.full((len(ids), width), self.tokenizer.pad_token_id or 0, dtype=np.int64)
        mask = np.zeros((len(ids), width), dtype=np.int64)
        for row, tokens in enumerate(ids):
            input_ids[row, :len(tokens)] = tokens
            mask[row, :len(tokens)] = 1
        inputs = {"input_ids": torch.from_numpy(input_ids).to(self.device),
                  "attention_mask": torch.from_numpy(mask).to(self.device)}
        net = self.int8_net if dtype == "int8" else self.net
        with torch.inference_mode(), torch.autocast(self.device.type, dtype=torch.bfloat16,
                                                    enabled=dtype == "bf16"):
            hidden = net(**inputs)[0]
        weights = inputs["attention_mask"].unsqueeze(-1).to(torch.float32)
        pooled = (hidden.float() * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1e-9)
        return torch.nn.functional.normalize(pooled, p=2, dim=1).cpu().numpy()

    def encode(self, texts: Sequence[str], batch_size: int = DEFAULT_BATCH_SIZE, desc: str | None = None
               ) -> np.ndarray:
        """(len(texts) × dim) float32 unit vectors of documents (in the encoder's precision), rows in input order."""
        return self._encode(texts, batch_size, desc, queries=False)

    def encode_queries(self, texts: Sequence[str], batch_size: int = DEFAULT_BATCH_SIZE, desc: str | None = None
                       ) -> np.ndarray:
        """Like ``encode``, for queries: in ``query_dtype`` and in batches of equal token length (no padding), so
        that a query's vector does not depend on the queries it is batched with."""
        return self._encode(texts, batch_size, desc, queries=True)

    def _encode(self, texts: Sequence[str], batch_size: int, desc: str | None, queries: bool) -> np.ndarray:
        """Unit vectors in input order, in token-length-sorted batches (``queries``: one token length a batch)."""
        if batch_size < 1:
            raise InputError(f"batch size must be at least 1, got {batch_size}")
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        ids = self.tokenizer(list(texts), max_length=self.max_length, truncation=True,
                             return_attention_mask=False)["input_ids"]
        order = sorted(range(len(texts)), key=lambda i: (-len(ids[i]), i))
        runs = [list(g) for _, g in itertools.groupby(order, key=lambda i: len(ids[i]))] if queries else [order]
        batches = [run[start:start + batch_size] for run in runs for start in range(0, len(run), batch_size)]
        dtype = self.query_dtype if queries else self.dtype
        progress = None
        if desc:
            from lsr_lucene.progress import progress_bar

            progress = progress_bar(total=len(texts), desc=desc, unit=" texts", file=sys.stderr, leave=False)
        cpu = self.device.type == "cpu"
        parallel = cpu and self.threads > 1 and len(batches) > 1
        previous = torch.get_num_threads()
        torch.set_num_threads(1 if cpu else self.threads)  # CPU: one torch thread a batch, batches in threads
        pool = ThreadPoolExecutor(self.threads, thread_name_prefix="lsr-dense") if parallel else None
        def work(rows: list[int]) -> np.ndarray:
            return self._batch([ids[i] for i in rows], dtype)

        try:
            results = pool.map(work, batches) if pool is not None else map(work, batches)
            for rows, vectors in zip(batches, results):
                out[rows] = vectors
                if progress is not None:
                    progress.update(len(rows))
        finally:
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)
            torch.set_num_threads(previous)
            if progress is not None:
                progress.close()
        return out
