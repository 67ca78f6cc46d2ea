"""The compose command on the shipped demo collection with splade-tiny: Lucene runs equal exact dot products."""
from __future__ import annotations

from pathlib import Path

import pytest

from lsr_lucene.compose.backends import ExactBackend, LuceneBackend
from lsr_lucene.compose.cli import main
from lsr_lucene.compose.compositions import read_compositions
from lsr_lucene.compose.execute import compose, execute
from lsr_lucene.compose.query_encoder import QueryEncoder
from lsr_lucene.errors import InputError
from lsr_lucene.compose.operations import OPERATIONS, Settings

DEMO = Path(__file__).resolve().parents[1] / "lsr_lucene" / "data" / "demo"


def read_run(path: Path) -> dict[str, list[tuple[str, float]]]:
    from lsr_lucene.io.runs import read_hits

    return read_hits(path)


@pytest.fixture(scope="module")
def query_encoder():
    return QueryEncoder("splade-tiny", threads=1)


@pytest.mark.parametrize("mode", ["full", "no-term-weights"])
def test_every_operation_lucene_equals_exact(demo, query_encoder, mode):
    comps = read_compositions(DEMO / "compositions.jsonl")
    qids = [c.qid for c in comps]
    encoder = QueryEncoder(mode=mode, encoder=query_encoder.encoder)
    exact = ExactBackend(demo / "vectors")
    lucene = LuceneBackend(demo / "index", threads=1)
    try:
        for operation in OPERATIONS:
            plans = compose(comps, Settings(operation, top_pairs=3), encoder)
            got = execute(qids, plans, lucene, 100, hits=20, fusion_depth=10)
            ref = execute(qids, plans, exact, 100, hits=20, fusion_depth=10)
            for qid in qids:
                assert [s for _, s in got[qid]] == pytest.approx([s for _, s in ref[qid]], rel=1e-5, abs=1e-3), \
                    (operation, qid)
                tied = {d for d, s in got[qid] if got[qid] and s == got[qid][-1][1]}
                assert {d for d, _ in got[qid]} ^ {d for d, _ in ref[qid]} <= tied | {d for d, s in ref[qid]
                                                                                      if s == ref[qid][-1][1]}
    finally:
        lucene.close()


def test_cli_queries_file(demo, tmp_path):
    out = tmp_path / "run"
    assert main(["--index", str(demo / "index"), "--queries", str(DEMO / "compositions.jsonl"),
                 "--operation", "cpt", "--no-expansion", "--hits", "10", "--output", str(out)]) == 0
    lines = out.read_text().splitlines()
    assert {line.split()[0] for line in lines} == {str(i) for i in range(1, 27)}
    assert all(line.endswith(" compose-cpt") for line in lines)


def test_topics_are_parsed_and_explained(demo, tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["--index", str(demo / "index"), "--query", "tea without caffeine", "--explain",
                 "--operation", "disentangled", "--output", str(out), "--hits", "5"]) == 0
    text = capsys.readouterr().out
    assert "cue 'without'" in text and "B: 'caffeine'" in text and ": -" in text and "  1. " in text
    assert len(out.read_text().splitlines()) == 5


def test_cli_errors(demo, tmp_path):
    base = ["--index", str(demo / "index"), "--output", str(tmp_path / "r")]
    with pytest.raises(InputError, match="does not apply to 'not' nodes"):
        main([*base, "--query", "tea without caffeine", "--not-op", "cpt"])
    with pytest.raises(InputError, match="empty query"):
        main([*base, "--query", " "])
    with pytest.raises(SystemExit):
        main([*base, "--query", "x", "--operation", "negate"])
