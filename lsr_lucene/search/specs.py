"""Query specs: building, validating, reading and writing them, and their CPT pair clauses.

A *query spec* is one JSON object per query (see ``io.github.lsrlucene.search.QuerySpec``)::

    {"qid": "1", "terms": {"t": w, ...}, "pairs": [["a", "b", w], ...],
     "windows": [{"terms": [["t1", q1], ["t2", q2]], "ordered": true, "width": 2, "weight": 1.0}],
     "rerank": 1000, "mode": "signed" | "boolean", "field": "contents", "exclude": {"text": "dogs"}}

``terms`` weights may have either sign (documents hold negative weights as ``neg_<t>`` terms), pairs are
Combined Pseudo-Terms scored w·sqrt(impact_a·impact_b), windows are SDM-style proximity clauses over the
positional sidecar (added to the full search, or with ``rerank`` N > 0 only to the top N); ``exclude``, a strict
text filter (lsr_lucene.search.text_filter), removes the documents whose text it matches inside the search. The Java
``BatchSearcher`` searches a spec file with several threads and writes the TREC run itself
(lsr_lucene.search.spec_searcher.SpecSearcher).
"""
from __future__ import annotations

import itertools
import json
import math
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from lsr_lucene.errors import InputError
from lsr_lucene.index.pair_terms import pair_term
from lsr_lucene.io.output import lone_surrogate
from lsr_lucene.io.topics import FLOAT32_MAX, MAX_QUERY_WEIGHT_SUM

SPEC_KEYS = {"qid", "terms", "pairs", "windows", "rerank", "mode", "field", "text", "exclude"}


# --------------------------------------------------------------------------------------------- specs

def window(terms: Sequence[str] | Mapping[str, float], ordered: bool = True, width: int | None = None,
           weight: float = 1.0) -> dict:
    """A window clause: ordered n-gram (``ordered=True``) or unordered window of ``width`` positions."""
    items = list(terms.items()) if isinstance(terms, Mapping) else [(t, 1.0) for t in terms]
    clause: dict = {"terms": [[t, float(q)] for t, q in items], "ordered": bool(ordered), "weight": float(weight)}
    if width is not None:
        clause["width"] = int(width)
    return clause


def make_spec(qid: str, terms: Mapping[str, float] | None = None, pairs: Iterable[Sequence] | None = None,
              windows: Iterable[dict] | None = None, rerank: int = 0, mode: str | None = None,
              field: str | None = None) -> dict:
    """A query spec dict from Python structures (zero weights dropped); validated like the Java side."""
    spec: dict = {"qid": str(qid), "terms": {str(t): _number(w) for t, w in (terms or {}).items() if w != 0}}
    if pairs:
        spec["pairs"] = [[str(a), str(b), _number(w)] for a, b, w in pairs if w != 0]
    if windows:
        spec["windows"] = list(windows)
    if rerank:
        spec["rerank"] = int(rerank)
    if mode:
        spec["mode"] = mode
    if field:
        spec["field"] = field
    validate_spec(spec)
    return spec


def _number(w) -> float | int:
    """Ints stay ints (exact, compact JSON); everything else becomes a float."""
    return int(w) if isinstance(w, int) and not isinstance(w, bool) else float(w)


