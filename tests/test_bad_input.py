"""Bad user files at every entry point: exit status 2, one ``error:`` line naming the file (and line), nothing left.

Each case writes its input files into ``in/``, runs the command in-process (``lsr_lucene.cli.main``, or the
module's ``main`` through ``run_main``), and checks that the output directory ``out/`` is exactly as before:
no output, no ``.<name>.tmp-<pid>.<start>-*`` temporary, no lock, and a pre-existing output untouched.
The last two tests race two real ``index`` processes for one output, and kill one with SIGKILL mid-write.
"""
from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from lsr_lucene.cli import main as cli_main, run_main

LONG_TERM = "x" * 256


def jsonl(*rows) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows)


CORPUS = [{"id": "d1", "text": "green tea leaves"}, {"id": "d2", "title": "Coffee", "text": "black coffee beans"}]
TOPICS_TSV = "1\tgreen tea\n2\tcoffee\n"
TOPIC = {"id": "1", "text": "green tea"}
VECTOR = {"id": "d1", "contents": "", "vector": {"tea": 50, "green": 20}}
QUERY_VECTOR = {"id": "1", "vector": {"tea": 1.5, "coffee": -0.5}}
COMPOSITION = {"id": "1", "query": {"op": "not", "a": "tea", "b": "caffeine"}}
QRELS = "1 0 d1 1\n2 0 d2 1\n"
RUN = "1 Q0 d1 1 2.0 t\n2 Q0 d2 1 1.0 t\n"
NEVIR_ROW = {"id": "1", "q1": "tea", "doc1": "green tea", "q2": "not tea", "doc2": "no tea here"}
EXCLUIR_ROW = {"id": "1", "query": "tea but not green tea", "pos_id": "d2", "neg_id": "d1"}
SEGMENT = {"id": "d1@@0", "text": "green tea leaves"}


@dataclass
class Case:
    """One bad input: ``files`` to write into in/, the command (``{name}`` placeholders), the expected error."""

    argv: str
    expect: str  # regex over the error line; {name} placeholders are the escaped paths
    files: dict[str, str] = field(default_factory=dict)
    existing: str | None = None  # an output that exists before the run (file, or directory when it ends in /)
    runner: str = "cli"
    max_heap: int | None = None  # the case needs a JVM whose heap is at most this many bytes


def bad_lines(good, **bad) -> dict[str, str]:
    """One variant per keyword: a good first line, then the bad one (so errors name line 2)."""
    return {name: jsonl(good, line) for name, line in bad.items()}


COMMON_JSONL = dict(malformed='{"id": "2", ', missing_id={"text": "no id here"})

CASES: dict[str, Case] = {}


def add(entry: str, case: str, spec: Case) -> None:
    CASES[f"{entry}/{case}"] = spec


# ------------------------------------------------------------------------------------------- encode
ENCODE_CORPUS = "encode --corpus {in} --output {out}/vectors"
for name, lines, expect in [
    ("malformed", jsonl(CORPUS[0], '{"id": "d2", '), r"{in}:2: malformed JSON"),
    ("missing-id", jsonl(CORPUS[0], {"text": "x"}), r"{in}:2: document has no id"),
    ("duplicate-id", jsonl(CORPUS[0], {"id": "d1", "text": "again"}), r"{in}:2: duplicate document id 'd1'"),
    ("text-not-string", jsonl(CORPUS[0], {"id": "d2", "text": 5}), r"{in}:2: document d2: title and text"),
    ("empty-file", "", r"{in}: no documents"),
]:
    add("encode-corpus", name, Case(ENCODE_CORPUS, expect, {"in": lines}))
add("encode-corpus", "tsv-columns", Case(ENCODE_CORPUS.replace("{in}", "{tsv}"), r"{tsv}:2: expected 'id<TAB>text'",
                                         {"tsv": "d1\tgreen tea\nd2\n"}))
