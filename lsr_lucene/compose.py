"""Search set-compositional and negated queries: encode atomic queries, combine them, search Lucene.

The zero-shot framework of Krasakis, Yates and Kanoulas (paper 000): each atomic query of a composition
tree (``not`` / ``and`` / ``or``, see :mod:`lsr_lucene.operations`) is encoded by the sparse query
encoder, the vectors are combined with the selected linear algebra operation, quantised with the index's
scale and searched as one signed query (``SignedImpactQuery`` + ``CombinedTermQuery`` for CPT pairs) in
the JVM. ``fusion`` / ``fusion-scaled`` instead search each child separately: the top ``--fusion-depth``
documents of every fused leaf form the candidates, every leaf gets its exact score on every candidate
(from its own hits, from one 4× deeper search when its list was cut, else by exact scoring; a leaf that
does not match a candidate scores 0 there), the scores are fused (score(A) − λ·score(B), ·, +; min-max
normalised per child over the candidates for fusion-scaled) and the best ``--hits`` are written.

Queries come from a JSONL file (``{"id", "query": {"op": "not", "a": "...", "b": "..."}, "text"?}``,
nesting allowed; a plain string ``query`` is one atomic query; ``text``, when given, is what ``vanilla``
encodes), from a topics file or ``--query`` texts parsed with the cue parser
(:mod:`lsr_lucene.parse_negation`), or from ``--composition`` JSON on the command line.

Encoder ablations (paper Table 3), applied to every encoded text: ``--no-expansion`` keeps only the
query's own WordPiece tokens with their learned weights; ``--no-term-weights`` gives each of the
query's own tokens weight 1 (special tokens excluded).

Documented behaviour: an empty atomic text is an input error naming the file, line and tree position;
a composed vector with no positive weight (e.g. ``subtract`` when B covers A) matches no document, so
that query gets no hits and a warning; trees deeper than 32 levels, unknown operations and operations
that do not fit a node type are input errors.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from .errors import InputError
from .io_utils import write_run
from .operations import (MAX_DEPTH, NODE_OPS, OPERATIONS, FusionPlan, Plan, Settings, Tree, VectorPlan,
                         build_plan, format_plan, format_tree, fuse, plan_vectors, quantise_composed,
                         required_texts, tree_from_json)

ENCODER_MODES = ("full", "no-expansion", "no-term-weights")
DEFAULT_FUSION_DEPTH = 1000
DEEPEN = 4  # fusion: a cut leaf list is searched once more this many times deeper before exact rescoring


@dataclass
class Composition:
    """One composed query: id, tree, and the original text (what ``vanilla`` encodes; None: templates)."""

    qid: str
    tree: Tree
    text: str | None = None


# ---------------------------------------------------------------------------------------------- input
def read_compositions(path: str | Path) -> list[Composition]:
    """Compositions from JSONL ``{"id", "query": tree, "text"?}`` (InputError names file:line)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    out: list[Composition] = []
    seen: dict[str, int] = {}
    with path.open(encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, 1):
            if not line.strip():
                continue
            where = f"{path}:{line_no}"
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"{where}: malformed JSON ({exc.msg})") from None
            except RecursionError:
                raise InputError(f"{where}: composition nested deeper than {MAX_DEPTH} levels") from None
            if not isinstance(obj, dict):
                raise InputError(f"{where}: expected a JSON object {{\"id\", \"query\"}}")
            qid = obj.get("id", obj.get("qid"))
            if qid is None or str(qid).strip() == "" or any(c.isspace() for c in str(qid)):
                raise InputError(f"{where}: missing or invalid id {qid!r} (a non-empty string without spaces)")
            qid = str(qid)
            if qid in seen:
                raise InputError(f"{where}: duplicate id {qid!r} (first at line {seen[qid]})")
            seen[qid] = line_no
            if "query" not in obj:
                raise InputError(f"{where}: query {qid}: no \"query\" field")
            tree = tree_from_json(obj["query"], f"{where}: query {qid}")
            text = obj.get("text")
            if text is not None and (not isinstance(text, str) or not text.strip()):
                raise InputError(f"{where}: query {qid}: \"text\" must be a non-empty string")
            out.append(Composition(qid, tree, text))
    if not out:
        raise InputError(f"{path}: no compositions (empty file?)")
    return out


