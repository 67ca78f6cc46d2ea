"""NevIR polarity probe: cue counting, labels, grouped folds, the logistic fit, and the command line."""
from __future__ import annotations

import json

import numpy as np
import pytest

from lsr_lucene.errors import InputError
from scripts.studies.nevir_probe import (cue_agreement, cue_count, fit_logistic, main, polarity_examples, probe,
                                    row_folds, vector_outcomes, word_features)


def _row(i: int, q1: str, doc1: str, q2: str, doc2: str) -> dict:
    return {"id": str(i), "q1": q1, "doc1": doc1, "q2": q2, "doc2": doc2}


def test_cue_count_reads_clitics_and_case_but_not_word_parts():
    assert cue_count("It doesn't work, and Never did.") == 2
    assert cue_count("A note on knots and nothingness.") == 0
    assert cue_count("No, not without reason; nothing else.") == 4


def test_labels_mark_the_query_of_the_document_with_more_cues():
    rows = [_row(0, "which ones pass", "they do not pass", "which ones fail", "they pass"),
            _row(1, "a", "same text", "b", "same text"),
            _row(2, "was it fine", "it was fine", "was it not fine", "it was never fine")]
    queries, labels, groups = polarity_examples(rows)
    assert queries == ["which ones pass", "which ones fail", "was it fine", "was it not fine"]
    assert labels.tolist() == [1, 0, 0, 1]
    assert groups.tolist() == [0, 0, 2, 2]
    assert cue_agreement(rows) == {"documents tie on cues": 1, "queries tie on cues": 1, "agree": 1,
                                   "disagree": 0}


def test_row_folds_keep_rows_together_and_cover_every_query_once():
    groups = np.repeat(np.arange(7), 2)
    folds = row_folds(groups, 3, seed=1)
    covered = np.sort(np.concatenate(folds))
    assert covered.tolist() == list(range(14))
    for test in folds:
        assert set(groups[test]).isdisjoint(set(np.setdiff1d(groups, groups[test])))
    with pytest.raises(InputError, match="fewer than 8 folds"):
        row_folds(groups, 8, seed=1)


def test_fit_logistic_reaches_a_stationary_point():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(40, 3))
    y = (x[:, 0] + 0.5 * rng.normal(size=40) > 0).astype(np.int64)
    w = fit_logistic(x, y, l2=0.1)
    xb = np.hstack([x, np.ones((40, 1))])

    def objective(v):
        return np.logaddexp(0, -(2 * y - 1) * (xb @ v)).mean() + 0.05 * v[:-1] @ v[:-1]

    step = 1e-5
    grad = [(objective(w + step * e) - objective(w - step * e)) / (2 * step) for e in np.eye(4)]
    assert np.abs(grad).max() < 1e-4
    assert w[0] > 0  # the informative feature


def test_probe_is_perfect_on_a_separable_signal_and_at_chance_without_one():
    rng = np.random.default_rng(3)
    groups = np.repeat(np.arange(30), 2)
    labels = np.tile([1, 0], 30)
    signal = np.hstack([labels[:, None] + 0.1 * rng.normal(size=(60, 1)), rng.normal(size=(60, 2))])
    folds = row_folds(groups, 5, seed=0)
    assert probe(signal, labels, groups, 0.01, folds) == {"query accuracy": 1.0, "both right": 1.0}
    noise = rng.normal(size=(60, 3))
    assert probe(noise, labels, groups, 0.01, folds)["both right"] < 0.6


class _WordEncoder:
    """Stand-in encoder: one unit weight per distinct word."""

    def encode_queries(self, texts):
        return [dict.fromkeys(t.split(), 1.0) for t in texts]

    encode_documents = encode_queries


def test_vector_outcomes_count_categories_and_direction_from_dot_products():
    rows = [_row(0, "cats sleep", "cats sleep a lot", "cats run", "cats run fast"),   # correct
            _row(1, "dogs", "dogs bark", "dogs bite", "dogs dogs"),                    # q1 ties
            _row(2, "sun", "moon", "moon", "sun")]                                      # reversed
    out = vector_outcomes(_WordEncoder(), rows)
    assert (out["correct"], out["prefers doc1 for both"], out["reversed"]) == (1, 0, 1)
    assert out["tie"] == 1  # row 1: "dogs" scores 1 against both documents (sets, not counts)
    # (q1 - q2)·(doc1 - doc2) = q1·d1 - q1·d2 + q2·d2 - q2·d1:
    # row 0: 2 - 1 + 2 - 1 = 2; row 1: 1 - 1 + 1 - 1 = 0; row 2: 0 - 1 + 0 - 1 = -2
    assert out["direction"] == 1


def test_word_features_keep_words_of_two_or_more_texts():
    x = word_features(["not here", "here now", "gone"])
    assert x.shape == (3, 1) and x[:, 0].tolist() == [1.0, 1.0, 0.0]


def test_command_writes_the_table_and_refuses_bad_input(tmp_path, capsys):
    rows = [_row(i, f"which thing {i} works", f"thing {i} does not work at all", f"which thing {i} breaks",
                 f"thing {i} works at all") for i in range(6)]
    nevir = tmp_path / "rows.jsonl"
    nevir.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "polarity"
    assert main(["--nevir", str(nevir), "--folds", "2", "--output", str(out), "--threads", "1"]) == 0
    text = (tmp_path / "polarity.md").read_text()
    assert "The model's own vectors: correct" in text and "of 6 rows" in text
    assert "Probed: 6 rows" in text and "| hidden | 0.0010 |" in text
    assert len((tmp_path / "polarity.csv").read_text().splitlines()) == 1 + 3 * 4
    with pytest.raises(InputError, match="exists"):
        main(["--nevir", str(nevir), "--folds", "2", "--output", str(out)])
    ties = tmp_path / "ties.jsonl"
    ties.write_text(json.dumps(_row(0, "a", "x", "b", "y")) + "\n")
    with pytest.raises(InputError, match=r"ties\.jsonl: 0 rows whose documents differ"):
        main(["--nevir", str(ties), "--output", str(tmp_path / "t")])


def test_mean_hidden_does_not_depend_on_padding():
    from lsr_lucene.encode.encoder import SparseEncoder

    encoder = SparseEncoder("splade-tiny", threads=1, dtype="fp32")
    short = "which film was not released"
    longer = short + " in any theatre during the first year of the war"
    alone = encoder.mean_hidden([short])
    padded = encoder.mean_hidden([short, longer])
    assert alone.shape == (1, encoder.mean_hidden(["x"]).shape[1])
    np.testing.assert_allclose(alone[0], padded[0], atol=1e-5)
    assert not np.allclose(padded[0], padded[1])
    # as queries (the probe's features): unpadded, so not even the last bit depends on the batch
    as_query = encoder.mean_hidden([short], queries=True)
    assert np.array_equal(encoder.mean_hidden([longer, short, "x"], queries=True)[1], as_query[0])
