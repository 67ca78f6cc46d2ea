"""Hard generated exclusion pairs and the nested-fold selection estimate (issue 49, item 1), on small hand-made
corpora and synthetic outcomes (no model)."""
from __future__ import annotations

import json
import random

import pytest

from lsr_lucene.compose.negation_parser import parse
from lsr_lucene.compose.tree import Node
from scripts.negation import negation_hard_pairs as hard
from scripts.negation import negation_nested as nested
from scripts.negation.negation_harm import held_out

SLOTS = {"t": "strep throat", "a": "penicillin dosage", "x": "rheumatic fever", "y": "swollen tonsils"}


# the harder sources' slots: an excluded passage named by its category, an item the wanted passage also says
HARDER_SLOTS = {"t": "Miss Congeniality", "a": "sandra bullock", "x": "american actress", "y": "comedy"}
PHRASINGS = [(f, i) for f, ps in hard.FAMILIES.items() for i in range(len(ps))]


@pytest.mark.parametrize("family, phrasing", PHRASINGS)
def test_every_phrasing_parses_to_its_excluded_items(family, phrasing):
    """The parser gives each template's B exactly the excluded items (the cue's filler and "general" dropped) and
    keeps the topic and the wanted aspect in A."""
    tree = parse(hard.FAMILIES[family][phrasing].format(**SLOTS)).tree
    items = "rheumatic fever" if family in hard.SINGLE else Node("or", "rheumatic fever", "swollen tonsils")
    assert isinstance(tree, Node) and tree.op == "not" and tree.b == items
    assert "strep throat" in tree.a and "penicillin dosage" in tree.a and "fever" not in tree.a


@pytest.mark.parametrize("family, phrasing", PHRASINGS)
def test_every_phrasing_parses_category_and_overlap_items(family, phrasing):
    """The same templates with a category ("american actress") and an overlapping word ("comedy") as B's items."""
    tree = parse(hard.FAMILIES[family][phrasing].format(**HARDER_SLOTS)).tree
    items = "american actress" if family in hard.SINGLE else Node("or", "american actress", "comedy")
    assert isinstance(tree, Node) and tree.op == "not" and tree.b == items
    assert "Miss Congeniality" in tree.a and "sandra bullock" in tree.a and "actress" not in tree.a


def test_category_is_what_the_first_sentence_says_the_passage_is():
    assert hard.category("Deirdre Quinn is an American actress known for Miss Congeniality.") == "american actress"
    assert hard.category("Miss Congeniality is a 2000 comedy film with Sandra Bullock.") == "comedy film"
    assert hard.category("The village was the seat of the county.") == "seat"
    assert hard.category("Penicillin treats strep throat.") is None


def test_shared_aspects_are_words_both_say_but_the_excluded_one_more_often():
    wanted = "Strep throat is treated with penicillin. A fever may follow."
    excluded = "Strep throat can cause rheumatic fever; the fever lasts weeks. Penicillin helps."
    idf = hard.idf_table([wanted, excluded, "tonsils"])
    assert hard.shared_aspects(excluded, wanted, idf, 2, ["strep throat"]) == ["fever"]


def test_aspects_are_words_the_other_passage_lacks():
    idf = hard.idf_table(["strep throat causes fever", "strep throat antibiotics penicillin", "tonsils"])
    wanted = "Strep throat is treated with penicillin. Antibiotics shorten it."
    excluded = "Strep throat can cause rheumatic fever and swollen tonsils."
    got = hard.aspects(excluded, wanted, idf, 2)
    assert len(got) == 2 and not set(" ".join(got).split()) & hard.words_of(wanted)
    assert hard.shared_topic(wanted, excluded, idf) == "strep throat"
    assert hard.content_runs("The 1990s: rheumatic fever, and the tonsils") == [["rheumatic", "fever"], ["tonsils"]]


def _boolq_corpus():
    return [
        {"id": "0", "title": "", "text": "Strep throat is treated with penicillin or amoxicillin antibiotics."},
        {"id": "1", "title": "", "text": "Strep throat may lead to rheumatic fever and swollen tonsils."},
        {"id": "2", "title": "Freeview", "text": "Freeview devices need a digital tuner for high definition."},
        {"id": "3", "title": "Freeview", "text": "The Freeview logo marks certified receivers in Australia."},
        {"id": "4", "title": "", "text": "Dev pair passage about volcanoes erupting lava."},
        {"id": "5", "title": "", "text": "Dev pair passage about volcanoes and ash clouds."},
    ]


