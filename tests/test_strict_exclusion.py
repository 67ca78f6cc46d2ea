"""Issue 65 item 1: explicit exclusions (``-word``, ``NOT word``, ``-"a phrase"``, ``NOT (a OR b)``) remove every
document whose text contains them, inside the search: each run equals a brute-force text filter over the stored
texts applied to the unfiltered exact ranking, at every k (one larger than what remains), through every path."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from lsr_lucene.compose.compositions import parse_topics
from lsr_lucene.errors import InputError
from lsr_lucene.search.text_filter import analysed_terms, expression_matches, text_contains

QUERIES = {
    "py": "programming languages -python",
    "tea": "tea NOT (caffeine OR milk)",
    "phrase": 'tea -"green tea"',
    "volc": "volcanoes -Iceland -lava",
    "or": "coffee OR tea -milk",
    "and": "cats AND dogs -training",
}
DEMO = Path(__file__).resolve().parents[1] / "lsr_lucene" / "data" / "demo"
KS = (3, 10, 400)  # 400: more than the demo's 298 documents, so more than what remains


class BruteForceFilter:
    """A backend whose searches run unfiltered, every match, and then drop the documents whose stored text the
    query's filter expression matches (Python over the stored texts): each leg of a query searched on the collection
    without the removed documents, by brute force."""

    def __init__(self, backend):
        self.inner = backend
        self.everything = 10 ** 6

    def search(self, spec, k):
        expression = spec.get("exclude")
        hits = self.inner.search({x: v for x, v in spec.items() if x != "exclude"}, self.everything)
        if expression:
            texts = self.inner.texts([d for d, _ in hits])
            hits = [(d, s) for d, s in hits if not expression_matches(texts[d], expression)]
        return hits[:k]

    def search_many(self, specs, k, threads=None):
        return {s["qid"]: self.search(s, k) for s in specs}

    def score(self, spec, docids):
        return self.inner.score({x: v for x, v in spec.items() if x != "exclude"}, docids)

    def excluded(self, expression, docids):
        texts = self.inner.texts(list(docids))
        return [expression_matches(texts[d], expression) for d in docids]

    def __getattr__(self, name):  # known, texts
        return getattr(self.inner, name)


def brute_force(searcher, comps, k):
    """Per query: its ranking (the plan searched, its legs fused) on the collection without the documents whose stored
    text its filter matches, found by brute force (:class:`BruteForceFilter`), cut at k."""
    from lsr_lucene.compose.execute import execute

    qids = [c.qid for c in comps]
    return execute(qids, searcher.plans(comps), BruteForceFilter(searcher.backend), searcher.scale, k, searcher.depth,
                   exclude={c.qid: c.exclude for c in comps})


def test_the_analyser_folds_case_plurals_and_possessives():
    assert analysed_terms("The Dogs' owners are PROGRAMMING Python's amplifiers") == \
        ["dog", "owner", "program", "python", "amplifi"]
    assert text_contains("Pythons and snakes", "python") and text_contains("a DOG's life", "dogs")
    assert text_contains("the hot dogs", '"hot dog"') and not text_contains("dogs are hot", '"hot dogs"')
    assert text_contains("hot and dogs", "hot the dogs")  # a stop word keeps its position, as PhraseQuery reads it
    with pytest.raises(InputError, match="stop words"):
        text_contains("anything", "the")


def test_every_run_is_the_brute_force_filter_at_every_k(demo):
    from lsr_lucene.compose import ComposeSearcher
    from lsr_lucene.compose.execute import execute

    comps = parse_topics(QUERIES)
    assert all(c.exclude for c in comps)
    with ComposeSearcher(demo / "index") as searcher:
        removed = {c.qid: searcher.backend.excluded_count(c.exclude) for c in comps}
        assert all(0 < n < 298 for n in removed.values()), removed
        for k in KS:
            want = brute_force(searcher, comps, k)
            for threads in (1, 2):  # in memory, and one JVM batch through a run file
                got = searcher.rank(comps, searcher.plans(comps), k, threads=threads)
                assert got == want, (k, threads)
            # the filter travels with the plans: compose + execute without ComposeSearcher drop nothing
            assert execute([c.qid for c in comps], searcher.plans(comps), searcher.backend, searcher.scale, k) == want
        assert len(got["py"]) < 400 and len(got["py"]) == len(want["py"])  # everything that remains, no more
        texts = searcher.backend.texts([d for d, _ in got["py"]])
        assert not any(text_contains(t, "python") for t in texts.values())
        hits = searcher.search(QUERIES["tea"], k=10)
        assert [(h.docid, round(h.score, 6)) for h in hits] == [(d, round(s, 6)) for d, s in
                                                                brute_force(searcher, comps[1:2], 10)["tea"]]


def test_the_exact_in_memory_backend_filters_the_same(demo):
    from lsr_lucene.compose import ComposeSearcher

    comps = parse_topics(QUERIES)
    with ComposeSearcher(demo / "index") as lucene, ComposeSearcher(demo / "index", vectors=demo / "vectors") as exact:
        assert exact.rank(comps, exact.plans(comps), 10) == brute_force(exact, comps, 10)
        assert {q: [d for d, _ in h] for q, h in exact.rank(comps, exact.plans(comps), 10).items()} == \
            {q: [d for d, _ in h] for q, h in lucene.rank(comps, lucene.plans(comps), 10).items()}


def test_an_index_without_the_text_field_says_what_to_run(demo, tmp_path, capsys):
    from lsr_lucene.compose import ComposeSearcher
    from lsr_lucene.index.cli import main as index_main

    index = tmp_path / "index"
    shutil.copytree(demo / "index", index)
    shutil.rmtree(index / "text")
    with ComposeSearcher(index) as searcher:
        assert searcher.search("programming languages", k=3)  # no exclusion: no text field needed
        with pytest.raises(InputError) as err:
            searcher.search("programming languages -python", k=3)
    message = str(err.value)
    assert len(message.splitlines()) == 1 and f"lsr-lucene index --index {index} --text" in message
    assert index_main(["--index", str(index), "--text"]) == 0
    assert "text field (explicit exclusions): 298 of 298 documents" in capsys.readouterr().out
    with ComposeSearcher(index) as searcher, ComposeSearcher(demo / "index") as built:
        assert [h.docid for h in searcher.search(QUERIES["py"], k=5)] == [h.docid for h in built.search(QUERIES["py"])][:5]


@pytest.fixture(scope="module")
def worded(tmp_path_factory):
    """4,000 synthetic documents whose text is their terms as words (plus a word of no vector): t1, in nearly half
    of them with impacts up to 300, fills the unfiltered top k; a dense-impacts sidecar takes the frequent terms."""
    import json

    import numpy as np

    from lsr_lucene.index.dense_impacts import build_dense_impacts
    from lsr_lucene.index.impact import build_impact_index

    rng = np.random.default_rng(65)
    rows, texts = [], []
    for _ in range(4000):
        row = {f"t{j}": int(rng.integers(1, 300 if j == 1 else 8)) for j in range(12) if rng.random() < 0.9 / (1 + j)}
        row = row or {"t11": 1}
        rows.append(row)
        texts.append(" ".join(list(row) + (["hot dogs"] if rng.random() < 0.3 else ["dogs hot"])))
    root = tmp_path_factory.mktemp("worded")
    (root / "vectors").mkdir()
    (root / "vectors" / "part-00000.jsonl").write_text("".join(
        json.dumps({"id": f"d{i:05d}", "contents": t, "vector": r}) + "\n" for i, (t, r) in enumerate(zip(texts, rows))))
    build_impact_index(root / "vectors", root / "index", threads=1)
    build_dense_impacts(root / "index", 0.2)
    return root, {f"d{i:05d}": t for i, t in enumerate(texts)}


@pytest.mark.parametrize("terms, pairs", [
    ({"t1": 3, "t2": 1, "t5": 2}, []),  # integral: the plain query's exact float path
    ({"t1": 2.5, "t3": 0.75, "t0": 1.25}, []),  # float first phase and a rescored band
    ({"t1": 2, "t0": -1, "t4": 1}, []),  # signed: the shifted query
    ({"t1": 1, "t2": 1}, [["t1", "t3", 2.0]]),  # a CPT pair
])
def test_the_filter_keeps_the_exact_top_k_when_the_excluded_documents_fill_the_top(worded, terms, pairs):
    from lsr_lucene.compose.backends import ExactBackend
    from lsr_lucene.search.spec_searcher import SpecSearcher

    root, texts = worded
    spec = {"qid": "q", "terms": terms, **({"pairs": pairs} if pairs else {})}
    every = ExactBackend(root / "vectors").search(spec, 10_000)
    for exclude in ({"text": "t1"}, {"text": "hot dogs"}, {"or": [{"text": "t1"}, {"text": "t2"}]}):
        kept = [(d, s) for d, s in every if not expression_matches(texts[d], exclude)]
        assert len(kept) < len(every) and {d for d, _ in every[:10]} - {d for d, _ in kept}  # may leave nothing
        with SpecSearcher(str(root / "index")) as searcher:
            for k in (1, 10, 100, len(kept) + 50):
                got = [(d, float(s)) for d, s in searcher.search({**spec, "exclude": exclude}, k)]
                assert [d for d, _ in got] == [d for d, _ in kept[:k]], (exclude, k)
                assert [s for _, s in got] == pytest.approx([s for _, s in kept[:k]], abs=5e-7)  # as the run writes


def test_explain_says_how_many_were_removed_and_which_of_the_top(demo, capsys):
    """Issue 65 item 5: compose --explain names the filter, how many documents it removed, and per would-be top
    document whether it was removed or where it ranks now."""
    from lsr_lucene.compose.cli import main

    assert main(["--index", str(demo / "index"), "--query", QUERIES["py"], "--hits", "5", "--explain",
                 "--output", "-"]) == 0
    out = capsys.readouterr()
    text = out.out + out.err
    with_python = sum(text_contains(t, "python") for t in _corpus_texts())
    assert f"strict filter (explicit syntax): removed the {with_python} documents whose text matches python" in text
    assert "the top 10 of 'programming languages' alone, without the filter:" in text
    assert re.search(r"\n    \d+\. \S+ [\d.]+: removed \(its text matches\)\n", text) and ": kept, rank 1\n" in text


def _corpus_texts() -> list[str]:
    import json

    lines = (DEMO / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    return [" ".join(str(v) for k, v in json.loads(line).items() if k not in ("_id", "id")) for line in lines]


def test_written_specs_carry_the_filter_and_search_as_compose(demo, tmp_path):
    """compose --write-specs (a vector operation on not nodes: a fused one has no spec) writes the filter as
    "exclude"; search --specs then gives compose's run."""
    from lsr_lucene.compose.cli import main as compose_main
    from lsr_lucene.io.runs import read_hits
    from lsr_lucene.search.cli import main as search_main
    from lsr_lucene.search.specs import read_query_specs

    topics = tmp_path / "topics.tsv"
    topics.write_text("".join(f"{q}\t{t}\n" for q, t in QUERIES.items()))
    assert compose_main(["--index", str(demo / "index"), "--topics", str(topics), "--hits", "10",
                         "--not-op", "disentangled", "--write-specs", str(tmp_path / "specs.jsonl"),
                         "--output", str(tmp_path / "c.run")]) == 0
    specs = read_query_specs(tmp_path / "specs.jsonl")
    assert {s["qid"]: s["exclude"] for s in specs} == {c.qid: c.exclude for c in parse_topics(QUERIES)}
    assert search_main(["--index", str(demo / "index"), "--specs", str(tmp_path / "specs.jsonl"), "--hits", "10",
                        "--output", str(tmp_path / "s.run")]) == 0
    assert read_hits(tmp_path / "s.run") == read_hits(tmp_path / "c.run")