def _finite(value, what: str) -> None:
    """A number that Java's float parse keeps finite (|value| <= the float maximum)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"{what} must be a number, got {value!r}")
    if (isinstance(value, float) and not math.isfinite(value)) or abs(value) > FLOAT32_MAX:
        raise InputError(f"{what} must be finite as a float, got {value!r}")


def validate_spec(spec: Mapping, where: str | None = None) -> None:
    """Raise InputError (naming the query) for a malformed spec: the same rules the Java parser applies."""
    if not isinstance(spec, Mapping):
        raise InputError(f"{where or 'query spec'}: expected a dict, got {type(spec).__name__}")
    qid = spec.get("qid")
    if not isinstance(qid, (str, int)) or isinstance(qid, bool) or str(qid) == "" or any(c.isspace() for c in str(qid)):
        raise InputError(f"{where or 'query spec'}: missing or invalid qid {qid!r} (a non-empty string without spaces)")
    label = f"query {qid}" + (f" ({where})" if where else "")
    _check_text(spec, qid, label, where)
    unknown = set(spec) - SPEC_KEYS
    if unknown:
        raise InputError(f"{label}: unknown key(s) {sorted(unknown)} (known: {sorted(SPEC_KEYS)})")
    terms = spec.get("terms")
    if not isinstance(terms, Mapping):
        raise InputError(f"{label}: 'terms' must be a dict of term -> weight")
    boolean = spec.get("mode", "signed") == "boolean"
    if spec.get("mode", "signed") not in ("signed", "boolean"):
        raise InputError(f"{label}: mode must be 'signed' or 'boolean', got {spec.get('mode')!r}")
    for term, w in terms.items():
        _finite(w, f"{label}: weight of term {term!r}")
        if boolean and w < 0:
            raise InputError(f"{label}: mode 'boolean' needs weights >= 0; term {term!r} has {w}")
    pairs = spec.get("pairs") or []
    for pair in pairs:
        if not isinstance(pair, (list, tuple)) or len(pair) != 3 or not all(isinstance(x, str) for x in pair[:2]):
            raise InputError(f"{label}: each pair must be [a, b, weight], got {pair!r}")
        _finite(pair[2], f"{label}: weight of pair ({pair[0]}, {pair[1]})")
    windows = spec.get("windows") or []
    for clause in windows:
        if not isinstance(clause, Mapping) or not clause.get("terms"):
            raise InputError(f"{label}: each window needs a non-empty 'terms' list, got {clause!r}")
        scale = clause.get("weight", 1.0)
        _finite(scale, f"{label}: window weight")
        for item in clause["terms"]:
            if not isinstance(item, str) and not (isinstance(item, (list, tuple)) and len(item) == 2
                                                  and isinstance(item[0], str)):
                raise InputError(f"{label}: window terms must be [\"t\", weight] or \"t\", got {item!r}")
            t, q = (item, 1.0) if isinstance(item, str) else (item[0], item[1])
            _finite(q, f"{label}: window weight of {t!r}")
            if q < 0:
                raise InputError(f"{label}: window weight of {t!r} must be >= 0, got {q}")
            _finite(q * scale, f"{label}: window weight of {t!r} times the window weight")  # Java multiplies them
    total = sum(abs(w) for w in terms.values()) + sum(abs(p[2]) for p in pairs)
    if total > MAX_QUERY_WEIGHT_SUM:
        raise InputError(f"{label}: absolute term and pair weights sum to {total:.3g}, over "
                         f"{MAX_QUERY_WEIGHT_SUM:.3g}: weight x impact would overflow Lucene's float scores")
    if spec.get("exclude") is not None:
        _check_exclude(spec["exclude"], f"{label}: 'exclude'")
    rerank = spec.get("rerank", 0)
    if not isinstance(rerank, int) or isinstance(rerank, bool) or rerank < 0:
        raise InputError(f"{label}: 'rerank' must be a non-negative integer, got {rerank!r}")
    if not any(w != 0 for w in terms.values()) and not any(p[2] != 0 for p in pairs) and (not windows or rerank):
        raise InputError(f"{label}: no non-zero term or pair weight")


def _check_exclude(e, where: str) -> None:
    """InputError unless ``e`` is a text filter expression: {"text"|"any": str}, {"or"|"and": [..]}, {"not": e}."""
    if not isinstance(e, Mapping) or len(e) != 1:
        raise InputError(f"{where} must be one of {{\"text\"|\"any\": str}}, {{\"or\"|\"and\": [..]}}, "
                         f"{{\"not\": ..}}, got {e!r}")
    (op, value), = e.items()
    if op in ("text", "any") and isinstance(value, str) and value.strip():
        return
    if op in ("or", "and") and isinstance(value, list) and value:
        for x in value:
            _check_exclude(x, where)
        return
    if op == "not":
        _check_exclude(value, where)
        return
    raise InputError(f"{where}: bad text filter {e!r}")


def _check_text(spec: Mapping, qid, label: str, where: str | None) -> None:
    """InputError for a string of the spec with a lone surrogate: Java would search U+FFFD for it, pyjnius fail with a
    traceback (ASCII strings, nearly all, are passed over at once)."""
    texts = [str(qid), spec.get("field") or ""]
    texts += [t for t in spec.get("terms") or {} if isinstance(t, str)]
    texts += [p[i] for p in spec.get("pairs") or [] if isinstance(p, (list, tuple)) for i in (0, 1)
              if len(p) > i and isinstance(p[i], str)]
    texts += [(t if isinstance(t, str) else t[0]) for w in spec.get("windows") or [] if isinstance(w, Mapping)
              for t in w.get("terms") or [] if isinstance(t, str) or (isinstance(t, (list, tuple)) and t
                                                                     and isinstance(t[0], str))]
    for text in texts:
        if not isinstance(text, str) or text.isascii():
            continue
        surrogate = lone_surrogate(text)
        if surrogate is not None:
            raise InputError(f"{label if lone_surrogate(str(qid)) is None else where or 'query spec'}: {surrogate}")


def write_query_specs(specs: Iterable[Mapping], path: str | Path) -> int:
    """Write specs as JSONL (validated; NaN/inf refused); returns the number written."""
    n = 0
    seen: set[str] = set()
    with open(path, "w", encoding="utf-8") as out:
        for i, spec in enumerate(specs, 1):
            validate_spec(spec, where=f"spec {i}")
            qid = str(spec["qid"])
            if qid in seen:
                raise InputError(f"query {qid}: duplicate qid")
            seen.add(qid)
            out.write(json.dumps(spec, allow_nan=False, ensure_ascii=False) + "\n")
            n += 1
    return n


def save_query_specs(specs: Iterable[Mapping], path: str | Path, overwrite: bool = False) -> int:
    """Write the searchable specs (some term, pair or window) as JSONL, installed when complete; returns the count."""
    from lsr_lucene.io.output import atomic_output

    searchable = [s for s in specs if s.get("terms") or s.get("pairs") or s.get("windows")]
    with atomic_output(path, overwrite=overwrite) as tmp:
        return write_query_specs(searchable, tmp)


def read_query_specs(path: str | Path) -> list[dict]:
    """Specs from a JSONL file (InputError naming file:line on bad lines)."""
    from lsr_lucene.io.output import open_jsonl

    specs = []
    for line_no, obj in open_jsonl(path):
        validate_spec(obj, where=f"{path}:{line_no}")
        specs.append(obj)
    return specs


# --------------------------------------------------------------------------------------------- CPT

def query_pairs(vec_a: Mapping[str, float], vec_b: Mapping[str, float], top: int = 5) -> list[list]:
    """Paper's CPT query side: pairs of the top-``top`` terms of A and B, weight sqrt(w_a·w_b)."""
    def best(v):
        return sorted(((t, w) for t, w in v.items() if w > 0), key=lambda x: (-x[1], x[0]))[:top]

    pairs: dict[tuple[str, str], float] = {}
    for (a, wa), (b, wb) in itertools.product(best(vec_a), best(vec_b)):
        key = tuple(sorted((a, b)))
        pairs[key] = max(pairs.get(key, 0.0), math.sqrt(wa * wb))
    return [[a, b, w] for (a, b), w in pairs.items()]


def pairs_to_terms(spec: Mapping) -> dict:
    """Query side of index-time CPT: move ``pairs`` into ``terms`` as ``a||b`` pseudo-terms."""
    out = {k: v for k, v in spec.items() if k != "pairs"}
    terms = dict(spec.get("terms", {}))
    for a, b, w in spec.get("pairs", []):
        key = pair_term(a, b)
        terms[key] = terms.get(key, 0) + w
    out["terms"] = terms
    return out
