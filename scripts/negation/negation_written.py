"""Written exclusion requests (issue 49): freshly written questions on the benchmarks' own unused passage pairs.

The dev sets cannot say how the default does on requests worded as nobody in them worded theirs, and templates
(``negation_hard_pairs``) word every request alike. ``runs/negation/written_pairs.jsonl`` holds questions written,
one per pair, by separate writer sessions that saw only the two passages, the wanted / excluded roles, six dev
questions for style and the instruction to vary the wording (``runs/negation/written_pairs.md``), on the passage
pairs of the two corpora that no dev row uses: BoolQuestions' 216 (wanted 2k, excluded 2k+1, as its dev rows
are) and ExcluIR's adjacent pairs (roles by a hash). Rows carry their ``set``: ``replica`` and ``fresh-1`` were
read while the parser was changed (tuning); ``fresh-2``, ``overlap`` and ``broad`` (everything but the exclusion
fits both passages) were written after the last change and scored once.

``score``: every row's R@1 / RR under the default (dense leg) of the lsr_lucene on the import path, so an older
tree can be scored with this file copied in (``scripts/run_negation_written.sh``). That is why it opens corpora and
the query encoder itself instead of calling ``negation_nested.open_corpus`` / ``query_encoder``, and writes its CSV
itself instead of calling ``io.output.write_csv_rows``: 240ec7a, the code issue 49 measured, has neither.
``table``: R@1 and RR with 95% bootstrap intervals per code, set and benchmark from several ``score`` outputs.
"""
from __future__ import annotations

import argparse
import csv
import json
import sys
from lsr_lucene.io.vectors import read_metadata
from pathlib import Path
from typing import Mapping, Sequence

SOURCES = {"ExcluIR": "excluir", "BoolQuestions": "boolq"}  # row "source" -> option naming its corpus folder


def read_pairs(path: Path) -> list[dict]:
    """The written rows {id, set, source, query, pos_id, neg_id}; a row without one of them is refused by line."""
    rows = []
    with open(path, encoding="utf-8") as f:
        for line_no, line in enumerate(f, start=1):
            row = json.loads(line)
            missing = {"id", "set", "source", "query", "pos_id", "neg_id"} - set(row)
            if missing or row["source"] not in SOURCES:
                raise ValueError(f"{path}:{line_no}: missing {', '.join(sorted(missing))} or unknown source")
            rows.append(row)
    return rows


def score(rows: Sequence[Mapping], corpora: Mapping[str, Path], work: Path, model: str = "splade-tiny",
          threads: int = 2) -> list[dict]:
    """Per row: ``r1`` (the wanted passage ranks first) and ``rr`` (it scores above the excluded one), under the
    default with its dense leg, exact scores over the row's whole corpus."""
    from lsr_lucene.compose.backends import ExactBackend
    from lsr_lucene.compose.compositions import parse_topics
    from lsr_lucene.compose.dense_leg import DenseLeg
    from lsr_lucene.compose.execute import compose, execute
    from lsr_lucene.compose.operations import Settings
    from lsr_lucene.compose.query_encoder import CachedQueryEncoder
    from lsr_lucene.eval.contrastive_metrics import excluir_outcome
    from scripts.negation.contrastive_configs import make_encoders
    from scripts.negation.contrastive_runs import read_query_cache, write_query_cache
    from scripts.negation.excluir import ensure_vectors
    from scripts.negation.negation_harm import ensure_dense

    cache_path = work / f"query-vectors-{Path(model).name}.json"
    encoder = CachedQueryEncoder(make_encoders(model, ("full",), threads=threads)["full"], read_query_cache(cache_path))
    out = []
    for source, folder in corpora.items():
        picked = [r for r in rows if r["source"] == source]
        if not picked:
            continue
        slug = work / folder.resolve().name
        vectors = ensure_vectors(folder / "corpus.jsonl", slug, model, threads)
        scale = read_metadata(vectors).get("scale") or 100
        backend = ExactBackend(vectors)
        leg = DenseLeg(ensure_dense(folder / "corpus.jsonl", slug / "dense", threads), backend.n)
        comps = parse_topics({str(r["id"]): str(r["query"]) for r in picked})
        plans = compose(comps, Settings(dense=True), encoder)
        run = execute([c.qid for c in comps], plans, backend, scale, 1000, dense=leg)
        for r in picked:
            o = excluir_outcome(dict(run.get(str(r["id"]), {})), str(r["pos_id"]), str(r["neg_id"]))
            out.append({"id": r["id"], "set": r["set"], "source": source, "r1": int(o["pos rank"] == 1),
                        "rr": int(o["outcome"] == "win")})
    write_query_cache(cache_path, encoder.cache)
    return out


