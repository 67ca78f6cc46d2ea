"""Negation at scale (issue 49): does the default hold when the benchmark's mini corpus sits inside a larger one?

ExcluIR's corpus holds 1,980 passages and BoolQuestions' 646, and the default was chosen there; users search
millions. The gate penalises documents whose B score is near the best B score among the candidates, so more
documents can move what counts as "about B". ``distractors`` draws N wiki2015 passages (the smallest sha1 of
``SALT`` + id, so the draw does not depend on file order), skipping passages of articles whose title an ExcluIR
passage has and passages sharing a run of ``SHINGLE`` words with either benchmark corpus (no copy of a wanted or
excluded passage). ``score`` ranks each row over its benchmark corpus alone and over the corpus plus the
distractors, the default with its dense leg and plain search, and records, from the default's fused node, whether
A alone (Â with its dense blend) ranks the excluded passage above the wanted one and whether the excluded passage
is penalised (B̂ at or above the gate). ``table``: R@1 / RR with 95% bootstrap intervals per corpus, set and
benchmark, also on the rows where A alone prefers the excluded passage (the rows only B can decide).
"""
from __future__ import annotations

import argparse
import csv
import hashlib
import json
import lzma
import re
import sys
from pathlib import Path
from typing import Iterable, Iterator, Mapping, Sequence

SALT = "negation-scale-49:"
SHINGLE = 8  # words: a distractor sharing this many consecutive words with a benchmark passage is a copy of it
CORPORA = {"ExcluIR": "excluir", "BoolQuestions": "boolquestions_not"}  # row source -> folder under the data dir
_WORD = re.compile(r"\w+")


def shingles(text: str, n: int = SHINGLE) -> set[tuple[str, ...]]:
    """The runs of ``n`` consecutive lower-cased words of a text."""
    words = _WORD.findall(text.lower())
    return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}


def read_jsonl(path: Path) -> Iterator[dict]:
    """Rows of a JSONL file (``.xz`` read compressed)."""
    opener = lzma.open if path.suffix == ".xz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def distractors(passages: Iterable[Mapping], corpora: Sequence[Path], n: int) -> list[dict]:
    """The ``n`` passages with the smallest sha1(SALT + id) that are no copy of a benchmark passage (module doc)."""
    seen: set[tuple[str, ...]] = set()
    titles: set[str] = set()
    for corpus in corpora:
        for doc in read_jsonl(corpus):
            seen |= shingles(doc.get("text", ""))
            if doc.get("title"):
                titles.add(doc["title"])
    ranked = sorted(((hashlib.sha1((SALT + str(p["id"])).encode()).hexdigest(), p) for p in passages
                     if p.get("title") not in titles), key=lambda kv: kv[0])
    out = []
    for _, p in ranked:
        if shingles(p.get("text", "")) & seen:
            continue
        out.append({"id": f"wiki2015-{p['id']}", "title": p.get("title", ""), "text": p["text"]})
        if len(out) == n:
            break
    return out


def load_rows(data: Path, written: Path | None) -> list[dict]:
    """Dev rows of both benchmarks (set ``dev``) and the written rows (their own ``set``), as {id, set, source,
    query, pos_id, neg_id}."""
    rows = []
    for source, folder in CORPORA.items():
        rows += [{"id": str(r["id"]), "set": "dev", "source": source, "query": r["query"],
                  "pos_id": str(r["pos_id"]), "neg_id": str(r["neg_id"])} for r in read_jsonl(data / folder / "dev.jsonl")]
    if written is not None:
        rows += [{k: str(r[k]) for k in ("id", "set", "source", "query", "pos_id", "neg_id")} for r in read_jsonl(written)]
    return rows


def score(rows: Sequence[Mapping], data: Path, extra: Path | None, work: Path, model: str = "splade-tiny",
          threads: int = 2) -> list[dict]:
    """Per row and corpus (the benchmark's alone, and with ``extra`` when given): plain search's and the default's
    R@1 / RR, whether the default fused the row, whether A alone ranks the excluded passage above the wanted one,
    and whether the excluded passage is penalised (B̂ at or above the gate)."""
    from lsr_lucene.compose.compositions import parse_topics
    from lsr_lucene.compose.execute import compose, execute
    from lsr_lucene.compose.operations import FusionPlan, Settings, fuse
    from lsr_lucene.eval.contrastive_metrics import excluir_outcome
    from scripts.negation.contrastive_runs import write_query_cache
    from scripts.negation.negation_nested import padded, query_encoder

    encoder, cache_path = query_encoder(work, model, threads)
    default = Settings(dense=True)
    out = []
    corpora: list[tuple[str, Path | None]] = [("benchmark", None)] + ([(f"+{extra.stem}", extra)] if extra else [])
    for label, pad in corpora:
        for source, folder in CORPORA.items():
            picked = [r for r in rows if r["source"] == source]
            if not picked:
                continue
            backend, scale, leg = padded(data / folder / "corpus.jsonl", pad, work, model, threads)
            qids = [f"{r['set']}|{r['id']}" for r in picked]
            comps = parse_topics({q: r["query"] for q, r in zip(qids, picked)})
            plain = execute(qids, compose(comps, Settings(operation="vanilla"), encoder), backend, scale, 1000)
            traces: dict = {}
            plans = compose(comps, default, encoder)
            run = execute(qids, plans, backend, scale, 1000, dense=leg, traces=traces)
            for qid, r, plan in zip(qids, picked, plans):
                row = {"id": r["id"], "set": r["set"], "source": source, "corpus": label}
                for name, ranking in (("plain", plain), ("default", run)):
                    o = excluir_outcome(dict(ranking.get(qid, {})), r["pos_id"], r["neg_id"])
                    row[f"{name} R@1"], row[f"{name} RR"] = int(o["pos rank"] == 1), int(o["outcome"] == "win")
                row["fused"] = row["A prefers excluded"] = row["excluded penalised"] = 0
                if isinstance(plan, FusionPlan) and plan.gate is not None and qid in traces:
                    record: list = []
                    fuse(plan, traces[qid], record)
                    node = record[-1]
                    a, b = node.a_scaled or {}, node.b_scaled or {}
                    row["fused"] = 1
                    row["A prefers excluded"] = int(a.get(r["neg_id"], 0.0) > a.get(r["pos_id"], 0.0))
                    row["excluded penalised"] = int(b.get(r["neg_id"], 0.0) >= plan.gate)
                out.append(row)
    write_query_cache(cache_path, encoder.cache)
    return out


