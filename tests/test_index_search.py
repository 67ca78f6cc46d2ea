"""Indexing and searching hand-made vectors: exact scores, run-file conventions, and bad input."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from lsr_lucene.index import impact as index
from lsr_lucene.search import impact as search
from lsr_lucene.errors import InputError

DOCS = [
    {"id": "d1", "contents": "a", "vector": {"apple": 120, "pie": 30, "neg_bad": 5}},
    {"id": "d2", "contents": "b", "vector": {"apple": 60, "tart": 60}},
    {"id": "d3", "contents": "c", "vector": {"pie": 40, "tart": 10}},
    {"id": "d0", "contents": "d", "vector": {"apple": 60, "tart": 60}},  # ties with d2
    {"id": "d4", "contents": "e", "vector": {}},  # empty: counted skip
]


def write_jsonl(path: Path, rows) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


@pytest.fixture(scope="module")
def small_index(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("small")
    write_jsonl(root / "vectors" / "part-00000.jsonl", DOCS)
    meta = index.build_impact_index(root / "vectors", root / "index", threads=1)
    assert meta["indexed"] == 4 and meta["empty"] == 1
    return root / "index"


def brute_force(query: dict[str, float]) -> list[tuple[str, float]]:
    scores = {}
    for doc in DOCS:
        vec = doc["vector"]
        if not any(vec.get(t) for t in query if query[t] > 0):
            continue
        scores[doc["id"]] = sum(w * (vec.get(t, 0) - vec.get(f"neg_{t}", 0)) for t, w in query.items())
    return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))


def read_run(path: Path) -> dict[str, list[tuple[str, int, float, str]]]:
    run: dict[str, list] = {}
    for line in path.read_text().splitlines():
        qid, q0, docid, rank, score, tag = line.split()
        assert q0 == "Q0"
        run.setdefault(qid, []).append((docid, int(rank), float(score), tag))
    return run


def test_run_matches_brute_force_with_docid_tie_break(small_index, tmp_path):
    queries = {"q1": {"apple": 2, "tart": 1}, "q2": {"pie": 3, "bad": 4}, "q3": {"unknown": 5}}
    missing = search.run_specs(small_index, search.plain_specs(queries), tmp_path / "run", hits=10, threads=2,
                               tag="t")
    assert missing == ["q3"]
    run = read_run(tmp_path / "run")
    for qid in ("q1", "q2"):
        expected = brute_force(queries[qid])
        assert [d for d, *_ in run[qid]] == [d for d, _ in expected]
        assert [s for _, _, s, _ in run[qid]] == pytest.approx([s for _, s in expected])
        assert [r for _, r, _, _ in run[qid]] == list(range(1, len(expected) + 1))
    assert [d for d, *_ in run["q1"]][:3] == ["d1", "d0", "d2"]  # d0/d2 tie at 180: docid order


def test_existing_output_is_refused_and_kept(small_index, tmp_path):
    out = tmp_path / "run"
    out.write_text("keep me\n")
    with pytest.raises(InputError, match="--overwrite"):
        search.run_specs(small_index, search.plain_specs({"q": {"apple": 1}}), out)
    assert out.read_text() == "keep me\n"


@pytest.mark.parametrize("rows, message", [
    (['{"id": "x", "vector": {"a": 1}}', '{"id": "y", "vector": '], r"part-00000.jsonl:2: malformed JSON"),
    ([{"id": "x", "vector": {"a": 1}}, {"id": "x", "vector": {"b": 1}}], r":2: duplicate document id 'x'"),
    ([{"id": "x", "vector": {"a": -3}}], r":1: .*'a' is -3.*neg_"),
    ([{"id": "x", "vector": {"a": 1.5}}], r":1: .*'a' is 1.5"),
    (['{"id": "x", "vector": {"a": NaN}}'], r":1: .*not a finite number"),
    ([{"vector": {"a": 1}}], r":1: document has no id"),
])
def test_bad_vectors_are_rejected_and_leave_nothing(tmp_path, rows, message):
    write_jsonl(tmp_path / "v" / "part-00000.jsonl", rows)
    with pytest.raises(InputError, match=message):
        index.build_impact_index(tmp_path / "v", tmp_path / "idx")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["v"]  # no index, no temporary directory


def test_missing_input_and_existing_index(tmp_path, small_index):
    with pytest.raises(InputError, match="no such file or directory"):
        index.build_impact_index(tmp_path / "nope", tmp_path / "idx")
    write_jsonl(tmp_path / "v.jsonl", [{"id": "x", "vector": {"a": 1}}])
    before = sorted(p.name for p in small_index.iterdir())
    with pytest.raises(InputError, match="already exists"):
        index.build_impact_index(tmp_path / "v.jsonl", small_index)
    assert sorted(p.name for p in small_index.iterdir()) == before


def test_single_file_input_and_cli_errors(tmp_path, capsys):
    from lsr_lucene.cli import main

    write_jsonl(tmp_path / "v.jsonl", [{"id": "x", "vector": {"a": 1}}])
    assert main(["index", "--input", str(tmp_path / "v.jsonl"), "--index", str(tmp_path / "idx")]) == 0
    assert main(["index", "--input", str(tmp_path / "v.jsonl"), "--index", str(tmp_path / "idx")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("error: ") and "already exists" in err[-1]
