"""Real-text benchmark (issue 29): the seeded passage order, reading an encoding still in progress, and one small
end-to-end run of ``python -m scripts.bench.real`` on the demo corpus (exactness asserted, no timing asserted)."""
from __future__ import annotations

import argparse
import json
import lzma
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from scripts.bench.real import ensure_vectors, load_collection
from scripts.bench.real_corpus import write_shuffled
from scripts.bench.scale_runner import DEFAULT_ENGINES, REORDERED, expected_rows, missing
from lsr_lucene.errors import InputError
from lsr_lucene.io.corpus import read_corpus

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "lsr_lucene" / "data" / "demo"
EXACT = {"ours", "pyserini", "anserini", "pisa-maxscore", "pisa-bmw", "scipy"}


def test_shuffled_corpus_is_a_seeded_permutation_and_reads_xz(tmp_path):
    xz = tmp_path / "corpus.jsonl.xz"
    with lzma.open(xz, "wt", encoding="utf-8") as out:
        out.write((DEMO / "corpus.jsonl").read_text(encoding="utf-8"))
    docs = list(read_corpus(DEMO / "corpus.jsonl"))
    assert [d.id for d in read_corpus(xz)] == [d.id for d in docs]
    a, b, c = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "c.jsonl"
    assert write_shuffled(xz, a, seed=3) == len(docs)
    write_shuffled(DEMO / "corpus.jsonl", b, seed=3)
    write_shuffled(xz, c, seed=4, limit=50)
    ids = [d.id for d in read_corpus(a)]
    assert a.read_text() == b.read_text() and sorted(ids) == sorted(d.id for d in docs) and ids != [d.id for d in docs]
    assert len([d.id for d in read_corpus(c)]) == 50 and [d.id for d in read_corpus(c)] != ids[:50]
    by_id = {d.id: d for d in docs}
    assert all(by_id[d.id] == d for d in read_corpus(a))  # title and text kept


def _partial(vectors: Path, shards: list[list[dict]]) -> None:
    """A vectors directory still being encoded: complete shards listed in .<name>.partial/progress.state."""
    partial = vectors.parent / f".{vectors.name}.partial"
    partial.mkdir(parents=True)
    listed = []
    for i, rows in enumerate(shards):
        name = f"part-{i:05d}.jsonl"
        (partial / name).write_text("".join(json.dumps({"id": r["id"], "contents": "", "vector": r["vector"]}) + "\n"
                                            for r in rows))
        listed.append({"file": name, "documents": len(rows), "consumed": len(rows)})
    (partial / "part-00099.jsonl.tmp").write_text("half a shard")  # not listed: never read
    (partial / "progress.state").write_text(json.dumps({"settings": {"scale": 100}, "shards": listed}))


def test_an_encoding_in_progress_gives_its_first_passages_and_says_how_to_resume(tmp_path):
    vectors = tmp_path / "vectors"
    _partial(vectors, [[{"id": "p1", "vector": {"b": 3, "a": 1}}, {"id": "p2", "vector": {"c": 2}}],
                       [{"id": "p3", "vector": {"a": 5, "c": 0}}]])
    coll, ids = load_collection(vectors, 3, 0)
    assert ids == ["p1", "p2", "p3"] and coll.vocab == ["a", "b", "c"]
    assert coll.indptr.tolist() == [0, 2, 3, 4] and coll.terms.tolist() == [0, 1, 2, 0]
    assert coll.weights.tolist() == [1, 3, 2, 5]
    assert load_collection(vectors, 2, 0)[1] == ["p1", "p2"]
    args = argparse.Namespace(vectors=str(vectors), work=str(tmp_path), seed=0, corpus=None, encode=False,
                              model="splade-tiny", max_length=256, batch_size=16)
    assert ensure_vectors(args, 3) == vectors
    with pytest.raises(InputError, match=r"3 passages encoded so far, 4 needed; encode \(resumable\) with: .*"
                                         r"lsr_lucene.encode --corpus"):
        ensure_vectors(args, 4)


