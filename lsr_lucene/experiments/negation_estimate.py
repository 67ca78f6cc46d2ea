"""What the negation default will score on queries it never saw (issue 49): generated exclusion pairs beside the dev
sets' fixed held-out thirds, each figure with a bootstrap confidence interval.

Generated pairs (ExcluIR style, from a corpus with titles, no dev or test query read): a passage P whose text names
the title of another passage Q of the corpus is the wanted answer of a request about P that excludes Q (Q is the
excluded passage); the request cycles through phrasings the dev queries do not use, with the shapes the held-out
misses have (several excluded items, an excluded sub-aspect with "general", "neither … nor" inside a question, a
relative clause). Passages of dev pairs are skipped, so generated pairs never repeat a dev pair. A seeded hash of
the pair id holds out one pair in three (the same rule as the dev sets' held-out thirds), fixed before any setting
was looked at; nothing here is tuned: the script scores fixed settings.
"""
from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
from pathlib import Path
from typing import Mapping, Sequence

from lsr_lucene.experiments.negation_hard_pairs import title_base, title_index, titles_named
from lsr_lucene.io.vectors import read_metadata

TEMPLATES = (  # (phrasing, how many excluded titles it names)
    ("What can you tell me about {p}, excluding any information about {q}?", 1),
    ("Tell me about {p} but not {q} or general {r} details.", 2),
    ("What is known about {p}, excluding information on {q} and {r}?", 2),
    ("Which facts about {p}, neither {q} nor {r}, are most notable?", 2),
    ("I would like to learn about {p}; please do not mention {q}.", 1),
    ("Describe {p} without discussing {q} or {r}.", 2),
)


def generate_pairs(corpus: str | Path, skip_ids: set[str], limit: int = 300) -> list[dict]:
    """ExcluIR-layout rows ``{id, query, pos_id, neg_id, template}`` from ``corpus`` (``{id, title, text}``): P names
    Q's title (whole words, at least two words, not P's own title); passages in ``skip_ids`` are not
    used; at most ``limit`` pairs, in corpus order, one per passage P."""
    docs = [json.loads(line) for line in Path(corpus).open(encoding="utf-8") if line.strip()]
    titles, pattern = title_index(doc for doc in docs if doc["id"] not in skip_ids)
    texts = {str(doc["id"]): str(doc.get("text") or "") for doc in docs}
    rows: list[dict] = []
    for doc in docs:
        pid, own = str(doc["id"]), title_base(str(doc.get("title") or ""))
        if pid in skip_ids:
            continue
        named = titles_named(str(doc.get("text") or ""), pid, own, titles, pattern)
        if not named:
            continue
        template, needs = TEMPLATES[len(rows) % len(TEMPLATES)]  # phrasings in turn
        # a second excluded item: another title P names, else Q's most frequent word that P lacks (a sub-aspect)
        second = named[1] if len(named) > 1 else _aspect(texts[titles[named[0]]], str(doc.get("text") or ""))
        if needs > 1 and second is None:
            template, needs = TEMPLATES[0]
        query = template.format(p=own, q=named[0], r=second if needs > 1 else "")
        rows.append({"id": f"gen-{pid}", "query": query, "pos_id": pid, "neg_id": titles[named[0]],
                     "template": TEMPLATES.index((template, needs))})
        if len(rows) >= limit:
            break
    return rows


_COMMON = set("""about after also among because been before being between both could during each first from have
into later many more most other over same several since some such than that their there these they this those three
through under until were what when where which while whom with would years""".split())


def _aspect(excluded: str, wanted: str) -> str | None:
    """The most frequent lower-case word (5+ letters, not a common word) of the excluded text that the wanted text
    lacks (ties: first seen); None when there is none."""
    from collections import Counter

    have = set(re.findall(r"[a-z]+", wanted.lower()))
    words = Counter(w for w in re.findall(r"\b[a-z]{5,}\b", excluded) if w not in have and w not in _COMMON)
    return words.most_common(1)[0][0] if words else None


