"""The distributed benchmark's helpers (no cluster, no JVM): parts chosen by passage count and linked, not copied;
the one-index baseline's scan for the queries that got hits."""
from __future__ import annotations

import pytest

from lsr_lucene.bench.distributed_real import TIME_LINE, link_collection, select_parts
from lsr_lucene.errors import InputError
from lsr_lucene.io.runs import answered
from lsr_lucene.search.impact import answered_in_order


def _parts(folder, sizes):
    folder.mkdir()
    for i, size in enumerate(sizes):
        (folder / f"part-{i:05d}.jsonl").write_text("".join(f'{{"id": "d{i}-{j}"}}\n' for j in range(size)))
    (folder / "metadata.json").write_text("{}")
    return folder


def test_parts_end_on_a_boundary_and_are_linked(tmp_path):
    vectors = _parts(tmp_path / "v", [3, 3, 2])
    parts, docs = select_parts(vectors, 6)
    assert [p.name for p in parts] == ["part-00000.jsonl", "part-00001.jsonl"] and docs == 6
    assert select_parts(vectors, 0)[1] == 8
    for bad in (5, 9):
        with pytest.raises(InputError, match="ends on a part's boundary"):
            select_parts(vectors, bad)
    link_collection(parts, tmp_path / "c")
    link_collection(select_parts(vectors, 3)[0], tmp_path / "c")  # relinked for another count
    linked = sorted(p.name for p in (tmp_path / "c").iterdir())
    assert linked == ["metadata.json", "part-00000.jsonl"] and (tmp_path / "c" / linked[1]).is_symlink()


def test_time_line_is_read():
    line = "time: searchers started in 1.63 s; search 20.76 s, 1.61 s of it beyond the busiest searcher's, ..."
    assert TIME_LINE.search("x\n" + line).groups() == ("1.63", "20.76")


def test_answered_in_order_equals_parsing_the_run(tmp_path):
    run = tmp_path / "r.run"
    run.write_text("q1 Q0 a 1 2.000000 t\nq1 Q0 b 2 1.000000 t\nq3 Q0 a 1 1.000000 t\nq10 Q0 c 1 1.000000 t\n")
    qids = ["q1", "q2", "q3", "q1x", "q10", "q4"]
    assert answered_in_order(run, qids) == answered(run) & set(qids) == {"q1", "q3", "q10"}
    run.write_text("q2 Q0 a 1 2.000000 t\n")
    assert answered_in_order(run, ["q1", "q2"]) == {"q2"}
    run.write_text("")
    assert answered_in_order(run, ["q1"]) == set()
