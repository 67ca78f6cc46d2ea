"""Distributed encode/index/search on Ray give the same shards and runs as the one-machine commands.

Cranfield's first 80 documents (a subset, to keep the suite fast; two empty documents added to check their
counting) at max length 128, shards of 30 documents: a local Ray instance, then a two-node cluster simulated
on this machine (ray.cluster_utils.Cluster). Plain, signed and composed (disentangled A − B*, CPT pairs) runs
are compared byte for byte with the one-index runs, also after an actor is killed mid-run; negative CPT pair
weights and window clauses (weighted to reorder the first stage; over the whole search, or reranking its top
N) to the last bit of the exact scores.
"""
from __future__ import annotations

import json
import os
import re
import signal
import threading
import time
from pathlib import Path

import pytest

# before Ray is imported: this process runs JVMs (one-index builds and searches), whose SIGSEGV handler Ray's would
# replace at ray.init, crashing the next JVM call (lsr_lucene.distributed.cluster.prevent_signal_handler_takeover)
os.environ.setdefault("RAY_DISABLE_FAILURE_SIGNAL_HANDLER", "1")
ray = pytest.importorskip("ray")

from lsr_lucene.cli import main as cli  # noqa: E402
from lsr_lucene.errors import InputError  # noqa: E402
from lsr_lucene.io.runs import read_hits  # noqa: E402
from lsr_lucene.distributed.encode import (ShardPlan, distributed_encode, plan_shards, windows,  # noqa: E402
                                           with_context)
from lsr_lucene.distributed.search import DistributedSearcher, distributed_search, first_stage, merge_hits  # noqa: E402,E501
from lsr_lucene.io.vectors import metadata_path, read_metadata, vector_lines, write_vectors  # noqa: E402

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "cranfield"
pytestmark = [pytest.mark.slow,  # starts Ray clusters (-m 'not slow' skips it)
              pytest.mark.skipif(not (DATA / "corpus.jsonl").exists(), reason="../shared/data/cranfield not present")]
DOCS, QUERIES, SHARD_SIZE, MAX_LENGTH = 80, 30, 30, 128
RAY_OPTIONS = {"object_store_memory": 300 * 2**20, "include_dashboard": False, "configure_logging": False}


def _encode_args(corpus, output):
    return ["--corpus", str(corpus), "--output", str(output), "--max-length", str(MAX_LENGTH),
            "--shard-size", str(SHARD_SIZE)]


@pytest.fixture(scope="module")
def single(tmp_path_factory):
    """One-machine outputs: `lsr-lucene encode` vectors, query vectors and one index of the whole subset."""
    root = tmp_path_factory.mktemp("single")
    lines = (DATA / "corpus.jsonl").read_text().splitlines()[:DOCS]
    lines.insert(37, json.dumps({"id": "empty-a", "title": "", "text": "  "}))
    lines.append(json.dumps({"id": "empty-z", "title": "", "text": ""}))
    (root / "corpus.jsonl").write_text("\n".join(lines) + "\n")
    (root / "topics.tsv").write_text("\n".join((DATA / "topics.tsv").read_text().splitlines()[:QUERIES]) + "\n")
    assert cli(["encode", *_encode_args(root / "corpus.jsonl", root / "vectors"),
                "--positions", str(root / "positions.jsonl")]) == 0
    assert cli(["encode", "--topics", str(root / "topics.tsv"), "--output", str(root / "queries.jsonl")]) == 0
    assert cli(["index", "--input", str(root / "vectors"), "--index", str(root / "index"),
                "--positions", str(root / "positions.jsonl")]) == 0
    return root


def _parts(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.glob("part-*.jsonl"))}


def _query_specs(root: Path) -> dict[str, list[dict]]:
    """Plain, signed (some query terms negated) and composed (disentangled A − B*, CPT A AND B) specs."""
    from lsr_lucene.compose.backends import make_spec
    from lsr_lucene.compose.operations import cpt, disentangled
    from lsr_lucene.io.topics import read_query_vectors

    vectors = read_query_vectors(root / "queries.jsonl")
    qids = list(vectors)
    plain = [{"qid": q, "terms": dict(v)} for q, v in vectors.items()]
    signed = [{"qid": q, "terms": {t: (-w if i % 3 == 1 else w) for i, (t, w) in enumerate(v.items())}}
              for q, v in vectors.items()]
    floats = {q: {t: w / 100 for t, w in v.items()} for q, v in vectors.items()}
    composed = []
    for a, b in zip(qids, qids[1:] + qids[:1]):
        composed.append(make_spec(f"{a}-not-{b}", disentangled(floats[a], floats[b]), 100))
        composed.append(make_spec(f"{a}-and-{b}", cpt(floats[a], floats[b]), 100))
    assert any(w < 0 for s in signed for w in s["terms"].values())
    assert any(s.get("pairs") for s in composed) and any(w < 0 for s in composed for w in s["terms"].values())
    return {"plain": plain, "signed": signed, "composed": [s for s in composed if s is not None]}


