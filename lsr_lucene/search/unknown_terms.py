"""Query terms that an index does not hold: found per query and named in one warning line, not dropped silently.

A spec term that no document has (a typo, a word that is not a WordPiece of the encoder, ``Heat`` for an uncased
model) scores nothing, so a query ranks exactly as without it. A term counts as unknown when neither it nor its
``neg_`` form is in the index's field and, when the index's model vocabulary is at hand on this machine, it is
not a term of that vocabulary either (a vocabulary term that this collection happens to lack is normal: query
expansion produces many).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from lsr_lucene.io.vectors import NEG_PREFIX

DEFAULT_FIELD = "contents"
SHOWN_QUERIES = 5  # queries named one per line; the rest are counted in one more line


def model_vocabulary(model: str | None) -> frozenset[str] | None:
    """The vocabulary of a model found on this machine (registry name, local directory or the Hugging Face cache)
    without loading the model; None when it is not at hand."""
    if not model:
        return None
    from lsr_lucene.encode.models import resolve

    try:
        target = resolve(model)
    except Exception:  # a registry entry whose package is missing
        return None
    files = [Path(target, "tokenizer.json"), Path(target, "vocab.txt")] if Path(target).is_dir() else []
    if not files:
        try:
            from huggingface_hub import try_to_load_from_cache

            cached = [try_to_load_from_cache(target, name) for name in ("tokenizer.json", "vocab.txt")]
        except Exception:  # not an id the cache accepts
            return None
        files = [Path(c) for c in cached if isinstance(c, str)]
    for file in files:
        if not file.is_file():
            continue
        try:
            if file.name == "vocab.txt":
                return frozenset(line.rstrip("\n") for line in file.open(encoding="utf-8"))
            vocab = json.loads(file.read_text(encoding="utf-8")).get("model", {}).get("vocab")
        except (OSError, ValueError):
            continue
        if isinstance(vocab, dict):
            return frozenset(vocab)
        if isinstance(vocab, list):  # unigram models: [[piece, score], ...]
            return frozenset(str(v[0]) for v in vocab if v)
    return None


class UnknownTermsWarning(UserWarning):
    """Query terms that the index does not hold (``ImpactSearcher``'s spec searches)."""


class UnknownTerms:
    """Which terms of query specs an open index lacks (document frequencies from the searcher's reader)."""

    def __init__(self, index_searcher, vocabulary: frozenset[str] | None = None):
        from lsr_lucene.jvm.runtime import autoclass

        self._reader = index_searcher.getIndexReader()
        self._term = autoclass("org.apache.lucene.index.Term")
        self.vocabulary = vocabulary
        self._known: dict[tuple[str, str], bool] = {}

    def has(self, field: str, term: str) -> bool:
        """Whether some document of the index has ``term`` (or ``neg_<term>``) in ``field``."""
        key = (field, term)
        if key not in self._known:
            self._known[key] = any(self._reader.docFreq(self._term(field, t)) > 0 for t in (term, NEG_PREFIX + term))
        return self._known[key]

    def of(self, spec: Mapping) -> list[str]:
        """The spec's terms (and CPT pair members) that the index lacks, each with a hint when only its case
        differs from a term the index has."""
        field = str(spec.get("field") or DEFAULT_FIELD)
        terms = list(spec.get("terms") or {})
        for pair in spec.get("pairs") or []:
            terms += [pair[0], pair[1]]
        unknown = []
        for term in dict.fromkeys(terms):
            if (self.vocabulary is not None and term in self.vocabulary) or self.has(field, term):
                continue
            lower = term.lower()
            unknown.append(f"{term} (the index has {lower!r})" if lower != term and self.has(field, lower) else term)
        return unknown

    def of_all(self, specs: Iterable[Mapping]) -> dict[str, list[str]]:
        """``{qid: unknown terms}`` of the specs that have some."""
        found = {}
        for spec in specs:
            unknown = self.of(spec)
            if unknown:
                found[str(spec["qid"])] = unknown
        return found


def query_line(qid: str, unknown: list[str]) -> str:
    """One warning line: a query and the terms of it that the index lacks."""
    return f"warning: query {qid}: {len(unknown)} term(s) not in the index, so without effect: {', '.join(unknown)}"


def unknown_term_lines(found: Mapping[str, list[str]], total: int, shown: int = SHOWN_QUERIES) -> list[str]:
    """A line per query for the first ``shown`` queries with unknown terms, then one line counting the rest."""
    lines = [query_line(qid, terms) for qid, terms in list(found.items())[:shown]]
    rest = list(found)[shown:]
    if rest:
        terms = sorted({t for qid in rest for t in found[qid]})
        sample = ", ".join(terms[:8]) + (" ..." if len(terms) > 8 else "")
        lines.append(f"warning: {len(rest)} more of {total} queries have terms not in the index "
                     f"({len(terms)} distinct: {sample})")
    return lines


def report_unknown_terms(searcher, specs: Sequence[Mapping], model: str | None) -> dict[str, list[str]]:
    """Print the warning lines for specs searched with a ``SpecSearcher``; returns ``{qid: unknown terms}``."""
    found = UnknownTerms(searcher.index_searcher, model_vocabulary(model)).of_all(specs)
    for line in unknown_term_lines(found, len(specs)):
        print(line, file=sys.stderr)
    return found


def warn_unknown_terms(checker: UnknownTerms, specs: Iterable[Mapping], stacklevel: int = 3) -> None:
    """An UnknownTermsWarning per query with unknown terms (Python's warnings: a library user can filter them)."""
    import warnings

    for qid, terms in checker.of_all(specs).items():
        warnings.warn(query_line(qid, terms).removeprefix("warning: "), UnknownTermsWarning, stacklevel=stacklevel)
