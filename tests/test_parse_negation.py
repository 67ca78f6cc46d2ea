"""Cue parser: natural-language negation, exclusion and conjunction -> composition trees."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lsr_lucene.compose.negation_parser import coverage, explain, parse
from lsr_lucene.compose.parse_negation import main
from lsr_lucene.compose.tree import Node, leaves

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


@pytest.mark.parametrize("text, tree", [
    ("books about monarchs that are not European", Node("not", "books about monarchs", "European")),
    ("documentaries about education that are also about disability",
     Node("and", "documentaries about education", "about disability")),
    ("sci-fi movies of 2019 besides Avengers", Node("not", "sci-fi movies of 2019", "Avengers")),
    ("movies without violence", Node("not", "movies", "violence")),
    ("string instruments but not guitars", Node("not", "string instruments", "guitars")),
    ("pasta sauce excluding any information about tomatoes", Node("not", "pasta sauce", "tomatoes")),
    ("Besides Jed York, are there any famous relatives of Edward J. DeBartolo Jr.?",
     Node("not", "are there any famous relatives of Edward J. DeBartolo Jr.?", "Jed York")),
    ("Who else besides Marco Pierre White had a role in the TV show Kitchen Burnout?",
     Node("not", "Who else had a role in the TV show Kitchen Burnout?", "Marco Pierre White")),
    ("Which NFL teams did Mark McGrath play for, excluding the Seattle Seahawks?",
     Node("not", "Which NFL teams did Mark McGrath play for?", "Seattle Seahawks")),
    ("Where did the team play, but please don't mention anything about Landover, Maryland?",
     Node("not", "Where did the team play?", "Landover, Maryland")),
    ("What other films other than Mauro Bolognini's besides Gregory La Cava?",
     Node("not", Node("not", "What other films?", "Gregory La Cava"), "Mauro Bolognini's")),
    ("Birds of Colombia that are also Birds of Venezuela but not Birds of Peru",
     Node("and", "Birds of Colombia", Node("not", "Birds of Venezuela", "Birds of Peru"))),
    # an exclusion set off by commas after a short head: B is the aside, A reads on after it
    ("What symbols, excluding the Red Hand on the de Burgh cross, appear on the Ulster flag?",
     Node("not", "What symbols appear on the Ulster flag?", "Red Hand on the de Burgh cross")),
    ("Which films, excluding cartoons, feature dogs?", Node("not", "Which films feature dogs?", "cartoons")),
    # A keeps its final main verb (the clean-up once dropped it: "… does ESPN Inc.?") ...
    ("In addition to ESPN Classic, what broadcasting operations does ESPN Inc. have?",
     Node("not", "what broadcasting operations does ESPN Inc. have?", "ESPN Classic")),
    ("What other groups do Ybor City have besides L'Unione Italiana?",
     Node("not", "What other groups do Ybor City have?", "L'Unione Italiana")),
    ("What other works does Ernst Junger have, excluding Visit to Godenholm?",
     Node("not", "What other works does Ernst Junger have?", "Visit to Godenholm")),
    ("Can you tell me who the main actors are, but without including any information about Geoffrey Rush?",
     Node("not", "Can you tell me who the main actors are?", "Geoffrey Rush")),
    # ... but still drops an auxiliary that the cut negation took
    ("Which conditions involve producing excessive urine or fake symptoms but are not factitious disorder?",
     Node("not", "Which conditions involve producing excessive urine or fake symptoms?", "factitious disorder")),
    ("Which vampires join the army but were not named by SFX magazine?",
     Node("not", "Which vampires join the army?", "named by SFX magazine")),
])
def test_examples(text, tree):
    assert parse(text).tree == tree


def test_no_cue_stays_atomic_and_cues_in_quotes_are_ignored():
    assert parse("volcanoes in Iceland").tree == "volcanoes in Iceland"
    assert not parse("volcanoes in Iceland").composed
    text = 'Who starred in "They Shoot Horses, Don\'t They?"'
    assert parse(text).tree == text


def test_cue_with_an_empty_side_is_skipped():
    assert not parse("without").composed
    assert not parse("not European").composed  # nothing on the A side
    assert not parse("books without").composed  # nothing on the B side


def test_deterministic_and_explain():
    text = "Can you tell me about the 1953 Belgian Grand Prix without mentioning Alberto Ascari?"
    first, second = parse(text), parse(text)
    assert first.tree == second.tree == Node("not", "Can you tell me about the 1953 Belgian Grand Prix?",
                                             "Alberto Ascari")
    report = explain(first)
    assert "cue 'without'" in report and "B: 'Alberto Ascari'" in report
    assert "no cue" in explain(parse("tea"))


def test_cli_prints_json_and_explain(capsys):
    assert main(["tea without caffeine"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["query"] == {"op": "not", "a": "tea", "b": "caffeine"}
    assert main(["--explain", "tea without caffeine"]) == 0
    assert "NOT (A \\ B)" in capsys.readouterr().out


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(["books", "not", "without", "besides", ",", "that are also", "?", "no", "'",
                                 '"', "Apart from", "X", "(", ")", "and", "don't mention", "the", "."]),
                max_size=14))
def test_never_fails_and_sides_are_never_empty(words):
    result = parse(" ".join(words))
    if result.composed:
        for leaf in leaves(result.tree):
            assert any(ch.isalnum() for ch in leaf)
    for cue in result.cues:
        assert cue.a.strip() and cue.b.strip()


@pytest.mark.skipif(not (DATA / "excluir" / "dev.jsonl").is_file(), reason="shared data not present")
def test_coverage_counts_agree_with_parse_on_excluir_dev():
    queries = [json.loads(line)["query"] for line in (DATA / "excluir" / "dev.jsonl").open()]
    cov = coverage(queries)
    parsed = [parse(q) for q in queries]
    assert cov["queries"] == len(queries)
    assert cov["parsed"] == sum(p.composed for p in parsed)
    assert sum(cov["by_cue"].values()) == cov["parsed"]
    for p in parsed:  # every split keeps both sides
        for cue in p.cues:
            assert cue.a.strip() and cue.b.strip()


def test_explain_parse_reports_fired_and_rejected_cues():
    from lsr_lucene.compose.negation_parser import ParseReport, explain_parse

    report = explain_parse("tea without caffeine")
    assert isinstance(report, ParseReport) and report.tree == Node("not", "tea", "caffeine")
    assert [(c.cue, c.text, c.start) for c in report.fired] == [("without", "without", 4)]
    assert report.fired[0].a == "tea" and report.fired[0].b == "caffeine"
    assert any("'without'" in line and "fired" in line for line in report.lines())
    empty = explain_parse("not European")
    assert empty.tree == "not European" and not empty.fired
    assert [(c.cue, c.start) for c in empty.rejected] == [("not", 0)] and empty.rejected[0].reason
    assert any("rejected" in line for line in empty.lines())


@pytest.mark.parametrize("argv, expect", [([], "give query texts or --topics FILE"),
                                          (["tea", "--topics", "t.tsv"], "not both")])
def test_parse_negation_without_queries_or_with_both_sources_is_an_error(argv, expect, capsys):
    """It printed nothing and exited 0 when given no query (or silently ignored the texts beside --topics)."""
    from lsr_lucene.cli import main as cli_main

    with pytest.raises(SystemExit) as stop:
        cli_main(["parse-negation", *argv])
    assert stop.value.code == 2 and expect in capsys.readouterr().err
