"""The held-out estimate's pieces (issue 49): generated exclusion pairs and bootstrap intervals."""
from __future__ import annotations

import json

from scripts.negation.negation_estimate import TEMPLATES, bootstrap, generate_pairs, outcomes


def test_generated_pairs_name_the_excluded_passage_and_skip_dev_passages(tmp_path):
    docs = [
        {"id": "1", "title": "Grace Hopper", "text": "Grace Hopper worked on the Harvard Mark I and led COBOL work."},
        {"id": "2", "title": "Harvard Mark I", "text": "The Harvard Mark I was an electromechanical computer."},
        {"id": "3", "title": "Ada Lovelace", "text": "Ada Lovelace wrote about the Analytical Engine."},
        {"id": "4", "title": "Analytical Engine", "text": "The Analytical Engine was designed by Charles Babbage."},
        {"id": "5", "title": "Charles Babbage", "text": "Charles Babbage designed the Analytical Engine."},
    ]
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(d) + "\n" for d in docs))
    rows = generate_pairs(corpus, skip_ids={"5"})
    assert [(r["pos_id"], r["neg_id"]) for r in rows] == [("1", "2"), ("3", "4")]  # 5 is a dev passage: skipped
    assert "Harvard Mark I" in rows[0]["query"] and "Grace Hopper" in rows[0]["query"]
    assert rows[0]["query"] == TEMPLATES[0][0].format(p="Grace Hopper", q="Harvard Mark I", r="")
    assert len({r["template"] for r in rows}) == 2  # phrasings in turn


def test_outcomes_and_bootstrap():
    run = {"q1": {"p": 2.0, "n": 1.0}, "q2": {"x": 3.0, "n": 2.0, "p": 1.0}, "q3": {}}
    rows = [{"id": q, "pos_id": "p", "neg_id": "n"} for q in ("q1", "q2", "q3")]
    assert outcomes(run, rows) == ([1, 0, 0], [1, 0, 0])
    mean, low, high = bootstrap([1] * 80 + [0] * 20)
    assert mean == 0.8 and 0.7 < low < 0.8 < high < 0.9
    assert bootstrap([1, 1, 1]) == (1.0, 1.0, 1.0)
