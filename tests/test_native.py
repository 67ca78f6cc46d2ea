"""Native entry points: query specs through Anserini's own SearchCollection, and the Pyserini-style ImpactSearcher.

Anserini's run must equal ours line for line, after the one change every SearchCollection run makes: its
ScoreTiesAdjusterReranker rounds scores to 1e-4 and lowers each further tied score by 1e-6 (in float), which
shows only where tied scores are small (below ~64); :func:`anserini_tie_nudge` applies that rule to our run.
Cranfield (a 120-document subset, splade-tiny at max length 128, 24 topics) carries the plain and signed specs;
its documents get negative weights (``neg_`` terms) by negating splade-tiny's weight of every fourth term (by
hash), since splade-tiny itself has no negative output. The composed specs are the demo compositions; window
clauses run on a small random collection with a positional sidecar.
"""
from __future__ import annotations

import itertools
import json
import random
import subprocess
import zlib
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import numpy as np
import pytest

from lsr_lucene.errors import InputError

CRANFIELD = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "cranfield"
DEMO = Path(__file__).resolve().parents[1] / "lsr_lucene" / "data" / "demo"
needs_cranfield = pytest.mark.skipif(not (CRANFIELD / "corpus.jsonl").exists(),
                                     reason="../shared/data/cranfield not present")
N_DOCS, N_TOPICS = 120, 24


def anserini_tie_nudge(lines: list[str]) -> list[str]:
    """Anserini's ScoreTiesAdjusterReranker on run lines: float score rounded to 1e-4, each tie lowered by
    dup·1e-6 in float arithmetic, printed like Java's %f (half up on the exact binary value)."""
    out, prev_qid, prev, dup = [], None, np.float32(0), 0
    for line in lines:
        qid, q0, doc, rank, score, tag = line.split()
        s = np.float32(round(float(np.float32(float(score))) * 1e4) / 1e4)
        if qid != prev_qid or prev - s > np.float32(1e-4):
            dup = 0
        else:
            dup += 1
            s = np.float32(s - np.float32(np.float32(1e-6) * np.float32(dup)))
        prev_qid, prev = qid, s
        printed = Decimal(float(s)).quantize(Decimal("0.000001"), rounding=ROUND_HALF_UP)
        out.append(f"{qid} {q0} {doc} {rank} {printed} {tag}")
    return out


def search_collection(index: Path, specs: Path, run: Path, hits: int) -> subprocess.CompletedProcess:
    """Anserini's SearchCollection in its own JVM with our hooks: the README's "Use from Anserini" command."""
    from lsr_lucene.jvm.runtime import java_command

    cmd = java_command("io.anserini.search.SearchCollection", "-index", str(index), "-topics", str(specs),
                       "-topicReader", "QuerySpec", "-generator", "QuerySpecQueryGenerator", "-impact",
                       "-hits", str(hits), "-output", str(run), "-runtag", "lsr_lucene", "-threads", "2")
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