def test_small_real_corpus_run_of_every_installed_engine(tmp_path):
    """The demo corpus encoded in a seeded order and benchmarked whole: every row, exact engines equal brute force."""
    out, work = tmp_path / "out", tmp_path / "work"
    ks, threads, queries = [10, 1000], 2, 8
    proc = subprocess.run([sys.executable, "-m", "scripts.bench.real", "--corpus", str(DEMO / "corpus.jsonl"),
                           "--topics", str(DEMO / "topics.tsv"), "--docs", "200,298", "--output", str(out),
                           "--work", str(work), "--encode", "--queries", str(queries), "--check", str(queries),
                           "--threads", str(threads), "--warmup", "1", "--ks", "10,1000", "--orders", "natural,bp",
                           "--heap-factors", "1,0.7",
                           "--seismic-postings", "200", "--seismic-grid", "5:0.8,10:1"],
                          capture_output=True, text=True, cwd=ROOT, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    every = pd.read_csv(out / "results.csv")
    installed = [name for name in DEFAULT_ENGINES if missing(name) is None]
    for docs in (200, 298):
        at = every[every.docs == docs]
        natural, bp = at[at.order == "natural"], at[at.order == "bp"]
        want = {row for name in installed for row in expected_rows(name, ["plain"], ks, [1, threads], False)}
        assert want == set(natural[["engine", "kind", "k", "threads", "mode"]].itertuples(index=False, name=None))
        want_bp = {row for name in installed if name in REORDERED
                   for row in expected_rows(name, ["plain"], ks, [1, threads], False)}
        assert want_bp == set(bp[["engine", "kind", "k", "threads", "mode"]].itertuples(index=False, name=None))
        exact = at[at.engine.isin(EXACT)]
        assert (exact.checked == queries).all()
        assert exact.exact.astype(str).eq("True").all(), exact[exact.exact.astype(str) != "True"].to_string()
        assert exact.recall.eq(1.0).all()
        seismic = at[at.engine == "seismic"]
        assert seismic.empty or (seismic.approximate.astype(str) == "True").all() and seismic.recall.between(0, 1).all()
    # the natural order is the seeded one, and the 200-passage collection is the first 200 of the 298
    shuffled = [json.loads(line)["id"] for line in (work / "passages.seed0.jsonl").read_text().splitlines()]
    ids = [line.split("\t")[1] for line in (work / "docs-298" / "ids.txt").read_text().splitlines()]
    assert ids == shuffled and sorted(ids) == sorted(d.id for d in read_corpus(DEMO / "corpus.jsonl"))
    assert (work / "docs-200" / "ids.txt").read_text().splitlines() == \
        (work / "docs-298" / "ids.txt").read_text().splitlines()[:200]
    text = (out / "results.md").read_text()
    assert "### 298 passages" in text and "### 200 passages" in text and text.index("### 298") < text.index("### 200")
    assert "CPU capability" in text and "log_gap_bits" in text
    assert (out / "latency_vs_docs.png").stat().st_size > 0
    assert np.isfinite(pd.read_csv(out / "collection.csv").log_gap_bits).all()
    # the approximate curves: ours at each heap factor (the one approximation knob); Seismic's points are there
    # too when it is installed
    curve = pd.read_csv(out / "approx.csv")
    heap = curve[curve.engine == "ours-heap"]  # heap factor 1 is exact search
    assert set(heap.docs) == {200, 298} and set(heap.order) == {"natural", "bp"} and set(heap.k) == {10, 1000}
    assert set(curve.engine) <= {"ours-heap", "seismic"} and heap.recall.between(0, 1).all()
    assert set(heap.heap_factor) == {1.0, 0.7} and heap[heap.heap_factor == 1].recall.eq(1.0).all()
    assert len(heap) == 2 * 2 * 2 * 2  # sizes x orders x k x heap factors
    assert missing("seismic") is not None or set(curve[curve.engine == "seismic"].n_postings) == {200}
    assert "ours / Seismic" in (out / "approx.md").read_text() and (out / "approx_curve.png").stat().st_size > 0


def test_bad_input_is_one_error_line(tmp_path):
    out = subprocess.run([sys.executable, "-m", "scripts.bench.real", "--docs", "10", "--corpus", "x.jsonl",
                          "--output", str(tmp_path)], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == ["error: give one of --topics (encoded under --work) or --query-vectors"]


def test_merging_keeps_old_rows_and_clears_skips_of_engines_measured_since(tmp_path):
    """A run with no rows of a table keeps that table; a skip of an engine a later run measured at that size goes."""
    from scripts.bench import scale_report as report

    row = {"docs": 100, "engine": "pyserini", "order": "natural", "kind": "plain", "k": 10, "threads": 1,
           "mode": "query", "mean_ms": 1.0}
    skip = {"docs": 100, "engine": "pyserini", "stage": "search", "reason": "batch_search failed"}
    other = {"docs": 200, "engine": "bmp", "stage": "index", "reason": "out of memory"}
    report.merge_tables(tmp_path, pd.DataFrame([{**row, "engine": "ours"}]), pd.DataFrame(), pd.DataFrame(),
                        [skip, other])
    assert len(pd.read_csv(tmp_path / "skipped.csv")) == 2
    report.merge_tables(tmp_path, pd.DataFrame([row]), pd.DataFrame(), pd.DataFrame(), [])
    results, skips = pd.read_csv(tmp_path / "results.csv"), pd.read_csv(tmp_path / "skipped.csv")
    assert set(results.engine) == {"ours", "pyserini"}
    assert skips.to_dict("records") == [other]


def test_interleaved_run_times_engines_query_by_query(tmp_path):
    """--interleave: the engines of an order in one process, per-query rows only, still checked against brute force;
    ours builds its dense-impacts sidecar (an index row of its own), ours-postings searches the same index without it."""
    out, work = tmp_path / "out", tmp_path / "work"
    engines = [e for e in ("ours", "ours-postings", "pisa-maxscore") if missing(e) is None]
    proc = subprocess.run([sys.executable, "-m", "scripts.bench.real", "--corpus", str(DEMO / "corpus.jsonl"),
                           "--topics", str(DEMO / "topics.tsv"), "--docs", "200", "--output", str(out),
                           "--work", str(work), "--encode", "--queries", "6", "--check", "6", "--threads", "1",
                           "--warmup", "1", "--ks", "3,50", "--orders", "natural,bp", "--engines", ",".join(engines),
                           "--no-approx-curve", "--interleave"],
                          capture_output=True, text=True, cwd=ROOT, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = pd.read_csv(out / "results.csv")
    assert set(rows["mode"]) == {"query"} and set(rows.engine) == set(engines) and set(rows.k) == {3, 50}
    assert len(rows) == len(engines) * 2 * 2 and rows.load.notna().all() and (rows.cpu_mean_ms > 0).all()
    assert rows.exact.astype(str).eq("True").all() and rows.checked.eq(6).all()
    assert (pd.read_csv(out / "index.csv").engine == "ours-dense").sum() == 2  # natural and BP


def test_growth_reads_one_folder_per_size(tmp_path):
    """bench.real_growth: the per-size folders' ratios in one table (the runs' own figures) and both plots; a size
    found in two folders is one error line."""
    from scripts.bench.real_growth import main as growth

    for docs, ours, pisa in ((100, 1.0, 4.0), (300, 2.0, 5.0)):
        folder = tmp_path / f"r{docs}"
        folder.mkdir()
        rows = [{"docs": docs, "engine": e, "order": o, "kind": "plain", "mode": "query", "threads": 1, "k": k,
                 "mean_ms": ms * (1 if o == "bp" else 1.5) * (2 if k == 1000 else 1)}
                for e, ms in (("ours", ours), ("pisa-maxscore", pisa)) for o in ("natural", "bp") for k in (10, 1000)]
        pd.DataFrame(rows).to_csv(folder / "results.csv", index=False)
        curve = [{"docs": docs, "engine": e, "order": "bp", "k": k, "setting": f"s{r}", "mean_ms": ms * r,
                  "recall": r} for e, ms in (("ours-heap", ours), ("seismic", pisa)) for k in (10, 1000)
                 for r in (0.9, 0.96, 0.98)]
        pd.DataFrame(curve).to_csv(folder / "approx.csv", index=False)
    out = tmp_path / "out"
    assert growth([str(tmp_path / "r100"), str(tmp_path / "r300"), "--output", str(out)]) == 0
    text = (out / "growth.md").read_text()
    assert "### 300 passages (r300/)" in text and text.index("### 300") < text.index("### 100")
    assert "| 10 | 1.00 ms (bp) | 4.00 ms (bp) | **0.25** |" in text  # exact, faster orders
    # approximate: k=10 needs recall 0.97 (the 0.98 points), k=1000 0.95 (the 0.96 points)
    assert "| 100 | 10 | 0.97 | 0.98 ms, recall 0.980" in text and "| 100 | 1000 | 0.95 | 0.96 ms, recall 0.960" in text
    assert (out / "latency_vs_docs.png").stat().st_size > 0 and (out / "approx_curve.png").stat().st_size > 0
    shutil.copytree(tmp_path / "r100", tmp_path / "again")
    proc = subprocess.run([sys.executable, "-m", "scripts.bench.real_growth", str(tmp_path / "r100"),
                           str(tmp_path / "again"), "--output", str(out)], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 2 and proc.stderr.strip().startswith("error: passages [100] measured in more than one")
