"""Negated topics through ``distributed search`` rank exactly as ``compose``'s default ranks them on one index of the
same documents (issue 68 item 1): the shipped demo collection (298 documents) encoded with splade-tiny in three
vector files, one index of them with its dense leg, and a three-shard distributed index whose shards have their own
dense legs (``distributed index --dense``). Natural-language exclusions and explicit ``-B`` / ``NOT B`` topics give
the same documents in the same order with the same scores (1e-6) at k = 10 and k = 100; plain topics are searched as
before; a shard without its dense leg is one error line naming the command that adds it.

The one index's dense leg holds the shards' embeddings (concatenated): the dense encoder batches documents by token
length and pads a batch to its longest, so a document's embedding depends on the documents batched with it (measured
here: 108 of the 298 differ; 1 - cosine up to 2e-7 in fp32, up to 1.5e-3 in int8, the default), and the test is about
the search, not about the encoder's batching; how far apart an independent encoding of the whole collection is gets
checked separately.
"""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("RAY_DISABLE_FAILURE_SIGNAL_HANDLER", "1")  # before Ray is imported (see test_distributed)
ray = pytest.importorskip("ray")
pytest.importorskip("faiss")
pytest.importorskip("all_minilm_l6_v2")

from lsr_lucene.cli import main as cli  # noqa: E402
from lsr_lucene.errors import InputError  # noqa: E402
from lsr_lucene.io.runs import read_hits  # noqa: E402

DEMO = Path(__file__).resolve().parents[1] / "lsr_lucene" / "data" / "demo"
pytestmark = pytest.mark.slow  # starts a Ray instance (-m 'not slow' skips it)
RAY_OPTIONS = {"object_store_memory": 300 * 2**20, "include_dashboard": False, "configure_logging": False}
NATURAL = {"n1": "tea without caffeine", "n2": "coffee but not espresso", "n3": "dog training without treats",
           "n4": "string instruments but not guitars", "n5": "programming languages but not Python",
           "n6": "cheese without dairy", "n7": "houseplants not toxic to cats", "n8": "pyramids not in Egypt"}
SYNTAX = {"s1": "coffee -espresso", "s2": "tea NOT caffeine", "s3": "volcanoes -Iceland",
          "s4": "pets NOT (dogs OR cats)", "s5": 'storms -"heavy rain"'}
PLAIN = {"p1": "water on Mars", "p2": "how do hurricanes form", "p3": "moons of Jupiter"}


@pytest.fixture(scope="module")
def built(tmp_path_factory, one_torch_thread):
    """Vectors in three files, one index with the shards' dense legs joined, and the three-shard index."""
    from lsr_lucene.dense.ann import build_ann
    from lsr_lucene.dense.store import read_embeddings, write_embeddings
    from lsr_lucene.encode.encoder import SparseEncoder
    from lsr_lucene.index.impact import build_impact_index
    from lsr_lucene.io.corpus import read_corpus
    from lsr_lucene.io.vectors import write_vectors

    root = tmp_path_factory.mktemp("distributed-compose")
    write_vectors(read_corpus(DEMO / "corpus.jsonl"), SparseEncoder("splade-tiny", max_length=64, threads=1),
                  root / "vectors", shard_size=100)
    assert len(list((root / "vectors").glob("part-*.jsonl"))) == 3
    build_impact_index(root / "vectors", root / "index", threads=1)
    topics = {**NATURAL, **SYNTAX, **PLAIN}
    (root / "topics.tsv").write_text("".join(f"{q}\t{t}\n" for q, t in topics.items()))
    if ray.is_initialized():
        ray.shutdown()
    ray.init(address="local", num_cpus=2, **RAY_OPTIONS)
    try:
        assert cli(["distributed", "index", "--input", str(root / "vectors"), "--index", str(root / "dist"),
                    "--num-workers", "1", "--dense"]) == 0
        shards = json.loads((root / "dist" / "shards.json").read_text())["shards"]
        assert [s["dense"] for s in shards] == [True] * 3
        legs = [read_embeddings(root / "dist" / s["path"] / "dense") for s in shards]
        joined = root / "index" / "dense"
        write_embeddings(joined, [d for leg in legs for d in leg.docids],
                         np.concatenate([np.asarray(leg.vectors) for leg in legs]), legs[0].metadata)
        build_ann(joined, read_embeddings(joined), threads=1)
        yield {"root": root, "topics": topics, "legs": legs}
    finally:
        ray.shutdown()