def table(scored: Mapping[str, Sequence[Mapping]]) -> list[dict]:
    """Rows of R@1 / RR with 95% bootstrap intervals per code (the keys, in order), set and benchmark."""
    from scripts.negation.negation_nested import _figure

    out = []
    for code, rows in scored.items():
        groups: dict[tuple[str, str], list[Mapping]] = {}
        for r in rows:
            groups.setdefault((r["set"], r["source"]), []).append(r)
        for (kind, source), picked in sorted(groups.items()):
            figure = _figure([int(r["r1"]) for r in picked], [int(r["rr"]) for r in picked])
            figure.pop("_ci")
            out.append({"code": code, "set": kind, "benchmark": source, **figure})
    return out


def main(argv: list[str] | None = None) -> int:
    """CLI: ``score --pairs JSONL --excluir DIR --boolq DIR --work W --output CSV``;
    ``table --scored LABEL=CSV ... --output STEM`` (STEM.md, STEM.csv)."""
    parser = argparse.ArgumentParser(prog="python -m scripts.negation.negation_written",
                                     description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="step", required=True)
    sc = sub.add_parser("score")
    sc.add_argument("--pairs", required=True, type=Path)
    sc.add_argument("--excluir", required=True, type=Path, help="ExcluIR folder (corpus.jsonl)")
    sc.add_argument("--boolq", required=True, type=Path, help="BoolQuestions NOT folder (corpus.jsonl)")
    sc.add_argument("--work", required=True, type=Path, help="cache of corpus and query vectors")
    sc.add_argument("--model", default="splade-tiny")
    sc.add_argument("--output", required=True, type=Path, help="per-row CSV")
    tb = sub.add_parser("table")
    tb.add_argument("--scored", required=True, action="append", help="LABEL=CSV of a score step (repeatable)")
    tb.add_argument("--output", required=True, type=Path, help="output stem: STEM.md, STEM.csv")
    for step in (sc, tb):
        step.add_argument("--overwrite", action="store_true", help="replace existing outputs")
    args = parser.parse_args(argv)
    from lsr_lucene.errors import LsrError

    try:
        if args.step == "score":
            from lsr_lucene.io.output import atomic_output, refuse_existing

            refuse_existing(args.output, args.overwrite)
            rows = score(read_pairs(args.pairs), {"ExcluIR": args.excluir, "BoolQuestions": args.boolq}, args.work,
                         args.model)
            with atomic_output(args.output, args.overwrite) as tmp, open(tmp, "w", newline="", encoding="utf-8") as f:
                writer = csv.DictWriter(f, fieldnames=list(rows[0]))
                writer.writeheader()
                writer.writerows(rows)
            print(f"wrote {args.output}", file=sys.stderr)
            return 0
        import pandas as pd

        from lsr_lucene.eval.trec import write_table

        scored = {}
        for spec in args.scored:
            label, _, path = spec.partition("=")
            with open(path, newline="", encoding="utf-8") as f:
                scored[label] = list(csv.DictReader(f))
        _, md = write_table(pd.DataFrame(table(scored)).set_index(["code", "set", "benchmark"]), args.output,
                            args.overwrite, ".3f",
                            preamble="# Written exclusion requests: the default per code, set and benchmark\n\n")
        print(f"wrote {md}", file=sys.stderr)
    except (ValueError, LsrError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
