"""The positional weight field (``<index>/positions`` sidecar) that window clauses (WindowQuery/SDM) read."""
from __future__ import annotations

from pathlib import Path

from lsr_lucene.errors import InputError
from lsr_lucene.jvm.classes import java_class, java_errors


def build_positional_field(index_dir: str | Path, tokens_jsonl: str | Path) -> dict:
    """Write the positional weight field sidecar (``<index>/positions``) from per-position token weights JSONL."""
    if not Path(tokens_jsonl).exists():
        raise InputError(f"{tokens_jsonl}: no such file")
    cls = java_class("index.PositionalIndexer")
    with java_errors(str(tokens_jsonl)):
        docs, with_tokens, unknown = cls.build(str(index_dir), str(tokens_jsonl))
    return {"documents": int(docs), "with_tokens": int(with_tokens), "unknown_ids": int(unknown)}