def _compose_run(root: Path, k: int, name: str, extra: tuple[str, ...] = ()) -> dict:
    out = root / f"compose-{name}-{k}.run"
    assert cli(["compose", "--index", str(root / "index"), "--topics", str(root / "topics.tsv"), "--hits", str(k),
                "--output", str(out), *extra]) == 0
    return read_hits(out)


def _same(ours: dict, theirs: dict, qids) -> None:
    for qid in qids:
        assert [d for d, _ in ours[qid]] == [d for d, _ in theirs[qid]], qid
        assert np.allclose([s for _, s in ours[qid]], [s for _, s in theirs[qid]], rtol=0, atol=1e-6), qid


def test_negated_topics_rank_as_compose_on_one_index(built):
    root = built["root"]
    for k in (10, 100):
        out = root / f"dist-{k}.run"
        assert cli(["distributed", "search", "--index", str(root / "dist"), "--topics", str(root / "topics.tsv"),
                    "--hits", str(k), "--output", str(out)]) == 0
        ours, theirs = read_hits(out), _compose_run(root, k, "default")
        negated = [*NATURAL, *SYNTAX]
        _same(ours, theirs, negated)
        assert all(len(ours[q]) == min(k, len(theirs[q])) and ours[q] for q in negated)
        # plain topics: the one-index search's run, as before (not compose's)
        plain = root / f"plain-{k}.run"
        assert cli(["search", "--index", str(root / "index"), "--topics", str(root / "topics.tsv"), "--hits", str(k),
                    "--output", str(plain)]) == 0
        _same(ours, read_hits(plain), PLAIN)
        assert list(ours) == list(built["topics"])  # topic order kept


def test_no_dense_leg_ranks_as_compose_without_one(built, tmp_path):
    """Shards without dense legs: compose's sparse-only default, as on one index without ``dense/``."""
    root = built["root"]
    dist, index = tmp_path / "dist", tmp_path / "index"
    shutil.copytree(root / "dist", dist)
    for shard in dist.glob("shard-*"):
        shutil.rmtree(shard / "dense")
    shutil.copytree(root / "index", index, ignore=shutil.ignore_patterns("dense"))
    assert cli(["distributed", "search", "--index", str(dist), "--topics", str(root / "topics.tsv"), "--hits", "20",
                "--output", str(tmp_path / "d.run")]) == 0
    assert cli(["compose", "--index", str(index), "--topics", str(root / "topics.tsv"), "--hits", "20",
                "--output", str(tmp_path / "c.run")]) == 0
    _same(read_hits(tmp_path / "d.run"), read_hits(tmp_path / "c.run"), [*NATURAL, *SYNTAX])


def test_not_op_passes_through_and_spec_keeps_the_old_search(built):
    root = built["root"]
    out = root / "dist-disentangled.run"
    assert cli(["distributed", "search", "--index", str(root / "dist"), "--topics", str(root / "topics.tsv"),
                "--hits", "10", "--output", str(out), "--not-op", "disentangled"]) == 0
    _same(read_hits(out), _compose_run(root, 10, "disentangled", ("--not-op", "disentangled")), [*NATURAL, *SYNTAX])
    spec = root / "dist-spec.run"
    assert cli(["distributed", "search", "--index", str(root / "dist"), "--topics", str(root / "topics.tsv"),
                "--hits", "10", "--output", str(spec), "--not-op", "spec"]) == 0
    ours = read_hits(spec)
    plain = root / "plain-nl.run"
    assert cli(["search", "--index", str(root / "index"), "--topics", str(root / "topics.tsv"), "--hits", "10",
                "--output", str(plain)]) == 0
    _same(ours, read_hits(plain), [*NATURAL, *PLAIN])  # the whole text as one query, as before
    assert all(ours[q] for q in SYNTAX)