def _single_run(root: Path, specs: list[dict], hits: int, name: str) -> bytes:
    from lsr_lucene.search.impact import run_specs

    out = root / f"{name}-{hits}.run"
    if not out.exists():
        run_specs(root / "index", specs, out, hits=hits, tag="lsr_lucene")
    return out.read_bytes()


# ---- no cluster needed --------------------------------------------------------------------------------------
class RecordingEncoder:
    """Stands in for SparseEncoder and records which documents are encoded together."""

    def __init__(self):
        self.calls: list[list[str]] = []

    def settings(self):
        return {"model": "fake", "max_length": 8, "activation": "splade", "pooling": "max", "epsilon": 0.0,
                "dtype": "fp32"}

    def encode_documents(self, texts, batch_size=16):
        self.calls.append(list(texts))
        return [{f"t{len(t) % 5}": len(t) / 7, "x": -0.5} for t in texts]


def test_shards_and_encoding_windows_are_those_of_one_machine(tmp_path):
    docs = [(f"d{i}", "" if i in (3, 21, 22, 50, 51) else f"text {i} " * (i % 9 + 1)) for i in range(52)]
    reference = RecordingEncoder()
    write_vectors(docs, reference, tmp_path / "v", shard_size=20, window=8)
    ours = RecordingEncoder()
    plans = list(plan_shards(docs, 20))
    # windows of 8 non-empty documents from the input's start, across shard boundaries (20 is no multiple of 8)
    nonempty = [d for plan in plans for d in plan.docs]
    assert reference.calls == [[t for _, t, _ in nonempty[i:i + 8]] for i in range(0, len(nonempty), 8)]
    for plan, before, after in with_context(plans, 8):
        lines: list[str] = []
        for group in windows(before + plan.docs + after, 8):
            lines += vector_lines(ours, group, 100, 16)[0]
        lines = lines[len(before):len(before) + len(plan.docs)]
        assert "".join(lines) == (tmp_path / "v" / f"part-{plan.number:05d}.jsonl").read_text()
    assert {tuple(c) for c in ours.calls} == {tuple(c) for c in reference.calls}
    assert [len(p.docs) for p in plans] == [20, 20, 7]
    assert [(p.consumed, p.skipped_empty) for p in plans] == [(21, 1), (22, 2), (9, 2)]  # trailing empties: last


def test_merge_orders_by_exact_score_then_docid():
    a = [("d3", "2.000000", 2.0), ("d1", "1.000000", 1.0)]
    b = [("d2", "2.000000", 2.0), ("d0", "1.000000", 1.0000001)]
    assert [h[0] for h in merge_hits([a, b], 3)] == ["d2", "d3", "d0"]


