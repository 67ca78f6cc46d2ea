"""Long-document queries: each an encoded query of one or more passages (a vector per passage, combined by sum or
max, and per-passage token weights for the SDM n-grams), plus the fixed train/test split of judged queries."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from lsr_lucene.errors import InputError
from lsr_lucene.io.output import write_text_atomic
from lsr_lucene.progress import progress_bar

QUERY_COMBINE = ("sum", "max")
QUERY_CHUNK = 64  # query passages encoded per progress step


@dataclass
class Query:
    """An encoded query: per-passage sparse vectors and per-passage (token, own weight) sequences."""

    qid: str
    vectors: list[dict[str, float]]
    sequences: list[list[tuple[str, float]]]

    def vector(self, combine: str = "sum") -> dict[str, float]:
        """The passages' vectors summed or max-pooled into one query vector."""
        if combine not in QUERY_COMBINE:
            raise InputError(f"query combination must be one of {', '.join(QUERY_COMBINE)}, got {combine!r}")
        out: dict[str, float] = {}
        for vec in self.vectors:
            for term, weight in vec.items():
                out[term] = out.get(term, 0.0) + weight if combine == "sum" else max(out.get(term, 0.0), weight)
        return out


def encode_queries(queries: Mapping[str, Sequence[str]], encoder, max_length: int = 512,
                   cache: str | Path | None = None) -> dict[str, Query]:
    """Encode every passage of every query (vector and token weights); cached in ``cache`` JSON when given."""
    if cache and Path(cache).exists():
        data = json.loads(Path(cache).read_text())
        if set(data) == set(queries):
            return {q: Query(q, d["vectors"], [[(t, w) for t, w in seq] for seq in d["sequences"]])
                    for q, d in data.items()}
    qids = [q for q in queries for _ in queries[q]]
    texts = [p for q in queries for p in queries[q]]
    saved = encoder.query_max_length
    encoder.query_max_length = max_length
    vectors: list = []
    sequences: list = []
    # in chunks, for a progress bar: queries are encoded unpadded in fp32, so a vector does not depend on its chunk
    chunks = [texts[start:start + QUERY_CHUNK] for start in range(0, len(texts), QUERY_CHUNK)]
    try:
        with progress_bar(total=len(texts), desc="encoding query passages", unit=" passages", leave=False) as bar:
            for chunk in chunks:
                vectors += encoder.encode_queries(chunk, batch_size=32)
                sequences += encoder.token_weights(chunk, max_length=max_length, queries=True)
                bar.update(len(chunk))
    finally:
        encoder.query_max_length = saved
    out: dict[str, Query] = {q: Query(q, [], []) for q in queries}
    for qid, vec, seq in zip(qids, vectors, sequences):
        out[qid].vectors.append({t: round(w, 5) for t, w in vec.items()})
        out[qid].sequences.append([(t, round(w, 5)) for t, w in seq])
    if cache:
        Path(cache).parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(Path(cache), json.dumps({q: {"vectors": v.vectors, "sequences": v.sequences}
                                                    for q, v in out.items()}))
    return out


def quantised_query(query: Query, scale: float, combine: str) -> dict[str, int]:
    """The combined query vector as signed integers round(w × scale) (the index's quantisation)."""
    from lsr_lucene.io.vectors import quantise_query

    return quantise_query(query.vector(combine), scale, query.qid)


def split_queries(qids: Iterable[str]) -> tuple[list[str], list[str]]:
    """Fixed split of the judged queries: sorted ids, even positions train, odd positions test."""
    ordered = sorted(qids)
    return ordered[0::2], ordered[1::2]
