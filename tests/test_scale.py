"""Scale benchmark (issue 15): the synthetic collection, the brute-force reference, and one small end-to-end run
of ``python -m scripts.bench.scale`` with every installed engine (exactness asserted, no timing asserted)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from scripts.bench.brute_force import BruteForce, Reference, compare, reference
from scripts.bench.pool import Pool
from scripts.bench.scale_report import plot_latency
from scripts.bench.scale_runner import DEFAULT_ENGINES, ENGINES, REORDERED, expected_rows, missing
from scripts.bench.synthetic import df_buckets, generate, pool_df

ROOT = Path(__file__).resolve().parents[1]
DOCS, QUERIES, KS, THREADS = 2000, 8, [10, 1000], 2
EXACT = {"ours", "pyserini", "anserini", "pisa-maxscore", "pisa-bmw", "scipy"}


def toy_pool(seed: int = 1, docs: int = 60, vocab: int = 200) -> Pool:
    """A random pool with a Zipf-like df curve."""
    rng = np.random.default_rng(seed)
    p = 1 / np.arange(1, vocab + 1)
    rows = [np.sort(rng.choice(vocab, size=rng.integers(3, 30), replace=False, p=p / p.sum())) for _ in range(docs)]
    indptr = np.concatenate(([0], np.cumsum([len(r) for r in rows])))
    terms = np.concatenate(rows).astype(np.int32)
    return Pool([f"t{i}" for i in range(vocab)], indptr, terms, rng.integers(1, 300, len(terms)).astype(np.int32),
                ["toy"], np.zeros(docs, dtype=np.int16), 100.0)


def test_synthetic_collection_is_deterministic_and_keeps_the_pool_statistics():
    pool = toy_pool()
    buckets = df_buckets(pool_df(pool), 1.1)
    a, b = generate(pool, 3000, 7, buckets), generate(pool, 3000, 7, buckets)
    assert np.array_equal(a.terms, b.terms) and np.array_equal(a.weights, b.weights)
    assert not np.array_equal(a.terms, generate(pool, 3000, 8, buckets).terms)
    for i in range(a.num_docs):  # a rotation inside df buckets never gives a document a term twice
        row = a.terms[a.indptr[i]:a.indptr[i + 1]]
        assert len(np.unique(row)) == len(row) and np.all(np.diff(row) > 0)
    assert np.array_equal(np.sort(np.diff(a.indptr)), np.sort(np.diff(pool.indptr)[a.source]))
    assert np.array_equal(np.sort(a.weights), np.sort(pool.weights[np.concatenate(
        [np.arange(pool.indptr[s], pool.indptr[s + 1]) for s in a.source])]))
    pool_curve = np.sort(pool_df(pool))[::-1][:20] / pool.num_docs
    synth_curve = np.sort(np.bincount(a.terms, minlength=len(pool.vocab)))[::-1][:20] / a.num_docs
    assert np.allclose(synth_curve, pool_curve, atol=0.08)
    copies = [i for i in range(1, a.num_docs) if a.source[i] == a.source[0]]
    assert any(not np.array_equal(a.terms[a.indptr[0]:a.indptr[1]], a.terms[a.indptr[i]:a.indptr[i + 1]])
               for i in copies)  # documents from the same pool vector are not copies


def test_brute_force_reference_and_comparison():
    pool = toy_pool()
    coll = generate(pool, 500, 3, df_buckets(pool_df(pool)))
    brute = BruteForce(coll)
    dense = np.zeros((coll.num_docs, len(coll.vocab)))
    for i in range(coll.num_docs):
        dense[i, coll.terms[coll.indptr[i]:coll.indptr[i + 1]]] = coll.weights[coll.indptr[i]:coll.indptr[i + 1]]
    query = {"t0": 3, "t1": -2, "t5": 7}
    ref = reference(brute, {"terms": query}, 10)
    scores = dense[:, [0, 1, 5]] @ np.array([3, -2, 7])
    matched = (dense[:, 0] > 0) | (dense[:, 5] > 0)
    want = sorted((-scores[i], i) for i in np.flatnonzero(matched))[:10]
    assert [(d, s) for d, s in ref.top] == [(f"d{i:08d}", -s) for s, i in want]
    assert compare(ref.top, ref) == {"same_order": True, "exact": True, "recall": 1.0}
    tied = Reference([("d1", 5.0), ("d2", 5.0), ("d3", 4.0)], {"d1": 5.0, "d2": 5.0, "d3": 4.0, "d4": 1.0}.get)
    assert compare([("d2", 5.0), ("d1", 5.0), ("d3", 4.0)], tied) == {"same_order": False, "exact": True, "recall": 1.0}
    missed = compare([("d1", 5.0), ("d2", 5.0), ("d4", 1.0)], tied)
    assert not missed["exact"] and missed["recall"] == pytest.approx(2 / 3)


def test_latency_plot_needs_two_sizes(tmp_path):
    rows = pd.DataFrame([{"docs": n, "engine": e, "kind": "plain", "k": k, "threads": 1, "mode": "query",
                          "mean_ms": n / 1000} for n in (1000, 10000) for e in ("ours", "scipy") for k in (10, 1000)])
    assert plot_latency(rows, tmp_path / "growth.png") and (tmp_path / "growth.png").stat().st_size > 0
    assert not plot_latency(rows[rows.docs == 1000], tmp_path / "one.png")


def test_bad_input_is_one_error_line(tmp_path):
    out = subprocess.run([sys.executable, "-m", "scripts.bench.scale", "--docs", "0", "--output", str(tmp_path)],
                         capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 2 and out.stderr.strip().splitlines() == ["error: --docs must be positive integers, got '0'"]


def test_small_run_of_every_installed_engine(tmp_path):
    """The whole benchmark at 2,000 documents (demo pool): every expected row, exact engines equal brute force."""
    out, work = tmp_path / "out", tmp_path / "work"
    proc = subprocess.run([sys.executable, "-m", "scripts.bench.scale", "--docs", str(DOCS), "--output", str(out),
                           "--work", str(work), "--pool", "demo", "--queries", str(QUERIES), "--check", str(QUERIES),
                           "--threads", str(THREADS), "--warmup", "1", "--ks", ",".join(map(str, KS)),
                           "--orders", "natural,bp"],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    every = pd.read_csv(out / "results.csv")
    results, bp = every[every.order == "natural"], every[every.order == "bp"]
    installed = [name for name in DEFAULT_ENGINES if missing(name) is None]
    skipped = pd.read_csv(out / "skipped.csv")  # only engines (and their index families) that are not installed
    absent = {name for name in DEFAULT_ENGINES if name not in installed} | {ENGINES[n][0] for n in DEFAULT_ENGINES
                                                                           if n not in installed}
    assert set(skipped.engine) <= absent, skipped.to_string()
    kinds = ["plain", "signed", "union", "cpt", "window"]
    want = {row for name in installed for row in expected_rows(name, kinds, KS, [1, THREADS], positions=True)}
    have = set(results[["engine", "kind", "k", "threads", "mode"]].itertuples(index=False, name=None))
    assert want <= have, f"missing rows: {sorted(want - have)}"
    assert (results.docs == DOCS).all() and (results.checked == QUERIES).all()
    exact = results[results.engine.isin(EXACT)]
    assert exact.exact.astype(str).eq("True").all(), exact[exact.exact.astype(str) != "True"].to_string()
    assert exact.recall.eq(1.0).all()
    ours = results[results.engine == "ours"]
    assert ours.same_order.astype(str).eq("True").all()  # ties broken by docid, as brute force
    assert set(ours.kind) == set(kinds)
    for name in ("bmp", "seismic"):  # BMP: exact on its own quantisation at k=10; both: close to brute force
        rows = results[results.engine == name]
        assert rows.empty or (rows.recall >= 0.9).all(), rows.to_string()
    bmp10 = results[(results.engine == "bmp") & (results.k == 10)]
    assert bmp10.empty or bmp10.exact.astype(str).eq("True").all()
    # BP order: ours, PISA and BMP again on reordered docids, every row and the same exactness
    want_bp = {row for name in installed if name in REORDERED
               for row in expected_rows(name, kinds, KS, [1, THREADS], positions=True)}
    assert want_bp == set(bp[["engine", "kind", "k", "threads", "mode"]].itertuples(index=False, name=None))
    exact_bp = bp[bp.engine.isin(EXACT)]
    assert exact_bp.exact.astype(str).eq("True").all() and exact_bp.recall.eq(1.0).all()
    assert bp[bp.engine == "ours"].same_order.astype(str).eq("True").all()
    bmp10_bp = bp[(bp.engine == "bmp") & (bp.k == 10)]
    assert bmp10_bp.empty or bmp10_bp.exact.astype(str).eq("True").all()
    index = pd.read_csv(out / "index.csv")
    families = {"ours", "ours-positions", "ours-dense"} | {ENGINES[n][0] for n in installed} | (
        {"anserini"} if "anserini" in installed else set())
    assert families <= set(index.engine) and (index.size_bytes > 0).all() and (index.peak_rss_bytes > 0).all()
    reordered = index[index.order == "bp"]
    assert set(reordered.engine) == {"ours-positions", "ours-dense"} | {REORDERED[n] for n in installed if n in REORDERED}
    assert (reordered[~reordered.engine.isin(["ours-positions", "ours-dense"])].bp_s > 0).all() and index[index.order == "natural"].bp_s.isna().all()
    text = (out / "results.md").read_text()
    assert "### Goals" in text and "CPU capability" in text and "with BP: ours / fastest exact engine with BP" in text and (out / f"collection-{DOCS}.png").stat().st_size > 0
    # a later run searching the indexes already built: no new build, the index rows of the build are kept
    again = subprocess.run([sys.executable, "-m", "scripts.bench.scale", "--docs", str(DOCS), "--output", str(out),
                            "--work", str(work), "--pool", "demo", "--queries", str(QUERIES), "--check", "2",
                            "--threads", str(THREADS), "--warmup", "1", "--ks", "10", "--kinds", "plain",
                            "--engines", "ours", "--reuse-indexes"], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "index ours: reusing the build" in again.stdout
    index_again = pd.read_csv(out / "index.csv")
    builds = {(r.order, r.build_s) for r in index[index.engine == "ours"].itertuples()}
    assert {(r.order, r.build_s) for r in index_again[index_again.engine == "ours"].itertuples()} == builds


def test_an_engine_that_is_not_installed_is_named_with_its_install_hint(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "bmp" else real(name, *a))
    assert missing("bmp") == "bmp is not installed (pip install bmp)"
    assert missing("scipy") is None
