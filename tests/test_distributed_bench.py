"""The distributed benchmark's helpers (no cluster, no JVM): the time line read, the one-index baseline's scan for
the queries that got hits (its parts, chosen and linked: tests/test_bench_parts.py)."""
from __future__ import annotations


from scripts.bench.distributed_real import TIME_LINE
from lsr_lucene.io.runs import answered
from lsr_lucene.search.impact import answered_in_order


def test_time_line_is_read():
    line = "time: searchers started in 1.63 s; search 20.76 s, 1.61 s of it beyond the busiest searcher's, ..."
    assert TIME_LINE.search("x\n" + line).groups() == ("1.63", None, "20.76")
    line = "time: searchers started in 2.41 s (2.20 s of it waited for); search 11.46 s, 0.23 s of it beyond ..."
    assert TIME_LINE.search(line).groups() == ("2.41", "2.20", "11.46")


def test_answered_in_order_equals_parsing_the_run(tmp_path):
    run = tmp_path / "r.run"
    run.write_text("q1 Q0 a 1 2.000000 t\nq1 Q0 b 2 1.000000 t\nq3 Q0 a 1 1.000000 t\nq10 Q0 c 1 1.000000 t\n")
    qids = ["q1", "q2", "q3", "q1x", "q10", "q4"]
    assert answered_in_order(run, qids) == answered(run) & set(qids) == {"q1", "q3", "q10"}
    run.write_text("q2 Q0 a 1 2.000000 t\n")
    assert answered_in_order(run, ["q1", "q2"]) == {"q2"}
    run.write_text("")
    assert answered_in_order(run, ["q1"]) == set()


def test_summary_gives_each_rounds_ratio_and_their_median():
    from scripts.bench.distributed_real import summary

    rows = [{"k": 1000, "shards": 2, "setup": "running Ray", "command_ratio": ratio, "search_ratio": ratio - 0.1}
            for ratio in (1.3, 1.1, 1.2)] + [{"k": 1000, "shards": 1, "setup": "one index", "command_ratio": 1.0}]
    lines = summary(rows)
    assert lines[2] == "| 1000 | running Ray | 2 | 1.30, 1.10, 1.20 | 1.20 | 1.10 |" and len(lines) == 3
