"""Explicit query syntax (issue 50): grammar, opt-in, errors, and its strict exclusions (issue 65) in the CLI and
ComposeSearcher (the server and PyTerrier tests are in test_serve.py and test_pyterrier.py; exactness in
test_strict_exclusion.py)."""
from __future__ import annotations

import pytest

from lsr_lucene.compose.compositions import parse_topics
from lsr_lucene.compose.query_syntax import parse_syntax, read_query, uses_syntax
from lsr_lucene.compose.tree import Node
from lsr_lucene.errors import InputError
from lsr_lucene.io.runs import read_hits

DOGS_CATS = Node("not", "films", Node("or", "dogs", "cats"))


@pytest.mark.parametrize("query, tree", [
    ("films -dogs -cats", DOGS_CATS),
    ("films NOT (dogs OR cats)", DOGS_CATS),
    ("films NOT dogs NOT cats", DOGS_CATS),
    ('films -"hot dogs"', Node("not", "films", "hot dogs")),
    ("films NOT about dogs", Node("not", "films", "about dogs")),
    ('"python tutorials" -beginners', Node("not", "python tutorials", "beginners")),
    ("covid-19 vaccines -mRNA", Node("not", "covid-19 vaccines", "mRNA")),
    ("tea AND biscuits", Node("and", "tea", "biscuits")),
    ("tea OR coffee -espresso", Node("or", "tea", Node("not", "coffee", "espresso"))),
    ("(tea OR coffee) -espresso", Node("not", Node("or", "tea", "coffee"), "espresso")),
    ("films NOT dogs AND cartoons", Node("and", Node("not", "films", "dogs"), "cartoons")),
    ("a OR b AND c", Node("or", "a", Node("and", "b", "c"))),
])
def test_grammar(query, tree):
    assert uses_syntax(query)
    report = read_query(query)
    assert report.tree == tree and report.composed
    assert all("explicit query syntax" in line for line in report.decisions())


@pytest.mark.parametrize("query", [
    "films not about dogs", "tea and biscuits", "films neither about dogs nor about cats", "covid-19 vaccines",
    "E2f-1, -2, -3 cells", "jet interference with supersonic flow -dash experimental papers .", "NO synthase",
    "pre- and post-war films", "films - dogs",
])
def test_ordinary_text_does_not_opt_in(query):
    assert not uses_syntax(query)


@pytest.mark.parametrize("query, why", [
    ("-dogs", "something to keep"), ("NOT dogs", "something to keep"), ("films NOT", "nothing to exclude"),
    ("films AND", "nothing on one side"), ("films (dogs OR cats)", "needs AND, OR or NOT"),
    ("films NOT (dogs OR cats", "unclosed"), ("films -dogs)", "unmatched"), ('films -""', "empty quoted phrase"),
    ('films -"dogs', "unbalanced quote"),
])
def test_malformed_queries_name_the_query(query, why):
    with pytest.raises(InputError, match=why) as err:
        parse_topics({"q7": query})
    assert "query q7" in str(err.value)


def test_explain_names_the_strict_filter():
    """Issue 65 item 5: the -word / NOT form shows as what it is (a strict filter on the text field), not as a cue."""
    lines = parse_syntax("films NOT (dogs OR cats)").decisions()
    assert lines[0].startswith("NOT (explicit query syntax): a strict filter on the text field") and \
        "contains (dogs OR cats) is removed from the results of 'films'" in lines[0]
    assert lines[1] == "OR (explicit query syntax): inside an excluded part, documents containing dogs or cats are removed"
    assert "removes inside the search every document matching (dogs OR cats)" in lines[2] and \
        "ranks the rest for 'films' as the same exclusion in words does" in lines[2]
    assert "EnglishAnalyzer" in lines[2] and not any("cue" in line or " at 0" in line for line in lines)
    assert 'contains "hot dogs"' in parse_syntax('films -"hot dogs"').decisions()[0]
    assert "'tea' OR 'coffee', ranked by the 'or' node's operation" in parse_syntax("tea OR coffee").decisions()[0]


def test_cli_and_searcher_remove_the_excluded_documents(demo, tmp_path, capsys):
    """Issue 65: the syntax's exclusions are strict: no document whose text contains an excluded word, the top k filled
    by the others, ranked as the same not node in a composition (the default's fusion) with that filter, through the
    CLI (--query, --topics) and ComposeSearcher alike."""
    from lsr_lucene.compose import ComposeSearcher
    from lsr_lucene.compose.cli import main
    from lsr_lucene.search.text_filter import text_contains

    index = str(demo / "index")
    assert main(["--index", index, "--query", "tea -caffeine -milk", "--hits", "5",
                 "--output", str(tmp_path / "syntax.run")]) == 0
    topics = tmp_path / "topics.tsv"
    topics.write_text("7\ttea NOT (caffeine OR milk)\n", encoding="utf-8")
    assert main(["--index", index, "--topics", str(topics), "--hits", "5", "--output", str(tmp_path / "t.run")]) == 0
    assert read_hits(tmp_path / "t.run")["7"] == read_hits(tmp_path / "syntax.run")["1"]
    assert main(["--index", index, "--query", "tea NOT (caffeine OR milk)", "--hits", "5", "--explain",
                 "--output", str(tmp_path / "explain.run")]) == 0
    printed = capsys.readouterr()
    assert "explicit query syntax" in printed.out + printed.err
    with ComposeSearcher(demo / "index") as searcher:
        got = [(h.docid, h.score) for h in searcher.search("tea -caffeine -milk", k=5)]
        plain = searcher.search("tea", k=5)
        tree = {"op": "not", "a": "tea", "b": {"op": "or", "a": "caffeine", "b": "milk"}}
        want = [(h.docid, h.score) for h in searcher.search({"query": tree, "exclude": ["caffeine", "milk"]}, k=5)]
        texts = searcher.backend.texts([d for d, _ in got])
        assert not any(text_contains(texts[d], b) for d, _ in got for b in ("caffeine", "milk"))
        assert got == want and len(got) == 5 and [d for d, _ in got] != [h.docid for h in plain]
        assert read_hits(tmp_path / "syntax.run")["1"] == got
        assert searcher.parse("tea NOT (caffeine OR milk)").tree == Node("not", "tea", Node("or", "caffeine", "milk"))
        with pytest.raises(InputError, match="something to keep"):
            searcher.search("-caffeine")