add("encode-corpus", "missing-file", Case("encode --corpus {in}/nope.jsonl --output {out}/vectors",
                                          r"{in}/nope.jsonl: no such file", {"in": ""}))
add("encode-corpus", "existing-output", Case(ENCODE_CORPUS, r"{out}/vectors already exists", {"in": jsonl(*CORPUS)},
                                             existing="vectors/"))
ENCODE_TOPICS = "encode --topics {in} --output {out}/queries.jsonl"
for name, files, expect in [
    ("malformed", {"in": jsonl(TOPIC, '{"id": "2", ')}, r"{in}:2: malformed JSON"),
    ("missing-id", {"in": jsonl(TOPIC, {"text": "coffee"})}, r"{in}:2: query has no id"),
    ("duplicate-id", {"in": "1\ttea\n1\tcoffee\n"}, r"{in}:2: duplicate query id '1'"),
    ("empty-topic", {"in": "1\ttea\n2\t \n"}, r"{in}:2: query 2 has no text"),
    ("empty-file", {"in": "\n"}, r"{in}: empty file"),
    ("missing-file", {}, r"{in}: no such file"),
]:
    add("encode-topics", name, Case(ENCODE_TOPICS, expect, files))
add("encode-topics", "existing-output", Case(ENCODE_TOPICS, r"{out}/queries.jsonl already exists",
                                             {"in": TOPICS_TSV}, existing="queries.jsonl"))

# -------------------------------------------------------------------------------------------- index
INDEX = "index --input {in} --index {out}/idx"
for name, line, expect in [
    ("malformed", '{"id": "d2", "vector": ', r"malformed JSON"),
    ("missing-id", {"vector": {"tea": 1}}, r"document has no id"),
    ("duplicate-id", {"id": "d1", "vector": {"tea": 1}}, r"duplicate document id 'd1'"),
    ("nan-weight", '{"id": "d2", "vector": {"tea": NaN}}', r"document 'd2': weight of 'tea' is nan, not a finite"),
    ("inf-weight", '{"id": "d2", "vector": {"tea": Infinity}}', r"weight of 'tea' is inf, not a finite"),
    ("float-weight", {"id": "d2", "vector": {"tea": 1.5}}, r"weight of 'tea' is 1.5; Anserini needs non-negative int"),
    ("negative-weight", {"id": "d2", "vector": {"tea": -3}}, r"weight of 'tea' is -3; .*neg_<term>"),
    ("string-weight", {"id": "d2", "vector": {"tea": "3"}}, r"weight of 'tea' is '3', not a finite number"),
    ("too-large-weight", {"id": "d2", "vector": {"tea": 99999999999}},
     r"document 'd2': weight of 'tea' is 99999999999, above 2147483647"),
    ("huge-int-weight", '{"id": "d2", "vector": {"tea": 1' + "0" * 400 + "}}", r"weight of 'tea' is 10+, above"),
    ("too-long-document", {"id": "d2", "vector": {"tea": 2**30, "green": 2**30 + 1}},
     r"document 'd2': weights sum to 2147483649 \(largest: 'green' 1073741825\).*over Java's limit"),
    ("term-with-space", {"id": "d2", "vector": {"green tea": 3}}, r"term 'green tea' is empty or contains whitespace"),
    ("term-too-long", {"id": "d2", "vector": {LONG_TERM: 3}}, r"is 256 characters long; .*splits terms over 255"),
    ("id-with-space", {"id": "d 2", "vector": {"tea": 3}}, r"document id 'd 2' contains whitespace"),
    ("no-vector", {"id": "d2", "contents": "tea"}, r"document 'd2' has no 'vector' object"),
]:
    add("index", name, Case(INDEX, r"{in}:2: .*" + expect, {"in": jsonl(VECTOR, line)}))
# under Java's array limit (2 * 1073741819 bytes) but over the heap of any JVM with -Xmx below ~6.4 GB
add("index", "heap-too-small", Case(INDEX, r"{in}:2: document 'd2': weights sum to 1073741819 .*GiB of Java heap",
                                    {"in": jsonl(VECTOR, {"id": "d2", "vector": {"a": 1073741819}})},
                                    max_heap=6 * 2**30))
