"""DenseEncoder: texts -> L2-normalised mean-pooled transformer embeddings (sentence-transformers' recipe for
all-MiniLM-L6-v2: mean over non-padding tokens, then unit length), in length-sorted batches, order restored.
Documents in fp32 (default) or bf16; queries always in fp32 and unpadded (lsr_lucene.encode.precision)."""
from __future__ import annotations

import itertools
import sys
from pathlib import Path
from typing import Sequence

import numpy as np
import torch

from lsr_lucene.encode import precision as prec
from lsr_lucene.errors import InputError

DEFAULT_MAX_LENGTH = 256  # all-MiniLM-L6-v2's max_seq_length
DEFAULT_BATCH_SIZE = 32


class DenseEncoder:
    """Mean pooling + L2 normalisation over a Hugging Face encoder; documents in fp32 (default) or bf16
    (``dtype="bf16"``, or ``"auto"``: the faster), queries (``encode_queries``) always in fp32."""

    def __init__(self, model: str | None = None, max_length: int = DEFAULT_MAX_LENGTH, threads: int | None = None,
                 dtype: str = prec.DEFAULT, device: str | None = None):
        from lsr_lucene.dense.models import DEFAULT_DENSE_MODEL, load

        self.model_name = model or DEFAULT_DENSE_MODEL
        if dtype == "int8":  # int8 is the sparse encoder's vocabulary projection; a dense model has none
            raise InputError("dtype int8 is for sparse encoders (lsr-lucene encode); dense encoding takes fp32, bf16 "
                             "or auto")
        if threads is not None and int(threads) < 1:
            raise InputError(f"threads must be at least 1, got {threads}")
        self.threads = int(threads) if threads else torch.get_num_threads()
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        self.tokenizer, net = load(self.model_name)
        self.net = net.to(self.device)
        config = net.config
        limit = getattr(config, "max_position_embeddings", None)
        if max_length < 2 or (limit and max_length > limit):
            raise InputError(f"max_length (--max-length) {max_length} is outside 2..{limit or 'model limit'}, the "
                             "model's positions")
        self.max_length = int(max_length)
        self.dim = int(config.hidden_size)
        # the transformer's own largest matmul (hidden -> feed-forward) decides fp32/bf16 under auto
        self.precision = prec.resolve(dtype, self.device, self.dim, int(getattr(config, "intermediate_size",
                                                                                 4 * self.dim)))
        prec.announce(self.precision)
        self.dtype = self.precision.dtype

    def settings(self) -> dict:
        """What embeddings record in metadata.json (queries are encoded with the same settings)."""
        from lsr_lucene.dense.models import REGISTRY

        model = self.model_name
        if model not in REGISTRY and Path(model).is_dir():
            model = str(Path(model).resolve())
        return {"model": model, "max_length": self.max_length, "dtype": self.dtype, "dim": self.dim,
                "pooling": "mean", "normalised": True}

    def _batch(self, texts: Sequence[str], dtype: str) -> np.ndarray:
        enc = self.tokenizer(list(texts), max_length=self.max_length, truncation=True, padding=True,
                             return_tensors="pt").to(self.device)
        with torch.inference_mode(), torch.autocast(self.device.type, dtype=torch.bfloat16,
                                                    enabled=dtype == "bf16"):
            hidden = self.net(**enc)[0]
        mask = enc["attention_mask"].unsqueeze(-1).to(torch.float32)
        pooled = (hidden.float() * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
        return torch.nn.functional.normalize(pooled, p=2, dim=1).cpu().numpy()

    def encode(self, texts: Sequence[str], batch_size: int = DEFAULT_BATCH_SIZE, desc: str | None = None
               ) -> np.ndarray:
        """(len(texts) × dim) float32 unit vectors of documents (in the encoder's precision), rows in input order."""
        return self._encode(texts, batch_size, desc, queries=False)

    def encode_queries(self, texts: Sequence[str], batch_size: int = DEFAULT_BATCH_SIZE, desc: str | None = None
                       ) -> np.ndarray:
        """Like ``encode``, for queries: in fp32 and in batches of equal token length (no padding), so that a
        query's vector does not depend on the precision of the documents or the queries it is batched with."""
        return self._encode(texts, batch_size, desc, queries=True)

    def _encode(self, texts: Sequence[str], batch_size: int, desc: str | None, queries: bool) -> np.ndarray:
        """Unit vectors in input order, in length-sorted batches (``queries``: fp32, one token length a batch)."""
        if batch_size < 1:
            raise InputError(f"batch size must be at least 1, got {batch_size}")
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        if queries:  # token lengths: batches of one length each
            lengths = [len(x) for x in self.tokenizer(list(texts), max_length=self.max_length, truncation=True,
                                                      return_attention_mask=False)["input_ids"]]
        else:
            lengths = [len(t) for t in texts]
        order = sorted(range(len(texts)), key=lambda i: (-lengths[i], i))
        runs = [list(g) for _, g in itertools.groupby(order, key=lambda i: lengths[i])] if queries else [order]
        batches = [run[start:start + batch_size] for run in runs for start in range(0, len(run), batch_size)]
        dtype = prec.QUERY_DTYPE if queries else self.dtype
        progress = None
        if desc:
            from lsr_lucene.progress import progress_bar

            progress = progress_bar(total=len(texts), desc=desc, unit=" texts", file=sys.stderr, leave=False)
        previous = torch.get_num_threads()
        torch.set_num_threads(self.threads)
        try:
            for rows in batches:
                out[rows] = self._batch([texts[i] for i in rows], dtype)
                if progress is not None:
                    progress.update(len(rows))
        finally:
            torch.set_num_threads(previous)
            if progress is not None:
                progress.close()
        return out