def table(scored: Sequence[Mapping]) -> list[dict]:
    """R@1 / RR (95% bootstrap intervals) of the default and plain search per corpus, set and benchmark, on all rows
    and on the rows where A alone prefers the excluded passage, with the shares that explain them."""
    from scripts.negation.negation_nested import _figure

    groups: dict[tuple[str, str, str, str], list[Mapping]] = {}
    for r in scored:
        key = (r["set"], r["source"], r["corpus"])
        groups.setdefault(key + ("all rows",), []).append(r)
        if int(r["A prefers excluded"]):
            groups.setdefault(key + ("A alone prefers the excluded passage",), []).append(r)
    out = []
    for (kind, source, corpus, rows_of), picked in sorted(groups.items()):
        figure = _figure([int(r["default R@1"]) for r in picked], [int(r["default RR"]) for r in picked])
        figure.pop("_ci")
        n = len(picked)
        out.append({"set": kind, "benchmark": source, "rows": rows_of, "corpus": corpus, **figure,
                    "plain R@1": round(sum(int(r["plain R@1"]) for r in picked) / n, 3),
                    "plain RR": round(sum(int(r["plain RR"]) for r in picked) / n, 3),
                    "fused": round(sum(int(r["fused"]) for r in picked) / n, 3),
                    "A prefers excluded": round(sum(int(r["A prefers excluded"]) for r in picked) / n, 3),
                    "excluded penalised": round(sum(int(r["excluded penalised"]) for r in picked) / n, 3)})
    return out


def main(argv: list[str] | None = None) -> int:
    """CLI: ``distractors --wiki XZ --data DIR --size N --output JSONL``; ``score --data DIR [--written JSONL]
    [--extra JSONL] --work W --output CSV``; ``table --scored CSV --output STEM`` (STEM.md, STEM.csv)."""
    parser = argparse.ArgumentParser(prog="python -m scripts.negation.negation_scale",
                                     description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="step", required=True)
    dr = sub.add_parser("distractors")
    dr.add_argument("--wiki", required=True, type=Path, help="wiki2015 passages (passages.jsonl.xz)")
    dr.add_argument("--size", required=True, type=int, help="passages to draw")
    sc = sub.add_parser("score")
    sc.add_argument("--written", type=Path, help="written rows (runs/negation/written_pairs.jsonl)")
    sc.add_argument("--extra", type=Path, help="distractor passages added to each benchmark corpus")
    sc.add_argument("--work", required=True, type=Path, help="cache of corpus and query vectors")
    sc.add_argument("--model", default="splade-tiny")
    for step in (dr, sc):
        step.add_argument("--data", required=True, type=Path, help="the data folder (excluir/, boolquestions_not/)")
    tb = sub.add_parser("table")
    tb.add_argument("--scored", required=True, type=Path, help="CSV of the score step")
    for step, what in ((dr, "JSONL of the drawn passages"), (sc, "per-row CSV"), (tb, "stem: STEM.md, STEM.csv")):
        step.add_argument("--output", required=True, type=Path, help=what)
        step.add_argument("--overwrite", action="store_true", help="replace existing outputs")
    args = parser.parse_args(argv)
    from lsr_lucene.errors import LsrError
    from lsr_lucene.io.output import atomic_output, refuse_existing, write_csv_rows

    try:
        if args.step == "distractors":
            refuse_existing(args.output, args.overwrite)
            picked = distractors(read_jsonl(args.wiki), [args.data / f / "corpus.jsonl" for f in CORPORA.values()],
                                 args.size)
            with atomic_output(args.output, args.overwrite) as tmp:
                Path(tmp).write_text("".join(json.dumps(p) + "\n" for p in picked), encoding="utf-8")
        elif args.step == "score":
            refuse_existing(args.output, args.overwrite)
            write_csv_rows(args.output, score(load_rows(args.data, args.written), args.data, args.extra, args.work,
                                              args.model), args.overwrite)
        else:
            import pandas as pd

            from lsr_lucene.eval.trec import write_table

            with open(args.scored, newline="", encoding="utf-8") as f:
                scored = list(csv.DictReader(f))
            write_table(pd.DataFrame(table(scored)).set_index(["set", "benchmark", "rows", "corpus"]), args.output,
                        args.overwrite, ".3f", preamble="# Negation at scale: the default over each benchmark corpus "
                        "alone and with wiki2015 distractor passages\n\n")
        print(f"wrote {args.output}", file=sys.stderr)
    except (ValueError, LsrError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