def test_boolq_siblings_pair_the_two_passages_of_one_question_and_skip_dev_pairs():
    rows = hard.boolq_siblings(_boolq_corpus(), {"4", "5"}, random.Random(0), 10)
    assert [sorted([r["pos_id"], *r["neg_ids"]]) for r in rows] == [["0", "1"], ["2", "3"]]
    texts = {d["id"]: d["text"] for d in _boolq_corpus()}
    for row in rows:
        assert row["family"] in hard.FAMILIES and row["source"] == "boolq-siblings"
        tree = parse(row["query"]).tree
        items = [tree.b] if isinstance(tree.b, str) else [tree.b.a, tree.b.b]
        for item in items:  # every excluded item is an aspect of the excluded passage only
            assert not hard.words_of(item) & hard.words_of(texts[row["pos_id"]])
    assert "Freeview" in rows[1]["query"]  # the NQ title is the topic


def test_excluir_links_ask_about_the_named_passage_excluding_those_that_name_it():
    corpus = [
        {"id": "1", "title": "Miss Congeniality (film)", "text": "Miss Congeniality is a 2000 comedy film with "
                                                               "Sandra Bullock as an undercover agent."},
        {"id": "2", "title": "Deirdre Quinn", "text": "Deirdre Quinn is an actress known for Miss Congeniality."},
        {"id": "3", "title": "Heather Burns", "text": "Heather Burns played Cheryl in Miss Congeniality."},
    ]
    rows = hard.excluir_links(corpus, set(), random.Random(0), 10)
    assert len(rows) == 1 and rows[0]["pos_id"] == "1" and rows[0]["neg_ids"][0] == "2"
    assert "Deirdre Quinn" in rows[0]["query"] and "Miss Congeniality" in rows[0]["query"]
    assert hard.excluir_links(corpus, {"1"}, random.Random(0), 10) == []  # dev passages are skipped


def test_harder_sources_overlap_the_wanted_passage_or_name_the_excluded_by_category():
    corpus = [{"id": "0", "title": "", "text": "Strep throat: penicillin, penicillin or amoxicillin; no fever."},
              {"id": "1", "title": "", "text": "Strep throat: fever, rheumatic fever and tonsils; penicillin."}]
    rows = hard.boolq_siblings(corpus, set(), random.Random(0), 10, hard.shared_aspects, "boolq-overlap")
    assert len(rows) == 1 and rows[0]["id"] == f"hard-boolq-overlap-{rows[0]['pos_id']}"
    item = "fever" if rows[0]["pos_id"] == "0" else "penicillin"  # said by both, more often by the excluded one
    assert parse(rows[0]["query"]).tree.b == item
    links = [
        {"id": "1", "title": "Miss Congeniality (film)", "text": "Miss Congeniality is a 2000 comedy film with "
                                                               "Sandra Bullock as an undercover agent."},
        {"id": "2", "title": "Deirdre Quinn", "text": "Deirdre Quinn is an American actress known for Miss "
                                                     "Congeniality."},
    ]
    rows = hard.excluir_links(links, set(), random.Random(0), 10, by_category=True)
    assert len(rows) == 1 and rows[0]["neg_ids"] == ["2"] and rows[0]["source"] == "excluir-category"
    assert "american actress" in rows[0]["query"] and "Deirdre" not in rows[0]["query"]


def test_wiki_articles_keep_articles_with_three_to_eight_passages():
    rows = [{"id": f"{page}_{k}", "title": f"T{page}", "text": "x"} for page, n in ((1, 2), (2, 3), (3, 9), (4, 4))
            for k in range(n)]
    corpus = hard.wiki_articles(rows, articles=5)
    assert {d["id"].split("_")[0] for d in corpus} == {"2", "4"}
    assert len(hard.wiki_articles(rows, articles=1)) == 3


def test_a_row_is_right_only_above_every_excluded_passage():
    scores = {"p": 2.0, "n1": 1.0, "n2": 3.0}
    assert nested.row_outcome(scores, "p", ["n1"]) == (0, 1)
    assert nested.row_outcome(scores, "p", ["n1", "n2"]) == (0, 0)
    assert nested.row_outcome({"p": 1.0}, "p", ["n1", "n2"]) == (1, 1)  # unretrieved negatives score lowest
    assert nested.row_outcome({"n1": 1.0}, "p", ["n1"]) == (0, 0)


def test_group_folds_keep_groups_whole_and_balanced():
    groups = ["a"] * 5 + ["b"] * 3 + ["c"] * 3 + ["d"] * 2
    folds = nested.group_folds(groups, 2)
    assert sorted(i for f in folds for i in f) == list(range(len(groups)))
    assert all(len({groups[i] for i in f} & {groups[i] for i in g}) == 0 for f in folds for g in folds if f is not g)
    assert sorted(len(f) for f in folds) == [6, 7]
    assert nested.group_of({"id": "x", "source": "wiki-article", "family": "single-aspect"}) == \
        "wiki-article/single-aspect"


