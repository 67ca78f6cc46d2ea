"""Run files: the one reader (every bad line named file:line), the writer (ties by docid), merging, top-k, and Java
writing byte for byte what Python writes (half-way scores included)."""
from __future__ import annotations

import io
import random
from decimal import ROUND_HALF_EVEN, Context, Decimal

import numpy as np
import pytest

from lsr_lucene.errors import InputError
from lsr_lucene.io.ranking import ranking, top_hits, top_k
from lsr_lucene.io.runs import answered, format_score, merge_hits, parse_hits, read_hits, read_run, write_lines, \
    write_run


def test_writer_orders_by_score_then_docid_and_reader_gives_it_back(tmp_path):
    out = tmp_path / "r.run"
    write_run({"q1": {"b": 1.0, "a": 1.0, "c": 2.5}, "q2": [("x", 0.1)]}, out, "t", hits=2)
    assert out.read_text() == "q1 Q0 c 1 2.500000 t\nq1 Q0 a 2 1.000000 t\nq2 Q0 x 1 0.100000 t\n"
    assert read_hits(out) == {"q1": [("c", 2.5), ("a", 1.0)], "q2": [("x", 0.1)]}
    assert read_run(out) == {"q1": {"c": 2.5, "a": 1.0}, "q2": {"x": 0.1}}
    assert answered(out) == {"q1", "q2"}
    with pytest.raises(InputError, match="already exists; pass --overwrite"):
        write_run({"q": [("a", 1.0)]}, out, "t")
    write_run({"q": [("a", 1.0)]}, out, "t", overwrite=True)
    assert read_run(out) == {"q": {"a": 1.0}}


@pytest.mark.parametrize("line, words", [
    ("q1 Q0 d1 1 2.0", "expected 6 columns"),
    ("q1 Q0 d1 one 2.0 t", "rank 'one' is not an integer"),
    ("q1 Q0 d1 1 high t", "score 'high' is not a number"),
    ("q1 Q0 d1 1 nan t", "not finite"),
    ("q0 Q0 a 1 1.0 t", "document a appears twice for query q0"),
])
def test_every_malformed_line_is_named_never_skipped(tmp_path, line, words):
    path = tmp_path / "bad.run"
    path.write_text("q0 Q0 a 1 2.0 t\n\n" + line + "\nq9 Q0 z 1 1.0 t\n")
    for reader in (read_hits, read_run, answered):
        with pytest.raises(InputError) as err:
            reader(path)
        assert str(err.value).startswith(f"{path}:3: ") and words in str(err.value)
    with pytest.raises(InputError, match="java:3: "):
        parse_hits(path.read_text(), "java")


def test_missing_and_empty_run_files(tmp_path):
    with pytest.raises(InputError, match="no such run file"):
        read_hits(tmp_path / "none.run")
    (tmp_path / "empty.run").write_text("\n")
    assert read_hits(tmp_path / "empty.run") == {}
    with pytest.raises(InputError, match="empty run file"):
        read_run(tmp_path / "empty.run")


def test_merge_keeps_run_order_across_parts():
    a = [("d3", 5.0), ("d1", 2.0)]
    b = [("d2", 5.0), ("d0", 2.0), ("d9", 1.0)]
    assert merge_hits([a, b]) == [("d2", 5.0), ("d3", 5.0), ("d0", 2.0), ("d1", 2.0), ("d9", 1.0)]
    assert merge_hits([a, b], k=3) == [("d2", 5.0), ("d3", 5.0), ("d0", 2.0)]
    shards = [[("d3", "5.0", 5.25), ("d1", "2.0", 2.0)], [("d2", "5.0", 5.0)]]  # (docid, shown, exact score)
    assert [h[0] for h in merge_hits(shards, score_index=2)] == ["d3", "d2", "d1"]