add("index", "empty-file", Case(INDEX, r"{in}: no documents", {"in": "\n"}))  # a file names itself; a dir its path
add("index", "missing-input", Case("index --input {in}/nope --index {out}/idx", r"{in}/nope: no such file",
                                   {"in": ""}))
add("index", "existing-output", Case(INDEX, r"{out}/idx already exists", {"in": jsonl(VECTOR)}, existing="idx/"))

# ------------------------------------------------------------------------------------------- search
SEARCH_TOPICS = "search --index {index} --topics {in} --output {out}/run.txt"
for name, files, expect in [
    ("malformed", {"in": jsonl(TOPIC, '{"id": "2", ')}, r"{in}:2: malformed JSON"),
    ("missing-id", {"in": jsonl(TOPIC, {"text": "coffee"})}, r"{in}:2: query has no id"),
    ("duplicate-id", {"in": "1\ttea\n1\tcoffee\n"}, r"{in}:2: duplicate query id '1'"),
    ("empty-file", {"in": ""}, r"{in}: empty file"),
    ("missing-file", {}, r"{in}: no such file"),
]:
    add("search-topics", name, Case(SEARCH_TOPICS, expect, files))
add("search-topics", "missing-index", Case("search --index {in}/noindex --topics {in} --output {out}/run.txt",
                                           r"{in}/noindex: no such index directory", {"in": TOPICS_TSV}))
add("search-topics", "existing-output", Case(SEARCH_TOPICS, r"{out}/run.txt already exists", {"in": TOPICS_TSV},
                                             existing="run.txt"))
SEARCH_VECTORS = "search --index {index} --query-vectors {in} --output {out}/run.txt"
for name, line, expect in [
    ("malformed", '{"id": "2", ', r"malformed JSON"),
    ("missing-id", {"vector": {"tea": 1}}, r"query vector has no id"),
    ("duplicate-id", {"id": "1", "vector": {"tea": 1}}, r"duplicate query id '1'"),
    ("nan-weight", '{"id": "2", "vector": {"tea": NaN}}', r"weight of term 'tea' is not a finite number"),
    ("inf-weight", '{"id": "2", "vector": {"tea": -Infinity}}', r"weight of term 'tea' is not a finite number"),
    ("string-weight", {"id": "2", "vector": {"tea": "1"}}, r"weight of term 'tea' is not a finite number"),
    ("too-large-weight", {"id": "2", "vector": {"tea": 1e39}}, r"weight of term 'tea' is 1e\+39, beyond"),
    ("overflowing-sum", {"id": "2", "vector": {"tea": 3e38, "green": -3e38}},
     r"query 2: absolute term weights sum to 6e\+38, over 7.92e\+28"),
    ("huge-int-weight", '{"id": "2", "vector": {"tea": 1' + "0" * 400 + "}}", r"weight of term 'tea' is 10+, beyond"),
    ("term-with-space", {"id": "2", "vector": {"green tea": 1}}, r"term 'green tea' is empty or contains whitespace"),
    ("no-vector", {"id": "2", "text": "tea"}, r"query 2 has no \"vector\" object"),
]:
    add("search-vectors", name, Case(SEARCH_VECTORS, r"{in}:2: " + expect, {"in": jsonl(QUERY_VECTOR, line)}))
add("search-vectors", "tsv-columns", Case(SEARCH_VECTORS, r"{in}:2: expected 'qid<TAB>token token",
                                          {"in": "1\ttea tea\n2\n"}))
add("search-vectors", "empty-file", Case(SEARCH_VECTORS, r"{in}: empty file", {"in": "\n"}))
add("search-vectors", "missing-file", Case(SEARCH_VECTORS, r"{in}: no such file"))

