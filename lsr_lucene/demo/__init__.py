"""The demo: the shipped demo collection (``lsr_lucene/data/demo``) and ``lsr-lucene demo`` (``demo.cli``), which
encodes, indexes, searches and evaluates it with the same ``main`` functions users run."""
from __future__ import annotations

from pathlib import Path

DEMO_DATA = Path(__file__).resolve().parents[1] / "data" / "demo"


def demo_files() -> dict[str, Path]:
    """Paths of the shipped demo corpus, topics and qrels."""
    return {name: DEMO_DATA / file for name, file in
            (("corpus", "corpus.jsonl"), ("topics", "topics.tsv"), ("qrels", "qrels.txt"))}
