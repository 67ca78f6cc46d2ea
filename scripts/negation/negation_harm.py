"""Negation users can trust (issue 36): does `compose --topics` harm ordinary topics, and does it still exclude?

``harm``: per ordinary topic set (SciFact claims, CACM, CISI, Cranfield, NPL, MED), the topics, how many the cue
parser composes (fired), nDCG@10 of plain ``search`` and of ``compose --topics`` (both runs made on the same index
by scripts/run_negation_harm.sh), and the same over the fired topics only. A set can be cut into a tuning part
and a held-out part (:func:`held_out`, a seeded hash of the query id) so that rules designed on one part are
checked on the other.

``exclusion``: the default setting's ExcluIR figures (R@1, MRR@10, ΔR@1, RR) on ExcluIR-layout benchmarks
(ExcluIR, BoolQuestions NOT), on all rows and on the same tuning / held-out parts, with the parser's fired share:
the default with its dense leg (the corpus's all-MiniLM-L6-v2 embeddings, ``<work>/<benchmark>/dense``, made by
``lsr-lucene dense encode`` when missing) and without one (the sparse fallback).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Mapping, Sequence

from lsr_lucene.compose.negation_parser import parse
from lsr_lucene.dense.models import DEFAULT_DENSE_MODEL
from lsr_lucene.errors import InputError
from lsr_lucene.io.vectors import read_metadata

HELD_OUT_PARTS = 3  # one query in three (by hash) is held out


def held_out(qid: str, parts: int = HELD_OUT_PARTS) -> bool:
    """Whether ``qid`` is in the held-out part: sha1 of the id modulo ``parts`` is 0 (fixed, order-free)."""
    return int(hashlib.sha1(str(qid).encode("utf-8")).hexdigest()[:8], 16) % parts == 0


def part_ids(qids: Sequence[str], part: str) -> list[str]:
    """The ids of one part: ``all``, ``tune`` (not held out) or ``held-out``."""
    if part == "all":
        return list(qids)
    if part not in ("tune", "held-out"):
        raise InputError(f"unknown part {part!r}; expected all, tune or held-out")
    return [q for q in qids if held_out(q) == (part == "held-out")]


def fired_topics(topics: Mapping[str, str]) -> tuple[set[str], list[float]]:
    """Ids of the topics the cue parser composes (at least one cue fired), and each topic's parse time in µs (the
    best of 3 calls, so that other work on a shared machine does not count)."""
    fired, times = set(), []
    for qid, text in topics.items():
        best = float("inf")
        for _ in range(3):
            started = time.perf_counter()
            composed = parse(text).composed
            best = min(best, time.perf_counter() - started)
        times.append(best * 1e6)
        if composed:
            fired.add(qid)
    return fired, times


def _mean(values: Mapping[str, float], ids: Sequence[str]) -> float:
    return sum(values[q] for q in ids) / len(ids) if ids else float("nan")


def harm_rows(name: str, topics: Mapping[str, str], qrels, plain: Mapping, composed: Mapping,
              parts: Sequence[str] = ("all",)) -> list[dict]:
    """Rows of the do-no-harm table for one topic set: per part, topics, judged, fired, nDCG@10 of both runs (mean
    over judged topics, trec_eval -c) and over the fired judged topics only."""
    from lsr_lucene.eval.trec import evaluate_complete, evaluator

    judge = evaluator(qrels, ["ndcg_cut.10"])
    scores = {}
    for label, run in (("plain", plain), ("compose", composed)):
        _, complete = evaluate_complete(judge, qrels, run)
        scores[label] = {q: v["ndcg_cut_10"] for q, v in complete.items()}
    fired, micros = fired_topics(topics)
    rows = []
    for part in parts:
        ids = part_ids(list(topics), part)
        judged = [q for q in ids if q in qrels]
        hit = [q for q in judged if q in fired]
        rows.append({
            "set": name if part == "all" else f"{name} ({part})",
            "topics": len(ids), "judged": len(judged), "fired": sum(q in fired for q in ids),
            "fired judged": len(hit),
            "plain nDCG@10": _mean(scores["plain"], judged), "compose nDCG@10": _mean(scores["compose"], judged),
            "Δ": _mean(scores["compose"], judged) - _mean(scores["plain"], judged),
            "fired: plain": _mean(scores["plain"], hit), "fired: compose": _mean(scores["compose"], hit),
            "parse µs mean": sum(micros) / len(micros), "parse µs max": max(micros),
        })
    return rows


def fired_row(name: str, topics: Mapping[str, str]) -> dict:
    """A row for a topic set without judgments (NQ questions): how many topics the parser composes."""
    fired, micros = fired_topics(topics)
    return {"set": name, "topics": len(topics), "judged": 0, "fired": len(fired), "fired judged": 0,
            "parse µs mean": sum(micros) / len(micros),
            "parse µs max": max(micros)}


def harm_table(sets: Sequence[Mapping], unjudged: Sequence[tuple[str, str]] = ()):
    """DataFrame of :func:`harm_rows` over ``sets`` (dicts with name, topics, qrels, plain, compose, parts), then a
    :func:`fired_row` for each ``(name, topics file)`` in ``unjudged``."""
    import pandas as pd

    from lsr_lucene.eval.trec import read_qrels
    from lsr_lucene.io.runs import read_run
    from lsr_lucene.io.topics import read_topics

    rows = []
    for spec in sets:
        rows += harm_rows(spec["name"], read_topics(spec["topics"]), read_qrels(spec["qrels"]), read_run(spec["plain"]),
                          read_run(spec["compose"]), spec.get("parts", ("all",)))
    rows += [fired_row(name, read_topics(path)) for name, path in unjudged]
    return pd.DataFrame(rows).set_index("set")


def ensure_dense(corpus: str | Path, folder: str | Path, threads: int = 2, model: str | None = None) -> Path:
    """The corpus's dense embeddings folder (``lsr-lucene dense encode``'s defaults, or ``model``), encoded unless
    already there."""
    from lsr_lucene.dense.cli import main as dense_main

    meta = Path(folder) / "metadata.json"
    if not meta.is_file():
        dense_main(["encode", "--corpus", str(corpus), "--output", str(folder), "--threads", str(threads),
                    *(["--model", model] if model else [])])
    cached, wanted = json.loads(meta.read_text()).get("model"), model or DEFAULT_DENSE_MODEL
    if cached != wanted and not (Path(wanted).exists() and Path(str(cached)).resolve() == Path(wanted).resolve()):
        raise InputError(f"{folder}: embeddings by {cached}, not {wanted}; remove the folder to encode it again")
    return Path(folder)


def dense_folder(slug: Path, model: str | None) -> Path:
    """Where a benchmark's embeddings by ``model`` are cached: ``dense`` for the default dense model, else
    ``dense-<model folder name>``."""
    return slug / "dense" if model in (None, DEFAULT_DENSE_MODEL) else slug / f"dense-{Path(model).name}"


def exclusion_table(folders: Sequence[str | Path], work: str | Path, model: str = "splade-tiny", threads: int = 2,
                    split: str = "dev", dense_models: Sequence[str] = (DEFAULT_DENSE_MODEL,)):
    """DataFrame: the default setting's ExcluIR figures on each benchmark (all rows, tuning part, held-out part),
    with its dense leg and without one, exact dot products over the whole corpus, with the share of queries the
    parser composes. Each of ``dense_models`` gives the dense leg in turn (its embeddings cached beside the
    default's, :func:`dense_folder`), so another dense encoder can be compared with the same splade runs."""
    import pandas as pd

    from lsr_lucene.compose.backends import ExactBackend
    from lsr_lucene.compose.compositions import parse_topics
    from lsr_lucene.compose.dense_leg import DenseLeg
    from lsr_lucene.compose.execute import compose, execute
    from lsr_lucene.compose.operations import Settings
    from lsr_lucene.compose.query_encoder import CachedQueryEncoder
    from lsr_lucene.eval.contrastive_metrics import excluir_metrics, read_excluir
    from scripts.negation.contrastive_configs import make_encoders
    from scripts.negation.contrastive_runs import read_query_cache, write_query_cache
    from scripts.negation.excluir import EXCLUIR_COLUMNS, ensure_vectors
    from scripts.negation.transfer import benchmark_name

    base = make_encoders(model, ("full",), threads=threads)["full"]
    cache_path = Path(work) / f"query-vectors-{Path(model).name}.json"
    encoder = CachedQueryEncoder(base, read_query_cache(cache_path))
    records, index = [], []
    for folder in map(Path, folders):
        rows = read_excluir(folder / f"{split}.jsonl")
        slug = Path(work) / folder.resolve().name
        vectors = ensure_vectors(folder / "corpus.jsonl", slug, model, threads)
        scale = read_metadata(vectors).get("scale") or 100
        backend = ExactBackend(vectors)
        comps = parse_topics({str(r["id"]): str(r["query"]) for r in rows})
        qids = [c.qid for c in comps]
        for dense_model in [*dense_models, None]:
            leg = None if dense_model is None else DenseLeg(
                ensure_dense(folder / "corpus.jsonl", dense_folder(slug, dense_model), threads, dense_model),
                backend.n)
            plans = compose(comps, Settings(dense=leg is not None), encoder)
            run = {q: dict(r) for q, r in execute(qids, plans, backend, scale, 1000, dense=leg).items()}
            label = ("no (sparse fallback)" if dense_model is None else "yes (the default)"
                     if dense_model == DEFAULT_DENSE_MODEL else f"yes ({Path(dense_model).name})")
            for part in ("all", "tune", "held-out"):
                ids = set(part_ids([str(r["id"]) for r in rows], part))
                subset = [r for r in rows if str(r["id"]) in ids]
                figures = excluir_metrics(run, subset)
                records.append({"dense leg": label,
                                "queries": len(subset),
                                "fired": sum(parse(str(r["query"])).composed for r in subset) / len(subset),
                                **{k: figures[k] for k in EXCLUIR_COLUMNS}})
                index.append(f"{benchmark_name(folder, split)} ({part})")
    write_query_cache(cache_path, encoder.cache)
    return pd.DataFrame(records, index=pd.Index(index, name="benchmark"))


def _set_spec(raw: str) -> dict:
    """``NAME=TOPICS,QRELS,PLAIN_RUN,COMPOSE_RUN[,split]`` -> a set for :func:`harm_table`."""
    name, _, rest = raw.partition("=")
    fields = rest.split(",")
    if not name or len(fields) not in (4, 5) or (len(fields) == 5 and fields[4] != "split"):
        raise InputError(f"--set {raw!r}: expected NAME=TOPICS,QRELS,PLAIN_RUN,COMPOSE_RUN[,split]")
    for path in fields[:4]:
        if not Path(path).is_file():
            raise InputError(f"--set {name}: {path}: no such file")
    parts = ("all", "tune", "held-out") if len(fields) == 5 else ("all",)
    return {"name": name, "topics": fields[0], "qrels": fields[1], "plain": fields[2], "compose": fields[3],
            "parts": parts}


def main(argv: list[str] | None = None) -> int:
    """CLI: ``harm --set ... --output STEM`` or ``exclusion --data DIR ... --work W --output STEM``."""
    from lsr_lucene.eval.trec import to_markdown, write_table

    parser = argparse.ArgumentParser(allow_abbrev=False, prog="python -m scripts.negation.negation_harm",
                                     description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    harm = sub.add_parser("harm", help="plain search vs compose --topics on ordinary topic sets (nDCG@10)")
    harm.add_argument("--set", action="append", required=True, dest="sets",
                      help="NAME=TOPICS,QRELS,PLAIN_RUN,COMPOSE_RUN[,split] (repeatable; split: also the tuning and "
                           "held-out parts)")
    harm.add_argument("--fired", action="append", default=[], metavar="NAME=TOPICS",
                      help="a topic set without judgments: only how many topics fire (repeatable)")
    exclusion = sub.add_parser("exclusion", help="the default setting on ExcluIR-layout benchmarks, by part")
    exclusion.add_argument("--data", action="append", required=True, help="benchmark folder (repeatable)")
    exclusion.add_argument("--work", required=True, help="cache of corpus and query vectors")
    exclusion.add_argument("--model", default="splade-tiny")
    exclusion.add_argument("--threads", type=int, default=2)
    exclusion.add_argument("--dense-model", action="append", dest="dense_models", metavar="NAME",
                           help="dense encoder of the dense leg: registry name, local folder or HF id (repeatable: "
                                "one set of rows each; default: all-minilm-l6-v2)")
    for p in (harm, exclusion):
        p.add_argument("--output", required=True, help="table stem: writes STEM.csv and STEM.md")
        p.add_argument("--overwrite", action="store_true")
    args = parser.parse_args(argv)
    if args.command == "harm":
        unjudged = [tuple(raw.split("=", 1)) for raw in args.fired]
        if any(len(item) != 2 or not Path(item[1]).is_file() for item in unjudged):
            raise InputError(f"--fired {args.fired}: expected NAME=TOPICS with an existing topics file")
        df = harm_table([_set_spec(raw) for raw in args.sets], unjudged)
        note = ("nDCG@10 over judged topics (trec_eval -c), 1000 hits, plain `search` vs `compose --topics` "
                "(default operations; with the index's dense leg `<index>/dense` in the sets where a topic fires, "
                "scripts/run_negation_harm.sh) on the same index; Δ = compose − plain; fired: topics the cue parser "
                "composes. "
                "Parts: a seeded hash of the query id holds out one topic in three. parse µs: the cue parser's time "
                "per topic of the set (mean, max; best of 3 calls each), measured in this run.\n\n")
    else:
        df = exclusion_table(args.data, args.work, args.model, args.threads,
                             dense_models=args.dense_models or (DEFAULT_DENSE_MODEL,))
        note = ("The default setting (cue parser, fusion-gated) on each benchmark's dev rows, exact dot products over "
                "the whole corpus; dense leg: with the corpus's all-MiniLM-L6-v2 embeddings, or those of the model "
                "named in brackets (the default when the index has `dense/`: the cosine of A's text and each "
                "candidate's cosine with the best A match blended into A, λ 0.7) or without (sparse fallback, "
                "λ 1); fired: share of queries the parser composes. Parts: a seeded hash of the row id holds out one "
                "row in three.\n\n")
    write_table(df, args.output, overwrite=args.overwrite, preamble=note)
    print(to_markdown(df))
    return 0


if __name__ == "__main__":
    from lsr_lucene.cli import run_main

    sys.exit(run_main(main))
