"""Issue 68 item 1: the negated query's hot path reads what it needs in bulk, with the same answers as before: a
short-term B's containment from one Lucene query over the text sidecar equals the brute-force analysis of each
stored text, the candidates' texts read in one JVM call equal the per-document reads, and an index without the
sidecar falls back to the texts (same rankings)."""
from __future__ import annotations

import shutil

import pytest

from lsr_lucene.search.text_filter import any_of, texts_containing

ITEMS = (["python"], ["caffeine", "milk"], ["green tea"], ["the"], ["lava", "of the"], ["Iceland"])


def test_any_of_keeps_the_items_with_an_indexed_word():
    assert any_of(["the", "of"]) is None
    assert any_of(["the", "milk"]) == {"text": "milk"}
    assert any_of(["milk", '"green tea"']) == {"or": [{"text": "milk"}, {"text": '"green tea"'}]}
    assert texts_containing(["Green teas and milk", None, ""], ["the", "green tea"]) == [True, False, False]


@pytest.mark.parametrize("items", ITEMS)
def test_the_sidecar_answers_containment_as_the_texts_do(demo, items):
    from lsr_lucene.compose.backends import ExactBackend, LuceneBackend

    lucene = LuceneBackend(demo / "index", 1)
    try:
        docs = lucene.searcher.docids + ["not-a-document"]
        texts = lucene.texts(docs)
        expected = texts_containing([texts.get(d) for d in docs], items)
        assert lucene.containing(items, docs) == expected
        assert ExactBackend(demo / "vectors").containing(items, docs) == expected
        assert any(expected) or items in (["the"],)  # the cases are not all empty
    finally:
        lucene.close()


def test_texts_read_in_one_call_are_the_stored_contents(demo):
    from lsr_lucene.search.impact_searcher import ImpactSearcher

    with ImpactSearcher(demo / "index") as plain:
        searcher = plain.spec_searcher
        ids = list(reversed(searcher.docids))[:50] + ["unknown"]
        got = searcher.contents(ids)
        assert "unknown" not in got and len(got) == 50
        assert all(got[d] and got[d] == plain.doc(d).contents() for d in got)


def test_an_index_without_the_sidecar_ranks_natural_language_exclusions_the_same(demo, tmp_path):
    from lsr_lucene.compose import ComposeSearcher

    index = tmp_path / "index"
    shutil.copytree(demo / "index", index)
    shutil.rmtree(index / "text")
    queries = ["programming languages but not python", "tea without caffeine", "volcanoes but not lava"]
    with pytest.warns(UserWarning), ComposeSearcher(index) as bare, ComposeSearcher(demo / "index") as built:
        for q in queries:
            assert [(h.docid, h.score) for h in bare.search(q, 20)] == [(h.docid, h.score) for h in built.search(q, 20)]
