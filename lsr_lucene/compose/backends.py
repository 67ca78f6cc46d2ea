"""Where composed queries are searched and scored: Lucene (the Java query classes) or exact in-memory dot products.

A composed vector becomes a query spec (signed integer term weights, plus Combined Pseudo-Term pairs) with
:func:`make_spec`; both backends search specs (top-k) and score them exactly for given documents.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable, Mapping, Sequence

from lsr_lucene.compose.operations import quantise_composed


def make_spec(qid: str, vector: Mapping, scale: float) -> dict | None:
    """Query spec (signed int terms + pairs) of a composed vector; None when it has no non-zero weight."""
    terms, pairs = quantise_composed(vector, scale, qid)
    if not terms and not pairs:
        return None
    spec: dict = {"qid": qid, "terms": terms}
    if pairs:
        spec["pairs"] = pairs
    return spec


def spec_matches(spec: Mapping) -> bool:
    """Whether a spec can match documents (Lucene candidates need a positive term or pair weight)."""
    return any(w > 0 for w in spec.get("terms", {}).values()) or any(p[2] > 0 for p in spec.get("pairs", []))


EXACT = 1.0  # the heap factor of every LuceneBackend search


class LuceneBackend:
    """Search and exact scoring through the Java query classes (``SpecSearcher``); safe to share across threads
    (nothing here changes per call: ``search_many`` takes its thread count as an argument). Always exact: every
    search passes heap factor 1, whatever the searcher's own."""

    def __init__(self, index: str | Path, threads: int = 2, searcher=None):
        """``searcher``: an open ``SpecSearcher`` over ``index`` to share (a server's: the index, its docids and
        sidecars held once), left open by :meth:`close`; None opens one."""
        from lsr_lucene.search.spec_searcher import SpecSearcher

        self._owns = searcher is None
        self.searcher = SpecSearcher(str(index)) if searcher is None else searcher
        self.threads = threads

    def search_many(self, specs: Sequence[Mapping], k: int,
                    threads: int | None = None) -> dict[str, list[tuple[str, float]]]:
        """Top-k hits of every spec. ``threads`` (default: the backend's): 1 searches each spec in memory on the
        calling thread (no files: a server's requests, ``ComposeSearcher.search``); more search one multi-threaded
        batch in the JVM through a temporary run file. Both give the run file's hits and scores."""
        import tempfile

        from lsr_lucene.io.runs import read_hits

        threads = self.threads if threads is None else int(threads)
        out: dict[str, list[tuple[str, float]]] = {str(s["qid"]): [] for s in specs}
        if not specs:
            return out
        if threads <= 1:
            out.update((str(s["qid"]), self.searcher.search(s, k, heap_factor=EXACT)) for s in specs)
            return out
        with tempfile.TemporaryDirectory(prefix="compose-") as tmp:
            run = Path(tmp) / "leaves.run"
            self.searcher.search_to_run(list(specs), run, k=k, threads=threads, tag="x", heap_factor=EXACT)
            out.update(read_hits(run))
        return out

    def search(self, spec: Mapping, k: int) -> list[tuple[str, float]]:
        """Top-k hits of one spec (one JVM call, no files)."""
        return self.searcher.search(spec, k, heap_factor=EXACT)

    def score(self, spec: Mapping, docids: Sequence[str]) -> list[float]:
        """Exact scores of ``spec`` for ``docids``, written as the hits' are (``as_written``: fusion mixes both)."""
        from lsr_lucene.search.spec_searcher import as_written

        return as_written(self.searcher.score(spec, list(docids))) if docids else []

    def known(self, docids: Sequence[str]) -> list[str]:
        """The docids the index holds, in the order given (a dense folder also keeps the empty documents that the
        impact index skips)."""
        lucene = self.searcher.lucene_docids(docids)
        return [d for d, n in zip(docids, lucene) if n >= 0]

    def texts(self, docids: Sequence[str]) -> dict[str, str | None]:
        """The stored text of each docid (the ``contents`` of its raw field; None when the index stores none), read
        in one JVM call."""
        return self.searcher.contents(docids)

    def containing(self, items: Sequence[str], docids: Sequence[str]) -> list[bool]:
        """Whether each docid's text contains one of ``items`` (words or phrases) as the strict filter judges it: one
        Lucene query over the text field (``<index>/text``) for all of them; an index without it reads the texts
        (:func:`lsr_lucene.search.text_filter.texts_containing`)."""
        from lsr_lucene.index.text_field import has_text_field
        from lsr_lucene.search.text_filter import any_of, texts_containing

        expression = any_of(items)
        if expression is None or not docids:
            return [False] * len(docids)
        if not has_text_field(self.searcher.index_dir):
            texts = self.texts(docids)
            return texts_containing([texts.get(d) for d in docids], items)
        return self.excluded(expression, docids)

    def excluded(self, expression: Mapping, docids: Sequence[str]) -> list[bool]:
        """Whether each docid is one a strict filter expression removes (:mod:`lsr_lucene.search.text_filter`)."""
        return self.searcher.excluded(expression, docids)

    def excluded_count(self, expression: Mapping) -> int:
        """How many documents of the index a strict filter expression removes."""
        return self.searcher.excluded_count(expression)

    def close(self) -> None:
        if self._owns:
            self.searcher.close()


