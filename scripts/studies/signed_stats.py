"""Sign and sparsity statistics of (signed) sparse vectors, and NevIR pairwise accuracy through a Lucene index.

Statistics: average non-zero terms per vector and the share of non-zero weights that are negative
(document vectors hold a negative weight w of term t as ``neg_<t>`` with impact |w|; they are merged back
into signed weights first).

NevIR through Lucene: each dev row's two documents are indexed as ``<row>-d1`` and ``<row>-d2`` and its
queries are ``<row>-q1`` and ``<row>-q2``; every query is scored against both documents of its row with
SignedImpactQuery (``SpecSearcher.score``: Σ_t q_t·(impact_t − impact_neg_t)), and a row is correct when
q1 scores d1 above d2 and q2 scores d2 above d1.

Commands::

    python -m scripts.studies.signed_stats nevir-corpus --nevir dev.jsonl --corpus dev-docs.jsonl --topics dev-queries.tsv
    python -m scripts.studies.signed_stats nevir-eval --nevir dev.jsonl --index IDX --query-vectors Q.jsonl \
        [--vectors DOCVECS] [--name NAME] [--output result.json]
    python -m scripts.studies.signed_stats stats --vectors DOCVECS [--query-vectors Q.jsonl]
    python -m scripts.studies.signed_stats table --result a.json --result b.json ... --output runs/nevir/results
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from lsr_lucene.errors import InputError, json_problem
from lsr_lucene.io.vectors import signed as signed_vector


# ------------------------------------------------------------------------------------------ statistics
def vector_stats(vectors: Iterable[Mapping[str, float]], merge_neg: bool = True) -> dict[str, float]:
    """Count, average non-zero / positive / negative terms per vector, and the negative share of non-zeros."""
    count = nonzero = negative = 0
    for vector in vectors:
        signed = signed_vector(vector) if merge_neg else {t: w for t, w in vector.items() if w != 0}
        count += 1
        nonzero += len(signed)
        negative += sum(1 for w in signed.values() if w < 0)
    if count == 0:
        raise InputError("no vectors to summarise")
    return {"vectors": count, "avg_nonzero": nonzero / count, "avg_positive": (nonzero - negative) / count,
            "avg_negative": negative / count, "negative_share": negative / nonzero if nonzero else 0.0}


def file_stats(path: str | Path) -> dict[str, float]:
    """Statistics of a JsonVectorCollection file/directory (documents) or a query-vector JSONL file."""
    from lsr_lucene.io.vectors import read_vectors

    return vector_stats(vector for _, vector in read_vectors(path))


# ------------------------------------------------------------------------------------------ NevIR
def nevir_doc_ids(row_id: str) -> tuple[str, str]:
    """Index ids of a NevIR row's two documents."""
    return f"{row_id}-d1", f"{row_id}-d2"


def nevir_query_ids(row_id: str) -> tuple[str, str]:
    """Query ids of a NevIR row's two queries."""
    return f"{row_id}-q1", f"{row_id}-q2"


def _check_ids(rows: Sequence[Mapping[str, str]], path: str | Path) -> None:
    for row in rows:
        if any(c.isspace() for c in row["id"]):
            raise InputError(f"{path}: row id {row['id']!r} contains white space (not usable as a TREC id)")


def write_nevir_collection(nevir: str | Path, corpus: str | Path, topics: str | Path,
                           overwrite: bool = False) -> int:
    """Write a NevIR file's documents as corpus JSONL {id, title, text} and its queries as topics TSV."""
    from lsr_lucene.eval.contrastive_metrics import read_nevir
    from lsr_lucene.io.output import atomic_output

    rows = read_nevir(nevir)
    _check_ids(rows, nevir)
    with atomic_output(corpus, overwrite=overwrite) as tmp:
        with open(tmp, "w", encoding="utf-8") as out:
            for row in rows:
                for doc_id, text in zip(nevir_doc_ids(row["id"]), (row["doc1"], row["doc2"])):
                    out.write(json.dumps({"id": doc_id, "title": "", "text": text}, ensure_ascii=False) + "\n")
    with atomic_output(topics, overwrite=overwrite) as tmp:
        with open(tmp, "w", encoding="utf-8") as out:
            for row in rows:
                for qid, text in zip(nevir_query_ids(row["id"]), (row["q1"], row["q2"])):
                    out.write(f"{qid}\t{' '.join(text.split())}\n")
    return len(rows)