def parse_topics(topics: Mapping[str, str]) -> list[Composition]:
    """Compositions from natural-language topics with the cue parser (uncued topics stay atomic)."""
    from .parse_negation import parse

    out = []
    for qid, text in topics.items():
        result = parse(text)
        out.append(Composition(str(qid), result.tree if result.composed else text, text))
    return out


# ---------------------------------------------------------------------------------------------- encoding
class QueryEncoder:
    """Sparse query encoder with the paper's Table 3 ablations (``full``, ``no-expansion``, ``no-term-weights``)."""

    def __init__(self, model: str = "splade-tiny", mode: str = "full", query_max_length: int | None = None,
                 encoder=None, **options):
        if mode not in ENCODER_MODES:
            raise InputError(f"unknown encoder mode {mode!r}; expected one of {', '.join(ENCODER_MODES)}")
        if encoder is None:
            from .encode import SparseEncoder

            if query_max_length:
                options["query_max_length"] = query_max_length
            encoder = SparseEncoder(model=model, **options)
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


def compose(compositions: Sequence[Composition], settings: Settings, encoder: QueryEncoder) -> list[Plan]:
    """Plans of every composition (texts encoded once, in one batch)."""
    texts: list[str] = []
    for comp in compositions:
        texts.extend(required_texts(comp.tree, settings, comp.text))
    unique = list(dict.fromkeys(texts))
    vectors = dict(zip(unique, encoder.encode(unique)))
    return [build_plan(c.tree, settings, vectors, c.text, where=f"query {c.qid}") for c in compositions]


# ---------------------------------------------------------------------------------------------- backends
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


class LuceneBackend:
    """Search and exact scoring through the Java query classes (``SpecSearcher``)."""

    def __init__(self, index: str | Path, threads: int = 2):
        from .queries import SpecSearcher

        self.searcher = SpecSearcher(str(index))
        self.threads = threads

    def search_many(self, specs: Sequence[Mapping], k: int) -> dict[str, list[tuple[str, float]]]:
        """Top-k hits of every spec, searched as one multi-threaded batch in the JVM."""
        import tempfile

        out: dict[str, list[tuple[str, float]]] = {str(s["qid"]): [] for s in specs}
        if not specs:
            return out
        with tempfile.TemporaryDirectory(prefix="compose-") as tmp:
            run = Path(tmp) / "leaves.run"
            self.searcher.search_to_run(list(specs), run, k=k, threads=self.threads, tag="x")
            with run.open() as handle:
                for line in handle:
                    qid, _, doc, _, score, _ = line.split()
                    out[qid].append((doc, float(score)))
        return out

    def search(self, spec: Mapping, k: int) -> list[tuple[str, float]]:
        """Top-k hits of one spec (one JVM call, no files)."""
        return self.searcher.search(spec, k)

    def score(self, spec: Mapping, docids: Sequence[str]) -> list[float]:
        """Exact scores of ``spec`` for ``docids``."""
        if not docids:
            return []
        return [float(s) for s in self.searcher.score(spec, list(docids))]

    def close(self) -> None:
        self.searcher.close()


