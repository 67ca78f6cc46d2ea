"""BM25 baselines (plain, RM3, SDM) with Anserini's default analyzer on the same corpus and topics.

The corpus is indexed once with Anserini's IndexCollection (positions and document vectors
stored so RM3 and SDM work) and searched with Anserini's SearchCollection in-process, so
every results table can show the classic baseline measured in the same run.
"""
from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from lsr_lucene.errors import InputError
from lsr_lucene.index.impact import index_size, run_index_collection
from lsr_lucene.index.kind import BM25, INDEX_METADATA, index_record, require_index_kind
from lsr_lucene.io.claims import temporary_prefix
from lsr_lucene.io.output import atomic_output, refuse_existing

K1, B = 0.9, 0.4  # Anserini's defaults
MAX_CLAUSES = 65_536


def _clean(text: str) -> str:
    return " ".join(text.split())


def build_bm25_index(corpus: str, index: str | Path, threads: int = 2, overwrite: bool = False) -> dict:
    """Index ``corpus`` (any format lsr_lucene.io.corpus reads) with Anserini's default analyzer."""
    from lsr_lucene.progress import progress_bar

    from lsr_lucene.io.corpus import check_unique, read_corpus

    refuse_existing(index, overwrite)
    with atomic_output(index, overwrite=overwrite, directory=True) as tmp, \
            tempfile.TemporaryDirectory(dir=Path(index).parent, prefix=temporary_prefix(Path(index))) as staging:
        count = 0
        with open(Path(staging, "docs.jsonl"), "w", encoding="utf-8") as out:
            for doc in progress_bar(check_unique(read_corpus(corpus)), desc="preparing BM25 corpus", unit=" docs"):
                out.write(json.dumps({"id": doc.id, "contents": doc.contents}) + "\n")
                count += 1
        if count == 0:
            raise InputError(f"{corpus}: no documents")
        run_index_collection(["-collection", "JsonCollection", "-input", staging, "-index", str(tmp),
                              "-generator", "DefaultLuceneDocumentGenerator", "-threads", str(threads),
                              "-storePositions", "-storeDocvectors", "-storeRaw", "-quiet"])
        metadata = {**index_record(BM25), "corpus": str(Path(corpus).resolve()), "documents": count}
        (tmp / INDEX_METADATA).write_text(json.dumps(metadata, indent=2) + "\n")
    metadata["size_bytes"] = index_size(index)
    return metadata


def ensure_bm25_index(corpus: str | None, index: str | Path, threads: int = 2, rebuild: bool = False) -> None:
    """Build the BM25 index when missing (or ``rebuild``); reuse it when it was built from the same corpus."""
    index = Path(index)
    if rebuild and not corpus:
        raise InputError("--rebuild-index needs --corpus: the corpus to build the index from")
    if index.exists():  # never search, nor rebuild over, an index of another kind
        require_index_kind(index, BM25, "bm25")
    if index.exists() and not rebuild:
        meta_file = index / INDEX_METADATA
        built_from = json.loads(meta_file.read_text()).get("corpus") if meta_file.exists() else None
        if corpus and built_from is not None and Path(built_from).resolve() != Path(corpus).resolve():
            raise InputError(f"{index} was built from {built_from}, not {corpus}; pass --rebuild-index")
        return
    if not corpus:
        raise InputError(f"{index}: no such index; pass --corpus to build it")
    build_bm25_index(corpus, index, threads=threads, overwrite=rebuild)


def write_topics_tsv(topics: dict[str, str], path: Path) -> None:
    """Topics as Anserini's TsvString format (one ``qid<TAB>text`` per line, whitespace collapsed)."""
    with open(path, "w", encoding="utf-8") as out:
        for qid, text in topics.items():
            out.write(f"{qid}\t{_clean(text)}\n")


def in_topic_order(run: Path, topics: dict[str, str]) -> set[str]:
    """Rewrite a run (SearchCollection writes queries in its own order) in the topics' order, as ``search`` does;
    each query's lines keep their order. Returns the qids with hits."""
    by_qid: dict[str, list[str]] = {}
    with open(run, encoding="utf-8") as handle:
        for line in handle:
            by_qid.setdefault(line.split(maxsplit=1)[0], []).append(line)
    order = list(topics) + [qid for qid in by_qid if qid not in topics]
    with open(run, "w", encoding="utf-8") as out:
        for qid in order:
            out.writelines(by_qid.get(qid, ()))
    return set(by_qid)


def bm25_run(index: str | Path, topics: dict[str, str], output: str | Path, hits: int = 1000, threads: int = 2,
             k1: float = K1, b: float = B, rm3: bool = False, sdm: bool = False, tag: str | None = None,
             overwrite: bool = False) -> None:
    """Write a BM25 (or BM25+RM3, BM25+SDM) run with Anserini's SearchCollection."""
    from lsr_lucene.jvm import runtime as jvm
    from lsr_lucene.jvm.classes import java_printed_errors

    require_index_kind(index, BM25, "bm25")
    if not any(Path(index).glob("segments_*")):  # else Anserini's "no segments* file found in MMapDirectory@..."
        raise InputError(f"{index} holds no Lucene index (no segments_* file); build one with `lsr-lucene bm25 "
                         f"--corpus CORPUS --index {index} --rebuild-index`")
    if hits < 1 or threads < 1:
        raise InputError(f"--hits and --threads must be at least 1, got {hits} and {threads}")
    refuse_existing(output, overwrite)
    with atomic_output(output, overwrite=overwrite) as tmp, tempfile.TemporaryDirectory() as work:
        topics_file = Path(work, "topics.tsv")
        write_topics_tsv(topics, topics_file)
        args = ["-index", str(index), "-topics", str(topics_file), "-topicReader", "TsvString",
                "-output", str(tmp), "-bm25", "-bm25.k1", str(k1), "-bm25.b", str(b),
                "-hits", str(hits), "-threads", str(threads), "-quiet",
                "-runtag", tag or ("bm25+rm3" if rm3 else "bm25+sdm" if sdm else "bm25")]
        if rm3:
            args.append("-rm3")
        if sdm:
            args.append("-sdm")
        # long queries (whole passages) expand past Lucene's default 1,024 clauses under RM3/SDM, and
        # SearchCollection then skips them silently; the JVM-wide limit is restored afterwards (Pyserini shares it)
        searcher_class = jvm.autoclass("org.apache.lucene.search.IndexSearcher")
        previous_limit = searcher_class.getMaxClauseCount()
        searcher_class.setMaxClauseCount(max(MAX_CLAUSES, previous_limit))
        try:
            with java_printed_errors(f"BM25 search of {index}"):  # per-query failures: one line, no stack traces
                jvm.autoclass("io.anserini.search.SearchCollection").main(args)
        finally:
            searcher_class.setMaxClauseCount(previous_limit)
        answered_qids = in_topic_order(tmp, topics)
        missing = [qid for qid in topics if qid not in answered_qids]
        if missing:
            shown = ", ".join(missing[:10]) + (" ..." if len(missing) > 10 else "")
            print(f"warning: {len(missing)} of {len(topics)} queries got no BM25 hits: {shown}", file=sys.stderr)