def test_reorder_carries_the_text_field(demo, tmp_path):
    """A BP-reordered index has its text field rebuilt in the new docid order: the same filtered hits."""
    from lsr_lucene.compose import ComposeSearcher
    from lsr_lucene.index.impact import reorder_impact_index

    reorder_impact_index(demo / "index", tmp_path / "bp", seed=1)
    assert (tmp_path / "bp" / "text").is_dir()
    comps = parse_topics(QUERIES)
    with ComposeSearcher(demo / "index") as natural, ComposeSearcher(tmp_path / "bp") as reordered:
        assert reordered.rank(comps, reordered.plans(comps), 10) == natural.rank(comps, natural.plans(comps), 10)


def test_a_composition_line_gives_the_filter_as_exclude(demo, tmp_path):
    """compositions JSONL and ComposeSearcher dicts take "exclude" (a word, a list, or a filter): the syntax's run."""
    import json

    from lsr_lucene.compose import ComposeSearcher
    from lsr_lucene.compose.compositions import read_compositions

    lines = [{"id": "tea", "query": "tea", "exclude": ["caffeine", "milk"]},
             {"id": "phrase", "query": "tea", "exclude": {"text": "green tea"}}]
    path = tmp_path / "c.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    comps = read_compositions(path)
    assert [c.exclude for c in comps] == [c.exclude for c in parse_topics({"tea": QUERIES["tea"],
                                                                            "phrase": QUERIES["phrase"]})]
    with ComposeSearcher(demo / "index") as searcher:
        assert [h.docid for h in searcher.search({"query": {"op": "not", "a": "tea", "b": "caffeine"},
                                                  "exclude": "caffeine"}, k=5)] == \
            [h.docid for h in searcher.search("tea -caffeine", k=5)]
        path.write_text(json.dumps({"id": "x", "query": "tea", "exclude": {"near": "milk"}}) + "\n")
        with pytest.raises(InputError, match=r"c.jsonl:1: query x: \"exclude\""):
            read_compositions(path)
