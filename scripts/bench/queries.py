"""Latency of the Java query types, as ratios measured in one run (a script, not a timed test).

Compares, per query, with the same BatchSearcher, thread count and hits:

1. negation: SignedImpactQuery for A − B* (disentangled negation, B* = B without A's terms) against the
   positive-only Anserini-style BooleanQuery of A (target ≤ 1.3×);
2. intersection: Combined Pseudo-Terms on the fly (CombinedTermQuery pairs) against index-time ``a||b``
   pseudo-terms (an extra index built here), with both index sizes;
3. proximity: WindowQuery (SDM-style ordered bigrams and unordered windows) reranking the top 1000 against
   the plain impact query (needs the positional field: ``lsr-lucene index --positions``).

Negation and intersection queries pair each topic with the next one. Prepare NPL with::

    lsr-lucene encode --corpus ../shared/data/npl/corpus.jsonl --output npl.vec --max-length 256 --positions npl.pos.jsonl
    lsr-lucene encode --topics ../shared/data/npl/topics.tsv --output npl.q.jsonl
    lsr-lucene index --input npl.vec --index npl.idx --positions npl.pos.jsonl
    python -m scripts.bench.queries --index npl.idx --queries npl.q.jsonl
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsr_lucene.errors import InputError
from lsr_lucene.index.pair_terms import add_pair_terms
from lsr_lucene.search.spec_searcher import SpecSearcher
from lsr_lucene.search.specs import pairs_to_terms, query_pairs, window, write_query_specs


def read_queries(path: str | Path) -> tuple[dict[str, dict[str, float]], dict[str, str]]:
    """Query vectors and texts from an encoded-topics JSONL ({"id", "contents", "vector"})."""
    from lsr_lucene.io.output import open_jsonl

    vectors, texts = {}, {}
    for line_no, obj in open_jsonl(path):
        if "id" not in obj or not isinstance(obj.get("vector"), dict):
            raise InputError(f"{path}:{line_no}: expected {{\"id\", \"vector\"}} (lsr-lucene encode --topics output)")
        qid = str(obj["id"])
        vectors[qid] = {t: w for t, w in obj["vector"].items() if w}
        texts[qid] = str(obj.get("contents") or obj.get("text") or "")
    if len(vectors) < 2:
        raise InputError(f"{path}: need at least two queries")
    return vectors, texts


def topic_pairs(qids: list[str]) -> list[tuple[str, str]]:
    """Each topic with the next one (cyclically): the (A, B) of the composed queries."""
    return [(qids[i], qids[(i + 1) % len(qids)]) for i in range(len(qids))]


def negation_specs(vectors, pairs) -> tuple[list[dict], list[dict]]:
    """(signed A − B*, positive-only boolean A) specs."""
    signed, plain = [], []
    for a, b in pairs:
        va, vb = vectors[a], vectors[b]
        terms = dict(va)
        terms.update({t: -w for t, w in vb.items() if t not in va and w > 0})
        signed.append({"qid": f"{a}-{b}", "terms": terms})
        plain.append({"qid": f"{a}-{b}", "terms": {t: w for t, w in va.items() if w > 0}, "mode": "boolean"})
    return signed, plain


def intersection_specs(vectors, pairs, top: int) -> tuple[list[dict], list[dict], list[dict]]:
    """(A + B with CPT pairs on the fly, the same with a||b pseudo-terms, A + B alone) specs."""
    otf, indexed, plain = [], [], []
    for a, b in pairs:
        terms: dict[str, float] = {}
        for vec in (vectors[a], vectors[b]):
            for t, w in vec.items():
                if w > 0:
                    terms[t] = terms.get(t, 0) + w
        spec = {"qid": f"{a}-{b}", "terms": terms, "pairs": query_pairs(vectors[a], vectors[b], top)}
        otf.append(spec)
        indexed.append(pairs_to_terms(spec))
        plain.append({"qid": spec["qid"], "terms": terms})
    return otf, indexed, plain


def window_specs(vectors, texts, model: str, rerank: int, width: int) -> tuple[list[dict], list[dict], int]:
    """(impact query + SDM windows reranking the top ``rerank``, plain impact query, total window clauses)."""
    from transformers import AutoTokenizer

    from lsr_lucene.encode.models import resolve

    tokenizer = AutoTokenizer.from_pretrained(resolve(model))
    with_windows, plain, clauses = [], [], 0
    for qid, vec in vectors.items():
        tokens = tokenizer.tokenize(texts[qid])[:64]
        windows = []
        for t1, t2 in zip(tokens, tokens[1:]):
            q1, q2 = max(vec.get(t1, 0), 1), max(vec.get(t2, 0), 1)
            windows.append(window({t1: q1, t2: q2}, ordered=True, weight=0.1))
            if t1 != t2:
                windows.append(window({t1: q1, t2: q2}, ordered=False, width=width, weight=0.05))
        terms = {t: w for t, w in vec.items() if w > 0}
        plain.append({"qid": qid, "terms": terms})
        spec = {"qid": qid, "terms": terms}
        if windows:
            spec.update(windows=windows, rerank=rerank)
        with_windows.append(spec)
        clauses += len(windows)
    return with_windows, plain, clauses


def time_variants(variants: dict[str, tuple[SpecSearcher, Path, int]], work: Path, hits: int, threads: int,
                  repeats: int) -> dict[str, dict[str, float]]:
    """Per-query seconds of each variant: best and median run, wall and CPU; runs interleaved.

    CPU time is the whole process's (the JVM runs inside it). On a shared machine other jobs only add
    time, so the best run (as ``timeit`` advises) is the steadiest estimate; medians are shown too.
    """
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
    for name, (searcher, specs, _) in variants.items():  # warm-up (JIT, page cache, impact bounds)
        searcher.search_file(specs, work / f"{name}.run", k=hits, threads=threads, tag="bench")
    for _ in range(repeats):
        for name, (searcher, specs, n) in variants.items():
            wall, cpu = time.perf_counter(), time.process_time()
            searcher.search_file(specs, work / f"{name}.run", k=hits, threads=threads, tag="bench")
            runs[name].append(((time.perf_counter() - wall) / n, (time.process_time() - cpu) / n))
    return {name: {"wall": min(w for w, _ in r), "cpu": min(c for _, c in r),
                   "wall_median": statistics.median(w for w, _ in r), "cpu_median": statistics.median(c for _, c in r)}
            for name, r in runs.items()}


def top_overlap(run_a: Path, run_b: Path, depth: int = 10) -> float:
    """Mean share of the top ``depth`` docids two runs have in common."""
    def tops(path):
        out: dict[str, list[str]] = {}
        for line in open(path):
            qid, _, docid, rank, *_ = line.split()
            if int(rank) <= depth:
                out.setdefault(qid, []).append(docid)
        return out

    a, b = tops(run_a), tops(run_b)
    shares = [len(set(a[q]) & set(b.get(q, []))) / max(len(a[q]), 1) for q in a]
    return sum(shares) / max(len(shares), 1)


def build_pair_index(vectors_dir: Path, work: Path, top_n: int) -> Path:
    """Index-time CPT: vectors with each document's top-n pair pseudo-terms, indexed by Anserini."""
    from lsr_lucene.index.impact import build_impact_index

    expanded = work / "cpt-vectors"
    counts = add_pair_terms(vectors_dir, expanded, top_n=top_n, overwrite=True)
    print(f"added {counts['pair_terms']} pair pseudo-terms to {counts['documents']} documents", file=sys.stderr)
    index = work / "cpt-index"
    build_impact_index(expanded, index, threads=2, overwrite=True, dense_impacts="auto")  # as lsr-lucene index
    return index


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        allow_abbrev=False, prog="python -m scripts.bench.queries", description=__doc__.splitlines()[0])
    parser.add_argument("--index", required=True, help="impact index (with --positions for the window benchmark)")
    parser.add_argument("--queries", required=True, help="encoded topics JSONL (lsr-lucene encode --topics)")
    parser.add_argument("--vectors", default=None, help="the index's document vectors (default: recorded in the index)")
    parser.add_argument("--work", default=None, help="folder for the pseudo-term index and runs (default: temporary)")
    parser.add_argument("--hits", type=int, default=1000)
    parser.add_argument("--threads", type=int, default=1, help="search threads (1 = per-query latency)")
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--query-top", type=int, default=5, help="top terms of A and B paired by CPT (paper: 5)")
    parser.add_argument("--doc-top", type=int, default=5, help="top terms per document paired at index time")
    parser.add_argument("--rerank", type=int, default=1000, help="depth reranked by the window clauses")
    parser.add_argument("--width", type=int, default=8, help="unordered window width")
    parser.add_argument("--skip", nargs="*", default=[], choices=["negation", "cpt", "windows"])
    args = parser.parse_args(argv)

    from lsr_lucene.index.impact import index_size, read_index_metadata

    vectors, texts = read_queries(args.queries)
    meta = read_index_metadata(args.index)
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="lsr-bench-queries-"))
    work.mkdir(parents=True, exist_ok=True)
    searcher = SpecSearcher(args.index)
    pairs = topic_pairs(list(vectors))
    variants: dict[str, tuple[SpecSearcher, Path, int]] = {}
    notes: list[str] = []

    def add(name: str, specs: list[dict], on: SpecSearcher = searcher) -> None:
        path = work / f"{name}.jsonl"
        variants[name] = (on, path, write_query_specs(specs, path))

    if "negation" not in args.skip:
        signed, plain = negation_specs(vectors, pairs)
        add("signed_A-B*", signed)
        add("boolean_A", plain)
        negs = sum(sum(1 for w in s["terms"].values() if w < 0) for s in signed) / len(signed)
        notes.append(f"negation: {len(signed)} queries A − B*, mean {negs:.1f} negative terms per query")
    cpt_searcher = None
    if "cpt" not in args.skip:
        vectors_dir = Path(args.vectors or meta.get("vectors") or "")
        if not args.vectors and not meta.get("vectors"):
            raise InputError(f"{args.index}: no recorded vectors folder; pass --vectors")
        cpt_index = build_pair_index(vectors_dir, work, args.doc_top)
        cpt_searcher = SpecSearcher(cpt_index)
        otf, indexed, plain = intersection_specs(vectors, pairs, args.query_top)
        add("cpt_on_the_fly", otf)
        add("cpt_index_time", indexed, cpt_searcher)
        add("A+B_plain", plain)
        size_plain, size_cpt = index_size(args.index), index_size(cpt_index)
        positions = Path(args.index) / "positions"
        size_pos = index_size(positions) if positions.is_dir() else 0
        npairs = sum(len(s["pairs"]) for s in otf) / len(otf)
        notes.append(f"CPT: {len(otf)} queries A ∩ B, mean {npairs:.1f} pairs "
                     f"(top {args.query_top} × top {args.query_top}); "
                     f"index-time pseudo-terms from each document's top {args.doc_top} terms")
        notes.append(f"index size: plain {(size_plain - size_pos) / 2**20:.1f} MiB, with a||b pseudo-terms "
                     f"{size_cpt / 2**20:.1f} MiB ({size_cpt / max(size_plain - size_pos, 1):.2f}×)")
    if "windows" not in args.skip:
        if not searcher.has_positions:
            notes.append(f"windows: skipped, {args.index} has no positional field (index it with --positions)")
        else:
            model = meta.get("encoder", {}).get("model", "splade-tiny")
            with_windows, plain, clauses = window_specs(vectors, texts, model, args.rerank, args.width)
            add("windows_rerank", with_windows)
            add("impact_plain", plain)
            notes.append(f"windows: {len(with_windows)} queries, mean {clauses / len(with_windows):.1f} window clauses "
                         f"(ordered bigrams + unordered width {args.width}) reranking the top {args.rerank}")

    times = time_variants(variants, work, args.hits, args.threads, args.repeats)
    print(f"index {args.index}: {searcher.num_docs} documents; {len(vectors)} topics; k={args.hits}, "
          f"threads={args.threads}, best (median) of {args.repeats} interleaved runs")
    for note in notes:
        print("  " + note)
    print(f"  {'variant':<16} {'wall ms/query':>22} {'CPU ms/query':>22}")
    for name, t in times.items():
        print(f"  {name:<16} {t['wall'] * 1000:10.3f} ({t['wall_median'] * 1000:8.3f}) "
              f"{t['cpu'] * 1000:10.3f} ({t['cpu_median'] * 1000:8.3f})")
    rows = [("signed A−B* / boolean A (target ≤ 1.3)", "signed_A-B*", "boolean_A"),
            ("CPT on the fly / index-time pseudo-terms", "cpt_on_the_fly", "cpt_index_time"),
            ("CPT on the fly / plain A+B", "cpt_on_the_fly", "A+B_plain"),
            ("window rerank / plain impact query", "windows_rerank", "impact_plain")]
    for label, num, den in rows:
        if num in times and den in times:
            a, b = times[num], times[den]
            print(f"  ratio {label}: wall {a['wall'] / b['wall']:.2f} (medians {a['wall_median'] / b['wall_median']:.2f}), "
                  f"CPU {a['cpu'] / b['cpu']:.2f} (medians {a['cpu_median'] / b['cpu_median']:.2f})")
    if "cpt_on_the_fly" in times:
        share = top_overlap(work / "cpt_on_the_fly.run", work / "cpt_index_time.run")
        print(f"  top-10 agreement CPT on the fly vs index-time: {share:.2f}")
    searcher.close()
    if cpt_searcher is not None:
        cpt_searcher.close()
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    from lsr_lucene.cli import run_main

    sys.exit(run_main(main))
