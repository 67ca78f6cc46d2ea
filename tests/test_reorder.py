"""Docid reordering by recursive graph bisection (BP): the order, the log-gap cost, and reordered indexes that
answer every query (plain, signed, CPT pairs, windows over the positional sidecar) with the same run."""
from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from lsr_lucene.cli import main as lsr_main, run_main
from lsr_lucene.index import impact
from lsr_lucene.index.bisection import DocTermGraph, bisect, default_depth, log_gap_cost, random_order
from lsr_lucene.index.reorder import read_doc_term_graph
from lsr_lucene.index.cli_reorder import main as reorder_main
from lsr_lucene.search.impact import run_specs
from lsr_lucene.search.specs import make_spec, window

TOPICS, TOPIC_TERMS, COMMON = 6, 12, 15


def clustered_docs(n: int, seed: int = 0) -> list[dict]:
    """Documents drawn from a few topics (each with its own terms), in random order: BP has clusters to find."""
    rng = np.random.default_rng(seed)
    docs = []
    for i in range(n):
        topic = int(rng.integers(TOPICS))
        terms = [f"t{topic}w{j}" for j in rng.choice(TOPIC_TERMS, 6, replace=False)]
        terms += [f"c{j}" for j in rng.choice(COMMON, 2, replace=False)]
        vector = {t: int(rng.integers(1, 60)) for t in terms}
        if i % 3 == 0:  # negative weights of a document: neg_<term>
            vector[f"neg_t{(topic + 1) % TOPICS}w{int(rng.integers(TOPIC_TERMS))}"] = int(rng.integers(1, 40))
        tokens = [[t, round(float(rng.uniform(0.1, 3.0)), 3)] for t in rng.permutation(terms)]
        tokens += [[t, round(float(rng.uniform(0.1, 3.0)), 3)] for t in rng.permutation(terms)[:3]]
        docs.append({"id": f"doc{i:04d}", "contents": "", "vector": vector, "tokens": tokens})
    return docs


def write_collection(root: Path, docs: list[dict]) -> tuple[Path, Path]:
    vectors, tokens = root / "vectors", root / "tokens.jsonl"
    vectors.mkdir(parents=True)
    with open(vectors / "part-00000.jsonl", "w") as out:
        for d in docs:
            out.write(json.dumps({"id": d["id"], "contents": "", "vector": d["vector"]}) + "\n")
    with open(tokens, "w") as out:
        for d in docs:
            out.write(json.dumps({"id": d["id"], "tokens": d["tokens"]}) + "\n")
    return vectors, tokens


