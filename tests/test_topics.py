"""Topic and query-vector readers: formats, order, duplicates and errors naming file:line."""
from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import pytest

from lsr_lucene.errors import InputError
from lsr_lucene.io.topics import read_query_vectors, read_topics, topics_format

TREC = """<top>
<num> Number: 301
<title> International Organized Crime

<desc> Description:
Identify organizations that participate in international criminal activity.

<narr> Narrative:
A relevant document must identify the organization.
</top>

<top>
<num> Number: 12
<title> Second topic
spanning two lines

<desc> Description:
Something else.

<narr> Narrative:
Anything.
</top>
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_tsv_topics_keep_file_order(tmp_path):
    path = write(tmp_path / "t.tsv", "10\tfirst query\n2\tsecond query\n\n1\tthird\n")
    topics = read_topics(path)
    assert list(topics.items()) == [("10", "first query"), ("2", "second query"), ("1", "third")]


@pytest.mark.parametrize("row", [
    {"id": "q1", "text": "hello"}, {"qid": "q1", "query": "hello"}, {"_id": "q1", "title": "hello"},
    {"_id": "q1", "text": "hello", "metadata": {}},
])
def test_jsonl_topic_keys(tmp_path, row):
    path = write(tmp_path / "q.jsonl", json.dumps(row) + "\n")
    assert read_topics(path) == {"q1": "hello"}


def test_beir_folder_and_shared_files(tmp_path):
    write(tmp_path / "beir" / "queries.jsonl", '{"_id": "3", "text": "a"}\n{"_id": "1", "text": "b"}\n')
    assert list(read_topics(tmp_path / "beir")) == ["3", "1"]
    shared = Path(__file__).resolve().parents[2] / "shared" / "data"
    if (shared / "cranfield" / "topics.tsv").exists():
        topics = read_topics(shared / "cranfield" / "topics.tsv")
        assert list(topics)[:3] == ["1", "2", "3"] and all(topics.values())
        fire = read_topics(shared / "fire2017" / "queries.jsonl")
        assert len(fire) == sum(1 for line in open(shared / "fire2017" / "queries.jsonl") if line.strip())


def test_trec_topics_through_anserini_in_file_order(tmp_path):
    path = write(tmp_path / "topics.301.txt", TREC)
    assert topics_format(path) == "trec"
    topics = read_topics(path)
    assert list(topics) == ["301", "12"]
    assert topics["301"] == "International Organized Crime"
    assert topics["12"].startswith("Second topic")
    desc = read_topics(path, field="description")
    assert desc["301"].startswith("Identify organizations")


def test_trec_duplicate_topic_number(tmp_path):
    path = write(tmp_path / "dup.trec", TREC + TREC.split("\n\n<top>")[0] + "\n")
    with pytest.raises(InputError, match=r"dup.trec:\d+: duplicate query id '301'"):
        read_topics(path)


@pytest.mark.parametrize("content, line, words", [
    ("1\tok\n1\tagain\n", 2, "duplicate query id '1' (first at line 1)"),
    ("1\tok\n2\n", 2, "expected 'qid<TAB>query text'"),
    ("1\tok\n2\t  \n", 2, "has no text"),
])
def test_tsv_errors_name_file_and_line(tmp_path, content, line, words):
    path = write(tmp_path / "t.tsv", content)
    with pytest.raises(InputError) as err:
        read_topics(path)
    assert f"{path}:{line}: " in str(err.value) and words in str(err.value)


def test_jsonl_errors_name_file_and_line(tmp_path):
    path = write(tmp_path / "q.jsonl", '{"id": "1", "text": "a"}\n{"id": "2"}\n')
    with pytest.raises(InputError, match=rf"{path}:2: query 2 has no text"):
        read_topics(path)
    write(path, '{"id": "1", "text": "a"}\n{"id": "1", "text": "b"}\n')
    with pytest.raises(InputError, match=rf"{path}:2: duplicate query id"):
        read_topics(path)
    write(path, '{"text": "a"}\n')
    with pytest.raises(InputError, match=rf"{path}:1: query has no id"):
        read_topics(path)


def test_missing_and_empty_files(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        read_topics(tmp_path / "none.tsv")
    with pytest.raises(InputError, match="empty file"):
        read_topics(write(tmp_path / "empty.tsv", "\n\n"))


def test_irds_topics(monkeypatch):
    queries = [types.SimpleNamespace(query_id="5", text="five"), types.SimpleNamespace(query_id="1", title="one")]
    dataset = types.SimpleNamespace(has_queries=lambda: True, queries_iter=lambda: iter(queries))
    module = types.ModuleType("ir_datasets")
    module.load = lambda name: dataset if name == "toy" else (_ for _ in ()).throw(KeyError(name))
    monkeypatch.setitem(sys.modules, "ir_datasets", module)
    assert list(read_topics("irds:toy").items()) == [("5", "five"), ("1", "one")]
    with pytest.raises(InputError, match="not a known ir_datasets id"):
        read_topics("irds:other")


# ---- pre-encoded query vectors


def test_query_vectors_jsonl(tmp_path):
    path = write(tmp_path / "q.jsonl", json.dumps({"id": "1", "vector": {"cat": 1.5, "neg_dog": 2}}) + "\n"
                 + json.dumps({"id": "2", "contents": "text", "vector": {"a": -0.25}}) + "\n")
    assert read_query_vectors(path) == {"1": {"cat": 1.5, "neg_dog": 2.0}, "2": {"a": -0.25}}


def test_query_vectors_repeated_token_tsv(tmp_path):
    path = write(tmp_path / "q.tsv", "7\tcat cat dog cat\n8\tfish\n")
    vectors = read_query_vectors(path)
    assert vectors == {"7": {"cat": 3.0, "dog": 1.0}, "8": {"fish": 1.0}}
    assert list(vectors) == ["7", "8"]


@pytest.mark.parametrize("content, line, words", [
    ('{"id": "1", "vector": {"a": 1}}\n{"id": "1", "vector": {"b": 1}}\n', 2, "duplicate query id"),
    ('{"id": "1", "vector": {"a": "x"}}\n', 1, "not a finite number"),
    ('{"id": "1", "vector": {"a": NaN}}\n', 1, "not a finite number"),
    ('{"id": "1", "contents": "no vector"}\n', 1, "no \"vector\""),
    ('{"id": "1", "vector": {"a": 1}}\n{"id": "2", "vector": {\n', 2, "malformed JSON"),
    ("1\ta b\n2\n", 2, "expected 'qid<TAB>token"),
    ("1\ta b\n1\tc\n", 2, "duplicate query id"),
])
def test_query_vector_errors_name_file_and_line(tmp_path, content, line, words):
    path = write(tmp_path / "q.txt", content)
    with pytest.raises(InputError) as err:
        read_query_vectors(path)
    assert f"{path}:{line}: " in str(err.value) and words in str(err.value)


def test_query_vectors_missing_or_empty(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        read_query_vectors(tmp_path / "none.jsonl")
    with pytest.raises(InputError, match="empty file"):
        read_query_vectors(write(tmp_path / "e.jsonl", ""))


def test_a_byte_order_mark_and_crlf_line_ends_are_not_part_of_ids(tmp_path):
    """A TSV saved by a Windows editor (BOM, CRLF): the first qid is "1", not "\\ufeff1" (no qrels match it)."""
    path = tmp_path / "topics.tsv"
    path.write_bytes("\ufeff1\tgreen tea\r\n\r\n2\tcoffee\r\n".encode("utf-8"))
    assert read_topics(path) == {"1": "green tea", "2": "coffee"}


def test_qrels_and_runs_with_a_byte_order_mark_keep_their_first_qid(tmp_path):
    from lsr_lucene.eval.trec import read_qrels
    from lsr_lucene.io.runs import read_run

    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_bytes("\ufeff1 0 d1 1\r\n".encode("utf-8"))
    run.write_bytes("\ufeff1 Q0 d1 1 2.0 t\r\n".encode("utf-8"))
    assert read_qrels(qrels) == {"1": {"d1": 1}}
    assert read_run(run) == {"1": {"d1": 2.0}}


@pytest.mark.parametrize("text", ["q 1\tgreen tea\n", '{"id": "q 1", "text": "green tea"}\n'])
def test_a_query_id_with_whitespace_is_refused_naming_the_line(tmp_path, text):
    """bm25 and dense search wrote such qids into 7-column run lines that no evaluation reads."""
    path = tmp_path / ("topics.tsv" if "\t" in text else "topics.jsonl")
    path.write_text("2\tcoffee\n" + text if "\t" in text else '{"id": "2", "text": "coffee"}\n' + text)
    with pytest.raises(InputError, match=rf"^{path}:2: query id 'q 1' contains whitespace"):
        read_topics(path)
