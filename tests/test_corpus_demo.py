"""The demo collection shipped in the package: consistent files, judged documents exist, generator in sync."""
from __future__ import annotations

import importlib.util
from pathlib import Path

from lsr_lucene.io.corpus import check_unique, read_corpus
from lsr_lucene.eval.trec import read_qrels
from lsr_lucene.io.output import open_jsonl
from lsr_lucene.io.topics import read_topics

DEMO = Path(__file__).resolve().parent.parent / "lsr_lucene" / "data" / "demo"
SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "make_demo_data.py"
NEGATIONS = (" but not ", " without ", " not ", " do not ")


def _leaves(tree) -> list[str]:
    if isinstance(tree, str):
        return [tree]
    assert set(tree) == {"op", "a", "b"} and tree["op"] in {"not", "and", "or"}, tree
    return _leaves(tree["a"]) + _leaves(tree["b"])


def test_demo_files_are_consistent():
    docs = list(check_unique(read_corpus(DEMO / "corpus.jsonl")))
    assert 250 <= len(docs) <= 400 and all(d.title and d.text for d in docs)
    ids = {d.id for d in docs}
    topics = read_topics(DEMO / "topics.tsv")
    assert 30 <= len(topics) <= 40
    qrels = read_qrels(DEMO / "qrels.txt")
    assert set(qrels) == set(topics)
    for qid, judged in qrels.items():
        assert set(judged) <= ids, qid
        assert any(g > 0 for g in judged.values()), qid
        assert set(judged.values()) <= {0, 1, 2}
    compositions = {obj["id"]: obj["query"] for _, obj in open_jsonl(DEMO / "compositions.jsonl")}
    ops = {tree["op"] for tree in compositions.values()}
    assert ops == {"not", "and"}  # "or" occurs nested
    for qid, tree in compositions.items():
        assert qid in topics
        assert all(isinstance(leaf, str) and leaf.strip() for leaf in _leaves(tree))
        if tree["op"] == "not":
            assert any(word in f" {topics[qid]} " for word in NEGATIONS), topics[qid]
            # some judged documents are excluded ones: relevant for the positive side only
            assert any(g == 0 for g in qrels[qid].values())
    assert sum(path.stat().st_size for path in DEMO.iterdir()) < 200_000


def test_generator_reproduces_the_shipped_files(tmp_path):
    spec = importlib.util.spec_from_file_location("make_demo_data", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.write(tmp_path)
    for name in ("corpus.jsonl", "topics.tsv", "qrels.txt", "compositions.jsonl"):
        assert (tmp_path / name).read_bytes() == (DEMO / name).read_bytes(), name
