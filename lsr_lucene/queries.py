"""Python side of the Java query classes: query specs, batch search, exact scoring, positional field, CPT terms.

A *query spec* is one JSON object per query (see ``io.github.lsrlucene.QuerySpec``)::

    {"qid": "1", "terms": {"t": w, ...}, "pairs": [["a", "b", w], ...],
     "windows": [{"terms": [["t1", q1], ["t2", q2]], "ordered": true, "width": 2, "weight": 1.0}],
     "rerank": 1000, "mode": "signed" | "boolean", "field": "contents"}

``terms`` weights may have either sign (documents hold negative weights as ``neg_<t>`` terms), pairs are
Combined Pseudo-Terms scored w·sqrt(impact_a·impact_b), windows are SDM-style proximity clauses over the
positional sidecar (added to the full search, or with ``rerank`` N > 0 only to the top N). The Java
``BatchSearcher`` searches a spec file with several threads and writes the TREC run itself.
"""
from __future__ import annotations

import contextlib
import itertools
import json
import math
import os
import tempfile
from pathlib import Path
from typing import Iterable, Iterator, Mapping, Sequence

from .errors import InputError

JAVA_PACKAGE = "io.github.lsrlucene"
PAIR_SEPARATOR = "||"
NEG_PREFIX = "neg_"
SPEC_KEYS = {"qid", "terms", "pairs", "windows", "rerank", "mode", "field", "text"}


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
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"{what} must be a number, got {value!r}")
    if not math.isfinite(value):
        raise InputError(f"{what} must be finite, got {value!r}")


def validate_spec(spec: Mapping, where: str | None = None) -> None:
    """Raise InputError (naming the query) for a malformed spec: the same rules the Java parser applies."""
    if not isinstance(spec, Mapping):
        raise InputError(f"{where or 'query spec'}: expected a dict, got {type(spec).__name__}")
    qid = spec.get("qid")
    if not isinstance(qid, (str, int)) or isinstance(qid, bool) or str(qid) == "" or any(c.isspace() for c in str(qid)):
        raise InputError(f"{where or 'query spec'}: missing or invalid qid {qid!r} (a non-empty string without spaces)")
    label = f"query {qid}" + (f" ({where})" if where else "")
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
        for item in clause["terms"]:
            t, q = (item, 1.0) if isinstance(item, str) else (item[0], item[1])
            _finite(q, f"{label}: window weight of {t!r}")
            if q < 0:
                raise InputError(f"{label}: window weight of {t!r} must be >= 0, got {q}")
        _finite(clause.get("weight", 1.0), f"{label}: window weight")
    rerank = spec.get("rerank", 0)
    if not isinstance(rerank, int) or isinstance(rerank, bool) or rerank < 0:
        raise InputError(f"{label}: 'rerank' must be a non-negative integer, got {rerank!r}")
    if not any(w != 0 for w in terms.values()) and not any(p[2] != 0 for p in pairs) and (not windows or rerank):
        raise InputError(f"{label}: no non-zero term or pair weight")


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


def read_query_specs(path: str | Path) -> list[dict]:
    """Specs from a JSONL file (InputError naming file:line on bad lines)."""
    from .io_utils import open_jsonl

    specs = []
    for line_no, obj in open_jsonl(path):
        validate_spec(obj, where=f"{path}:{line_no}")
        specs.append(obj)
    return specs


# --------------------------------------------------------------------------------------------- Java bridge

def java_class(name: str):
    """A class of our Java package (the JVM is started our way first)."""
    from . import jvm

    return jvm.autoclass(f"{JAVA_PACKAGE}.{name}")


_INPUT_EXCEPTIONS = ("QuerySpecException", "IllegalArgumentException", "NoSuchFileException",
                     "IllegalStateException", "FileNotFoundException", "IndexNotFoundException",
                     "AccessDeniedException")


def _java_message(exc) -> str:
    msg = getattr(exc, "innermessage", None) or str(exc)
    return str(msg).strip().splitlines()[0] if str(msg).strip() else type(exc).__name__


@contextlib.contextmanager
def java_errors(context: str = "") -> Iterator[None]:
    """Turn Java exceptions a user can fix into InputError (one line); others into RuntimeError."""
    from jnius import JavaException

    try:
        yield
    except JavaException as exc:
        classname = getattr(exc, "classname", "") or ""
        message = _java_message(exc)
        prefix = f"{context}: " if context and context not in message else ""
        if classname.rsplit(".", 1)[-1] in _INPUT_EXCEPTIONS:
            raise InputError(f"{prefix}{message}") from None
        raise RuntimeError(f"{prefix}{classname}: {message}") from exc


