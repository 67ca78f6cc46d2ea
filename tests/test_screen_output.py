"""Results on screen (issue 51): ``search``, ``compose`` and ``bm25`` without ``--output`` print each query's top
hits (rank, docid, score, start of the stored text) as the run file would rank them; ``--output -`` writes the
run itself to stdout and nothing else; ``--output FILE`` is unchanged."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from lsr_lucene.cli import main as cli
from lsr_lucene.io.runs import read_hits

DEMO = Path(__file__).resolve().parents[1] / "lsr_lucene" / "data" / "demo"
QUERY = "what causes rain"


def demo_texts() -> dict[str, str]:
    return {(d := json.loads(line))["id"]: f"{d.get('title', '')} {d['text']}".strip()
            for line in (DEMO / "corpus.jsonl").read_text().splitlines()}


def screen_rows(out: str) -> list[tuple[str, str, str]]:
    """(docid, score, text) of the hit lines printed on screen."""
    rows = []
    for line in out.splitlines():
        parts = line.split(maxsplit=3)
        if len(parts) >= 3 and parts[0].isdigit():
            rows.append((parts[1], parts[2], parts[3] if len(parts) > 3 else ""))
    return rows


def check_screen(out: str, run: Path, hits: int) -> None:
    """The screen shows the run's first ``hits`` hits in order, each with the start of its document's text."""
    expected = [(d, f"{s:.6f}") for d, s in next(iter(read_hits(run).values()))[:hits]]
    rows = screen_rows(out)
    assert [(d, s) for d, s, _ in rows] == expected and len(rows) == hits
    texts = demo_texts()
    for docid, _, text in rows:
        assert text and " ".join(texts[docid].split()).startswith(text.rstrip("…")), (docid, text)


@pytest.mark.parametrize("verb", ["search", "compose"])
def test_search_and_compose_show_hits_or_write_the_run_to_stdout(demo, tmp_path, capsys, verb):
    index = demo / "index"
    query = QUERY if verb == "search" else "rain but not acid rain"
    base = [verb, "--index", str(index), "--query", query, "--threads", "1"]
    assert cli([*base, "--output", str(tmp_path / "run"), "--hits", "5"]) == 0
    capsys.readouterr()
    assert cli(base) == 0  # no --output: ten hits on screen
    out = capsys.readouterr().out
    assert out.splitlines()[0] == f"query 1: {query}"
    assert len(screen_rows(out)) == 10
    check_screen("\n".join(out.splitlines()[:6]), tmp_path / "run", 5)
    assert cli([*base, "--output", "-", "--hits", "5"]) == 0
    assert capsys.readouterr().out == (tmp_path / "run").read_text()  # the run itself, nothing else
    assert cli([*base, "--output", str(tmp_path / "run")]) == 2  # --output FILE: refused as before
    assert "already exists" in capsys.readouterr().err


def test_bm25_shows_hits(tmp_path, capsys):
    corpus, topics = DEMO / "corpus.jsonl", tmp_path / "topics.tsv"
    topics.write_text(f"q1\t{QUERY}\n")
    index = tmp_path / "bm25"
    assert cli(["bm25", "--corpus", str(corpus), "--index", str(index), "--topics", str(topics), "--output",
                str(tmp_path / "run"), "--threads", "1"]) == 0
    capsys.readouterr()
    assert cli(["bm25", "--index", str(index), "--topics", str(topics), "--hits", "3", "--threads", "1"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == f"query q1: {QUERY}"
    check_screen(out, tmp_path / "run", 3)
