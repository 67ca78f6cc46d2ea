"""Index-time Combined Pseudo-Terms (CPT): each document's top-n term pairs as extra ``a||b`` impact terms.

A pair query clause w·sqrt(impact_a·impact_b) can then be searched as the plain term ``a||b``
(the query side, ``pairs_to_terms``, is in lsr_lucene.search.specs).
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Mapping

from lsr_lucene.errors import InputError
from lsr_lucene.io.output import atomic_output, open_jsonl
from lsr_lucene.io.vectors import NEG_PREFIX, read_metadata, vector_files, write_metadata

PAIR_SEPARATOR = "||"


def pair_term(a: str, b: str) -> str:
    """The index-time Combined Pseudo-Term for a pair (order-free): ``min||max``."""
    x, y = sorted((a, b))
    return f"{x}{PAIR_SEPARATOR}{y}"


def document_pair_terms(vector: Mapping[str, int], top_n: int) -> dict[str, int]:
    """Pseudo-terms ``a||b`` (a ≤ b) with impact round(sqrt(w_a·w_b)) over a document's top-n positive terms."""
    top = sorted(((t, w) for t, w in vector.items() if w > 0 and not t.startswith(NEG_PREFIX)
                  and PAIR_SEPARATOR not in t), key=lambda x: (-x[1], x[0]))[:top_n]
    out = {}
    for i, (a, wa) in enumerate(top):
        for b, wb in top[i:]:
            w = round(math.sqrt(wa * wb))
            if w > 0:
                out[pair_term(a, b)] = int(w)
    return out


def add_pair_terms(vectors_in: str | Path, vectors_out: str | Path, top_n: int = 5, overwrite: bool = False) -> dict:
    """Index-time CPT: copy JsonVectorCollection JSONL adding each document's top-n pair pseudo-terms.

    ``vectors_in`` is a JSONL file or a directory of ``*.jsonl``; ``vectors_out`` a directory written
    atomically (index it with Anserini as usual). Returns counts.
    """
    src = Path(vectors_in)
    files = vector_files(src)
    docs = added = 0
    with atomic_output(vectors_out, overwrite=overwrite, directory=True) as tmp:
        for f in files:
            with open(tmp / f.name, "w", encoding="utf-8") as out:
                for line_no, obj in open_jsonl(f):
                    vector = obj.get("vector")
                    if not isinstance(vector, dict):
                        raise InputError(f"{f}:{line_no}: no 'vector' object")
                    extra = document_pair_terms(vector, top_n)
                    obj["vector"] = {**vector, **extra}
                    out.write(json.dumps(obj, ensure_ascii=False) + "\n")
                    docs += 1
                    added += len(extra)
    meta = read_metadata(src)
    if meta:
        write_metadata(vectors_out, {**meta, "pair_terms_top_n": top_n})
    return {"documents": docs, "pair_terms": added}
