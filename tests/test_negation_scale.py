"""Negation at scale (issue 49): the distractor draw skips copies of benchmark passages, and the table reads rows."""
from __future__ import annotations

import json

from scripts.negation import negation_scale as scale


def _write(path, docs):
    path.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    return path


def test_distractors_skip_copies_and_titles_and_do_not_depend_on_order(tmp_path):
    corpus = _write(tmp_path / "corpus.jsonl", [
        {"id": "1", "title": "Tea", "text": "Green tea is made from the leaves of Camellia sinensis that have not "
                                            "undergone withering"}])
    passages = [{"id": "a", "title": "Tea", "text": "another passage of the same article"},
                {"id": "b", "title": "Teas", "text": "It is made from the leaves of Camellia sinensis that have not "
                                                     "undergone withering and oxidation"},
                {"id": "c", "title": "Coffee", "text": "Coffee is brewed from roasted beans"},
                {"id": "d", "title": "Cocoa", "text": "Cocoa beans are fermented"}]
    picked = scale.distractors(passages, [corpus], 5)
    assert sorted(p["id"] for p in picked) == ["wiki2015-c", "wiki2015-d"]  # a: same title; b: 8 words copied
    assert scale.distractors(reversed(passages), [corpus], 5) == picked
    assert len(scale.distractors(passages, [corpus], 1)) == 1


def test_table_strata_and_refusal(tmp_path):
    def row(i, r1, rr, prefers):
        return {"id": str(i), "set": "dev", "source": "ExcluIR", "corpus": "benchmark", "plain R@1": "0",
                "plain RR": "1", "default R@1": str(r1), "default RR": str(rr), "fused": "1",
                "A prefers excluded": str(prefers), "excluded penalised": "1"}

    cells = scale.table([row(0, 1, 1, 0), row(1, 0, 0, 1), row(2, 1, 1, 1), row(3, 1, 1, 0)])
    by_rows = {c["rows"]: c for c in cells}
    assert (by_rows["all rows"]["queries"], by_rows["all rows"]["R@1"], by_rows["all rows"]["A prefers excluded"]) \
        == (4, 0.75, 0.5)
    assert (by_rows["A alone prefers the excluded passage"]["queries"],
            by_rows["A alone prefers the excluded passage"]["RR"]) == (2, 0.5)
    out = tmp_path / "o.jsonl"
    out.write_text("kept")
    assert scale.main(["distractors", "--wiki", str(tmp_path / "w.jsonl"), "--data", str(tmp_path), "--size", "1",
                       "--output", str(out)]) == 2
    assert out.read_text() == "kept"
