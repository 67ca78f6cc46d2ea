"""The negation default in one step (issue 51): ``lsr-lucene index --dense`` writes the dense leg (``<index>/dense``)
from the vectors' text or ``--corpus``, and every composer without it says so, naming the command that adds it."""
from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from lsr_lucene.cli import main as cli

DOCS = 24  # a small slice of the demo collection: the dense encoder runs in seconds


@pytest.fixture(scope="module")
def small(demo, tmp_path_factory):
    """The first DOCS demo vectors (with their text), the same without text, and the demo corpus slice."""
    root = tmp_path_factory.mktemp("index-dense")
    lines = (demo / "vectors" / "part-00000.jsonl").read_text().splitlines()[:DOCS]
    (root / "vectors.jsonl").write_text("\n".join(lines) + "\n")
    bare = [json.dumps({k: v for k, v in json.loads(line).items() if k != "contents"}) for line in lines]
    (root / "bare.jsonl").write_text("\n".join(bare) + "\n")
    corpus = [json.dumps({"id": (row := json.loads(line))["id"], "text": row["contents"]}) for line in lines]
    (root / "corpus.jsonl").write_text("\n".join(corpus) + "\n")
    return root


def embedded_ids(index: Path) -> list[str]:
    return (index / "dense" / "docids.txt").read_text().split()


def test_index_dense_writes_the_leg_from_the_vectors_text(small, capsys):
    index = small / "ix"
    assert cli(["index", "--input", str(small / "vectors.jsonl"), "--index", str(index), "--threads", "1",
                "--dense"]) == 0
    out = capsys.readouterr().out
    assert "dense-impacts sidecar" in out and f"dense leg: {DOCS} document embeddings" in out
    ids = [json.loads(line)["id"] for line in (small / "vectors.jsonl").read_text().splitlines()]
    assert embedded_ids(index) == ids
    meta = json.loads((index / "dense" / "metadata.json").read_text())
    assert meta["corpus"] == str(small / "vectors.jsonl") and meta["count"] == DOCS
    assert cli(["index", "--index", str(index), "--dense"]) == 2  # add mode refuses to replace it
    assert "already exists" in capsys.readouterr().err
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the full default: no warning
        from lsr_lucene.compose.searcher import ComposeSearcher

        ComposeSearcher(index).close()


def test_vectors_without_text_need_the_corpus(small, capsys):
    index = small / "bare-ix"
    assert cli(["index", "--input", str(small / "bare.jsonl"), "--index", str(index), "--threads", "1",
                "--dense-impacts", "0"]) == 0
    capsys.readouterr()
    assert cli(["index", "--index", str(index), "--dense"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"lsr-lucene index --index {index} --dense --corpus CORPUS" in err
    assert cli(["index", "--index", str(index), "--dense", "--corpus", str(small / "corpus.jsonl")]) == 0
    assert embedded_ids(index) == [json.loads(line)["id"] for line in (small / "bare.jsonl").read_text().splitlines()]


def test_composers_without_the_leg_say_so(small, capsys):
    """ComposeSearcher (so PyTerrier's composer and the server) warn; compose prints one note line; both name the
    command that adds the leg. Asking for no leg (dense="none") or another not operation is no weaker default."""
    from lsr_lucene.compose.dense_leg import MissingDenseLegWarning
    from lsr_lucene.compose.searcher import ComposeSearcher

    index = small / "no-leg"
    assert cli(["index", "--input", str(small / "vectors.jsonl"), "--index", str(index), "--threads", "1"]) == 0
    command = f"lsr-lucene index --index {index} --dense"
    with pytest.warns(MissingDenseLegWarning, match=command):
        ComposeSearcher(index).close()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ComposeSearcher(index, dense="none").close()
        ComposeSearcher(index, not_op="nrf").close()
    capsys.readouterr()
    assert cli(["compose", "--index", str(index), "--query", "tea but not green tea", "--hits", "3",
                "--threads", "1", "--encoder", "splade-tiny"]) == 0  # hand-written vectors record no model
    err = capsys.readouterr().err
    notes = [line for line in err.splitlines() if line.startswith("note: no dense leg")]
    assert len(notes) == 1 and notes[0].endswith(command) and "MissingDenseLegWarning" not in err