# --------------------------------------------------------------------------------------------- bm25
BM25_CORPUS = "bm25 --corpus {in} --index {out}/bm25"
for name, lines, expect in [
    ("malformed", jsonl(CORPUS[0], '{"id": "d2", '), r"{in}:2: malformed JSON"),
    ("missing-id", jsonl(CORPUS[0], {"text": "x"}), r"{in}:2: document has no id"),
    ("duplicate-id", jsonl(CORPUS[0], {"id": "d1", "text": "again"}), r"{in}:2: duplicate document id 'd1'"),
    ("empty-file", "", r"{in}: no documents"),
]:
    add("bm25-corpus", name, Case(BM25_CORPUS, expect, {"in": lines}))
add("bm25-corpus", "missing-file", Case("bm25 --corpus {in}/nope.jsonl --index {out}/bm25",
                                        r"{in}/nope.jsonl: no such file", {"in": ""}))
BM25_TOPICS = "bm25 --index {bm25} --topics {in} --output {out}/run.txt"
for name, files, expect in [
    ("malformed", {"in": jsonl(TOPIC, '{"id": "2", ')}, r"{in}:2: malformed JSON"),
    ("duplicate-id", {"in": "1\ttea\n1\tcoffee\n"}, r"{in}:2: duplicate query id '1'"),
    ("empty-file", {"in": ""}, r"{in}: empty file"),
    ("missing-file", {}, r"{in}: no such file"),
]:
    add("bm25-topics", name, Case(BM25_TOPICS, expect, files))
add("bm25-topics", "missing-index", Case("bm25 --index {in}/noindex --topics {in} --output {out}/run.txt",
                                         r"{in}/noindex: no such index", {"in": TOPICS_TSV}))
add("bm25-topics", "existing-output", Case(BM25_TOPICS, r"{out}/run.txt already exists", {"in": TOPICS_TSV},
                                           existing="run.txt"))

add("bm25-topics", "not-an-index", Case("bm25 --index {in}/empty --topics {in}/t.tsv --output {out}/run.txt",
                                        r"{in}/empty holds no Lucene index \(no segments_\* file\)",
                                        {"in/t.tsv": TOPICS_TSV, "in/empty/notes.txt": ""}))
add("bm25-topics", "rebuild-without-corpus", Case("bm25 --index {bm25} --rebuild-index",
                                                  r"--rebuild-index needs --corpus"))
# search, compose and bm25 write their run to stdout with --output - (issue 51); other outputs refuse it
add("encode-topics", "output-dash", Case("encode --topics {in} --output -",
                                         r"output '-': writing to standard output is not supported",
                                         {"in": TOPICS_TSV}))

# --------------------------------------------------------------------------------------------- eval
EVAL = "eval --qrels {qrels} --run a={run} --output {out}/table"
for name, qrels, expect in [
    ("qrels-columns", "1 0 d1 1\n2 0 d2\n", r"{qrels}:2: expected 4 columns"),
    ("qrels-gain", "1 0 d1 1\n2 0 d2 high\n", r"{qrels}:2: relevance 'high' is not an integer"),
    ("qrels-empty", "\n", r"{qrels}: empty qrels file"),
    ("qrels-conflicting-judgments", "1 0 d1 1\n1 0 d1 0\n", r"{qrels}:2: document d1 of query 1 is judged again "
                                                             r"with relevance 0 \(first 1\)"),
]:
    add("eval", name, Case(EVAL, expect, {"qrels": qrels, "run": RUN}))
for name, run, expect in [
    ("run-columns", "1 Q0 d1 1 2.0 t\n2 Q0 d2 1 1.0\n", r"{run}:2: expected 6 columns"),
    ("run-score", "1 Q0 d1 1 2.0 t\n2 Q0 d2 1 high t\n", r"{run}:2: score 'high' is not a number"),
    ("run-nan-score", "1 Q0 d1 1 2.0 t\n2 Q0 d2 1 nan t\n", r"{run}:2: score 'nan' is not finite"),
    ("run-rank", "1 Q0 d1 1 2.0 t\n2 Q0 d2 x 1.0 t\n", r"{run}:2: rank 'x' is not an integer"),
    ("run-duplicate-doc", "1 Q0 d1 1 2.0 t\n1 Q0 d1 2 1.0 t\n", r"{run}:2: document d1 appears twice"),
    ("run-empty", "", r"{run}: empty run file"),
]:
    add("eval", name, Case(EVAL, expect, {"qrels": QRELS, "run": run}))