def nevir_index_scores(index: str | Path, rows: Sequence[Mapping[str, str]],
                       query_vectors: Mapping[str, Mapping[str, float]]) -> list[tuple[float, float, float, float]]:
    """(q1·d1, q1·d2, q2·d1, q2·d2) per row, scored by SignedImpactQuery on the index (empty query: all 0)."""
    from lsr_lucene.search.spec_searcher import SpecSearcher
    from lsr_lucene.search.specs import make_spec

    scores = []
    with SpecSearcher(str(index)) as searcher:
        for row in rows:
            docs = list(nevir_doc_ids(row["id"]))
            four: list[float] = []
            for qid in nevir_query_ids(row["id"]):
                if qid not in query_vectors:
                    raise InputError(f"query vector {qid!r} missing (encode the topics written by nevir-corpus)")
                terms = {t: w for t, w in query_vectors[qid].items() if w != 0}
                four.extend(searcher.score(make_spec(qid, terms), docs) if terms else [0.0, 0.0])
            scores.append((four[0], four[1], four[2], four[3]))
    return scores


def nevir_index_accuracy(index: str | Path, rows: Sequence[Mapping[str, str]],
                         query_vectors: Mapping[str, Mapping[str, float]]) -> dict:
    """NevIR pairwise accuracy (and error categories) of query vectors searched on the row documents' index."""
    from lsr_lucene.eval.contrastive_metrics import nevir_pairwise_accuracy

    return nevir_pairwise_accuracy(nevir_index_scores(index, rows, query_vectors))


# ------------------------------------------------------------------------------------------ table
TABLE_COLUMNS = (("pairwise_accuracy", "NevIR dev pairwise acc."), ("docs_avg_nonzero", "terms/doc"),
                 ("docs_negative_share", "neg. share (docs)"), ("queries_avg_nonzero", "terms/query"),
                 ("queries_negative_share", "neg. share (queries)"))


def results_table(results: Sequence[Mapping]):
    """A DataFrame (one row per model) from nevir-eval result dicts, in the given order."""
    import pandas as pd

    if not results:
        raise InputError("no results to tabulate")
    extra = []
    for r in results:
        for key in r:
            if key.startswith("extra:") and key not in extra:
                extra.append(key)
    rows = []
    for r in results:
        row = {label: r.get(key, float("nan")) for key, label in TABLE_COLUMNS}
        row.update({key[len("extra:"):]: r.get(key, float("nan")) for key in extra})
        rows.append(row)
    return pd.DataFrame(rows, index=pd.Index([r.get("name", "?") for r in results], name="model"))


EPOCH_STATS = (("docs", "nonzero", "terms/doc"), ("docs", "negative_share", "neg. share (docs)"),
               ("queries", "nonzero", "terms/query"), ("queries", "negative_share", "neg. share (queries)"))


def epochs_table(logs: Sequence[tuple[str, str | Path]]):
    """A DataFrame (one row per model and epoch) of the held-out NevIR figures in training logs
    (``train_log.jsonl``; epoch 0 is the model before training)."""
    import pandas as pd

    from lsr_lucene.io.output import open_jsonl

    rows = []
    for name, path in logs:
        for line_no, record in open_jsonl(path):
            dev = record.get("dev")
            if not isinstance(dev, dict) or "pairwise_accuracy" not in dev:
                raise InputError(f"{path}:{line_no}: no held-out figures (\"dev\") in this training log record")
            rows.append({"model": name, "epoch": record.get("epoch"),
                         "held-out pairwise acc.": dev["pairwise_accuracy"],
                         "reversed": dev.get("reversed"),
                         "same doc for both": dev.get("prefers doc1 for both", 0) + dev.get("prefers doc2 for both", 0),
                         "training CE": record.get("train", {}).get("ce", float("nan")),
                         **{label: dev.get(side, {}).get(key) for side, key, label in EPOCH_STATS}})
    if not rows:
        raise InputError("no training log records to tabulate")
    return pd.DataFrame(rows).set_index(["model", "epoch"])


def _flatten(name: str, accuracy: dict | None, docs: dict | None, queries: dict | None) -> dict:
    out: dict = {"name": name}
    if accuracy:
        out.update(accuracy)
    for prefix, stats in (("docs", docs), ("queries", queries)):
        for key, value in (stats or {}).items():
            out[f"{prefix}_{key}"] = value
    return out