def test_top_k_equals_a_full_sort_with_ties():
    rng = np.random.default_rng(3)
    for _ in range(200):
        n = int(rng.integers(1, 60))
        scores = rng.integers(-3, 4, n).astype(float)  # many ties
        tiebreak = rng.permutation(n)
        k = int(rng.integers(1, n + 3))
        full = sorted(range(n), key=lambda i: (-scores[i], tiebreak[i]))[:k]
        assert top_k(scores, k, tiebreak).tolist() == full
        cands = np.flatnonzero(scores > -3)
        assert top_k(scores, k, tiebreak, cands).tolist() == [i for i in sorted(
            cands.tolist(), key=lambda i: (-scores[i], tiebreak[i]))][:k]
    mapping = {"b": 1.0, "a": 1.0, "c": 3.0}
    assert ranking(mapping) == ["c", "a", "b"] and top_hits(mapping, 2) == [("c", 3.0), ("a", 1.0)]


def halfway_and_random_scores(n: int = 20000) -> list[float]:
    """Scores at or next to half-way points of the sixth decimal, random doubles, and edge values."""
    rng = random.Random(11)
    values = [k / 2 * 1e-6 for k in range(-2001, 2001, 2)]  # k/2·10⁻⁶: odd k, nearest doubles of x.xxxxxx5
    values += [rng.randrange(-10**9, 10**9) / 2 * 1e-6 for _ in range(n)]
    values += [float(Decimal(rng.randrange(0, 10**12) * 2 + 1) / Decimal(2_000_000)) for _ in range(n)]
    values += [rng.uniform(-1e5, 1e5) for _ in range(n)] + [rng.uniform(-1, 1) for _ in range(n)]
    values += [0.0, -0.0, -1e-9, 1e-9, 0.5e-6, 2.5e-6, 86461.0000005, 4503599627.3704965, 9.2e12, 1e15 + 0.5,
               123456789012.3456785, 1e20, -1e22, 5e-324]
    return values


def test_python_scores_are_exact_half_even():
    for x in halfway_and_random_scores(2000):
        exact = Decimal(x).quantize(Decimal("0.000001"), context=Context(prec=400, rounding=ROUND_HALF_EVEN))
        shown = format_score(x)
        assert Decimal(shown) == exact and (shown.startswith("-") == (np.signbit(x)))


@pytest.fixture(scope="module")
def java_run_writer():
    from lsr_lucene.jvm import runtime as jvm

    jvm.start()
    return jvm.autoclass("io.github.lsrlucene.search.RunWriter")


def test_java_writes_the_bytes_python_writes(java_run_writer):
    scores = halfway_and_random_scores()
    docids = [f"d{i}" for i in range(len(scores))]
    hits = list(zip(docids, scores))
    python = io.StringIO()
    write_lines(python, {"q1": hits}, "tag", sort=False)
    java = java_run_writer.formatLines("q1", docids, scores, "tag")
    differing = [(p, j) for p, j in zip(python.getvalue().splitlines(), java.splitlines()) if p != j]
    assert not differing, f"{len(differing)} lines differ, e.g. {differing[:3]}"
    assert java == python.getvalue()
    halfway = sum(1 for x in scores if abs(abs(x) * 1e6 % 1 - 0.5) < 1e-6)
    assert halfway > 20000  # the test meets many half-way values (not only easy ones)


def test_a_pipe_or_a_folder_given_for_an_input_file_is_named_as_such(tmp_path):
    """``--qrels <(...)`` and ``--run a=<(...)`` said "no such file" of a path that exists."""
    import os

    from lsr_lucene.errors import InputError
    from lsr_lucene.eval.trec import read_qrels
    from lsr_lucene.io.runs import read_run
    from lsr_lucene.io.topics import read_topics

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for reader in (read_run, read_qrels, read_topics):
        with pytest.raises(InputError, match=rf"^{fifo}: not a regular file \(a pipe or <\(...\) process"):
            reader(fifo)
    with pytest.raises(InputError, match=rf"^{tmp_path}: is a directory, not a run file$"):
        read_run(tmp_path)
    with pytest.raises(InputError, match=rf"^{tmp_path / 'nope'}: no such qrels file$"):
        read_qrels(tmp_path / "nope")