add("eval", "missing-qrels", Case(EVAL, r"{qrels}: no such qrels file", {"run": RUN}))
add("eval", "missing-run", Case(EVAL, r"{run}: no such run file", {"qrels": QRELS}))
add("eval", "existing-output", Case(EVAL, r"{out}/table.csv already exists", {"qrels": QRELS, "run": RUN},
                                    existing="table.csv"))

# ------------------------------------------------------------------------------------------ compose
COMPOSE = "compose --index {index} --queries {in} --output {out}/run.txt"
for name, line, expect in [
    ("malformed", '{"id": "2", ', r"malformed JSON"),
    ("missing-id", {"query": {"op": "not", "a": "tea", "b": "milk"}}, r"missing or invalid id None"),
    ("duplicate-id", COMPOSITION, r"duplicate id '1'"),
    ("empty-atomic", {"id": "2", "query": {"op": "not", "a": "tea", "b": " "}}, r"query 2.b: empty atomic query"),
    ("unknown-op", {"id": "2", "query": {"op": "xor", "a": "tea", "b": "milk"}}, r"unknown op 'xor'"),
]:
    add("compose-queries", name, Case(COMPOSE, r"{in}:2: .*" + expect, {"in": jsonl(COMPOSITION, line)}))
add("compose-queries", "empty-file", Case(COMPOSE, r"{in}: no compositions", {"in": "\n"}))
add("compose-queries", "missing-file", Case(COMPOSE, r"{in}: no such file"))
add("compose-queries", "missing-index", Case("compose --index {in}/noindex --queries {in} --output {out}/run.txt",
                                             r"{in}/noindex: no such index directory", {"in": jsonl(COMPOSITION)}))
add("compose-queries", "existing-output", Case(COMPOSE, r"{out}/run.txt already exists", {"in": jsonl(COMPOSITION)},
                                               existing="run.txt"))
COMPOSE_TOPICS = "compose --index {index} --topics {in} --output {out}/run.txt"
for name, files, expect in [
    ("malformed", {"in": jsonl(TOPIC, '{"id": "2", ')}, r"{in}:2: malformed JSON"),
    ("duplicate-id", {"in": "1\ttea\n1\tcoffee\n"}, r"{in}:2: duplicate query id '1'"),
    ("empty-file", {"in": ""}, r"{in}: empty file"),
    ("missing-file", {}, r"{in}: no such file"),
]:
    add("compose-topics", name, Case(COMPOSE_TOPICS, expect, files))

# ----------------------------------------------------------------------------------------- longdocs
SEGMENT_CMD = "longdocs segment --corpus {in} --output {out}/segments.jsonl"
for name, lines, expect in [
    ("malformed", jsonl(CORPUS[0], '{"id": "d2", '), r"{in}:2: malformed JSON"),
    ("missing-id", jsonl(CORPUS[0], {"text": "x"}), r"{in}:2: document has no id"),
    ("duplicate-id", jsonl(CORPUS[0], {"id": "d1", "text": "again"}), r"{in}:2: duplicate document id 'd1'"),
    ("separator-in-id", jsonl(CORPUS[0], {"id": "d@@2", "text": "x"}), r"{in}:2: document id 'd@@2' contains"),
    ("empty-file", "", r"{in}: no documents"),
]:
    add("longdocs-segment", name, Case(SEGMENT_CMD, expect, {"in": lines}))
add("longdocs-segment", "missing-file", Case("longdocs segment --corpus {in}/nope.jsonl --output {out}/s.jsonl",
                                             r"{in}/nope.jsonl: no such file", {"in": ""}))