class ExactBackend:
    """Exact dot products over quantised document vectors in memory (brute force; reference and small sets).

    Mirrors the Java scoring: score = Σ q_t·(impact_t − impact_neg_t) + Σ_pairs w·sqrt(impact_a·impact_b);
    candidates are documents with at least one positive contribution; ties by docid ascending.
    """

    def __init__(self, vectors: str | Path | Iterable[tuple[str, Mapping[str, float]]]):
        import numpy as np

        from .vectors import read_vectors, signed

        items = read_vectors(vectors) if isinstance(vectors, (str, Path)) else vectors
        self.ids: list[str] = []
        postings: dict[str, tuple[list[int], list[float]]] = {}
        for row, (doc, vec) in enumerate(items):
            self.ids.append(str(doc))
            for term, w in signed(vec).items():
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

        scores = np.zeros(self.n)
        matched = np.zeros(self.n, dtype=bool)
        for term, q in spec.get("terms", {}).items():
            post = self.postings.get(term)
            if post is None:
                continue
            rows, w = post
            contrib = q * w
            scores[rows] += contrib
            matched[rows[contrib > 0]] = True
        for a, b, q in spec.get("pairs", []):
            pa, pb = self.postings.get(a), self.postings.get(b)
            if pa is None or pb is None:
                continue
            va = np.zeros(self.n)
            va[pa[0]] = np.maximum(pa[1], 0)
            vb = np.zeros(self.n)
            vb[pb[0]] = np.maximum(pb[1], 0)
            both = (va > 0) & (vb > 0)
            contrib = q * np.sqrt(va[both] * vb[both])
            rows = np.nonzero(both)[0]
            scores[rows] += contrib
            matched[rows[contrib > 0]] = True
        return scores, matched

    def search(self, spec: Mapping, k: int) -> list[tuple[str, float]]:
        """Top-k (doc, score) of one spec over the whole collection."""
        import numpy as np

        scores, matched = self._scores(spec)
        rows = np.nonzero(matched)[0]
        if rows.size == 0:
            return []
        order = np.lexsort((self.id_rank[rows], -scores[rows]))[:k]
        return [(self.ids[r], float(scores[r])) for r in rows[order]]

    def search_many(self, specs: Sequence[Mapping], k: int) -> dict[str, list[tuple[str, float]]]:
        """Top-k hits of every spec."""
        return {str(s["qid"]): self.search(s, k) for s in specs}

    def score(self, spec: Mapping, docids: Sequence[str]) -> list[float]:
        """Exact scores of ``spec`` for ``docids`` (unknown docids score 0)."""
        scores, _ = self._scores(spec)
        return [float(scores[self.row[d]]) if d in self.row else 0.0 for d in docids]

    def close(self) -> None:
        """Nothing to release."""


# ---------------------------------------------------------------------------------------------- execution
def execute(qids: Sequence[str], plans: Sequence[Plan], backend, scale: float, hits: int = 1000,
            fusion_depth: int = DEFAULT_FUSION_DEPTH, warn=None) -> dict[str, list[tuple[str, float]]]:
    """Ranked (doc, score) lists for every plan: one batch search of the vector plans, fusion otherwise."""
    results: dict[str, list[tuple[str, float]]] = {}
    direct: list[dict] = []
    fused: list[tuple[str, FusionPlan, list[dict | None]]] = []
    leaf_specs: list[dict] = []
    for qid, plan in zip(qids, plans):
        if isinstance(plan, VectorPlan):
            spec = make_spec(qid, plan.vector, scale)
            if spec is None or not spec_matches(spec):
                if warn:
                    warn(qid, "the composed vector has no positive weight, so it matches no document")
                results[qid] = []
                continue
            direct.append(spec)
        else:
            specs = [make_spec(f"{qid}#{i}", vec, scale) for i, vec in enumerate(plan_vectors(plan))]
            fused.append((qid, plan, specs))
            leaf_specs.extend(s for s in specs if s is not None and spec_matches(s))
    results.update(backend.search_many(direct, hits))
    if fused:
        leaf_hits = backend.search_many(leaf_specs, fusion_depth)
        for qid, plan, specs in fused:
            results[qid] = _fused_ranking(qid, plan, specs, leaf_hits, backend, hits, fusion_depth, warn)
    return {qid: results.get(qid, []) for qid in qids}