def test_choose_keeps_the_default_unless_the_winner_clears_one_standard_error():
    groups = [f"g{i % 4}" for i in range(40)]
    default = [1.0 if i % 2 else 0.0 for i in range(40)]
    noisy = [v + (0.2 if i % 4 == 0 else -0.03) for i, v in enumerate(default)]  # higher mean, one fold only
    steady = [v + 0.2 for v in default]
    assert nested.choose({"default": default, "noisy": noisy}, groups) == "default"
    assert nested.choose({"default": default, "noisy": noisy, "steady": steady}, groups) == "steady"


def test_outer_folds_do_not_see_their_own_rows():
    """A candidate that only wins on one template family is not chosen for the fold that holds that family out."""
    groups = ["special"] * 10 + [f"g{i % 4}" for i in range(40)]
    default = [0.5] * 50
    special = [1.0] * 10 + [0.5] * 40
    where, chosen = nested.nested({"default": default, "special": special}, groups, outer=5)
    assert chosen[where[0]] == "default"  # the fold holding "special" out chose without seeing its gain


def test_report_scores_the_held_out_part_once_and_compares_with_the_issue():
    rows = [{"id": f"q{i}", "source": "ExcluIR dev" if i % 2 else "boolq-siblings",
             "family": "" if i % 2 else "single-aspect"} for i in range(60)]
    outcomes = {name: [(1, 1)] * 60 for name in (nested.PLAIN, *nested.CANDIDATES)}
    result = nested.report(rows, outcomes)
    assert result["final"] == "default"
    held = {r["rows"]: r["queries"] for r in result["held-out"] if r["setting"] == "default"}
    assert held["all"] == sum(held_out(r["id"]) for r in rows)
    cells = {v for row in result["compare"] for k, v in row.items() if k != "interval"}
    assert cells == {"above"} and "BoolQuestions test RR 0.866" in result["compare"][0]  # every interval is 1.000
    page = nested.markdown(result, "# title")
    assert page.startswith("# title") and "| all |" in page


def test_padded_outcomes_enter_the_selection_and_every_table():
    rows = [{"id": f"q{i}", "source": "ExcluIR dev" if i % 2 else "boolq-siblings",
             "family": "" if i % 2 else "single-aspect"} for i in range(60)]
    names = (nested.PLAIN, *nested.CANDIDATES)
    outcomes = {name: [(1, 1)] * 60 for name in names}
    # over the padded corpora the default loses every row the others win; the even rows were not scored there
    padded = {name: [None if i % 2 == 0 else (0, 0) if name == "default" else (1, 1) for i in range(60)]
              for name in names}
    assert nested.report(rows, outcomes)["final"] == "default"
    result = nested.report(rows, outcomes, padded, "+pad")
    assert result["final"] != "default"
    held = {(r["rows"], r["corpus"]): r["queries"] for r in result["held-out"] if r["setting"] == "default"}
    assert held[("all", "benchmark")] == sum(held_out(r["id"]) for r in rows)
    assert held[("all", "+pad")] == sum(held_out(r["id"]) for i, r in enumerate(rows) if i % 2)
    assert any(r["corpus"] == "+pad" for r in result["nested"])
    table = nested.row_table(rows, outcomes, padded, "+pad")
    assert table.loc["q1", "default R@1 +pad"] == 0 and table.loc["q0", "default R@1"] == 1


def test_a_joined_corpus_counts_both_parts(tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    for folder, docs, postings in ((first, 3, 30), (second, 5, 40)):
        folder.mkdir()
        (folder / "metadata.json").write_text(json.dumps({"model": "splade-tiny", "scale": 100, "documents": docs,
                                                          "postings": postings, "source": folder.name, "shards": 1}))
    meta = nested.joined_metadata(first, second, ["a-part-00000.jsonl", "b-part-00000.jsonl"])
    assert (meta["documents"], meta["postings"], meta["shards"], meta["source"]) == (8, 70, 2, "a + b")
    assert (meta["model"], meta["scale"], meta["files"]) == ("splade-tiny", 100, ["a-part-00000.jsonl",
                                                                                  "b-part-00000.jsonl"])


def test_bootstrap_interval():
    """(Moved from the retired generated-pairs estimate's tests, issue 66.)"""
    mean, low, high = nested.bootstrap([1] * 80 + [0] * 20)
    assert mean == 0.8 and 0.7 < low < 0.8 < high < 0.9
    assert nested.bootstrap([1, 1, 1]) == (1.0, 1.0, 1.0)