def by_query(lines: list[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for line in lines:
        out.setdefault(line.split(" ", 1)[0], []).append(line)
    return out


def negate_some(vector: dict[str, float]) -> dict[str, float]:
    """Every fourth term (by CRC32) negated: stored as a ``neg_`` term."""
    return {t: -w if zlib.crc32(t.encode()) % 4 == 0 else w for t, w in vector.items()}


@pytest.fixture(scope="module")
def cranfield(tmp_path_factory):
    """Cranfield subset: signed document vectors indexed, plain and signed query specs, topics TSV."""
    from lsr_lucene.encode.encoder import SparseEncoder
    from lsr_lucene.index.impact import build_impact_index
    from lsr_lucene.io.corpus import read_corpus
    from lsr_lucene.io.topics import read_topics
    from lsr_lucene.io.vectors import quantise, quantise_query

    root = tmp_path_factory.mktemp("native-cranfield")
    docs = list(itertools.islice(read_corpus(CRANFIELD / "corpus.jsonl"), N_DOCS))
    encoder = SparseEncoder("splade-tiny", max_length=128, threads=1)
    vectors = encoder.encode_documents([d.contents for d in docs])
    (root / "vectors").mkdir()
    with open(root / "vectors" / "part-00000.jsonl", "w") as out:
        for doc, vec in zip(docs, vectors):
            out.write(json.dumps({"id": doc.id, "contents": "", "vector": quantise(negate_some(vec), 100)}) + "\n")
    (root / "vectors" / "metadata.json").write_text(json.dumps({"model": "splade-tiny", "scale": 100}))
    build_impact_index(root / "vectors", root / "index", threads=1)
    topics = dict(itertools.islice(read_topics(CRANFIELD / "topics.tsv").items(), N_TOPICS))
    (root / "topics.tsv").write_text("".join(f"{q}\t{t}\n" for q, t in topics.items()))
    queries = [quantise_query(v, 100) for v in encoder.encode_queries(list(topics.values()))]
    plain = [{"qid": f"p{q}", "terms": v} for q, v in zip(topics, queries)]
    # signed: topic i minus the terms only topic i+1 has (the paper's A - B*), at half weight
    signed = [{"qid": f"s{q}", "terms": {**a, **{t: -(w // 2 or 1) for t, w in b.items() if t not in a}}}
              for q, a, b in zip(topics, queries, queries[1:] + queries[:1])]
    return {"root": root, "index": root / "index", "topics": topics, "plain": plain, "signed": signed}


def write_specs(specs: list[dict], path: Path) -> Path:
    """Specs in qid order, the order Anserini writes its run in (ours follows the file)."""
    path.write_text("".join(json.dumps(s) + "\n" for s in sorted(specs, key=lambda s: s["qid"])))
    return path


@needs_cranfield
def test_anserini_search_collection_equals_our_run_plain_and_signed(cranfield, tmp_path):
    from lsr_lucene.search import cli as search

    specs = write_specs(cranfield["plain"] + cranfield["signed"], tmp_path / "specs.jsonl")
    assert any(w < 0 for s in cranfield["signed"] for w in s["terms"].values())
    assert search.main(["--index", str(cranfield["index"]), "--specs", str(specs), "--output",
                        str(tmp_path / "ours.run"), "--hits", "100", "--threads", "1"]) == 0
    done = search_collection(cranfield["index"], specs, tmp_path / "anserini.run", 100)
    assert done.returncode == 0 and (tmp_path / "anserini.run").exists(), done.stderr[-2000:]
    ours = (tmp_path / "ours.run").read_text().splitlines()
    theirs = (tmp_path / "anserini.run").read_text().splitlines()
    assert len(by_query(ours)) == 2 * N_TOPICS and any(float(line.split()[4]) < 0 for line in ours)
    assert anserini_tie_nudge(ours) == theirs


def test_anserini_search_collection_equals_compose_run(demo, tmp_path):
    """Composed specs (disentangled negation, CPT intersections) written by compose --write-specs."""
    from lsr_lucene.compose import cli as compose

    specs, ours = tmp_path / "composed.jsonl", tmp_path / "compose.run"
    assert compose.main(["--index", str(demo / "index"), "--queries", str(DEMO / "compositions.jsonl"),
                         "--operation", "disentangled", "--and-op", "cpt", "--top-pairs", "3", "--hits", "100",
                         "--threads", "1", "--run-tag", "lsr_lucene", "--output", str(ours),
                         "--write-specs", str(specs)]) == 0
    written = [json.loads(line) for line in specs.read_text().splitlines()]
    assert any(s.get("pairs") for s in written) and any(w < 0 for s in written for w in s["terms"].values())
    done = search_collection(demo / "index", specs, tmp_path / "anserini.run", 100)
    assert done.returncode == 0 and (tmp_path / "anserini.run").exists(), done.stderr[-2000:]
    expected = {q: anserini_tie_nudge(lines) for q, lines in by_query(ours.read_text().splitlines()).items()}
    assert_equal_to_float_precision(by_query((tmp_path / "anserini.run").read_text().splitlines()), expected)


def assert_equal_to_float_precision(anserini: dict[str, list[str]], ours: dict[str, list[str]]) -> None:
    """Anserini's collector sees float scores, ours are exact doubles: CPT pair scores w·sqrt(a·b) summed in
    float may differ in the last float bits (up to ~0.02 at scores of 10^5), and documents whose scores agree to
    that precision may swap places; everything else must be equal."""
    assert anserini.keys() == ours.keys()
    for qid, lines in anserini.items():
        got = [(line.split()[2], float(line.split()[4])) for line in lines]
        want = [(line.split()[2], float(line.split()[4])) for line in ours[qid]]
        assert len(got) == len(want), qid
        want_score = dict(want)
        for (doc, score), (_, expected) in zip(got, want):
            assert score == pytest.approx(expected, rel=2e-7, abs=2e-6), (qid, doc)
            if doc in want_score:
                assert score == pytest.approx(want_score[doc], rel=2e-7, abs=2e-6), (qid, doc)


@needs_cranfield
def test_impact_searcher_hits_equal_search_run(cranfield, tmp_path):
    from lsr_lucene import ImpactSearcher
    from lsr_lucene.search import cli as search

    run, specs = tmp_path / "search.run", tmp_path / "specs.jsonl"
    assert search.main(["--index", str(cranfield["index"]), "--topics", str(cranfield["root"] / "topics.tsv"),
                        "--output", str(run), "--hits", "20", "--threads", "1", "--write-specs", str(specs)]) == 0
    expected: dict[str, list[tuple[str, float]]] = {}
    for line in run.read_text().splitlines():
        qid, _, docid, _, score, _ = line.split()
        expected.setdefault(qid, []).append((docid, float(score)))
    topics = cranfield["topics"]
    assert [json.loads(line) for line in specs.read_text().splitlines()] == \
        [{"qid": s["qid"][1:], "terms": s["terms"]} for s in cranfield["plain"]]  # what the fixture encoded
    with ImpactSearcher(str(cranfield["index"]), threads=1) as searcher:
        batch = searcher.batch_search(list(topics.values()), list(topics), k=20, threads=2)
        assert {q: [(h.docid, h.score) for h in hits] for q, hits in batch.items()} == expected
        first = next(iter(topics))
        hits = searcher.search(topics[first], k=20)
        assert [(h.docid, h.score) for h in hits] == expected[first]
        assert json.loads(hits[0].raw)["id"] == hits[0].docid
        signed = cranfield["signed"][0]
        with_specs = searcher.batch_search_specs(cranfield["signed"][:3], k=10, threads=2)
        assert with_specs[signed["qid"]] == searcher.search_spec(json.dumps(signed), k=10)
        assert any(h.score < 0 for h in searcher.search_spec(signed, k=N_DOCS))


def test_anserini_search_collection_equals_our_run_with_windows(tmp_path):
    """Window clauses (ordered n-grams, unordered windows) over the positional sidecar, with signed terms."""
    from lsr_lucene.index.impact import build_impact_index
    from lsr_lucene.search.spec_searcher import SpecSearcher

    rng = random.Random(5)
    vocab = ["ant", "bee", "cat", "dog", "eel", "fox"]
    (tmp_path / "vectors").mkdir()
    with open(tmp_path / "vectors" / "part-00000.jsonl", "w") as vectors, open(tmp_path / "tokens.jsonl", "w") as toks:
        for i in rng.sample(range(60), 60):
            tokens = [[rng.choice(vocab), rng.choice([0.0, 0.25, 0.5, 1.0, 1.5])] for _ in range(rng.randint(1, 10))]
            vec: dict[str, int] = {}
            for t, w in tokens:
                if w > 0:
                    vec[t] = max(vec.get(t, 0), int(w * 4))
            absent = sorted(set(vocab) - set(vec))
            if absent and rng.random() < 0.3:
                vec[f"neg_{rng.choice(absent)}"] = rng.randint(1, 6)
            vectors.write(json.dumps({"id": f"d{i:02d}", "contents": "", "vector": vec or {"gnu": 1}}) + "\n")
            toks.write(json.dumps({"id": f"d{i:02d}", "tokens": tokens}) + "\n")
    build_impact_index(tmp_path / "vectors", tmp_path / "index", threads=1, positions=tmp_path / "tokens.jsonl")
    specs = []
    for i in range(12):
        a, b, c = rng.sample(vocab, 3)
        window = {"terms": [[a, 1.0], [b, rng.choice([0.5, 1.0, 2.0])]], "ordered": i % 2 == 0,
                  "weight": rng.choice([0.5, 1.0, 3.0])}
        if i % 2:
            window["width"] = rng.randint(2, 5)
        terms = {} if i % 3 == 0 else {a: rng.randint(1, 9), c: -rng.randint(1, 9)}
        specs.append({"qid": f"w{i:02d}", "terms": terms, "windows": [window]})
    path = write_specs(specs, tmp_path / "specs.jsonl")
    with SpecSearcher(tmp_path / "index") as searcher:
        searcher.search_file(path, tmp_path / "ours.run", k=30, threads=1, tag="lsr_lucene")
    done = search_collection(tmp_path / "index", path, tmp_path / "anserini.run", 30)
    assert done.returncode == 0 and (tmp_path / "anserini.run").exists(), done.stderr[-2000:]
    ours = (tmp_path / "ours.run").read_text().splitlines()
    assert len(by_query(ours)) == len(specs) and any(float(line.split()[4]) < 0 for line in ours)
    assert anserini_tie_nudge(ours) == (tmp_path / "anserini.run").read_text().splitlines()


def test_malformed_spec_line_is_one_error_line(demo, tmp_path):
    from lsr_lucene import ImpactSearcher

    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"qid": "1", "terms": {"tea": 120}}\n{"qid": "2", "terms": {"tea": 1}\n')
    done = search_collection(demo / "index", bad, tmp_path / "anserini.run", 10)
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and f"{bad}:2: malformed JSON" in errors[0], done.stderr[-2000:]
    assert not (tmp_path / "anserini.run").exists()
    windows = tmp_path / "windows.jsonl"
    windows.write_text('{"qid": "w", "terms": {"tea": 1}, "windows": [{"terms": ["green", "tea"]}], "rerank": 5}\n')
    done = search_collection(demo / "index", windows, tmp_path / "w.run", 10)
    assert f"error: query w ({windows}:1): window clauses with \"rerank\"" in done.stderr

    from lsr_lucene.compose import cli as compose
    from lsr_lucene.search import cli as search

    with pytest.raises(InputError, match="query 1 uses fusion on a .not. node.*choose --not-op disentangled"):
        compose.main(["--index", str(demo / "index"), "--query", "tea without caffeine", "--operation", "fusion",
                      "--output", str(tmp_path / "f.run"), "--write-specs", str(tmp_path / "f.jsonl")])
    assert not (tmp_path / "f.jsonl").exists() and not (tmp_path / "f.run").exists()
    with pytest.raises(InputError, match=f"{bad}:2: malformed JSON"):
        search.main(["--index", str(demo / "index"), "--specs", str(bad), "--output", str(tmp_path / "r")])
    with ImpactSearcher(str(demo / "index")) as searcher:
        with pytest.raises(InputError, match="query spec: malformed JSON"):
            searcher.search_spec('{"qid": "1", "terms": {"tea": 1}')
        with pytest.raises(InputError, match="query 7: weight of term 'tea' must be a number"):
            searcher.search_spec({"qid": "7", "terms": {"tea": "much"}})