add("longdocs-segment", "existing-output", Case(SEGMENT_CMD, r"{out}/segments.jsonl already exists",
                                                {"in": jsonl(*CORPUS)}, existing="segments.jsonl"))
LD_ENCODE = "longdocs encode --segments {in} --output {out}/encoded"
for name, lines, expect in [
    ("malformed", jsonl(SEGMENT, '{"id": "d2@@0", '), r"{in}:2: malformed JSON"),
    ("missing-id", jsonl(SEGMENT, {"text": "x"}), r"{in}:2: expected"),
    ("duplicate-id", jsonl(SEGMENT, SEGMENT), r"{in}:2: duplicate segment id 'd1@@0'"),
    ("empty-file", "", r"{in}: no segments"),
]:
    add("longdocs-encode", name, Case(LD_ENCODE, expect, {"in": lines}))
add("longdocs-encode", "missing-file", Case(LD_ENCODE, r"{in}: no such file"))
LD_INDEX = "longdocs index --encoded {encoded} --index {out}/idx"
add("longdocs-index", "not-encoded", Case("longdocs index --encoded {in} --index {out}/idx",
                                          r"{in}: not an encoded segments directory", {"in/x": ""}))
BAD_SHARD = jsonl(VECTOR, {"id": "d2", "vector": {"tea": -3}})
add("longdocs-index", "bad-weight", Case(LD_INDEX.replace("{encoded}", "{in}"), r"part-00000.jsonl:2: .*'tea' is -3",
                                         {"in/vectors/part-00000.jsonl": BAD_SHARD,
                                          "in/state.json": json.dumps({"complete": True, "settings": {}})}))
add("longdocs-index", "existing-output", Case(LD_INDEX, r"{out}/idx already exists", existing="idx/"))

add("longdocs-search", "missing-index", Case("longdocs search --index {in}/nope --method score-max --segments 3 "
                                             "--topics {in}/t.tsv --output {out}/run.txt",
                                             r"{in}/nope: no such index directory", {"in/t.tsv": TOPICS_TSV}))

# -------------------------------------------------------------------------------------------- train
TRAIN = "train --train {in} --output {out}/model --quiet"
for name, lines, expect in [
    ("malformed", jsonl(NEVIR_ROW, '{"q1": '), r"{in}:2: malformed JSON"),
    ("missing-field", jsonl(NEVIR_ROW, {"q1": "a", "doc1": "b", "q2": "c"}), r"{in}:2: .*lacks field\(s\) doc2"),
    ("empty-file", "\n", r"{in}: no training rows"),
]:
    add("train", name, Case(TRAIN, expect, {"in": lines}))
add("train", "missing-file", Case(TRAIN, r"{in}: no such file"))
add("train", "bad-dev", Case(TRAIN + " --dev {dev}", r"{dev}:1: malformed JSON",
                             {"in": jsonl(NEVIR_ROW), "dev": "{\n"}))
add("train", "directory", Case("train --train {in}/ --output {out}/model --quiet", r"{in}/?: is a directory",
                               {"in/x.jsonl": jsonl(NEVIR_ROW)}))
add("train", "unloadable-model", Case("train --train {in}/t.jsonl --output {out}/model --quiet --encoder {in}/model",
                                      r"could not load model", {"in/t.jsonl": jsonl(NEVIR_ROW), "in/model/x": ""}))
add("train", "holdout-and-dev", Case(TRAIN + " --holdout 1 --dev {dev}", r"--holdout and --dev do not combine",
                                     {"in": jsonl(NEVIR_ROW, {**NEVIR_ROW, "id": "2"}), "dev": jsonl(NEVIR_ROW)}))
add("train", "existing-output", Case(TRAIN, r"{out}/model already exists", {"in": jsonl(NEVIR_ROW)},
                                     existing="model/"))