def outcomes(run: Mapping[str, Mapping[str, float]], rows: Sequence[Mapping]) -> tuple[list[int], list[int]]:
    """Per row: R@1 (the wanted passage ranks first) and RR (it scores strictly above the excluded one), 0/1."""
    from lsr_lucene.eval.contrastive_metrics import excluir_outcome

    r1, rr = [], []
    for row in rows:
        out = excluir_outcome(run.get(str(row["id"]), {}), str(row["pos_id"]), str(row["neg_id"]))
        r1.append(int(out["pos rank"] == 1))
        rr.append(int(out["outcome"] == "win"))
    return r1, rr


def bootstrap(values: Sequence[int], resamples: int = 2000, seed: int = 0) -> tuple[float, float, float]:
    """(mean, 2.5th, 97.5th percentile) of the mean over ``resamples`` resamplings of the rows with replacement."""
    import numpy as np

    data = np.asarray(values, dtype=float)
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, len(data), size=(resamples, len(data)))].mean(axis=1)
    return float(data.mean()), float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def settings_rows(dense: bool) -> list[tuple[str, dict]]:
    """The settings scored: the default; with the dense leg also the default without the absence rule and with B's
    items searched one by one (when this code has them)."""
    from lsr_lucene.compose.operations import Settings

    fields = getattr(Settings, "__dataclass_fields__", {})
    rows: list[tuple[str, dict[str, object]]] = [("default", {"dense": dense})]
    if not dense:  # the sparse fallback: the default only
        return rows
    if "absence" in fields:
        rows.append(("default without the absence rule", {"dense": dense, "absence": False}))
    if "items" in fields:
        rows.append(("default, B's items searched one by one", {"dense": dense, "items": "each"}))
    return rows


def estimate_table(excluir: Path, boolq: Path, work: Path, model: str = "splade-tiny", threads: int = 1,
                   label: str = "this code", limit: int = 300):
    """DataFrame: R@1 and RR with 95% bootstrap intervals of each setting on the dev held-out thirds, the generated
    pairs (held-out third and all) and the pooled held-out rows."""
    import pandas as pd

    from lsr_lucene.compose.backends import ExactBackend
    from lsr_lucene.compose.compositions import parse_topics
    from lsr_lucene.compose.dense_leg import DenseLeg
    from lsr_lucene.compose.execute import compose, execute
    from lsr_lucene.compose.operations import Settings
    from lsr_lucene.compose.query_encoder import CachedQueryEncoder
    from lsr_lucene.eval.contrastive_metrics import read_excluir
    from lsr_lucene.experiments.contrastive_configs import make_encoders
    from lsr_lucene.experiments.contrastive_runs import read_query_cache, write_query_cache
    from lsr_lucene.experiments.excluir import ensure_vectors
    from lsr_lucene.experiments.negation_harm import ensure_dense, part_ids

    base = make_encoders(model, ("full",), threads=threads)["full"]
    cache_path = work / f"query-vectors-{Path(model).name}.json"
    encoder = CachedQueryEncoder(base, read_query_cache(cache_path))
    dev = {"ExcluIR": read_excluir(excluir / "dev.jsonl"), "BoolQuestions": read_excluir(boolq / "dev.jsonl")}
    skip = {str(r[k]) for r in dev["ExcluIR"] for k in ("pos_id", "neg_id")}
    generated = generate_pairs(excluir / "corpus.jsonl", skip, limit)
    sources = {"ExcluIR dev": (excluir, dev["ExcluIR"]), "BoolQuestions dev": (boolq, dev["BoolQuestions"]),
               "generated pairs": (excluir, generated)}
    sets = {f"{name}, {part}": (folder, _part(rows, part, part_ids))  # name -> (corpus folder, rows)
            for part in ("tune", "held-out") for name, (folder, rows) in sources.items()}
    backends: dict = {}
    records, index = [], []
    pooled: dict = {}
    for name, (folder, rows) in sets.items():
        if folder not in backends:
            slug = work / folder.resolve().name
            vectors = ensure_vectors(folder / "corpus.jsonl", slug, model, threads)
            scale = read_metadata(vectors).get("scale") or 100
            backend = ExactBackend(vectors)
            backends[folder] = (backend, scale, DenseLeg(ensure_dense(folder / "corpus.jsonl", slug / "dense",
                                                                      threads), backend.n))
        backend, scale, leg = backends[folder]
        comps = parse_topics({str(r["id"]): str(r["query"]) for r in rows})
        qids = [c.qid for c in comps]
        for dense in (True, False):
            for setting, options in settings_rows(dense):
                plans = compose(comps, Settings(**options), encoder)
                run = {q: dict(r) for q, r in execute(qids, plans, backend, scale, 1000, dense=leg).items()}
                r1, rr = outcomes(run, rows)
                key = (setting, dense)
                part = name.rsplit(", ", 1)[1]
                pooled.setdefault((part, *key), ([], []))
                pooled[(part, *key)][0].extend(r1)
                pooled[(part, *key)][1].extend(rr)
                records.append(_record(label, setting, dense, len(rows), r1, rr))
                index.append(name)
    for (part, setting, dense), (r1, rr) in pooled.items():
        records.append(_record(label, setting, dense, len(r1), r1, rr))
        index.append(f"pooled {part} (the three sets' {part} parts)")
    write_query_cache(cache_path, encoder.cache)
    return pd.DataFrame(records, index=pd.Index(index, name="rows")), generated


