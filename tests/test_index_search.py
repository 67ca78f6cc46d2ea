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
    """The project's signed brute-force reference (neg_ impacts subtract, ties by docid)."""
    from lsr_lucene.compose.backends import ExactBackend

    return ExactBackend([(d["id"], d["vector"]) for d in DOCS]).search({"terms": query}, len(DOCS))


def read_run(path: Path) -> dict[str, list[tuple[str, int, float, str]]]:
    from lsr_lucene.io.runs import iter_run

    run: dict[str, list] = {}
    for row in iter_run(path):
        run.setdefault(row.qid, []).append((row.docid, row.rank, row.score, row.tag))
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


# Anserini 1.7.1 repeats each term weight times (JsonNode.asInt) and whitespace-tokenizes the text: the limits
@pytest.mark.parametrize("vector, message", [
    ({"a": index.MAX_WEIGHT // 2 - 4}, None),  # 'a ' x w = 2^31 - 10 bytes: Java's largest array holds it
    ({"a": index.MAX_WEIGHT // 2 - 3}, r"2147483640 characters \(2147483640 bytes\), over Java's limit"),
    ({"ж": (index.MAX_TEXT_BYTES // 2) // 2}, None),  # beyond Latin-1: 2 bytes a character
    ({"ж": (index.MAX_TEXT_BYTES // 2) // 2 + 1}, r"over Java's limit"),
    ({"é": index.MAX_WEIGHT // 2 - 4}, None),  # Latin-1 (é): 1 byte a character
    ({"a": 2**31 - 1}, r"weights sum to 2147483647 \(largest: 'a' 2147483647\)"),  # in int range, text too long
    ({"a": 2**31}, r"weight of 'a' is 2147483648, above 2147483647"),  # asInt() would wrap it to 0
    ({"a" * 255: 1, "😀" * 127: 1}, None),  # 255 UTF-16 units each
    ({"a" * 256: 1}, r"is 256 characters long"),
    ({"😀" * 128: 1}, r"is 256 characters long"),  # a character beyond the BMP is two UTF-16 units
])
def test_vector_limits_of_anserini(tmp_path, vector, message):
    path = write_jsonl(tmp_path / "v.jsonl", [{"id": "x", "vector": vector}])
    if message is None:
        assert index.validate_vectors([path])["documents"] == 1
    else:
        with pytest.raises(InputError, match=r"v.jsonl:1: document 'x': .*" + message):
            index.validate_vectors([path])


def test_indexed_term_frequency_is_the_weight(tmp_path):
    """A large weight reaches Lucene exactly (Anserini repeats the term); the index is an impact index."""
    from lsr_lucene.jvm import runtime as jvm

    write_jsonl(tmp_path / "v.jsonl", [{"id": "x", "vector": {"big": 100_000, "ж": 3}}])
    index.build_impact_index(tmp_path / "v.jsonl", tmp_path / "idx", threads=1)
    paths, directory = jvm.autoclass("java.nio.file.Paths"), jvm.autoclass("org.apache.lucene.store.FSDirectory")
    opener = jvm.autoclass("org.apache.lucene.index.DirectoryReader")
    reader = opener.open(directory.open(paths.get(str(tmp_path / "idx"))))
    term = jvm.autoclass("org.apache.lucene.index.Term")
    try:
        assert reader.totalTermFreq(term("contents", "big")) == 100_000
        assert reader.totalTermFreq(term("contents", "ж")) == 3
    finally:
        reader.close()


def test_a_failing_index_collection_is_one_error_line(tmp_path):
    write_jsonl(tmp_path / "in" / "v.jsonl", [{"id": "x", "vector": {"a": 1}}])
    with pytest.raises(InputError, match=r"in: Anserini's IndexCollection failed \(Unable to load collection class"):
        index.run_index_collection(["-collection", "NoSuchCollection", "-input", str(tmp_path / "in"),
                                    "-index", str(tmp_path / "idx"), "-generator", "DefaultLuceneDocumentGenerator"])
    assert not (tmp_path / "idx").exists()


@pytest.mark.parametrize("spec, message", [
    ({"qid": "q", "terms": {"a": 3e38, "b": -3e38}}, r"query q: absolute term and pair weights sum to 6e\+38"),
    ({"qid": "q", "terms": {"a": 1}, "pairs": [["a", "b", 8e28]]}, r"sum to 8e\+28, over 7.92e\+28"),
    ({"qid": "q", "terms": {"a": 10**400}}, r"weight of term 'a' must be finite as a float"),
    ({"qid": "q", "terms": {"a": 1e39}}, r"weight of term 'a' must be finite as a float"),  # Java's float: inf
    ({"qid": "q", "terms": {"a": 1}, "windows": [{"terms": [["a", 1e30], ["b", 1]], "weight": 1e30}]},
     r"window weight of 'a' times the window weight must be finite"),
    ({"qid": "q", "terms": {"a": 1}, "windows": [{"terms": [["a"]]}]}, r"window terms must be"),
])
def test_query_weights_that_would_overflow_float_scores_are_refused(spec, message):
    from lsr_lucene.search.specs import validate_spec

    with pytest.raises(InputError, match=message):
        validate_spec(spec)


def test_largest_allowed_query_weights_score_finitely(small_index):
    from lsr_lucene.io.topics import MAX_QUERY_WEIGHT_SUM
    from lsr_lucene.search.spec_searcher import SpecSearcher

    with SpecSearcher(small_index) as searcher:  # every impact is far below 2^31 - 1: scores stay finite
        half = MAX_QUERY_WEIGHT_SUM / 2
        hits = searcher.search({"qid": "q", "terms": {"apple": half, "pie": -half}})
    assert hits and all(abs(score) < 3.4e38 for _, score in hits)



def test_threads_sharing_a_searcher_read_the_ids_once(small_index):
    """The external ids (and their numpy copy) are read from the index once, however many threads ask first."""
    import threading
    import time

    import numpy as np

    from lsr_lucene.search.spec_searcher import SpecSearcher

    class SlowIds:  # the JVM searcher, with a slow docidsText that counts its calls
        def __init__(self, java):
            self.java, self.calls = java, 0

        def docidsText(self):
            self.calls += 1
            time.sleep(0.2)
            return self.java.docidsText()

    with SpecSearcher(small_index) as searcher:
        expected = str(searcher._java.docidsText()).split("\n")
        java, searcher._java = searcher._java, SlowIds(searcher._java)
        names: list = []
        try:
            threads = [threading.Thread(target=lambda: names.append(searcher._names(np.arange(len(expected)))))
                       for _ in range(4)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            calls = searcher._java.calls
        finally:
            searcher._java = java
    assert calls == 1 and names == [expected] * 4


def _index_contents(path: Path) -> dict:
    """Everything a search can see in an impact index: field infos, stored fields, doc values, norms, postings."""
    from lsr_lucene.jvm import runtime as jvm

    A = jvm.autoclass
    reader = A("org.apache.lucene.index.DirectoryReader").open(
        A("org.apache.lucene.store.FSDirectory").open(A("java.nio.file.Paths").get(str(path))))
    end = A("org.apache.lucene.search.DocIdSetIterator").NO_MORE_DOCS
    out: dict = {"stored": {}, "postings": {}, "ids": {}, "norms": {}, "infos": set()}
    for ctx in reader.leaves().toArray():
        leaf = ctx.reader()
        infos = leaf.getFieldInfos()
        out["infos"] |= {(infos.fieldInfo(i).name, infos.fieldInfo(i).getIndexOptions().toString(),
                          infos.fieldInfo(i).hasNorms(), infos.fieldInfo(i).getDocValuesType().toString())
                         for i in range(infos.size())}
        ids = [leaf.storedFields().document(d).get("id") for d in range(leaf.maxDoc())]
        for d, doc_id in enumerate(ids):
            out["stored"][doc_id] = [(f.name(), f.stringValue()) for f in leaf.storedFields().document(d).getFields().toArray()]
        for name, values in (("ids", leaf.getBinaryDocValues("id")), ("norms", leaf.getNormValues("contents"))):
            while (d := values.nextDoc()) != end:
                out[name][ids[d]] = values.binaryValue().utf8ToString() if name == "ids" else values.longValue()
        terms = leaf.terms("contents").iterator()
        while (term := terms.next()) is not None:
            postings = terms.postings(None, A("org.apache.lucene.index.PostingsEnum").FREQS)
            while (d := postings.nextDoc()) != end:
                out["postings"][(term.utf8ToString(), ids[d])] = postings.freq()
    reader.close()
    return out


def test_our_indexer_builds_the_index_anserini_builds(tmp_path):
    """Each term once with its weight as term frequency gives what IndexCollection gives from repeated text."""
    docs = DOCS + [{"id": f"x{i}", "contents": "", "vector": {f"t{i % 7}": i + 1, "apple": 3 * i, "é": 2}}
                   for i in range(40)]
    write_jsonl(tmp_path / "vectors" / "part-00000.jsonl", docs)
    built = {name: index.build_impact_index(tmp_path / "vectors", tmp_path / name, threads=2, indexer=name)
             for name in index.INDEXERS}
    assert built["lsr"]["indexed"] == built["anserini"]["indexed"] == 44
    ours, theirs = (_index_contents(tmp_path / name) for name in index.INDEXERS)
    assert ours == theirs
    assert ours["postings"][("apple", "x5")] == 15 and ("neg_bad", "d1") in ours["postings"]
    assert '"apple" : 120' in dict(ours["stored"]["d1"])["raw"]


def _docid_order(index_dir: Path) -> list[str]:
    """External ids in Lucene docid order."""
    from lsr_lucene.jvm import runtime as jvm

    directory = jvm.autoclass("org.apache.lucene.store.FSDirectory").open(
        jvm.autoclass("java.nio.file.Paths").get(str(index_dir)))
    reader = jvm.autoclass("org.apache.lucene.index.DirectoryReader").open(directory)
    try:
        return list(jvm.autoclass("io.github.lsrlucene.index.DocIds").read(reader, "id"))
    finally:
        reader.close()
        directory.close()


def test_docids_follow_the_input_order_for_any_threads(tmp_path):
    """Workers parse in parallel but one writer adds in input order: every 2-thread build has the input's order."""
    import random

    rng = random.Random(4)
    ids = [f"doc{i:05d}" for i in range(3000)]
    rng.shuffle(ids)  # input order differs from id order
    rows = [{"id": d, "contents": "", "vector": {f"t{rng.randrange(50)}": rng.randint(1, 9) for _ in range(12)}}
            for d in ids]
    write_jsonl(tmp_path / "vectors" / "part-00000.jsonl", rows[:1700])
    write_jsonl(tmp_path / "vectors" / "part-00001.jsonl", rows[1700:])
    orders = []
    for build in range(2):
        index.build_impact_index(tmp_path / "vectors", tmp_path / f"index{build}", threads=2)
        orders.append(_docid_order(tmp_path / f"index{build}"))
    assert orders[0] == orders[1] == ids