# ------------------------------------------------------------------------------------------ CLI
def build_parser() -> argparse.ArgumentParser:
    """Arguments of ``python -m scripts.studies.signed_stats``."""
    parser = argparse.ArgumentParser(
        allow_abbrev=False, prog="python -m scripts.studies.signed_stats", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("nevir-corpus", help="write a NevIR file's documents (corpus JSONL) and queries (topics TSV)")
    p.add_argument("--nevir", required=True)
    p.add_argument("--corpus", required=True)
    p.add_argument("--topics", required=True)
    p.add_argument("--overwrite", action="store_true")
    p = sub.add_parser("nevir-eval", help="pairwise accuracy through the index, plus vector statistics")
    p.add_argument("--nevir", required=True, help="NevIR rows {id, q1, doc1, q2, doc2}")
    p.add_argument("--index", required=True, help="impact index of the rows' documents (ids <row>-d1, <row>-d2)")
    p.add_argument("--query-vectors", required=True, help="query vectors JSONL (ids <row>-q1, <row>-q2)")
    p.add_argument("--vectors", default=None, help="the indexed document vectors (for statistics)")
    p.add_argument("--name", default=None, help="model name in the result (default: the index directory name)")
    p.add_argument("--extra", action="append", default=[], metavar="KEY=VALUE",
                   help="extra numeric column for the table (repeatable), e.g. 'Cranfield nDCG@10=0.36'")
    p.add_argument("--output", default=None, help="write the result as JSON here (default: print it)")
    p.add_argument("--overwrite", action="store_true")
    p = sub.add_parser("stats", help="non-zero terms per vector and share of negative weights")
    p.add_argument("--vectors", default=None, help="document vectors (JsonVectorCollection file or directory)")
    p.add_argument("--query-vectors", default=None, help="query vectors JSONL")
    p = sub.add_parser("table", help="Markdown + CSV table from nevir-eval results")
    p.add_argument("--result", action="append", required=True, help="a nevir-eval JSON file (repeatable, in order)")
    p.add_argument("--output", required=True, help="path stem: writes STEM.md and STEM.csv")
    p.add_argument("--overwrite", action="store_true")
    p = sub.add_parser("epochs", help="Markdown + CSV table of held-out figures per epoch from training logs")
    p.add_argument("--log", action="append", required=True, metavar="NAME=TRAIN_LOG",
                   help="a model name and its train_log.jsonl (repeatable, in order)")
    p.add_argument("--output", required=True, help="path stem: writes STEM.md and STEM.csv")
    p.add_argument("--overwrite", action="store_true")
    return parser


def _parse_extra(items: Sequence[str]) -> dict[str, float]:
    out = {}
    for item in items:
        key, sep, value = item.rpartition("=")
        try:
            out[f"extra:{key}"] = float(value)
        except ValueError:
            sep = ""
        if not sep or not key:
            raise InputError(f"--extra needs KEY=NUMBER, got {item!r}")
    return out


def main(argv: list[str] | None = None) -> int:
    """Run one of the subcommands (see the module docstring)."""
    args = build_parser().parse_args(argv)
    if args.command == "nevir-corpus":
        n = write_nevir_collection(args.nevir, args.corpus, args.topics, overwrite=args.overwrite)
        print(f"wrote {2 * n} documents to {args.corpus} and {2 * n} queries to {args.topics}")
        return 0
    if args.command == "stats":
        if not args.vectors and not args.query_vectors:
            raise InputError("give --vectors and/or --query-vectors")
        out = {}
        if args.vectors:
            out["docs"] = file_stats(args.vectors)
        if args.query_vectors:
            out["queries"] = file_stats(args.query_vectors)
        print(json.dumps(out, indent=2))
        return 0
    if args.command == "nevir-eval":
        from lsr_lucene.eval.contrastive_metrics import read_nevir
        from lsr_lucene.io.output import atomic_output, refuse_existing
        from lsr_lucene.io.topics import read_query_vectors

        if args.output:
            refuse_existing(args.output, args.overwrite)
        extra = _parse_extra(args.extra)
        rows = read_nevir(args.nevir)
        queries = read_query_vectors(args.query_vectors)
        accuracy = nevir_index_accuracy(args.index, rows, queries)
        docs = file_stats(args.vectors) if args.vectors else None
        result = _flatten(args.name or Path(args.index).name, accuracy, docs,
                          vector_stats(queries.values(), merge_neg=False))
        result.update(extra)
        text = json.dumps(result, indent=2)
        if args.output:
            with atomic_output(args.output, overwrite=args.overwrite) as tmp:
                Path(tmp).write_text(text + "\n")
        print(text)
        return 0
    if args.command == "table":
        from lsr_lucene.eval.trec import to_markdown, write_table

        results = []
        for path in args.result:
            try:
                results.append(json.loads(Path(path).read_text()))
            except FileNotFoundError:
                raise InputError(f"{path}: no such file") from None
            except json.JSONDecodeError as exc:
                raise InputError(f"{path}: malformed JSON ({json_problem(exc)})") from None
        df = results_table(results)
        write_table(df, args.output, overwrite=args.overwrite)
        print(to_markdown(df))
        return 0
    if args.command == "epochs":
        from lsr_lucene.eval.trec import to_markdown, write_table

        logs = []
        for item in args.log:
            name, sep, path = item.partition("=")
            if not sep or not name or not path:
                raise InputError(f"--log needs NAME=TRAIN_LOG, got {item!r}")
            logs.append((name, path))
        df = epochs_table(logs)
        write_table(df, args.output, overwrite=args.overwrite)
        print(to_markdown(df))
        return 0
    return 2


if __name__ == "__main__":
    from lsr_lucene.cli import run_main

    sys.exit(run_main(main))
