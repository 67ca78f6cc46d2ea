"""Peak memory of the stages whose memory should be bounded by a batch, not by the collection (issue 30):
index validation + build, positional indexing, ``fuse --fit`` and dense search, each in a fresh process (the JVM
included) on synthetic collections of two sizes; writes ``results.md`` and ``results.csv``.

``python -m scripts.bench.memory --sizes 20000 100000 --work work/memory --out runs/memory``. Each stage runs in
a child process; its peak resident set is the kernel's (``wait4`` rusage ``ru_maxrss`` = VmHWM, file pages of
memory maps included) and its peak anonymous memory (``RssAnon``, sampled every 20 ms) is what the process itself
allocated: the figure that should stay flat as collections grow.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

from lsr_lucene.io.runs import write_run

VOCAB, TERMS_PER_DOC, TOKENS_PER_DOC, DIM = 30_000, 60, 80, 384
RUNS, HITS, QUERY_EVERY = 3, 1000, 100  # fuse: three runs of 1000 hits, one query per 100 documents
STAGES = ("index", "positions", "fuse-fit", "dense-search")


def _words(rng: np.random.Generator, n: int) -> np.ndarray:
    """Zipf-distributed term numbers in [0, VOCAB)."""
    return (rng.zipf(1.2, n) - 1) % VOCAB


def make_collection(root: Path, docs: int, seed: int = 0) -> None:
    """Vectors, per-position tokens, dense embeddings, three runs, topics and qrels for ``docs`` documents."""
    rng = np.random.default_rng(seed)
    (root / "vectors").mkdir(parents=True, exist_ok=True)
    with open(root / "vectors" / "part-00000.jsonl", "w") as vec, open(root / "tokens.jsonl", "w") as tok:
        for d in range(docs):
            terms = np.unique(_words(rng, TERMS_PER_DOC))
            weights = rng.integers(1, 100, len(terms))
            vector = {f"w{t}": int(w) for t, w in zip(terms, weights)}
            vec.write(json.dumps({"id": f"doc{d}", "contents": "", "vector": vector}) + "\n")
            tokens = [[f"w{t}", round(float(x), 3)] for t, x in
                      zip(_words(rng, TOKENS_PER_DOC), rng.uniform(0.1, 3.0, TOKENS_PER_DOC))]
            tok.write(json.dumps({"id": f"doc{d}", "tokens": tokens}) + "\n")
    from lsr_lucene.dense.store import write_embeddings

    vectors = rng.normal(size=(docs, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    write_embeddings(root / "emb", [f"doc{d}" for d in range(docs)], vectors, {"dim": DIM}, overwrite=True)
    queries = docs // QUERY_EVERY
    with open(root / "topics.tsv", "w") as topics, open(root / "qrels.txt", "w") as qrels:
        for q in range(queries):
            topics.write(f"q{q}\tquery {q}\n")
            for d in rng.choice(docs, 5, replace=False):
                qrels.write(f"q{q} 0 doc{d} {int(rng.integers(1, 3))}\n")
    for r in range(RUNS):
        results = {f"q{q}": list(zip((f"doc{d}" for d in rng.choice(docs, HITS, replace=False)), rng.random(HITS)))
                   for q in range(queries)}
        write_run(results, root / f"run{r}.txt", tag=f"r{r}", overwrite=True)
    np.save(root / "queries.npy", vectors[rng.choice(docs, 50, replace=False)] * 0.5 + vectors[:50] * 0.5)


def run_stage(stage: str, root: Path) -> None:
    """One stage, in this process (the child)."""
    if stage == "index":
        from lsr_lucene.index.impact import build_impact_index

        build_impact_index(root / "vectors", root / "index", threads=2, overwrite=True,
                           dense_impacts="auto")  # as lsr-lucene index builds it
    elif stage == "positions":
        from lsr_lucene.index.positional import build_positional_field

        build_positional_field(root / "index", root / "tokens.jsonl")
    elif stage == "fuse-fit":
        from lsr_lucene.fuse.fit import fit_files

        fit_files({f"r{r}": root / f"run{r}.txt" for r in range(RUNS)}, root / "qrels.txt", root / "topics.tsv",
                  "rrf", progress=False)
    elif stage == "dense-search":
        from lsr_lucene.dense.search import FlatSearcher
        from lsr_lucene.dense.store import read_embeddings

        FlatSearcher(read_embeddings(root / "emb"), threads=2).search(np.load(root / "queries.npy"), 1000)
    else:
        raise ValueError(stage)


def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def child(stage: str, root: Path) -> None:
    """Run ``stage`` while sampling RssAnon; print {"anon_kib": peak, "seconds": ...} as the last line."""
    peak = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], _status_kib("RssAnon"))
            done.wait(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    start = time.perf_counter()
    run_stage(stage, root)
    seconds = time.perf_counter() - start
    done.set()
    sampler.join()
    peak[0] = max(peak[0], _status_kib("RssAnon"))
    print(json.dumps({"anon_kib": peak[0], "seconds": seconds}))


def measure(stage: str, root: Path) -> dict:
    """Run ``stage`` in a fresh process; its peak RSS (wait4), peak anonymous RSS and seconds."""
    proc = subprocess.Popen([sys.executable, "-m", "scripts.bench.memory", "--child", stage, str(root)],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None  # stdout=PIPE
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"stage {stage} on {root} failed (exit {proc.returncode})")
    last = json.loads(out.strip().splitlines()[-1])
    return {"peak_rss_mib": usage.ru_maxrss / 1024, "peak_anon_mib": last["anon_kib"] / 1024,
            "seconds": last["seconds"]}


def report(rows: list[dict], out: Path) -> None:
    """results.csv and results.md (one row per stage, one column pair per size, and the ratios)."""
    out.mkdir(parents=True, exist_ok=True)
    fields = ["stage", "docs", "peak_rss_mib", "peak_anon_mib", "seconds"]
    with open(out / "results.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        writer.writerows({k: (round(v, 1) if isinstance(v, float) else v) for k, v in r.items()} for r in rows)
    sizes = sorted({r["docs"] for r in rows})
    lines = ["| stage | " + " | ".join(f"{s:,} docs: peak RSS / anon MiB" for s in sizes)
             + f" | anon ratio {sizes[-1] // sizes[0]}x docs |", "|:---|" + "---:|" * (len(sizes) + 1)]
    for stage in STAGES:
        cells = {r["docs"]: r for r in rows if r["stage"] == stage}
        if not cells:
            continue
        ratio = cells[sizes[-1]]["peak_anon_mib"] / cells[sizes[0]]["peak_anon_mib"]
        lines.append(f"| {stage} | " + " | ".join(f"{cells[s]['peak_rss_mib']:.0f} / {cells[s]['peak_anon_mib']:.0f}"
                                                  for s in sizes) + f" | {ratio:.2f} |")
    (out / "results.md").write_text(
        "Peak memory per stage (fresh process each, JVM included; synthetic collections: "
        f"{TERMS_PER_DOC} terms and {TOKENS_PER_DOC} tokens per document, {DIM}-d embeddings, fuse fit over "
        f"{RUNS} runs of {HITS} hits for one query per {QUERY_EVERY} documents). Peak RSS is the kernel's high-water "
        "mark (file pages of the memory-mapped embeddings included); anon is the process's own memory. "
        f"JVM heap: -Xmx{os.environ.get('LSR_JVM_HEAP', '4g')} (the impact indexer's RAM buffer is half of it, "
        "at most 4 GiB: a batch by design; the JVM grows its heap lazily up to -Xmx). fuse-fit reads its runs whole "
        f"(queries × {HITS} hits × {RUNS} runs: one query per {QUERY_EVERY} documents here, so it grows with the "
        "topic set); its candidate rankings are scored a chunk of queries at a time. dense-search's own memory is "
        "one block of embeddings (lsr_lucene.dense.search.BLOCK_ROWS rows) plus the top k.\n\n"
        + "\n".join(lines) + "\n")


def main(argv: list[str] | None = None) -> int:
    """Make the collections (reused when present), measure every stage at every size, write the tables."""
    parser = argparse.ArgumentParser(
        allow_abbrev=False, prog="python -m scripts.bench.memory", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[20_000, 100_000])
    parser.add_argument("--work", type=Path, default=Path("work/memory"))
    parser.add_argument("--out", type=Path, default=Path("runs/memory"))
    parser.add_argument("--child", nargs=2, metavar=("STAGE", "ROOT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child[0], Path(args.child[1]))
        return 0
    rows = []
    for size in args.sizes:
        root = args.work / f"docs{size}"
        if not (root / "queries.npy").exists():
            print(f"making a synthetic collection of {size} documents in {root}", file=sys.stderr)
            make_collection(root, size)
        for stage in STAGES:
            row = {"stage": stage, "docs": size, **measure(stage, root)}
            print(json.dumps(row), file=sys.stderr)
            rows.append(row)
    report(rows, args.out)
    print((args.out / "results.md").read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