def queries(docs: list[dict]) -> list[dict]:
    """Plain, signed (negative query weights meet neg_ terms), CPT pair and window (ordered, unordered, rerank)."""
    rng = np.random.default_rng(7)
    specs = []
    for q in range(12):
        topic = q % TOPICS
        terms = {f"t{topic}w{j}": float(rng.integers(1, 9)) for j in rng.choice(TOPIC_TERMS, 3, replace=False)}
        specs.append(make_spec(f"plain{q}", {**terms, f"c{q % COMMON}": 2.0}))
        signed = {**terms, f"t{(topic + 1) % TOPICS}w{q % TOPIC_TERMS}": -3.0, f"c{q % COMMON}": -1.5}
        specs.append(make_spec(f"signed{q}", signed))
        a, b = list(terms)[:2]
        specs.append(make_spec(f"pair{q}", {a: 1.0}, pairs=[[a, b, 2.0]]))
        toks = [t for t, _ in docs[q * 7]["tokens"]]
        specs.append(make_spec(f"win{q}", {toks[0]: 1.0}, windows=[window(toks[:2]), window(toks[1:4], False, 5)]))
        specs.append(make_spec(f"rerank{q}", terms, windows=[window(toks[:2], weight=2.0)], rerank=20))
    return specs


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A natural index with its positional sidecar, its BP reordering, and a BP index built in one go."""
    root = tmp_path_factory.mktemp("reorder")
    docs = clustered_docs(320)
    vectors, tokens = write_collection(root, docs)
    natural = root / "natural"
    impact.build_impact_index(vectors, natural, threads=1, positions=tokens)
    reordered = root / "bp"
    meta = impact.reorder_impact_index(natural, reordered, seed=3)
    built_bp = root / "built-bp"
    built_meta = impact.build_impact_index(vectors, built_bp, threads=1, positions=tokens, reorder="bp", seed=3)
    return {"root": root, "docs": docs, "natural": natural, "bp": reordered, "meta": meta, "built": built_bp,
            "built_meta": built_meta}


def lucene_ids(index: Path, field: str = "id") -> list[str]:
    """External ids in Lucene docid order."""
    from lsr_lucene.jvm import runtime as jvm

    directory = jvm.autoclass("org.apache.lucene.store.FSDirectory").open(
        jvm.autoclass("java.nio.file.Paths").get(str(index)))
    reader = jvm.autoclass("org.apache.lucene.index.DirectoryReader").open(directory)
    try:
        return list(jvm.autoclass("io.github.lsrlucene.index.DocIds").read(reader, field))
    finally:
        reader.close()
        directory.close()


# ------------------------------------------------------------------------------------------------ the order

def graph_of(docs: list[dict]) -> DocTermGraph:
    vocab: dict[str, int] = {}
    return DocTermGraph.from_doc_terms([sorted(vocab.setdefault(t, len(vocab)) for t in d["vector"]) for d in docs])


def test_bp_order_is_a_deterministic_permutation_that_beats_a_random_order():
    graph = graph_of(clustered_docs(600, seed=1))
    order = bisect(graph, seed=5, progress=False)
    assert order.dtype == np.int32 and sorted(order.tolist()) == list(range(600))
    assert np.array_equal(order, bisect(graph, seed=5, progress=False))
    assert not np.array_equal(order, bisect(graph, seed=6, progress=False))
    random_cost = log_gap_cost(graph, random_order(600, 0))
    assert log_gap_cost(graph, order) < 0.85 * random_cost
    assert log_gap_cost(graph, bisect(graph, progress=False)) < 0.85 * random_cost  # from the input order


def test_bp_order_does_not_depend_on_the_threads():
    # 40,000 documents: the top levels compute gains in parallel chunks and bisect both halves at once
    rng = np.random.default_rng(3)
    topic = rng.integers(50, size=40_000)
    doc_terms = [sorted({int(t) * 20 + int(j) for j in rng.choice(20, 5, replace=False)} | {1000 + int(rng.integers(30))})
                 for t in topic]
    graph = DocTermGraph.from_doc_terms(doc_terms)
    one = bisect(graph, seed=1, threads=1, progress=False)
    assert np.array_equal(one, bisect(graph, seed=1, threads=2, progress=False))
    assert log_gap_cost(graph, one) < 0.85 * log_gap_cost(graph, random_order(40_000, 0))


def test_log_gap_cost_by_hand():
    # term 0 in docs 0, 2, 3 (gaps 1, 2, 1), term 1 in doc 1 (gap 2): log2 of 1, 2, 1, 2 over 4 postings
    graph = DocTermGraph.from_doc_terms([[0], [1], [0], [0]])
    assert log_gap_cost(graph) == pytest.approx(0.5)
    # order 3, 2, 1, 0: term 0 at new ids 0, 1, 3 (gaps 1, 1, 2), term 1 at new id 2 (gap 3)
    assert log_gap_cost(graph, np.array([3, 2, 1, 0], dtype=np.int32)) == pytest.approx((1 + math.log2(3)) / 4)


def test_small_inputs_and_default_depth():
    assert default_depth(1) == 0 and default_depth(2) == 1 and default_depth(64) == 1 and default_depth(1 << 20) == 15
    assert bisect(DocTermGraph.from_doc_terms([[0]]), progress=False).tolist() == [0]
    two = DocTermGraph.from_doc_terms([[0, 1], [2]])
    assert sorted(bisect(two, progress=False).tolist()) == [0, 1]
    empty = DocTermGraph.from_doc_terms([[], [], []], num_terms=0)
    assert sorted(bisect(empty, depth=2, progress=False).tolist()) == [0, 1, 2]


# ------------------------------------------------------------------------------------------------ the index

def test_reordered_index_answers_every_query_with_the_same_run(built, tmp_path):
    specs = queries(built["docs"])
    for hits in (5, 1000):  # top 5: block-max pruning at work; 1000: every matching document
        runs = {}
        for name in ("natural", "bp", "built"):
            out = tmp_path / f"{name}-{hits}.run"
            assert run_specs(built[name], specs, out, hits=hits, threads=1, tag="t") == []
            runs[name] = out.read_text()
        assert len(runs["natural"].splitlines()) >= min(hits, 20) * len(specs)
        assert runs["bp"] == runs["natural"]
        assert runs["built"] == runs["natural"]


def lucene_dir(path: Path):
    """An FSDirectory (typed as Directory, for Java arrays of directories)."""
    from jnius import cast

    from lsr_lucene.jvm import runtime as jvm

    fs = jvm.autoclass("org.apache.lucene.store.FSDirectory").open(jvm.autoclass("java.nio.file.Paths").get(str(path)))
    return cast("org.apache.lucene.store.Directory", fs)


def test_an_index_of_several_segments_is_merged_first(built, tmp_path):
    from lsr_lucene.jvm import runtime as jvm

    halves = []
    for i, part in enumerate((built["docs"][::2], built["docs"][1::2])):
        vectors, _ = write_collection(tmp_path / f"half{i}", part)
        impact.build_impact_index(vectors, tmp_path / f"half{i}" / "index", threads=1)
        halves.append(lucene_dir(tmp_path / f"half{i}" / "index"))
    several = tmp_path / "several"  # the two halves' segments side by side in one index
    writer = jvm.autoclass("org.apache.lucene.index.IndexWriter")(
        lucene_dir(several), jvm.autoclass("org.apache.lucene.index.IndexWriterConfig")())
    writer.addIndexes(*halves)
    writer.close()
    assert read_doc_term_graph(several, tmp_path)[1] == 2
    info = impact.reorder_impact_index(several, tmp_path / "several-bp", seed=3)["reorder"]
    assert read_doc_term_graph(several, tmp_path)[1] == 2  # the input is left as it was
    graph, segments = read_doc_term_graph(tmp_path / "several-bp", tmp_path)
    assert segments == 1 and graph.num_postings == info["postings"]
    assert info["log_gap_bits_after"] < 0.85 * info["log_gap_bits_random"]
    specs = [s for s in queries(built["docs"]) if not s.get("windows")]
    for name, index in (("natural", built["natural"]), ("several", tmp_path / "several-bp")):
        assert run_specs(index, specs, tmp_path / f"{name}.run", hits=50, threads=1, tag="t") == []
    assert (tmp_path / "several.run").read_text() == (tmp_path / "natural.run").read_text()


def test_docids_are_reordered_and_the_sidecar_follows(built):
    natural, reordered = lucene_ids(built["natural"]), lucene_ids(built["bp"])
    assert sorted(natural) == sorted(reordered) and natural != reordered
    assert lucene_ids(built["bp"] / "positions", "positions_id") == reordered  # positional field aligned docid by docid
    assert lucene_ids(built["built"]) == reordered  # the same seed gives the same order, built or reordered


def test_reordering_lowers_the_log_gap_cost_and_is_recorded(built, tmp_path):
    info = built["meta"]["reorder"]
    assert info["method"] == "bp" and info["seed"] == 3 and info["documents"] == 320 and info["positions"]
    assert info["log_gap_bits_after"] < 0.85 * info["log_gap_bits_random"]
    graph, segments = read_doc_term_graph(built["bp"], tmp_path)
    assert segments == 1 and log_gap_cost(graph) == pytest.approx(info["log_gap_bits_after"], abs=1e-3)
    stored = json.loads((built["bp"] / "lsr_lucene.json").read_text())
    assert stored["reorder"]["bp_seconds"] >= 0 and stored["encoder"] == built["meta"]["encoder"]
    assert built["built_meta"]["reorder"]["log_gap_bits_after"] == pytest.approx(info["log_gap_bits_after"])


def test_reorder_command_and_its_errors(built, tmp_path, capsys):
    out = tmp_path / "again"
    assert run_main(reorder_main, ["--index", str(built["bp"]), "--output", str(out), "--seed", "3"]) == 0
    assert "log-gap" in capsys.readouterr().out
    cases = {
        "missing": ["--index", str(tmp_path / "nothing"), "--output", str(tmp_path / "o1")],
        "no index": ["--index", str(built["root"] / "vectors"), "--output", str(tmp_path / "o2")],
        "exists": ["--index", str(built["bp"]), "--output", str(out)],
        "no contents": ["--index", str(built["natural"] / "positions"), "--output", str(tmp_path / "o3")],
    }
    messages = {"missing": "no such index", "no index": "holds no Lucene index", "exists": "already exists",
                "no contents": "no postings in field 'contents'"}
    for name, argv in cases.items():
        assert run_main(reorder_main, argv) == 2, name
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("error: ") and messages[name] in err[0], (name, err)
    for leftover in ("o1", "o2", "o3"):
        assert not (tmp_path / leftover).exists()


def test_unknown_folder_inside_an_index_is_refused(built, tmp_path, capsys):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(built["natural"], copy)
    (copy / "extra").mkdir()
    assert run_main(reorder_main, ["--index", str(copy), "--output", str(tmp_path / "out")]) == 2
    assert "unknown folder" in capsys.readouterr().err


def test_reorder_verb_is_wired_both_ways(capsys):
    with pytest.raises(SystemExit) as exc:
        lsr_main(["reorder", "--help"])
    assert exc.value.code == 0 and "--seed" in capsys.readouterr().out
    done = subprocess.run([sys.executable, "-m", "lsr_lucene.index.cli_reorder", "--help"], capture_output=True, text=True)
    assert done.returncode == 0 and "--output" in done.stdout
    with pytest.raises(SystemExit):
        lsr_main(["index", "--input", "x", "--index", "y", "--seed", "1"])  # --seed needs --reorder
    assert "--seed needs --reorder" in capsys.readouterr().err


def postings(index: Path) -> list[tuple[int, str, int, int]]:
    """(leaf, term, docid, impact) of every posting of ``contents``, in Lucene's order."""
    from lsr_lucene.jvm import runtime as jvm

    directory = lucene_dir(index)
    reader = jvm.autoclass("org.apache.lucene.index.DirectoryReader").open(directory)
    end = jvm.autoclass("org.apache.lucene.search.DocIdSetIterator").NO_MORE_DOCS
    out = []
    try:
        for leaf_no, context in enumerate(reader.leaves().toArray()):
            terms = context.reader().terms("contents").iterator()
            while (term := terms.next()) is not None:
                docs = terms.postings(None, jvm.autoclass("org.apache.lucene.index.PostingsEnum").FREQS)
                while (d := docs.nextDoc()) != end:
                    out.append((leaf_no, term.utf8ToString(), d, docs.freq()))
    finally:
        reader.close()
        directory.close()
    return out