def _part(rows: Sequence[Mapping], part: str, part_ids) -> list[Mapping]:
    keep = set(part_ids([str(r["id"]) for r in rows], part))
    return [r for r in rows if str(r["id"]) in keep]


def _record(label: str, setting: str, dense: bool, n: int, r1: Sequence[int], rr: Sequence[int]) -> dict:
    m1, lo1, hi1 = bootstrap(r1)
    m2, lo2, hi2 = bootstrap(rr)
    return {"code": label, "setting": setting, "dense leg": "yes" if dense else "no", "queries": n,
            "R@1": round(m1, 3), "R@1 95% CI": f"{lo1:.3f}–{hi1:.3f}", "RR": round(m2, 3),
            "RR 95% CI": f"{lo2:.3f}–{hi2:.3f}"}


def main(argv: list[str] | None = None) -> int:
    """CLI: ``--excluir DIR --boolq DIR --work W --output STEM [--label L] [--pairs FILE]``."""
    from lsr_lucene.eval.trec import to_markdown, write_table

    parser = argparse.ArgumentParser(prog="python -m lsr_lucene.experiments.negation_estimate",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--excluir", required=True, type=Path, help="ExcluIR folder (corpus.jsonl, dev.jsonl)")
    parser.add_argument("--boolq", required=True, type=Path, help="BoolQuestions NOT folder (corpus.jsonl, dev.jsonl)")
    parser.add_argument("--work", required=True, type=Path, help="cache of corpus and query vectors")
    parser.add_argument("--model", default="splade-tiny")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--limit", type=int, default=300, help="generated pairs at most (default 300)")
    parser.add_argument("--label", default="this code", help="the code's name in the table (e.g. a commit)")
    parser.add_argument("--pairs", type=Path, help="also write the generated pairs here (JSONL)")
    parser.add_argument("--output", required=True, help="table stem: writes STEM.csv and STEM.md")
    parser.add_argument("--overwrite", action="store_true")
    args = parser.parse_args(argv)
    df, generated = estimate_table(args.excluir, args.boolq, args.work, args.model, args.threads, args.label,
                                   args.limit)
    if args.pairs:
        args.pairs.parent.mkdir(parents=True, exist_ok=True)
        args.pairs.write_text("".join(json.dumps(r) + "\n" for r in generated), encoding="utf-8")
    try:  # the code before issue 49 is scored by this module too: it may lack the helper
        from lsr_lucene.bench.scale_report import machine

        where = machine()
    except ImportError:
        where = "unknown"
    command = "python -m lsr_lucene.experiments.negation_estimate " + shlex.join(argv or sys.argv[1:])
    note = (f"Command: `{command}` (scripts/run_negation_estimate.sh). Machine: {where}.\n\n"
            "R@1 / RR of fixed settings (nothing tuned here) on the seeded tuning parts and held-out thirds of the dev "
            "sets and of generated exclusion pairs (lsr_lucene/experiments/negation_estimate.py: a passage that "
            "names another passage's title, asked for while excluding it; passages of ExcluIR dev pairs skipped), "
            "exact dot products over each whole corpus; 95% intervals: 2,000 bootstrap resamplings of the rows "
            "(seed 0).\n\n")
    write_table(df, args.output, overwrite=args.overwrite, preamble=note)
    print(to_markdown(df))
    return 0


if __name__ == "__main__":
    from lsr_lucene.cli import run_main

    sys.exit(run_main(main))
