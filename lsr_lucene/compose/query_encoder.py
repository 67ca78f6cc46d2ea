"""Sparse query encoding for composed queries, with the encoder ablations of paper 000's Table 3.

``no-expansion`` keeps only the query's own WordPiece tokens with their learned weights; ``no-term-weights``
gives each of the query's own tokens weight 1 (special tokens excluded); ``full`` is the encoder as is.
"""
from __future__ import annotations

from typing import Sequence

from lsr_lucene.errors import InputError

ENCODER_MODES = ("full", "no-expansion", "no-term-weights")


class QueryEncoder:
    """Sparse query encoder with the paper's Table 3 ablations (``full``, ``no-expansion``, ``no-term-weights``)."""

    def __init__(self, model: str = "splade-tiny", mode: str = "full", query_max_length: int | None = None,
                 encoder=None, **options):
        if mode not in ENCODER_MODES:
            raise InputError(f"unknown encoder mode {mode!r}; expected one of {', '.join(ENCODER_MODES)}")
        if encoder is None:
            from lsr_lucene.encode.encoder import SparseEncoder

            if query_max_length:
                options["query_max_length"] = query_max_length
            encoder = SparseEncoder(model=model, **options)  # queries: always fp32
        self.encoder = encoder
        self.mode = mode

    def tokens(self, texts: Sequence[str]) -> list[list[str]]:
        """The WordPiece tokens of each text (special tokens excluded, truncated like queries)."""
        enc = self.encoder
        ids = enc.tokenizer(list(texts), max_length=enc.query_max_length, truncation=True, padding=False,
                            return_attention_mask=False, return_token_type_ids=False)["input_ids"]
        special = set(enc.tokenizer.all_special_ids)
        return [[enc.vocab[i] for i in row if i not in special] for row in ids]

    def encode(self, texts: Sequence[str]) -> list[dict[str, float]]:
        """Vectors {term: weight} of the texts under this encoder mode."""
        texts = list(texts)
        if not texts:
            return []
        if self.mode == "no-term-weights":
            return [dict.fromkeys(toks, 1.0) for toks in self.tokens(texts)]
        vectors = self.encoder.encode_queries(texts)
        if self.mode == "no-expansion":
            return [{t: w for t, w in vec.items() if t in own} for vec, own in
                    zip(vectors, map(set, self.tokens(texts)))]
        return vectors


class CachedQueryEncoder(QueryEncoder):
    """A :class:`QueryEncoder` that encodes each distinct text once: many settings evaluated on the same queries
    (the contrastive experiments) reuse the vectors instead of running the model again."""

    def __init__(self, base: QueryEncoder, cache: dict[str, dict[str, float]] | None = None):
        super().__init__(mode=base.mode, encoder=base.encoder)
        self.base = base
        self.cache: dict[str, dict[str, float]] = dict(cache or {})

    def encode(self, texts: Sequence[str]) -> list[dict[str, float]]:
        """Vectors of the texts (copies of the cached ones; new texts encoded in one batch)."""
        texts = list(texts)
        new = [t for t in dict.fromkeys(texts) if t not in self.cache]
        self.cache.update(zip(new, self.base.encode(new)))
        return [dict(self.cache[t]) for t in texts]