def test_two_threaded_bp_builds_with_one_seed_are_identical(tmp_path):
    """Docids follow the input for any --threads, so BP from a seed gives the same index every time."""
    vectors, _ = write_collection(tmp_path, clustered_docs(1500, seed=2))
    builds = []
    for name in ("one", "two"):
        impact.build_impact_index(vectors, tmp_path / name, threads=2, reorder="bp", seed=3)
        builds.append((lucene_ids(tmp_path / name), postings(tmp_path / name)))
    assert builds[0] == builds[1]
    assert sorted(builds[0][0]) == [f"doc{i:04d}" for i in range(1500)]
    assert builds[0][0] != [f"doc{i:04d}" for i in range(1500)]  # BP did reorder


def test_positional_sidecar_from_a_shuffled_token_file_with_long_lines(built, tmp_path):
    """Token lines are read back by offset in docid order: a shuffled file, CRLF ends and a line longer than the
    reader's 64 KiB window give the sidecar (and window runs) of the file in index order."""
    from lsr_lucene.index.positional import build_positional_field

    docs = built["docs"]
    rng = np.random.default_rng(11)
    lines = [json.dumps({"id": d["id"], "tokens": d["tokens"], "pad": "x" * (200_000 if i == 5 else 0)})
             for i, d in enumerate(docs)]
    shuffled = tmp_path / "tokens.jsonl"
    shuffled.write_bytes("".join(lines[i] + ("\r\n" if i % 2 else "\n") for i in rng.permutation(len(lines)))
                         .encode() + b'{"id": "not-in-index", "tokens": []}')
    index = tmp_path / "index"
    impact.build_impact_index(built["root"] / "vectors", index, threads=1)
    assert build_positional_field(index, shuffled) == {"documents": len(docs), "with_tokens": len(docs),
                                                       "unknown_ids": 1}
    specs = [s for s in queries(docs) if s["qid"].startswith(("win", "rerank"))]
    runs = []
    for name, where in (("sidecar", index), ("natural", built["natural"])):
        assert run_specs(where, specs, tmp_path / f"{name}.run", hits=100, threads=1, tag="t") == []
        runs.append((tmp_path / f"{name}.run").read_text())
    assert runs[0] == runs[1] and runs[0]
    dup = tmp_path / "dup.jsonl"
    dup.write_text(lines[0] + "\n\n" + lines[0] + "\n")
    from lsr_lucene.errors import InputError
    with pytest.raises(InputError, match=r"dup.jsonl:3: duplicate id 'doc0000'"):
        build_positional_field(index, dup)