# ------------------------------------------------------------------------------ eval.contrastive rows
EXCLUIR = "excluir --corpus {corpus} --queries {in} --work {out}/work --output-dir {out}/tables"
NEVIR = "nevir --data {in} --work {out}/work --output-dir {out}/tables"
for entry, cmd, good in (("contrastive-excluir", EXCLUIR, EXCLUIR_ROW), ("contrastive-nevir", NEVIR, NEVIR_ROW)):
    for name, line, expect in [
        ("malformed", '{"id": "2", ', r"{in}:2: malformed JSON"),
        ("missing-field", {k: v for k, v in good.items() if k != "id"}, r"{in}:2: missing or empty field\(s\) id"),
        ("duplicate-id", good, r"{in}:2: duplicate id '1'"),
    ]:
        add(entry, name, Case(cmd, expect, {"in": jsonl(good, line), "corpus": jsonl(*CORPUS)}, runner="contrastive"))
    add(entry, "empty-file", Case(cmd, r"{in}: no rows", {"in": "", "corpus": jsonl(*CORPUS)}, runner="contrastive"))
    add(entry, "missing-file", Case(cmd, r"{in}: no such file", {"corpus": jsonl(*CORPUS)}, runner="contrastive"))
    table = "selected.csv" if entry.endswith("excluir") else "lambda.md"  # not the first table the run writes
    add(entry, "existing-output", Case(cmd, r"{out}/tables/" + table + " already exists",
                                       {"in": jsonl(good), "corpus": jsonl(*CORPUS)}, existing="tables/" + table,
                                       runner="contrastive"))


# ------------------------------------------------------------------------------------------- running
@pytest.fixture(scope="module")
def shared(tmp_path_factory) -> dict[str, str]:
    """An impact index, a BM25 index and an encoded-segments directory that good inputs would use."""
    from lsr_lucene.index.impact import build_impact_index
    from lsr_lucene.search.bm25 import build_bm25_index

    root = tmp_path_factory.mktemp("shared")
    (root / "vectors.jsonl").write_text(jsonl(VECTOR, {"id": "d2", "vector": {"coffee": 40, "black": 10}}))
    build_impact_index(root / "vectors.jsonl", root / "index", threads=1)
    (root / "corpus.jsonl").write_text(jsonl(*CORPUS))
    build_bm25_index(str(root / "corpus.jsonl"), root / "bm25", threads=1)
    (root / "segments.jsonl").write_text(jsonl(SEGMENT, {"id": "d2@@0", "text": "black coffee beans"}))
    assert cli_main(["longdocs", "encode", "--segments", str(root / "segments.jsonl"), "--output",
                     str(root / "encoded"), "--max-length", "16"]) == 0
    return {"index": str(root / "index"), "bm25": str(root / "bm25"), "encoded": str(root / "encoded")}


def snapshot(folder: Path) -> dict[str, bytes | None]:
    """Every entry under ``folder`` (hidden ones too): file contents, None for directories.

    A resumable command's hidden ``.<output>.partial/`` work directory is left out (it is how the next run
    resumes, not an output); temporaries inside it are not.
    """
    entries = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder)
        if rel.parts[0].endswith(".partial") and ".tmp-" not in path.name:
            continue
        entries[str(rel)] = None if path.is_dir() else path.read_bytes()
    return entries


def run(runner: str, argv: list[str]) -> int:
    if runner == "contrastive":
        from scripts.negation.contrastive import main

        return run_main(main, argv)
    return cli_main(argv)


