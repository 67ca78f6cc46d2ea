"""Lucene indexes of encoded segments: the segment index (ids docid@@k, with the positional payload field for
ExactSDM) and one-vector-per-document aggregations of the first k segments (first, rep-max, rep-sum, rep-mean)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable, Iterator, Mapping

from lsr_lucene.errors import InputError
from lsr_lucene.io.vectors import metadata_path, read_metadata, write_metadata
from lsr_lucene.longdocs.segment import parse_segment_id
from lsr_lucene.longdocs.store import check_encoded, read_segment_vectors, write_positions_file

AGGREGATIONS = ("first", "rep-max", "rep-sum", "rep-mean")


def build_segment_index(encoded: str | Path, index: str | Path, threads: int = 2, overwrite: bool = False) -> dict:
    """Impact index of the segments (ids docid@@k) with the positional payload field for WindowQuery."""
    from lsr_lucene.index.impact import build_impact_index

    check_encoded(encoded)
    positions = Path(index).with_name(Path(index).name + ".positions.jsonl")
    write_positions_file(encoded, positions)
    try:
        meta = build_impact_index(Path(encoded) / "vectors", index, threads=threads, overwrite=overwrite,
                                  positions=positions)
    finally:
        positions.unlink(missing_ok=True)
    return meta


def aggregate_vectors(segment_vectors: Iterable[tuple[str, Mapping[str, int]]], method: str,
                      k: int | None) -> Iterator[tuple[str, dict[str, int]]]:
    """One integer vector per document from its first ``k`` segment vectors (segments grouped by docid, in order).

    first: segment 0; rep-max: term-wise max; rep-sum: term-wise sum (its dot product is the sum of the
    segment scores); rep-mean: the sum divided by the number of segments used, rounded (0 dropped).
    """
    if method not in AGGREGATIONS:
        raise InputError(f"aggregation must be one of {', '.join(AGGREGATIONS)}, got {method!r}")
    limit = 1 if method == "first" else k
    current: str | None = None
    vectors: list[Mapping[str, int]] = []

    def emit():
        if method in ("first", "rep-max"):
            out: dict[str, int] = {}
            for vec in vectors:
                for t, w in vec.items():
                    if w > out.get(t, 0):
                        out[t] = w
            return out
        total: dict[str, int] = {}
        for vec in vectors:
            for t, w in vec.items():
                total[t] = total.get(t, 0) + w
        if method == "rep-sum":
            return total
        n = len(vectors)
        return {t: int(round(w / n)) for t, w in total.items() if round(w / n) != 0}

    for seg_id, vector in segment_vectors:
        doc_id, number = parse_segment_id(seg_id)
        if doc_id != current:
            if current is not None and vectors:
                yield current, emit()
            current, vectors = doc_id, []
        if limit is None or number < limit:
            vectors.append(vector)
    if current is not None and vectors:
        yield current, emit()


def build_aggregate_index(encoded: str | Path, method: str, k: int | None, index: str | Path, threads: int = 2,
                          overwrite: bool = False) -> dict:
    """Index one aggregated vector per document (rep-max/sum/mean of the first k segments, or the first)."""
    import shutil

    from lsr_lucene.index.impact import build_impact_index

    check_encoded(encoded)
    staging = Path(index).with_name(f".{Path(index).name}.vectors")
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir(parents=True)
    try:
        with open(staging / "part-00000.jsonl", "w", encoding="utf-8") as out:
            for doc_id, vector in aggregate_vectors(read_segment_vectors(encoded), method, k):
                if vector:
                    out.write(json.dumps({"id": doc_id, "contents": "", "vector": vector}, ensure_ascii=False) + "\n")
        meta = read_metadata(Path(encoded) / "vectors")
        write_metadata(staging, {**meta, "aggregation": method, "segments_used": k})
        return build_impact_index(staging, index, threads=threads, overwrite=overwrite)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        metadata_path(staging).unlink(missing_ok=True)