def test_unreachable_address_and_missing_shard_are_one_error_line(tmp_path, capsys):
    assert cli(["distributed", "index", "--input", str(tmp_path), "--index", str(tmp_path / "i"),
                "--address", "127.0.0.1:9"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: cannot connect to the Ray cluster at 127.0.0.1:9")
    (tmp_path / "dindex").mkdir()
    (tmp_path / "dindex" / "shards.json").write_text(json.dumps({"shards": [{"path": "shard-00000"}]}))
    from lsr_lucene.distributed.index import read_manifest
    from lsr_lucene.errors import InputError

    with pytest.raises(InputError, match="shard shard-00000 listed in shards.json is missing"):
        read_manifest(tmp_path / "dindex")


def test_max_impacts_of_some_terms_are_those_of_the_whole_vocabulary(single):
    """What distributed search asks of a shard (the max impacts of its queries' subtracted terms only) is the whole
    vocabulary's table restricted to them; terms the index lacks are left out."""
    from lsr_lucene.search.spec_searcher import SpecSearcher

    with SpecSearcher(single / "index") as searcher:
        full = searcher.max_impacts("contents")
        some = [*sorted(full)[::7], "no-such-term", "neg_" + min(full)]
        assert searcher.max_impacts("contents", some) == {t: full[t] for t in some if t in full}

# ---- a local Ray instance ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def local_ray():
    if ray.is_initialized():
        ray.shutdown()
    ray.init(address="local", num_cpus=2, **RAY_OPTIONS)
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def distributed(single, local_ray, tmp_path_factory):
    """Distributed vectors (interrupted after one shard, resumed with an encoder actor killed) and shard indexes."""
    root = tmp_path_factory.mktemp("distributed")
    options = {"model": "splade-tiny", "max_length": MAX_LENGTH, "dtype": "fp32", "activation": None,
               "pooling": None, "epsilon": None, "device": None}
    resources = {"workers": 2, "cpus": 1, "gpus": 0}
    args = (single / "corpus.jsonl", root / "vectors", resources, options)
    kwargs = {"scale": 100, "shard_size": SHARD_SIZE, "batch_size": 16}

    def interrupt(record):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        distributed_encode(*args[:2], {**resources, "workers": 1}, options, **kwargs, on_shard=interrupt)
    partial = root / ".vectors.partial-distributed"
    assert len(list(partial.glob("part-*.jsonl"))) >= 1 and not (root / "vectors").exists()
    killed = []

    def kill_writer(record):  # SIGKILL the encoder actor that wrote the first shard; Ray restarts it
        if not killed:
            os.kill(record["pid"], signal.SIGKILL)
            killed.append(record)

    meta = distributed_encode(*args, **kwargs, on_shard=kill_writer)
    assert meta["resumed_after_documents"] >= SHARD_SIZE and killed
    assert cli(["distributed", "index", "--input", str(root / "vectors"), "--index", str(root / "index"),
                "--num-workers", "2", "--positions", str(single / "positions.jsonl")]) == 0
    return root


def test_distributed_encode_equals_single_encode(single, distributed):
    ours, theirs = _parts(distributed / "vectors"), _parts(single / "vectors")
    assert list(ours) == ["part-00000.jsonl", "part-00001.jsonl", "part-00002.jsonl"]
    assert ours == theirs
    mine = read_metadata(distributed / "vectors")
    reference = read_metadata(single / "vectors")
    for key in ("model", "max_length", "dtype", "scale", "shard_size", "documents", "skipped_empty", "postings",
                "shards", "files", "batch_size", "encode_window"):
        assert mine[key] == reference[key], key
    assert mine["skipped_empty"] == 2


def test_manifest_counts_every_document(distributed):
    manifest = json.loads((distributed / "index" / "shards.json").read_text())
    assert [s["path"] for s in manifest["shards"]] == [f"shard-0000{i}" for i in range(3)]
    assert manifest["documents"] == DOCS and sum(s["indexed"] for s in manifest["shards"]) == DOCS


@pytest.fixture(scope="module")
def searcher(distributed):
    """Searcher actors over the three shards, kept open for the module's searches."""
    with DistributedSearcher(distributed / "index") as opened:
        yield opened


@pytest.mark.parametrize("kind,hits", [("plain", 10), ("signed", 25), ("composed", 25)])
def test_distributed_run_equals_single_index_run(single, searcher, kind, hits, tmp_path):
    specs = _query_specs(single)[kind]
    stats = searcher.search_to_run(specs, tmp_path / "run", hits=hits, batch_size=8)
    expected = _single_run(single, specs, hits, kind)
    assert expected and (tmp_path / "run").read_bytes() == expected
    timing = stats["timing"]  # queries travel in batches of 8 to every shard; where the time went is measured
    assert timing["batches"] == -(-len(specs) // 8) and len(timing["shard_busy_s"]) == 3
    assert len(timing["searcher_busy_s"]) == len(searcher.groups) == 1  # one node: one searcher holds all shards
    assert timing["round_trip_ms_max"] >= timing["round_trip_ms_mean"] >= timing["slowest_searcher_ms_mean"] > 0


def test_cli_search_equals_lsr_lucene_search(single, distributed, tmp_path, capsys):
    assert cli(["search", "--index", str(single / "index"), "--query-vectors", str(single / "queries.jsonl"),
                "--output", str(tmp_path / "single.run")]) == 0
    assert cli(["distributed", "search", "--index", str(distributed / "index"), "--query-vectors",
                str(single / "queries.jsonl"), "--output", str(tmp_path / "dist.run")]) == 0
    assert (tmp_path / "dist.run").read_bytes() == (tmp_path / "single.run").read_bytes()
    assert "time: " in capsys.readouterr().out  # the timing breakdown line


def test_cli_search_of_topics_encodes_them_while_the_searchers_start(single, distributed, tmp_path, capsys):
    """`distributed search --topics` encodes the queries as `lsr-lucene search` does, while its searchers start (their
    process, JVM and shards): the time line says how much of their start it still waited for."""
    assert cli(["search", "--index", str(single / "index"), "--topics", str(single / "topics.tsv"),
                "--output", str(tmp_path / "single.run")]) == 0
    capsys.readouterr()
    assert cli(["distributed", "search", "--index", str(distributed / "index"), "--topics",
                str(single / "topics.tsv"), "--output", str(tmp_path / "dist.run")]) == 0
    assert (tmp_path / "dist.run").read_bytes() == (tmp_path / "single.run").read_bytes()
    started, waited = map(float, re.search(r"searchers started in ([\d.]+) s \(([\d.]+) s of it waited for\)",
                                           capsys.readouterr().out).groups())
    assert 0 <= waited <= started


def test_explicit_exclusions_are_strict_on_every_shard(single, distributed, tmp_path):
    """Issue 65: with ``--not-op spec`` topics in the explicit syntax are searched on the shards as compose searches
    them on one index with ``--not-op ignore`` (a spec cannot fuse: each not node ranks its A side): every document
    whose text contains an excluded word is removed inside each shard's search, the top k filled by others. (By
    default they are ranked as compose's default ranks them: tests/test_distributed_compose.py.)"""
    from lsr_lucene.search.text_filter import text_contains

    topics = tmp_path / "syntax.tsv"
    topics.write_text('1\tflow -supersonic\n2\tboundary layer NOT (heat OR "shock wave")\n')
    assert cli(["compose", "--index", str(single / "index"), "--topics", str(topics), "--hits", "20",
                "--not-op", "ignore", "--output", str(tmp_path / "one.run")]) == 0
    assert cli(["distributed", "search", "--index", str(distributed / "index"), "--topics", str(topics),
                "--hits", "20", "--output", str(tmp_path / "dist.run"), "--not-op", "spec"]) == 0
    dist = read_hits(tmp_path / "dist.run")
    assert dist == read_hits(tmp_path / "one.run") and len(dist["1"]) == 20
    texts = {json.loads(line)["id"]: line for line in (single / "corpus.jsonl").read_text().splitlines()}
    assert not any(text_contains(json.loads(texts[d])["text"], "supersonic") for d, _ in dist["1"])


def test_bp_shards_are_built_as_index_builds_them_and_search_as_one_index(single, local_ray, tmp_path):
    """``distributed index --reorder bp --seed 0``: each shard is what ``lsr-lucene index --reorder bp --seed 0``
    builds of its vectors (same docid order, the dense-impacts sidecar ``auto`` chooses); the exact distributed runs
    (plain and signed) are byte-identical to one index's, in natural and in BP order."""
    from lsr_lucene.index.impact import read_index_metadata
    from lsr_lucene.search.impact import run_specs
    from lsr_lucene.search.spec_searcher import SpecSearcher

    assert cli(["distributed", "index", "--input", str(single / "vectors"), "--index", str(tmp_path / "bp"),
                "--num-workers", "2", "--reorder", "bp", "--seed", "0"]) == 0
    shards = json.loads((tmp_path / "bp" / "shards.json").read_text())["shards"]
    assert [s["reorder"] for s in shards] == ["bp"] * 3
    for i, shard in enumerate(shards):
        alone = tmp_path / f"alone-{i}"
        assert cli(["index", "--input", str(single / "vectors" / f"part-0000{i}.jsonl"), "--index", str(alone),
                    "--reorder", "bp", "--seed", "0"]) == 0
        ours, theirs = read_index_metadata(tmp_path / "bp" / shard["path"]), read_index_metadata(alone)
        assert ours["reorder"]["log_gap_bits_after"] == theirs["reorder"]["log_gap_bits_after"]
        assert ours["dense_impacts"]["rule"] == "auto" and ours["dense_impacts"]["terms"] == \
            theirs["dense_impacts"]["terms"] == shard["dense_impacts_terms"]
        with SpecSearcher(tmp_path / "bp" / shard["path"]) as a, SpecSearcher(alone) as b:
            assert a.docids == b.docids != sorted(a.docids)
    assert any(s["dense_impacts_terms"] for s in shards)  # the sidecar is there to be used
    assert cli(["index", "--input", str(single / "vectors"), "--index", str(tmp_path / "one-bp"), "--reorder", "bp",
                "--seed", "0"]) == 0
    for kind in ("plain", "signed"):
        specs = _query_specs(single)[kind]
        expected = _single_run(single, specs, 10, kind)
        run_specs(tmp_path / "one-bp", specs, tmp_path / f"one-bp-{kind}.run", hits=10)
        distributed_search(tmp_path / "bp", specs, tmp_path / f"bp-{kind}.run", hits=10)
        assert expected == (tmp_path / f"bp-{kind}.run").read_bytes() == \
            (tmp_path / f"one-bp-{kind}.run").read_bytes()


def test_shards_of_consecutive_files_search_as_one_index(single, local_ray, tmp_path):
    """``distributed index --shards 2`` over three vector files: shards of consecutive files (1 + 2), the
    collection's order kept; the distributed run equals one index's."""
    from lsr_lucene.distributed.index import shard_groups

    assert shard_groups(3, 2) == [[0], [1, 2]] and shard_groups(3, 0) == shard_groups(3, 5) == [[0], [1], [2]]
    assert shard_groups(10, 4) == [[0, 1], [2, 3, 4], [5, 6], [7, 8, 9]]
    assert cli(["distributed", "index", "--input", str(single / "vectors"), "--index", str(tmp_path / "two"),
                "--shards", "2"]) == 0
    manifest = json.loads((tmp_path / "two" / "shards.json").read_text())
    assert manifest["files_per_shard"] == [1, 2] and manifest["documents"] == DOCS
    specs = _query_specs(single)["plain"]
    distributed_search(tmp_path / "two", specs, tmp_path / "two.run", hits=10)
    assert (tmp_path / "two.run").read_bytes() == _single_run(single, specs, 10, "plain")


def test_heap_factor_reaches_every_shard(zipf, local_ray, tmp_path, capsys):
    """``distributed search --heap-factor 0.5`` over two shards of the synthetic collection (two windows of docids
    each, where 0.5 prunes): the merged hits keep the heap factor's promise and miss some of the exact top k; 1 is
    the exact top k; a bad value is one error line before any cluster starts."""
    lines = (zipf.vectors / "part-00000.jsonl").read_text().splitlines(keepends=True)
    vectors = tmp_path / "vectors"
    vectors.mkdir()
    half = len(lines) // 2
    (vectors / "part-00000.jsonl").write_text("".join(lines[:half]))
    (vectors / "part-00001.jsonl").write_text("".join(lines[half:]))
    index = tmp_path / "index"
    assert cli(["distributed", "index", "--input", str(vectors), "--index", str(index), "--num-workers", "2"]) == 0
    specs = zipf.queries(20, 5)
    missed = 0
    for h in (0.5, 1.0):
        with DistributedSearcher(index, heap_factor=h) as searcher:
            for k in (10, 100):
                for spec, ranked in zip(specs, searcher.search(specs, k)):
                    missed += zipf.check_heap_factor([(d, e) for d, _, e in ranked], spec["terms"], k, h)
    assert missed > 0  # 0.5 reached the shards' searchers
    (tmp_path / "q.jsonl").write_text("".join(json.dumps({"id": s["qid"], "vector": s["terms"]}) + "\n"
                                              for s in specs))
    base = ["distributed", "search", "--index", str(index), "--query-vectors", str(tmp_path / "q.jsonl"),
            "--hits", "10", "--output"]
    assert cli([*base, str(tmp_path / "h.run"), "--heap-factor", "0.5"]) == 0
    run = read_hits(tmp_path / "h.run")
    assert sum(zipf.check_heap_factor(run[s["qid"]], s["terms"], 10, 0.5) for s in specs) > 0
    capsys.readouterr()
    for bad in ("0", "1.5", "x"):
        assert cli([*base, str(tmp_path / "bad.run"), "--heap-factor", bad]) == 2
        assert f"error: --heap-factor must be a number above 0 and at most 1, got {bad}" in capsys.readouterr().err
    assert not (tmp_path / "bad.run").exists()
    with pytest.raises(InputError, match="heap_factor must be"):
        DistributedSearcher(index, heap_factor=0)


def test_search_survives_a_killed_searcher_actor(single, searcher, tmp_path):
    specs = _query_specs(single)["signed"]
    killed = []

    def kill_first_shard(done, actors):
        if not killed:
            ray.kill(actors[0][0], no_restart=False)  # restarted (max_restarts), its calls retried
            killed.append(done)

    searcher.search_to_run(specs, tmp_path / "run", hits=25, batch_size=2, on_batch=kill_first_shard)
    assert killed == [1]
    assert (tmp_path / "run").read_bytes() == _single_run(single, specs, 25, "signed")



def test_search_survives_a_sigkilled_searcher_process(single, searcher, tmp_path):
    """SIGKILL to a searcher actor's process (here the one holding every shard) while query batches are in flight:
    Ray restarts it (a new process, its shards opened again) and retries its calls; the run is byte-identical to
    one index's."""
    specs = _query_specs(single)["plain"]
    pids = ray.get([row[0].pid.remote() for row in searcher.actors])
    killed = []

    def kill_searcher(done, actors):
        if not killed:
            os.kill(pids[0], signal.SIGKILL)
            killed.append(done)

    searcher.search_to_run(specs, tmp_path / "run", hits=10, batch_size=2, on_batch=kill_searcher)
    assert killed == [1]
    assert ray.get(searcher.actors[0][0].pid.remote()) != pids[0]
    assert (tmp_path / "run").read_bytes() == _single_run(single, specs, 10, "plain")


def _kill_first_builder(index: Path, killed: list, stop: threading.Event) -> None:
    """SIGKILL the first process seen building a shard of ``index`` (the pid in its temporary folder's name)."""
    while not stop.is_set() and not killed:
        for tmp in index.glob(".shard-*.tmp-*"):
            pid = int(re.search(r"\.tmp-(\d+)", tmp.name).group(1))
            if pid != os.getpid():
                os.kill(pid, signal.SIGKILL)
                killed.append(tmp.name.split(".tmp-")[0].lstrip("."))
                return
        time.sleep(0.01)


def test_killed_index_worker_leaves_no_half_built_shard_and_a_rerun_finishes(single, distributed, tmp_path, capsys):
    """A worker SIGKILLed while it builds a shard (no retry left): one error line, no manifest, every shard folder
    there complete; the same command again builds the rest and gives the shards one uninterrupted build gives."""
    from lsr_lucene.distributed.index import distributed_index
    from lsr_lucene.errors import OutputError
    from lsr_lucene.index.impact import read_index_metadata

    index, killed, stop = tmp_path / "index", [], threading.Event()
    watcher = threading.Thread(target=_kill_first_builder, args=(index, killed, stop), daemon=True)
    watcher.start()
    try:
        with pytest.raises(OutputError, match="died 1 time.*rerun the same command"):
            distributed_index(distributed / "vectors", index, workers=1, retries=0)
    finally:
        stop.set()
        watcher.join()
    assert killed and not (index / "shards.json").exists()
    assert not (index / killed[0]).exists()  # the killed build left only its temporary folder
    for shard in index.glob("shard-*"):
        assert read_index_metadata(shard)["indexed"] > 0  # built to the end (renamed into place when complete)
    manifest = distributed_index(distributed / "vectors", index, workers=1)
    reference = json.loads((distributed / "index" / "shards.json").read_text())["shards"]
    assert [s["built"] for s in manifest["shards"]].count(True) >= 1
    assert [(s["path"], s["indexed"], s["postings"]) for s in manifest["shards"]] == \
        [(s["path"], s["indexed"], s["postings"]) for s in reference]
    assert not list(index.glob(".*.tmp-*"))  # the dead build's temporaries removed by the rerun
    queries = str(single / "queries.jsonl")
    for name in ("rebuilt", "reference"):
        shard = (index if name == "rebuilt" else distributed / "index") / killed[0]
        assert cli(["search", "--index", str(shard), "--query-vectors", queries, "--output",
                    str(tmp_path / f"{name}.run"), "--hits", "10"]) == 0
    assert (tmp_path / "rebuilt.run").read_bytes() == (tmp_path / "reference.run").read_bytes()

def _shard_dependent_specs(root: Path) -> list[dict]:
    """Specs whose scoring depends on the index searched: negative CPT pair weights (shift by the max impacts of
    irrational pair scores) and window clauses, over the whole search or reranking the first stage's top 15."""
    from lsr_lucene.io.topics import read_query_vectors

    vectors = read_query_vectors(root / "queries.jsonl")
    documents = [json.loads(line)["tokens"] for line in (root / "positions.jsonl").read_text().splitlines()]
    documents = [[t for t, _ in tokens] for tokens in documents if len(set(t for t, _ in tokens[2:7])) > 1]
    specs = []
    for i, (qid, vector) in enumerate(vectors.items()):
        top = sorted(vector, key=lambda t: (-vector[t], t))[:4]
        specs.append({"qid": f"{qid}-pairs", "terms": dict(vector),
                      "pairs": [[top[0], top[1], -37], [top[2], top[3], -11], [top[0], top[2], 23]]})
        tokens = documents[i % len(documents)]  # windows that occur in some document
        bigrams = [(a, b) for a, b in zip(tokens, tokens[1:]) if a != b][:2]
        windows = [{"terms": [[a, 1.0], [b, 2.0]], "ordered": True, "weight": 300.0} for a, b in bigrams]
        windows.append({"terms": [[a, 1.0] for a in dict.fromkeys(tokens[2:7])], "ordered": False, "width": 8,
                        "weight": 150.0})
        specs.append({"qid": f"{qid}-windows", "terms": dict(vector), "windows": windows})
        specs.append({"qid": f"{qid}-rerank", "terms": dict(vector), "windows": windows, "rerank": 15})
    return specs


def test_shard_dependent_scores_equal_one_index_to_the_bit(single, searcher, tmp_path):
    from lsr_lucene.search.spec_searcher import SpecSearcher

    specs = _shard_dependent_specs(single)
    merged = searcher.search(specs, hits=10, batch_size=7)
    with SpecSearcher(single / "index") as one_index:
        expected = [one_index.search_exact(spec, 10) for spec in specs]
        first_stages = {spec["qid"]: one_index.search_exact(first_stage(spec), 10) for spec in specs}
    assert all(expected) and merged == expected
    # the windows reorder some first stages, so the second phase of rerank is exercised
    assert any([h[0] for h in hits] != [h[0] for h in first_stages[spec["qid"]]]
               for spec, hits in zip(specs, expected) if spec.get("rerank"))
    searcher.search_to_run(specs, tmp_path / "run", hits=10)
    assert (tmp_path / "run").read_bytes() == _single_run(single, specs, 10, "shard-dependent")


# ---- two nodes simulated on this machine ----------------------------------------------------------------------
def test_two_node_cluster_encode_and_search_equal_one_machine(single, tmp_path):
    from ray.cluster_utils import Cluster

    if ray.is_initialized():
        ray.shutdown()
    # the driver's head node gets no CPU, so every encoder actor must run on the other node (which of two CPU
    # nodes takes a shard depends on timing)
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "object_store_memory": 150 * 2**20})
    try:
        worker = cluster.add_node(num_cpus=2, object_store_memory=150 * 2**20)
        ray.init(address=cluster.address, configure_logging=False)
        assert len([n for n in ray.nodes() if n["Alive"]]) == 2
        assert cli(["distributed", "encode", *_encode_args(single / "corpus.jsonl", tmp_path / "vectors"),
                    "--num-workers", "2"]) == 0
        assert _parts(tmp_path / "vectors") == _parts(single / "vectors")
        nodes = read_metadata(tmp_path / "vectors")["nodes"]
        assert set(nodes) == {worker.node_id} != {ray.get_runtime_context().get_node_id()}
        # a third node; the shards are then said to be written alternately on the two CPU nodes: each index build,
        # and each shard's searcher, must run on the node holding its shard
        other = cluster.add_node(num_cpus=2, object_store_memory=150 * 2**20)
        cluster.wait_for_nodes()
        metadata_file = metadata_path(tmp_path / "vectors")
        metadata = json.loads(metadata_file.read_text())
        metadata["nodes"] = [(worker, other)[i % 2].node_id for i in range(len(nodes))]
        metadata_file.write_text(json.dumps(metadata))
        assert cli(["distributed", "index", "--input", str(tmp_path / "vectors"), "--index", str(tmp_path / "index"),
                    "--num-workers", "2"]) == 0
        shards = json.loads((tmp_path / "index" / "shards.json").read_text())["shards"]
        assert [s["node"] for s in shards] == metadata["nodes"] and len(set(metadata["nodes"])) == 2
        with DistributedSearcher(tmp_path / "index") as searcher:
            placed = ray.get([row[0].node.remote() for row in searcher.actors])
            held = {shard: node for group, node in zip(searcher.groups, placed) for shard in group}
        assert [held[i] for i in range(len(shards))] == metadata["nodes"] and len(placed) == 2  # a searcher a node
        specs = _query_specs(single)["composed"]
        distributed_search(tmp_path / "index", specs, tmp_path / "run", hits=25)
        assert (tmp_path / "run").read_bytes() == _single_run(single, specs, 25, "composed")
    finally:
        ray.shutdown()
        cluster.shutdown()


def test_shard_plan_digest_changes_with_text():
    a, b = ShardPlan(0, [("1", "x", "o")]), ShardPlan(0, [("1", "y", "o")])
    assert a.digest() != b.digest()


def test_resume_with_other_settings_is_refused(tmp_path):
    from lsr_lucene.distributed.encode import _State
    from lsr_lucene.errors import InputError

    _State(tmp_path / "vectors", {"model": "splade-tiny", "max_length": 128})
    with pytest.raises(InputError, match="an interrupted run used max_length=128, this run 256"):
        _State(tmp_path / "vectors", {"model": "splade-tiny", "max_length": 256})


# ---- the threshold carried across the shards one searcher holds (no cluster needed) -----------------------------
def _tied_collection(root: Path) -> tuple[list[Path], Path]:
    """Three shards (40, 30 and 20 documents, term ``a`` in {1, 2, 3}: many documents tie at each score, ``neg_a`` and
    ``b`` for signed queries) and one index of them all. Of ``a`` = 3, the largest shard holds 13, the second 3 and
    the last 7, whose ids sort first: documents tied with the largest shard's k-th score that rank before it."""
    top = [lambda i: i % 3 == 2, lambda i: i % 10 == 0, lambda i: i % 3 == 0]  # which documents have a = 3
    shards = []
    everything = root / "all"
    everything.mkdir()
    for number, (size, prefix) in enumerate([(40, "z"), (30, "m"), (20, "c")]):
        lines = [json.dumps({"id": f"{prefix}{i:03d}", "contents": "",
                             "vector": {"a": 3 if top[number](i) else 1 + (i + number) % 2, "b": 1 + i % 2,
                                        **({"neg_a": 2} if i % 5 == 0 and not top[number](i) else {})}}) + "\n"
                 for i in range(size)]
        folder = root / f"v{number}"
        folder.mkdir()
        (folder / "part-00000.jsonl").write_text("".join(lines))
        (everything / f"part-{number:05d}.jsonl").write_text("".join(lines))
        shards.append(root / f"shard{number}")
        assert cli(["index", "--input", str(folder), "--index", str(shards[-1])]) == 0
    assert cli(["index", "--input", str(everything), "--index", str(root / "one")]) == 0
    return shards, root / "one"


def test_later_shards_search_above_the_carried_floor_and_merge_as_one_index(tmp_path):
    """search_shards on three indexes open in one process (as a searcher actor holds its node's shards), exact: the
    merged top k equals one index's, ties at the k-th score included, for plain (integral), float-weighted and signed
    (shifted by the collection's max impacts) specs; and every shard returns only its hits of at least the node's
    k-th best score (ties at it still compete), so a shard that matches more than k returns fewer."""
    from lsr_lucene.search.spec_searcher import SpecSearcher, exact_hits, search_shards, unpack_hits

    paths, one = _tied_collection(tmp_path)
    specs = [{"qid": "plain", "terms": {"a": 1}}, {"qid": "sum", "terms": {"a": 2, "b": 1}},
             {"qid": "float", "terms": {"a": 0.3, "b": 0.7}}, {"qid": "signed", "terms": {"a": 1, "b": -1}},
             {"qid": "signed-float", "terms": {"a": 0.9, "b": -0.35}}]
    searchers = [SpecSearcher(path) for path in paths]
    try:
        subtracted = {"neg_a", "b"}  # what the signed specs subtract (subtracted_terms)
        bounds = [{t: max(s.max_impacts("contents", sorted(subtracted)).get(t, 0) for s in searchers)
                   for t in sorted(subtracted)} if any(w < 0 for w in spec["terms"].values()) else {}
                  for spec in specs]
        jsonl = "\n".join(json.dumps(spec) for spec in specs)
        with SpecSearcher(one) as alone:
            for k in (5, 12):
                for threads in (1, 2):
                    packs, seconds = search_shards(searchers, jsonl, k, bounds, threads=threads)
                    per_shard = [unpack_hits(pack) for pack in packs]
                    assert len(seconds) == 3
                    for row, spec in enumerate(specs):
                        merged = merge_hits([lists[row] for lists in per_shard], k)
                        expected = exact_hits(alone.search_columns(spec, k))
                        assert [(d, e) for d, _, e in merged] == [(d, e) for d, _, e in expected], spec["qid"]
                        floor = expected[-1][2]  # the node's (here the collection's) k-th best score
                        assert all(e >= floor for lists in per_shard for _, _, e in lists[row]), spec["qid"]
                    # shard 1 (30 documents, all matching "a") returns only what ties or beats the k-th best
                    assert len(per_shard[1][0]) < k
                    ties = [h for h in per_shard[2][0] if h[2] == exact_hits(alone.search_columns(specs[0], k))[-1][2]]
                    assert ties  # documents tied with the floor still compete (and rank first by docid)
            # a batch of fewer specs than threads (one query) is searched side by side: every shard its own top k
            packs, _ = search_shards(searchers, json.dumps(specs[0]), 5, bounds[:1], threads=2)
            single = [unpack_hits(pack)[0] for pack in packs]
            assert [len(hits) for hits in single] == [5, 5, 5]
            assert merge_hits(single, 5) == exact_hits(alone.search_columns(specs[0], 5))
    finally:
        for searcher in searchers:
            searcher.close()