class ExactBackend:
    """The brute-force reference for signed models: exact double dot products over quantised document vectors in
    memory (tests, benchmarks and small sets score against it).

    Mirrors the Java scoring (``ExactScorer``) term for term: documents hold their terms as the index does (a negative
    weight of ``t`` is the impact of ``neg_<t>``), score = Σ q_t·(impact_t − impact_neg_t) (mode ``boolean``:
    Σ q_t·impact_t) in spec order, then Σ_pairs w·sqrt(impact_a·impact_b), each step one double operation as in Java,
    so scores agree to the bit; candidates are documents with a positive clause ((t, q > 0) with impact_t > 0,
    (neg_t, |q|) for q < 0, pairs with w > 0); top-k by lsr_lucene.io.ranking.top_k (score descending, ties by docid
    ascending). Window clauses need the positional field: specs with windows are refused.
    """

    def __init__(self, vectors: str | Path | Iterable[tuple[str, Mapping[str, float]]]):
        import numpy as np

        from lsr_lucene.io.vectors import read_vectors

        items = read_vectors(vectors) if isinstance(vectors, (str, Path)) else vectors
        self._source = vectors if isinstance(vectors, (str, Path)) else None
        self._contents: dict[str, str] | None = None
        self.ids: list[str] = []
        postings: dict[str, tuple[list[int], list[float]]] = {}
        for row, (doc, vec) in enumerate(items):
            self.ids.append(str(doc))
            for term, w in _as_indexed(vec).items():
                docs_w = postings.setdefault(term, ([], []))
                docs_w[0].append(row)
                docs_w[1].append(float(w))
        self.postings = {t: (np.asarray(d, dtype=np.int64), np.asarray(w, dtype=np.float64))
                         for t, (d, w) in postings.items()}
        self.row = {doc: i for i, doc in enumerate(self.ids)}
        self.n = len(self.ids)
        order = sorted(range(self.n), key=lambda i: self.ids[i])
        self.id_rank = np.empty(self.n, dtype=np.int64)
        self.id_rank[order] = np.arange(self.n)

    def _scores(self, spec: Mapping):
        import numpy as np

        from lsr_lucene.errors import InputError
        from lsr_lucene.io.vectors import NEG_PREFIX

        if spec.get("windows"):
            raise InputError(f"query {spec.get('qid')}: the in-memory exact backend scores terms and pairs; window "
                             "clauses need the index's positional field (the Lucene backend)")
        boolean = spec.get("mode") == "boolean"
        scores = np.zeros(self.n)
        matched = np.zeros(self.n, dtype=bool)
        for term, q in spec.get("terms", {}).items():
            pos = self.postings.get(term)
            neg = None if boolean else self.postings.get(NEG_PREFIX + term)
            if pos is None and neg is None:
                continue
            if neg is None:
                rows, diff = pos  # type: ignore[misc]  # not both None (skipped above)
            elif pos is None:
                rows, diff = neg[0], -neg[1]
            else:  # impact − neg impact per document, exact as Java's long difference
                rows, inverse = np.unique(np.concatenate([pos[0], neg[0]]), return_inverse=True)
                diff = np.zeros(len(rows))
                np.add.at(diff, inverse, np.concatenate([pos[1], -neg[1]]))
            scores[rows] += q * diff
            if q > 0 and pos is not None:
                matched[pos[0][pos[1] > 0]] = True
            if q < 0 and neg is not None:
                matched[neg[0][neg[1] > 0]] = True
        for a, b, q in spec.get("pairs", []):
            pa, pb = self.postings.get(a), self.postings.get(b)
            if pa is None or pb is None or q == 0:
                continue
            va = np.zeros(self.n)
            va[pa[0]] = pa[1]
            vb = np.zeros(self.n)
            vb[pb[0]] = pb[1]
            rows = np.flatnonzero((va > 0) & (vb > 0))
            scores[rows] += q * np.sqrt(va[rows] * vb[rows])
            if q > 0:
                matched[rows] = True
        return scores, matched

    def search(self, spec: Mapping, k: int) -> list[tuple[str, float]]:
        """Top-k (doc, score) of one spec over the whole collection."""
        import numpy as np

        from lsr_lucene.io.ranking import top_k

        scores, matched = self._scores(spec)
        if spec.get("exclude"):  # the strict filter, by brute force over the encoded texts
            matched &= ~np.asarray(self.excluded(spec["exclude"], self.ids), dtype=bool)
        rows = top_k(scores, k, self.id_rank, np.flatnonzero(matched))
        return [(self.ids[r], float(scores[r])) for r in rows]

    def search_many(self, specs: Sequence[Mapping], k: int,
                    threads: int | None = None) -> dict[str, list[tuple[str, float]]]:
        """Top-k hits of every spec (``threads`` is accepted for LuceneBackend's signature; one thread here)."""
        return {str(s["qid"]): self.search(s, k) for s in specs}

    def score(self, spec: Mapping, docids: Sequence[str]) -> list[float]:
        """Exact scores of ``spec`` for ``docids`` (unknown docids score 0)."""
        scores, _ = self._scores(spec)
        return [float(scores[self.row[d]]) if d in self.row else 0.0 for d in docids]

    def known(self, docids: Sequence[str]) -> list[str]:
        """The docids the vectors hold, in the order given."""
        return [d for d in docids if d in self.row]

    def texts(self, docids: Sequence[str]) -> dict[str, str | None]:
        """The text of each docid as encoded (the vectors' ``contents``, read once when first asked; none when the
        backend was made from vectors in memory)."""
        if self._contents is None:
            from lsr_lucene.io.vectors import read_vectors

            self._contents = {} if self._source is None else {
                str(doc): text for doc, _, text in read_vectors(self._source, with_contents=True)}
        return {d: self._contents.get(d) for d in docids}

    def containing(self, items: Sequence[str], docids: Sequence[str]) -> list[bool]:
        """Whether each docid's text contains one of ``items`` (brute force over the vectors' texts)."""
        from lsr_lucene.search.text_filter import texts_containing

        texts = self.texts(docids)
        return texts_containing([texts.get(d) for d in docids], items)

    def excluded(self, expression: Mapping, docids: Sequence[str]) -> list[bool]:
        """Whether each docid's text matches a strict filter expression (brute force over the vectors' texts)."""
        from lsr_lucene.search.text_filter import expression_matches

        texts = self.texts(docids)
        return [expression_matches(texts.get(d), expression) for d in docids]

    def excluded_count(self, expression: Mapping) -> int:
        """How many documents a strict filter expression removes."""
        return sum(self.excluded(expression, self.ids))

    def close(self) -> None:
        """Nothing to release."""


def _as_indexed(vector: Mapping[str, float]) -> dict[str, float]:
    """A document vector's terms as the index holds them: a negative weight of ``t`` becomes ``neg_<t>``'s impact."""
    from lsr_lucene.io.vectors import NEG_PREFIX

    out: dict[str, float] = {}
    for term, w in vector.items():
        if w:
            key = term if w > 0 else NEG_PREFIX + term
            out[key] = out.get(key, 0) + abs(w)
    return out