def _fused_ranking(qid: str, plan: FusionPlan, specs: Sequence[dict | None], leaf_hits: Mapping, backend,
                   hits: int, depth: int, warn=None) -> list[tuple[str, float]]:
    """Candidates = union of the leaves' hits; every leaf's exact score on every candidate; fused; best ``hits``.

    A leaf's own hits carry its exact scores. When candidates are missing from a leaf's hits and its list
    was cut at ``depth``, the leaf is searched once more ``DEEPEN`` times deeper; candidates still missing
    are scored exactly (``backend.score``), unless the leaf's list is complete (shorter than asked for)
    and the leaf has no negative weight: then they do not match the leaf and score exactly 0 there.
    """
    candidates = sorted({doc for s in specs if s is not None for doc, _ in leaf_hits.get(s["qid"], [])})
    if not candidates:
        if warn:
            warn(qid, "no fused part matches any document")
        return []
    per_leaf = []
    for s in specs:
        if s is None:
            per_leaf.append(dict.fromkeys(candidates, 0.0))
            continue
        own = dict(leaf_hits.get(s["qid"], []))
        asked = depth
        missing = [d for d in candidates if d not in own]
        if missing and len(own) >= asked and spec_matches(s):
            asked = depth * DEEPEN
            own = dict(backend.search(s, asked))
            missing = [d for d in candidates if d not in own]
        scores = {d: own.get(d, 0.0) for d in candidates}
        complete = len(own) < asked and all(w >= 0 for w in s["terms"].values()) and \
            all(p[2] >= 0 for p in s.get("pairs", []))
        if missing and not complete:
            scores.update(zip(missing, backend.score(s, missing)))
        per_leaf.append(scores)
    fused = fuse(plan, per_leaf)
    return sorted(fused.items(), key=lambda kv: (-kv[1], kv[0]))[:hits]


def run_one(qid: str, plan: Plan, backend, scale: float, hits: int = 1000,
            fusion_depth: int = DEFAULT_FUSION_DEPTH) -> list[tuple[str, float]]:
    """Ranked hits of one plan with single-query calls (what an interactive search does; used for latency)."""
    if isinstance(plan, VectorPlan):
        spec = make_spec(qid, plan.vector, scale)
        return backend.search(spec, hits) if spec is not None and spec_matches(spec) else []
    specs = [make_spec(f"{qid}#{i}", vec, scale) for i, vec in enumerate(plan_vectors(plan))]
    leaf_hits = {s["qid"]: backend.search(s, fusion_depth) for s in specs if s is not None and spec_matches(s)}
    return _fused_ranking(qid, plan, specs, leaf_hits, backend, hits, fusion_depth)


def contributions(backend, vector: Mapping, scale: float, docs: Sequence[str]) -> dict[str, list[tuple[str, float]]]:
    """Per document: each term's / pair's non-zero contribution to its score, largest magnitude first."""
    terms, pairs = quantise_composed(vector, scale)
    clauses = [(t, {"qid": "explain", "terms": {t: w}}) for t, w in terms.items()]
    clauses += [(f"{a} ∩ {b}", {"qid": "explain", "terms": {}, "pairs": [[a, b, w]]}) for a, b, w in pairs]
    out: dict[str, list[tuple[str, float]]] = {d: [] for d in docs}
    for label, spec in clauses:
        for doc, value in zip(docs, backend.score(spec, list(docs))):
            if value:
                out[doc].append((label, value))
    return {d: sorted(parts, key=lambda kv: -abs(kv[1])) for d, parts in out.items()}