@pytest.mark.parametrize("name", list(CASES))
def test_bad_input(name, tmp_path, shared, capsys):
    case = CASES[name]
    if case.max_heap is not None:
        from lsr_lucene.jvm import runtime as jvm

        if jvm.autoclass("java.lang.Runtime").getRuntime().maxMemory() > case.max_heap:
            pytest.skip("the JVM's heap is large enough for this document")
    inputs, out = tmp_path / "in-files", tmp_path / "out"
    inputs.mkdir()
    out.mkdir()
    paths = {key: str(inputs / key) for key in ("in", "qrels", "run", "dev", "corpus")}
    paths["tsv"] = str(inputs / "in.tsv")
    paths.update(out=str(out), **shared)
    for key, text in case.files.items():
        path = Path(paths.get(key, inputs / key))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    if case.existing:
        target = out / case.existing.rstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        if case.existing.endswith("/"):
            target.mkdir()
            target = target / "keep.txt"
        target.write_text("keep me\n")
    before = snapshot(out)
    capsys.readouterr()
    code = run(case.runner, [arg.format(**paths) for arg in case.argv.split()])
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert code == 2, err
    assert len(errors) == 1, err
    pattern = case.expect.format(**{k: re.escape(v) for k, v in paths.items()})
    assert re.search(pattern, errors[0]), errors[0]
    assert snapshot(out) == before  # no output, no temporary or lock; an existing output untouched
    leftovers = [p.name for p in Path(paths["in"]).parent.rglob(".*") if ".tmp-" in p.name]
    assert not leftovers


# ------------------------------------------------ racing writers and kill -9 (real processes)
INDEX_COMMAND = [sys.executable, "-m", "lsr_lucene.index"]


def _vectors(folder: Path, ids: list[str]) -> Path:
    folder.mkdir(parents=True)
    with open(folder / "part-00000.jsonl", "w", encoding="utf-8") as out:
        for i, doc_id in enumerate(ids):
            out.write(json.dumps({"id": doc_id, "contents": "", "vector": {"alpha": 10 + i, "beta": 3}}) + "\n")
    return folder


def _indexed_docs(index: Path) -> int:
    return json.loads((index / "lsr_lucene.json").read_text())["documents"]


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def test_two_indexers_on_one_output_one_wins_the_other_fails_clearly(tmp_path):
    small = _vectors(tmp_path / "small", ["a", "b"])
    large = _vectors(tmp_path / "large", ["c", "d", "e"])
    out = tmp_path / "out" / "x"
    runs = [subprocess.Popen([*INDEX_COMMAND, "--input", str(v), "--index", str(out), "--threads", "1"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for v in (small, large)]
    results = [(r.wait(timeout=300), r.stderr.read()) for r in runs]
    codes = sorted(code for code, _ in results)
    assert codes == [0, 2], results
    winner = [i for i, (code, _) in enumerate(results) if code == 0][0]
    loser_err = [line for line in results[1 - winner][1].splitlines() if line.startswith("error:")]
    assert len(loser_err) == 1 and str(out) in loser_err[0], results[1 - winner][1]
    assert ("being written by process" in loser_err[0] or "already exists" in loser_err[0]
            or "created by another process" in loser_err[0])
    assert _indexed_docs(out) == (2, 3)[winner]  # the winner's index, whole
    assert _leftovers(out.parent) == [] or all(".conflict-" in n for n in _leftovers(out.parent))


def test_index_killed_mid_write_leaves_no_output_and_the_rerun_cleans_up(tmp_path):
    vectors = _vectors(tmp_path / "vectors", [f"d{i}" for i in range(50)])
    out = tmp_path / "x"
    run = subprocess.Popen([*INDEX_COMMAND, "--input", str(vectors), "--index", str(out), "--threads", "1"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while not list(tmp_path.glob(".x.tmp-*")) and time.time() < deadline and run.poll() is None:
        time.sleep(0.05)
    run.send_signal(signal.SIGKILL)
    run.wait()
    assert not out.exists()  # killed as soon as its temporary appeared: long before the index is done
    assert list(tmp_path.glob(".x.tmp-*"))  # what SIGKILL leaves: the hidden temporary, and its lock
    rerun = subprocess.run([*INDEX_COMMAND, "--input", str(vectors), "--index", str(out), "--threads", "1"],
                           capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    assert _indexed_docs(out) == 50
    assert [line for line in rerun.stderr.splitlines() if "stale temporary" in line]
    assert _leftovers(tmp_path) == []