class SpecSearcher:
    """Batch searcher over an Anserini impact index (plus positional sidecar when present), by query specs."""

    def __init__(self, index_dir: str | Path):
        self.index_dir = str(index_dir)
        if not Path(self.index_dir).is_dir():
            raise InputError(f"{self.index_dir}: no such index directory")
        cls = java_class("BatchSearcher")
        with java_errors(self.index_dir):
            self._java = cls(self.index_dir)

    @property
    def num_docs(self) -> int:
        return int(self._java.numDocs())

    @property
    def has_positions(self) -> bool:
        """Whether the positional field (window clauses) is available."""
        return bool(self._java.hasPositions())

    def search_to_run(self, specs: Iterable[Mapping], run_path: str | Path, k: int = 1000, threads: int = 2,
                      tag: str = "lsr_lucene") -> int:
        """Search all specs and write a TREC run at ``run_path`` (temp file + rename); returns the query count."""
        tag = tag or "lsr_lucene"
        run_path = Path(run_path)
        run_path.parent.mkdir(parents=True, exist_ok=True)
        fd, spec_tmp = tempfile.mkstemp(prefix=".specs-", suffix=".jsonl", dir=run_path.parent)
        os.close(fd)
        fd, run_tmp = tempfile.mkstemp(prefix=f".{run_path.name}.tmp-", dir=run_path.parent)
        os.close(fd)
        try:
            write_query_specs(specs, spec_tmp)
            n = self.search_file(spec_tmp, run_tmp, k=k, threads=threads, tag=tag)
            os.replace(run_tmp, run_path)
            return n
        finally:
            for p in (spec_tmp, run_tmp):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(p)

    def search_file(self, specs_jsonl: str | Path, run_path: str | Path, k: int = 1000, threads: int = 2,
                    tag: str = "lsr_lucene") -> int:
        """Search a spec JSONL file, writing the run straight to ``run_path`` (no rename); returns the query count."""
        if k <= 0:
            raise InputError(f"k must be positive, got {k}")
        if threads <= 0:
            raise InputError(f"threads must be positive, got {threads}")
        with java_errors():
            return int(self._java.search(str(specs_jsonl), str(run_path), int(k), int(threads), str(tag)))

    def search(self, spec: Mapping, k: int = 10) -> list[tuple[str, float]]:
        """Top-k (docid, score) of one spec, best first."""
        validate_spec(spec)
        if k <= 0:
            raise InputError(f"k must be positive, got {k}")
        with java_errors(f"query {spec['qid']}"):
            text = self._java.searchToString(json.dumps(spec, allow_nan=False), int(k), "x")
        hits = []
        for line in text.splitlines():
            parts = line.split(" ")
            hits.append((parts[2], float(parts[4])))
        return hits

    def score(self, spec: Mapping, docids: Sequence[str]) -> list[float]:
        """Exact scores of ``spec`` for the given docids (matching or not): Σ w·(impact − neg impact) + pairs + windows."""
        validate_spec(spec)
        with java_errors(f"query {spec['qid']}"):
            return list(self._java.scoreDocs(json.dumps(spec, allow_nan=False), [str(d) for d in docids]))

    def close(self) -> None:
        if getattr(self, "_java", None) is not None:
            self._java.close()
            self._java = None

    def __enter__(self) -> "SpecSearcher":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def build_positional_field(index_dir: str | Path, tokens_jsonl: str | Path) -> dict:
    """Write the positional weight field sidecar (``<index>/positions``) from per-position token weights JSONL."""
    if not Path(tokens_jsonl).exists():
        raise InputError(f"{tokens_jsonl}: no such file")
    cls = java_class("PositionalIndexer")
    with java_errors(str(tokens_jsonl)):
        docs, with_tokens, unknown = cls.build(str(index_dir), str(tokens_jsonl))
    return {"documents": int(docs), "with_tokens": int(with_tokens), "unknown_ids": int(unknown)}


# --------------------------------------------------------------------------------------------- CPT

def pair_term(a: str, b: str) -> str:
    """The index-time Combined Pseudo-Term for a pair (order-free): ``min||max``."""
    x, y = sorted((a, b))
    return f"{x}{PAIR_SEPARATOR}{y}"


def query_pairs(vec_a: Mapping[str, float], vec_b: Mapping[str, float], top: int = 5) -> list[list]:
    """Paper's CPT query side: pairs of the top-``top`` terms of A and B, weight sqrt(w_a·w_b)."""
    def best(v):
        return sorted(((t, w) for t, w in v.items() if w > 0), key=lambda x: (-x[1], x[0]))[:top]

    pairs: dict[tuple[str, str], float] = {}
    for (a, wa), (b, wb) in itertools.product(best(vec_a), best(vec_b)):
        key = tuple(sorted((a, b)))
        pairs[key] = max(pairs.get(key, 0.0), math.sqrt(wa * wb))
    return [[a, b, w] for (a, b), w in pairs.items()]


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
    from .io_utils import atomic_output, open_jsonl

    from .vectors import METADATA, vector_files

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
        if src.is_dir() and (src / METADATA).exists():
            meta = json.loads((src / METADATA).read_text())
            meta["pair_terms_top_n"] = top_n
            (tmp / METADATA).write_text(json.dumps(meta, indent=2) + "\n")
    return {"documents": docs, "pair_terms": added}


def pairs_to_terms(spec: Mapping) -> dict:
    """Query side of index-time CPT: move ``pairs`` into ``terms`` as ``a||b`` pseudo-terms."""
    out = {k: v for k, v in spec.items() if k != "pairs"}
    terms = dict(spec.get("terms", {}))
    for a, b, w in spec.get("pairs", []):
        key = pair_term(a, b)
        terms[key] = terms.get(key, 0) + w
    out["terms"] = terms
    return out