def explain_query(comp: Composition, plan: Plan, settings: Settings, scale: float, ranked, backend,
                  top_docs: int = 3, parse_text: str | None = None) -> str:
    """The ``--explain`` report of one query: parse, tree, composed representation, why top docs scored so."""
    lines = [f"== query {comp.qid}" + (f": {comp.text}" if comp.text else "")]
    if parse_text:
        lines += ["  " + line for line in parse_text.splitlines()[1:]]
    else:
        lines.append(format_tree(comp.tree, "  "))
    lines.append(f"  operations: {settings.describe()}")
    lines.append("  representation (term: weight, sorted; negative terms penalise documents):")
    lines.append(format_plan(plan, top=12, indent="    "))
    if isinstance(plan, VectorPlan):
        top = [doc for doc, _ in ranked[:top_docs]]
        parts_of = contributions(backend, plan.vector, scale, top) if top else {}
        for rank, (doc, score) in enumerate(ranked[:top_docs], 1):
            parts = parts_of[doc]
            shown = ", ".join(f"{t} {v:+.0f}" for t, v in parts[:8])
            penal = [f"{t} {v:+.0f}" for t, v in parts if v < 0]
            lines.append(f"  {rank}. {doc} score {score:.1f} = {shown}{' …' if len(parts) > 8 else ''}")
            if penal:
                lines.append(f"     penalised by: {', '.join(penal[:8])}")
    else:
        for rank, (doc, score) in enumerate(ranked[:top_docs], 1):
            lines.append(f"  {rank}. {doc} fused score {score:.4f}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------- command line
def add_operation_arguments(parser: argparse.ArgumentParser) -> None:
    """Operation and encoder-ablation options shared by the compose and evaluation commands."""
    parser.add_argument("--operation", default=None, choices=OPERATIONS, metavar="NAME",
                        help=f"operation for every node type it applies to ({', '.join(OPERATIONS)}); other "
                             "node types use not: disentangled, and: cpt, or: maxpool")
    for node_op in NODE_OPS:
        parser.add_argument(f"--{node_op}-op", default=None, metavar="NAME",
                            help=f"operation for {node_op!r} nodes (overrides --operation)")
    parser.add_argument("--lam", type=float, default=None,
                        help="λ of nrf (default 0.5), disentangled and fusion on not nodes (default 1)")
    parser.add_argument("--top-pairs", type=int, default=5, help="CPT: pairs kept per intersection (default 5)")
    parser.add_argument("--pair-weight", type=float, default=1.0, help="CPT: multiplier of pair weights")
    ablation = parser.add_mutually_exclusive_group()
    ablation.add_argument("--no-expansion", action="store_true",
                          help="query encoder ablation: keep only the query's own tokens (learned weights)")
    ablation.add_argument("--no-term-weights", action="store_true",
                          help="query encoder ablation: the query's own tokens with weight 1")


def settings_from_args(args: argparse.Namespace) -> Settings:
    """Settings from parsed operation arguments (unknown names -> InputError)."""
    per_type = {op: getattr(args, f"{op}_op") for op in NODE_OPS if getattr(args, f"{op}_op")}
    return Settings(args.operation, per_type, args.lam, args.top_pairs, args.pair_weight)


def encoder_mode(args: argparse.Namespace) -> str:
    """Encoder ablation mode from the arguments."""
    return "no-expansion" if args.no_expansion else "no-term-weights" if args.no_term_weights else "full"


def load_compositions(args: argparse.Namespace) -> tuple[list[Composition], dict[str, str]]:
    """Compositions from --queries / --topics / --query / --composition, and parse reports for --explain."""
    from .parse_negation import explain, parse

    if args.queries:
        return read_compositions(args.queries), {}
    if args.composition:
        comps = []
        for i, raw in enumerate(args.composition, 1):
            try:
                obj = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise InputError(f"--composition {i}: malformed JSON ({exc.msg})") from None
            except RecursionError:
                raise InputError(f"--composition {i}: nested deeper than {MAX_DEPTH} levels") from None
            comps.append(Composition(str(i), tree_from_json(obj, f"--composition {i}")))
        return comps, {}
    if args.topics:
        from .topics import read_topics

        topics = read_topics(args.topics)
    else:
        topics = {str(i): q for i, q in enumerate(args.query, 1)}
        for qid, text in topics.items():
            if not text.strip():
                raise InputError(f"--query {qid}: empty query")
    reports = {qid: explain(parse(text)) for qid, text in topics.items()} if args.explain else {}
    return parse_topics(topics), reports


def build_parser() -> argparse.ArgumentParser:
    """Argument parser of ``lsr-lucene compose``."""
    from .search import add_search_arguments

    parser = argparse.ArgumentParser(prog="lsr-lucene compose", description=__doc__.splitlines()[0])
    add_search_arguments(parser)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--queries", help="compositions JSONL {id, query: {op, a, b}, text?}")
    source.add_argument("--topics", help="natural-language topics (TSV, JSONL, ...) parsed with the cue parser")
    source.add_argument("--query", action="append", help="a natural-language query (repeatable; ids 1, 2, ...)")
    source.add_argument("--composition", action="append", help="a composition as JSON (repeatable)")
    add_operation_arguments(parser)
    parser.add_argument("--fusion-depth", type=int, default=DEFAULT_FUSION_DEPTH,
                        help="fusion: hits per fused leaf that form the candidates (default 1000)")
    parser.add_argument("--vectors", default=None,
                        help="score by exact in-memory dot products over these document vectors instead of Lucene")
    parser.add_argument("--explain", action="store_true",
                        help="print each query's parse, composed representation and its top documents' term scores")
    parser.add_argument("--explain-docs", type=int, default=3, help="documents explained per query (default 3)")
    return parser


def main(argv: list[str] | None = None) -> int:
    """CLI: compose, search and write a TREC run."""
    from .io_utils import refuse_existing
    from .search import index_settings, report_unanswered

    args = build_parser().parse_args(argv)
    if not Path(args.index).is_dir():
        raise InputError(f"{args.index}: no such index directory")
    refuse_existing(args.output, args.overwrite)
    if args.fusion_depth < 1 or args.hits < 1:
        raise InputError("--hits and --fusion-depth must be at least 1")
    settings = settings_from_args(args)
    comps, reports = load_compositions(args)
    info = index_settings(args.index)
    model = args.encoder or info.get("model") or "splade-tiny"
    scale = args.scale or info.get("scale") or 100
    options = {k: info[k] for k in ("activation", "pooling", "epsilon") if info.get(k) is not None}
    started = time.perf_counter()
    encoder = QueryEncoder(model, encoder_mode(args), args.query_max_length, threads=args.threads, **options)
    plans = compose(comps, settings, encoder)
    print(f"composed {len(comps)} queries ({settings.describe()}; encoder {encoder.mode})", file=sys.stderr)

    def warn(qid: str, why: str) -> None:
        print(f"warning: query {qid}: {why}; no hits", file=sys.stderr)

    backend = ExactBackend(args.vectors) if args.vectors else LuceneBackend(args.index, args.threads)
    try:
        qids = [c.qid for c in comps]
        results = execute(qids, plans, backend, scale, args.hits, args.fusion_depth, warn)
        if args.explain:
            for comp, plan in zip(comps, plans):
                print(explain_query(comp, plan, settings, scale, results[comp.qid], backend, args.explain_docs,
                                    reports.get(comp.qid)))
    finally:
        backend.close()
    tag = args.run_tag or f"compose-{settings.op_for('not') if settings.operation is None else settings.operation}"
    write_run(results, args.output, tag, args.overwrite)
    missing = [q for q in qids if not results[q]]
    report_unanswered(missing, len(qids))
    print(f"wrote {args.output} ({len(qids) - len(missing)} of {len(qids)} queries with hits, "
          f"{time.perf_counter() - started:.1f}s)")
    return 0


if __name__ == "__main__":
    from .cli import run_main

    sys.exit(run_main(main))
