"""QUEST-style loader: template queries with marked atomic parts -> trees, collection files, NDCG@10 / R@100."""
from __future__ import annotations

import json

import pytest

from lsr_lucene.compose.compositions import read_compositions
from lsr_lucene.compose.tree import Node
from lsr_lucene.errors import InputError
from scripts.negation.quest_collection import convert, evaluate_runs, templates_of
from scripts.negation.quest_queries import build_tree, read_quest_documents, read_quest_queries, template_tree

ROWS = [
    {"query": "Birds of Colombia that aren't from Venezuela", "docs": ["Andean condor", "Toucan"],
     "original_query": "<mark>Birds of Colombia</mark> that are not <mark>Birds of Venezuela</mark>",
     "metadata": {"template": "_ that are not _", "domain": "animals"}},
    {"query": "Ming dynasty novels or Chinese historical novels", "docs": ["Water Margin"],
     "original_query": "<mark>Ming dynasty novels</mark> or <mark>Chinese historical novels</mark>",
     "metadata": {"template": "_ or _", "domain": "books"}},
    {"query": "Flora of Chile that are trees but not shrubs", "docs": ["Monkey puzzle", "Missing title"],
     "original_query": "<mark>Flora of Chile</mark> that are also <mark>Trees</mark> but not <mark>Shrubs</mark>",
     "metadata": {"template": "_ that are also _ but not _", "domain": "plants"}},
    {"query": "Documentary films about education", "docs": ["Waiting for Superman"],
     "original_query": "<mark>Documentary films about education</mark>", "metadata": {"template": "_"}},
]
DOCS = [("Andean condor", "A large bird of the Andes."), ("Toucan", "Colourful bill."),
        ("Water Margin", "A Ming novel."), ("Monkey puzzle", "A Chilean tree."),
        ("Waiting for Superman", "A documentary."), ("Hummingbird", "Small bird.")]


@pytest.fixture()
def quest_files(tmp_path):
    queries = tmp_path / "test.jsonl"
    queries.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    documents = tmp_path / "documents.jsonl"
    documents.write_text("".join(json.dumps({"title": t, "text": x}) + "\n" for t, x in DOCS))
    return queries, documents


def test_templates_make_trees():
    assert build_tree("_ or _ or _", ["a", "b", "c"]) == Node("or", Node("or", "a", "b"), "c")
    assert build_tree("_ that are also both _ and _", ["a", "b", "c"]) == \
        Node("and", Node("and", "a", "b"), "c")
    assert build_tree("_ that are also _ but not _", ["a", "b", "c"]) == \
        Node("not", Node("and", "a", "b"), "c")
    with pytest.raises(InputError, match="needs 2 non-empty atomic parts"):
        build_tree("_ that are not _", ["a"])
    with pytest.raises(InputError, match="unknown QUEST template"):
        build_tree("_ xor _", ["a", "b"])
    assert template_tree("Birds of Peru that are also Birds of Chile") == \
        ("_ that are also _", Node("and", "Birds of Peru", "Birds of Chile"))
    assert template_tree("Trees of Chile") == ("_", "Trees of Chile")


def test_convert_writes_a_collection(quest_files, tmp_path):
    queries, documents = quest_files
    loaded = read_quest_queries(queries)
    assert loaded[0].tree == Node("not", "Birds of Colombia", "Birds of Venezuela")
    assert loaded[0].text == "Birds of Colombia that are not Birds of Venezuela"
    counts = convert(loaded, read_quest_documents(documents), tmp_path / "col")
    assert counts == {"queries": 4, "documents": 6, "relevant titles not in corpus": 1}
    comps = read_compositions(tmp_path / "col" / "compositions.jsonl")
    assert comps[2].tree == Node("not", Node("and", "Flora of Chile", "Trees"), "Shrubs")
    qrels = (tmp_path / "col" / "qrels.txt").read_text().split("\n")
    assert "1 0 d1 1" in qrels and "3 0 d4 1" in qrels
    assert templates_of(tmp_path / "col" / "compositions.jsonl")["2"] == "_ or _"
    corpus = [json.loads(line) for line in (tmp_path / "col" / "corpus.jsonl").read_text().splitlines()]
    assert corpus[0] == {"id": "d1", "title": "Andean condor", "text": "A large bird of the Andes."}


def test_evaluate_ndcg_and_recall_per_template(quest_files, tmp_path):
    queries, documents = quest_files
    convert(read_quest_queries(queries), read_quest_documents(documents), tmp_path / "col")
    run = tmp_path / "run"
    run.write_text("1 Q0 d1 1 3.0 t\n1 Q0 d6 2 2.0 t\n1 Q0 d2 3 1.0 t\n2 Q0 d3 1 1.0 t\n"
                   "3 Q0 d6 1 1.0 t\n4 Q0 d5 1 1.0 t\n")
    overall, per_template = evaluate_runs(tmp_path / "col" / "qrels.txt", {"r": run},
                                          templates_of(tmp_path / "col" / "compositions.jsonl"))
    assert overall.loc["r", "R@100"] == pytest.approx((1 + 1 + 0 + 1) / 4)
    assert per_template.loc[("r", "_ or _"), "nDCG@10"] == pytest.approx(1.0)
    assert per_template.loc[("r", "_ that are also _ but not _"), "nDCG@10"] == pytest.approx(0.0)


def test_bad_quest_rows(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"docs": "x", "original_query": "<mark>a</mark>"}) + "\n")
    with pytest.raises(InputError, match=r"bad\.jsonl:1: \"docs\" must be a list"):
        read_quest_queries(path)
    path.write_text(json.dumps({"docs": [], "original_query": "<mark>a</mark> or <mark></mark>",
                                "metadata": {"template": "_ or _"}}) + "\n")
    with pytest.raises(InputError, match="non-empty atomic parts"):
        read_quest_queries(path)
