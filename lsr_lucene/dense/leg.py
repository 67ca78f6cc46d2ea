"""Build an impact index's dense leg (``<index>/dense``): all-MiniLM-L6-v2 embeddings of the same documents, what
``lsr-lucene dense encode --corpus ... --output <index>/dense`` writes, for ``index --dense`` (issue 51: the negation
default with its dense leg in one step).

The text comes from ``corpus`` when given, else from the vectors the index was built from (``lsr-lucene encode``
keeps each document's text as ``contents``), else from the corpus those vectors record (``source``).
"""
from __future__ import annotations

import time
from pathlib import Path

from lsr_lucene.errors import InputError

DENSE_DIR = "dense"  # compose.dense_leg.DENSE_DIR: where ComposeSearcher looks for it


def leg_documents(index: str | Path, corpus: str | None = None, vectors: str | Path | None = None
                  ) -> tuple[list[str], list[str], str]:
    """(ids, texts, where they came from) of the documents the dense leg encodes."""
    from lsr_lucene.index.impact import read_index_metadata
    from lsr_lucene.io.vectors import read_vectors

    if corpus:
        from lsr_lucene.io.corpus import check_unique, read_corpus

        docs = list(check_unique(read_corpus(corpus)))
        return [d.id for d in docs], [d.contents for d in docs], str(corpus)
    vectors = vectors or read_index_metadata(index).get("vectors")
    if vectors and Path(vectors).exists():
        ids, texts = [], []
        for doc_id, _, text in read_vectors(vectors, with_contents=True):  # the vectors themselves are not kept
            ids.append(doc_id)
            texts.append(text or "")
        if any(texts):
            return ids, texts, str(vectors)
        source = _recorded_corpus(vectors)
        if source:
            return leg_documents(index, source)
    raise InputError(f"{index}: no document text for the dense leg (the vectors it was built from "
                     f"{'hold none' if vectors and Path(vectors).exists() else 'are not at hand'}); give the "
                     f"corpus: lsr-lucene index --index {index} --dense --corpus CORPUS")


def _recorded_corpus(vectors: str | Path) -> str | None:
    """The corpus file ``lsr-lucene encode`` recorded in the vectors' metadata, when it still exists."""
    from lsr_lucene.io.vectors import read_metadata

    source = read_metadata(vectors).get("source")
    return source if source and Path(source).is_file() else None


def build_dense_leg(index: str | Path, corpus: str | None = None, vectors: str | Path | None = None,
                    threads: int | None = None, overwrite: bool = False) -> dict:
    """Write ``<index>/dense`` with the default dense model and its approximate index (refused where both exist
    unless ``overwrite``); a dense leg written before the approximate index gets only that (no encoding)."""
    from lsr_lucene.dense.ann import ann_path
    from lsr_lucene.io.output import refuse_existing

    output = Path(index) / DENSE_DIR
    if not overwrite and (output / "metadata.json").is_file() and not ann_path(output).exists():
        return add_ann(output, threads)
    refuse_existing(output, overwrite, directory=True)
    ids, texts, source = leg_documents(index, corpus, vectors)
    return encode_documents(ids, texts, source, output, threads=threads, overwrite=overwrite)


def add_ann(folder: str | Path, threads: int | None = None, overwrite: bool = False) -> dict:
    """Build the approximate index of an existing embeddings folder; returns what was written."""
    from lsr_lucene.dense.ann import build_ann
    from lsr_lucene.dense.store import read_embeddings

    embeddings = read_embeddings(folder)
    settings = build_ann(folder, embeddings, threads, overwrite)
    return {"path": str(folder), "documents": len(embeddings.docids), "ann": settings, "added": True}


def encode_documents(ids: list[str], texts: list[str], source: str, output: str | Path, model: str | None = None,
                     max_length: int | None = None, threads: int | None = None, dtype: str | None = None,
                     device: str | None = None, batch_size: int | None = None, overwrite: bool = False,
                     ann: bool = True) -> dict:
    """Embed ``texts`` with the dense model (default all-MiniLM-L6-v2) into the embeddings folder ``output``
    (``lsr-lucene dense encode``'s output, recording ``source`` as its corpus), with its approximate index unless
    ``ann`` is false; returns what was written."""
    from lsr_lucene.dense.encoder import DEFAULT_BATCH_SIZE, DEFAULT_DTYPE, DEFAULT_MAX_LENGTH, DenseEncoder
    from lsr_lucene.dense.models import DEFAULT_DENSE_MODEL
    from lsr_lucene.dense.store import write_embeddings

    encoder = DenseEncoder(model or DEFAULT_DENSE_MODEL, max_length or DEFAULT_MAX_LENGTH, threads,
                           dtype or DEFAULT_DTYPE, device)
    started = time.perf_counter()
    embeddings = encoder.encode(texts, batch_size or DEFAULT_BATCH_SIZE, desc="encoding documents")
    seconds = time.perf_counter() - started
    write_embeddings(output, ids, embeddings, dict(encoder.settings(), **encoder.precision.metadata(),
                                                   corpus=source), overwrite)
    info = {"path": str(output), "documents": len(ids), "source": source, "seconds": seconds}
    return dict(info, ann=add_ann(output, threads)["ann"]) if ann else info


def dense_leg_summary(info: dict) -> str:
    """One line on a dense leg written (and its approximate index)."""
    ann = info.get("ann")
    built = f"approximate index {ann['kind']} in {ann['seconds']:.1f} s" if ann else "no approximate index"
    if info.get("added"):
        return f"dense leg: {built} added to {info['path']} ({info['documents']:,} embeddings)"
    return (f"dense leg: {info['documents']:,} document embeddings from {info['source']} in {info['path']} "
            f"({info['seconds']:.1f} s; {built})")