def test_a_shard_without_its_dense_leg_is_one_error_line(built, tmp_path, capsys):
    from lsr_lucene.distributed.compose import DistributedDenseLeg
    from lsr_lucene.distributed.search import DistributedSearcher

    root = built["root"]
    copy = tmp_path / "dist"
    shutil.copytree(root / "dist", copy)
    shutil.rmtree(copy / "shard-00001" / "dense")
    capsys.readouterr()
    assert cli(["distributed", "search", "--index", str(copy), "--topics", str(root / "topics.tsv"), "--hits", "10",
                "--output", str(tmp_path / "x.run")]) != 0
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and error[0].startswith("error: 1 of 3 shards have no dense leg ("), error
    assert "lsr-lucene index --index SHARD --dense" in error[0] and not (tmp_path / "x.run").exists()
    # a plain-only search of that index needs no dense leg
    assert cli(["distributed", "search", "--index", str(copy), "--topics", str(root / "topics.tsv"), "--hits", "10",
                "--output", str(tmp_path / "spec.run"), "--not-op", "spec"]) == 0
    for leg in ("shard-00000", "shard-00002"):  # none at all: compose's sparse-only default, as one index without one
        shutil.rmtree(copy / leg / "dense")
    from lsr_lucene.distributed.compose import ComposeShardSearcher

    with DistributedSearcher(copy, actor=ComposeShardSearcher) as searcher:
        assert DistributedDenseLeg.open(searcher) is None
    with pytest.raises(InputError, match="not a distributed index|no shards.json"):
        DistributedSearcher(tmp_path, actor=ComposeShardSearcher)


def test_an_independent_dense_encoding_is_close(built, tmp_path):
    """The whole collection embedded at once (index --dense) against the shards' embeddings: the same documents,
    each one's two embeddings at cosine above 0.995 (int8: the batch-mates' padding moves them, by up to 1.5e-3 here)."""
    from lsr_lucene.dense.leg import build_dense_leg
    from lsr_lucene.dense.store import read_embeddings

    index = tmp_path / "index"
    shutil.copytree(built["root"] / "index", index, ignore=shutil.ignore_patterns("dense"))
    build_dense_leg(index, threads=1)
    whole = read_embeddings(index / "dense")
    shards = {d: v for leg in built["legs"] for d, v in zip(leg.docids, np.asarray(leg.vectors))}
    assert sorted(whole.docids) == sorted(shards)
    gap = max(abs(float(np.dot(v, shards[d])) - 1.0) for d, v in zip(whole.docids, np.asarray(whole.vectors)))
    assert gap < 5e-3, gap


def test_shards_held_by_three_searchers(built, tmp_path):
    """Shards recorded as built on three nodes get three searcher processes (one each): the backend and dense leg
    gather every one's answers, and the ranking is still one index's."""
    root = built["root"]
    dist = tmp_path / "dist"
    shutil.copytree(root / "dist", dist)
    manifest = json.loads((dist / "shards.json").read_text())
    for number, shard in enumerate(manifest["shards"]):
        shard["node"] = f"node-{number}"  # no such node alive: each searcher placed by SPREAD
    (dist / "shards.json").write_text(json.dumps(manifest))
    from lsr_lucene.distributed.search import node_groups

    assert node_groups(manifest["shards"]) == [[0], [1], [2]]
    out = tmp_path / "three.run"
    assert cli(["distributed", "search", "--index", str(dist), "--topics", str(root / "topics.tsv"), "--hits", "20",
                "--output", str(out)]) == 0
    _same(read_hits(out), _compose_run(root, 20, "default"), [*NATURAL, *SYNTAX])
