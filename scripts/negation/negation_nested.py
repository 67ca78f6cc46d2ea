"""Nested-fold estimate of the negation default's selection (issue 49): does dev + hard generated pairs predict
held-out queries?

Rows: the two dev sets and the hard generated pairs (:mod:`scripts.negation.negation_hard_pairs`). One row in
three is held out by a hash of its id (:func:`scripts.negation.negation_harm.held_out`, fixed before any run);
the rest is the tuning part. A few candidate settings (the default and one-knob variants of it, ``CANDIDATES``) are
scored on every row once. The selection procedure — inner group folds, the candidate with the best inner mean of
(R@1 + RR) / 2, but the default kept unless the winner beats it by more than one standard error of the inner-fold
differences — is run inside outer group folds of the tuning part; its outer-fold outcomes, concatenated, estimate
what the procedure scores on unseen requests (bootstrap 95% interval). Groups are template families per source
(dev rows: a hash bucket per set), so paraphrases of one template never straddle a fold. The held-out part is
scored once, at the end, for the default and for the procedure's final choice. With ``--pad`` (distractor passages,
:mod:`scripts.negation.negation_scale`) every ExcluIR and BoolQuestions row is also scored with them added to its
corpus, and a row's selection score is the mean over both corpora: a setting must hold in a larger collection too.
"""
from __future__ import annotations

import hashlib
import json
import random
from lsr_lucene.io.vectors import read_metadata
from pathlib import Path
from typing import Mapping, Sequence

CANDIDATES: dict[str, dict] = {  # name -> Settings options; the first is the current default
    "default": {"dense": True},
    "no dense leg": {"dense": False},
    "B's items one by one": {"dense": True, "items": "each"},
    "no neighbour term": {"dense": True, "neighbour_weight": 0.0},
    "λ 1.0": {"dense": True, "lam": 1.0},
    "gate 0.8": {"dense": True, "gate": 0.8},
}
PLAIN = "plain search"  # the whole request as one sparse query (not a candidate: the baseline)
OUTER_FOLDS, INNER_FOLDS, DEV_BUCKETS = 5, 4, 4
HARDER = ("boolq-overlap", "excluir-category")  # excluded items that overlap the wanted passage or paraphrase


def group_of(row: Mapping) -> str:
    """A row's fold group: ``source/family`` for generated rows, ``source/bucket`` (hash of the id) for dev rows."""
    if row.get("family"):
        return f"{row['source']}/{row['family']}"
    bucket = int(hashlib.sha1(str(row["id"]).encode("utf-8")).hexdigest()[:8], 16) % DEV_BUCKETS
    return f"{row['source']}/{bucket}"


def row_outcome(scores: Mapping[str, float], pos: str, negs: Sequence[str]) -> tuple[int, int]:
    """(R@1, RR) of one row, 0/1: the wanted passage ranks first (ties by docid, as runs order them); it scores
    strictly above every excluded passage (a missing passage scores below every retrieved one)."""
    from lsr_lucene.io.ranking import ranking

    top = ranking(scores)[:1]
    pos_score = scores.get(pos, float("-inf"))
    above = pos in scores and all(pos_score > scores.get(n, float("-inf")) for n in negs)
    return int(top == [pos]), int(above)


def group_folds(groups: Sequence[str], folds: int) -> list[list[int]]:
    """Row indices of each fold: whole groups, larger groups first, each to the fold with fewest rows (ties: the
    lower fold), so folds are balanced and deterministic."""
    sizes: dict[str, list[int]] = {}
    for i, g in enumerate(groups):
        sizes.setdefault(g, []).append(i)
    out: list[list[int]] = [[] for _ in range(min(folds, len(sizes)))]
    for g in sorted(sizes, key=lambda k: (-len(sizes[k]), k)):
        min(out, key=len).extend(sizes[g])
    return out


def choose(score: Mapping[str, Sequence[float]], groups: Sequence[str], folds: int = INNER_FOLDS) -> str:
    """The candidate the selection procedure picks from rows' scores (``{candidate: per-row (R@1+RR)/2}``, the
    first candidate the default): the best mean over inner group folds, unless its edge over the default is within
    one standard error of the per-fold differences (then the default)."""
    import numpy as np

    default = next(iter(score))
    parts = group_folds(groups, folds)
    means = {c: np.array([np.mean([v[i] for i in part]) for part in parts]) for c, v in score.items()}
    best = max(means, key=lambda c: (means[c].mean(), c == default))
    diff = means[best] - means[default]
    se = diff.std(ddof=1) / np.sqrt(len(diff)) if len(diff) > 1 else 0.0
    return best if diff.mean() > se else default


def nested(score: Mapping[str, Sequence[float]], groups: Sequence[str],
           outer: int = OUTER_FOLDS) -> tuple[list[int], list[str]]:
    """Outer group folds: for each, :func:`choose` on the other folds; returns, per row, which outer fold held it
    (index into the second list) and each fold's choice."""
    where = [0] * len(groups)
    chosen = []
    for k, test in enumerate(group_folds(groups, outer)):
        held = set(test)
        train = [i for i in range(len(groups)) if i not in held]
        chosen.append(choose({c: [v[i] for i in train] for c, v in score.items()}, [groups[i] for i in train]))
        for i in test:
            where[i] = k
    return where, chosen


def load_rows(excluir: Path, boolq: Path, wiki: Path | None, work: Path, limit: int = 200,
              wiki_rows: int = 40000) -> tuple[list[dict], dict[str, Path]]:
    """Dev rows and hard generated rows (``neg_ids`` lists, ``source``, ``corpus``), and each corpus's path. The
    wiki mini corpus (the passages the wiki rows draw from) is written to ``work/negation_wiki/corpus.jsonl``."""
    from scripts.negation import negation_hard_pairs as hard

    rng = random.Random(hard.SEED)
    rows: list[dict] = []
    corpora = {"excluir": excluir / "corpus.jsonl", "boolq": boolq / "corpus.jsonl"}
    skips: dict[str, set[str]] = {}
    for key, folder, source, make in (("boolq", boolq, "BoolQuestions dev", hard.boolq_siblings),
                                      ("excluir", excluir, "ExcluIR dev", hard.excluir_links)):
        dev = hard.read_jsonl(folder / "dev.jsonl")
        rows += [{"id": str(r["id"]), "query": r["query"], "pos_id": str(r["pos_id"]),
                  "neg_ids": [str(r["neg_id"])], "source": source, "corpus": key} for r in dev]
        skips[key] = {str(r[k]) for r in dev for k in ("pos_id", "neg_id")}
        rows += [dict(r, corpus=key) for r in make(hard.read_jsonl(corpora[key]), skips[key], rng, limit)]
    if wiki is not None:
        corpus = hard.wiki_articles(hard.iter_wiki(wiki, wiki_rows))
        path = work / "negation_wiki" / "corpus.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        text = "".join(json.dumps(d) + "\n" for d in corpus)
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
        corpora["wiki"] = path
        rows += [dict(r, corpus="wiki") for r in hard.wiki_siblings(corpus, rng, limit)]
    # the harder sources last, so the rows above stay as they were before them
    rows += [dict(r, corpus="boolq") for r in hard.boolq_siblings(
        hard.read_jsonl(corpora["boolq"]), skips["boolq"], rng, limit, hard.shared_aspects, "boolq-overlap")]
    rows += [dict(r, corpus="excluir") for r in hard.excluir_links(
        hard.read_jsonl(corpora["excluir"]), skips["excluir"], rng, limit, by_category=True)]
    return rows, corpora


def score_rows(rows: Sequence[Mapping], corpora: Mapping[str, Path], work: Path, model: str = "splade-tiny",
               threads: int = 1, pad: Path | None = None) -> dict[str, list[tuple[int, int] | None]]:
    """``{setting: per-row (R@1, RR)}`` for plain search and every candidate, exact dot products over each corpus;
    with ``pad`` (distractor passages), over each benchmark corpus with them added
    (:func:`padded`), the wiki rows left out (None)."""
    from lsr_lucene.compose.compositions import parse_topics
    from lsr_lucene.compose.execute import compose, execute
    from lsr_lucene.compose.operations import Settings
    from scripts.negation.contrastive_runs import write_query_cache
    from lsr_lucene.progress import progress_bar

    encoder, cache_path = query_encoder(work, model, threads)
    settings = {PLAIN: Settings(operation="vanilla")} | {c: Settings(**o) for c, o in CANDIDATES.items()}
    out: dict[str, list[tuple[int, int] | None]] = {name: [None] * len(rows) for name in settings}
    keys = [key for key in corpora if pad is None or key != "wiki"]  # the distractors are wiki2015 passages too
    jobs = [(key, name) for key in keys for name in settings]
    loaded: dict = {}
    for key, name in progress_bar(jobs, desc="settings x corpora", unit="run"):
        idx = [i for i, r in enumerate(rows) if r["corpus"] == key]
        if not idx:
            continue
        if key not in loaded:
            loaded[key] = open_corpus(key, corpora[key], work, model, threads) if pad is None else \
                padded(corpora[key], pad, work, model, threads)
        backend, scale, leg = loaded[key]
        comps = parse_topics({rows[i]["id"]: rows[i]["query"] for i in idx})
        plans = compose(comps, settings[name], encoder)
        run = execute([c.qid for c in comps], plans, backend, scale, 1000, dense=leg)
        for i in idx:
            out[name][i] = row_outcome(dict(run.get(rows[i]["id"], [])), rows[i]["pos_id"], rows[i]["neg_ids"])
    write_query_cache(cache_path, encoder.cache)
    return out


def query_encoder(work: Path, model: str = "splade-tiny", threads: int = 1):
    """The sparse query encoder with its cache of encodings (``work/query-vectors-<model>.json``), and that path."""
    from lsr_lucene.compose.query_encoder import CachedQueryEncoder
    from scripts.negation.contrastive_configs import make_encoders
    from scripts.negation.contrastive_runs import read_query_cache

    cache_path = work / f"query-vectors-{Path(model).name}.json"
    return CachedQueryEncoder(make_encoders(model, ("full",), threads=threads)["full"],
                              read_query_cache(cache_path)), cache_path


def open_corpus(key: str, corpus: Path, work: Path, model: str = "splade-tiny", threads: int = 1) -> tuple:
    """(exact backend, quantisation scale, dense leg) of one corpus, encoded into ``work`` unless cached there."""
    slug = work / ("negation_wiki" if key == "wiki" else corpus.parent.resolve().name)
    return open_encoded(*encoded(corpus, slug, model, threads))


def encoded(corpus: Path, slug: Path, model: str, threads: int) -> tuple[Path, Path]:
    """The vectors folder (``slug``) and dense embeddings folder (``slug/dense``) of a corpus, encoded unless
    cached."""
    from scripts.negation.excluir import ensure_vectors
    from scripts.negation.negation_harm import ensure_dense

    return ensure_vectors(corpus, slug, model, threads), ensure_dense(corpus, slug / "dense", threads)


def open_encoded(vectors: Path, dense: Path) -> tuple:
    """(exact backend, quantisation scale, dense leg) of an encoded corpus: its vectors and dense embeddings folders."""
    from lsr_lucene.compose.backends import ExactBackend
    from lsr_lucene.compose.dense_leg import DenseLeg

    backend = ExactBackend(vectors)
    return backend, read_metadata(vectors).get("scale") or 100, DenseLeg(dense, backend.n)


COUNTED = ("documents", "skipped_empty", "empty_vectors", "postings")  # vectors metadata that add up when joined


def joined_metadata(first: Path, second: Path, files: Sequence[str]) -> dict:
    """Vectors metadata of two encoded folders read as one: the first's settings, both sources, counts summed."""
    one, two = (read_metadata(folder) for folder in (first, second))
    summed = {key: one[key] + two[key] for key in COUNTED if key in one and key in two}
    return {**one, **summed, "source": f"{one.get('source')} + {two.get('source')}", "files": list(files),
            "shards": len(files)}


def padded(corpus: Path, extra: Path | None, work: Path, model: str, threads: int) -> tuple:
    """(exact backend, scale, dense leg) of ``corpus`` alone, or with the passages of ``extra`` added: the two
    encodings (each cached in ``work``) joined in a folder of links, the embeddings concatenated."""
    import numpy as np

    from lsr_lucene.dense.store import read_embeddings, write_embeddings
    from lsr_lucene.io.vectors import vector_files

    base = work / corpus.parent.resolve().name
    vectors, dense = encoded(corpus, base, model, threads)
    if extra is not None:
        more_vectors, more_dense = encoded(extra, work / "negation_scale" / extra.stem, model, threads)
        joined = work / "negation_scale" / f"{base.name}+{extra.stem}"
        if not (joined / "dense" / "metadata.json").is_file():
            (joined / "vectors").mkdir(parents=True, exist_ok=True)
            links = []
            for tag, folder in (("a", vectors), ("b", more_vectors)):
                for file in vector_files(folder):
                    links.append(joined / "vectors" / f"{tag}-{file.name}")
                    if not links[-1].exists():
                        links[-1].symlink_to(file.resolve())
            (joined / "vectors" / "metadata.json").write_text(json.dumps(
                joined_metadata(vectors, more_vectors, [link.name for link in links]), indent=2) + "\n")
            one, two = read_embeddings(dense), read_embeddings(more_dense)
            write_embeddings(joined / "dense", one.docids + two.docids, np.concatenate([one.vectors, two.vectors]),
                             dict(one.metadata), overwrite=True)
        vectors, dense = joined / "vectors", joined / "dense"
    return open_encoded(vectors, dense)


ISSUE_HELD_OUT = {  # issue 49's held-out test figures of the default (R@1, RR), as the issue states them
    "ExcluIR dev": (0.860, 0.920), "BoolQuestions dev": (0.792, 0.866)}


def bootstrap(values: Sequence[int], resamples: int = 2000, seed: int = 0) -> tuple[float, float, float]:
    """(mean, 2.5th, 97.5th percentile) of the mean over ``resamples`` resamplings of the rows with replacement."""
    import numpy as np

    data = np.asarray(values, dtype=float)
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, len(data), size=(resamples, len(data)))].mean(axis=1)
    return float(data.mean()), float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def _figure(r1: Sequence[int], rr: Sequence[int]) -> dict:
    """Queries, R@1 and RR with their 95% bootstrap intervals (``_ci``: the bounds as numbers)."""
    m1, lo1, hi1 = bootstrap(r1)
    m2, lo2, hi2 = bootstrap(rr)
    return {"queries": len(r1), "R@1": round(m1, 3), "R@1 95% CI": f"{lo1:.3f}–{hi1:.3f}", "RR": round(m2, 3),
            "RR 95% CI": f"{lo2:.3f}–{hi2:.3f}", "_ci": ((lo1, hi1), (lo2, hi2))}


def figure_of(outcomes: Mapping[int, tuple[int, int]] | Sequence[tuple[int, int]], idx: Sequence[int]) -> dict:
    """:func:`_figure` of rows ``idx``, from each row's (R@1, RR) outcome."""
    return _figure([outcomes[i][0] for i in idx], [outcomes[i][1] for i in idx])


def figure_table(rows: Sequence[Mapping]) -> str:
    """Markdown of table rows made with :func:`_figure` (their intervals as numbers left out), indexed by ``rows``."""
    import pandas as pd

    from lsr_lucene.eval.trec import to_markdown

    return to_markdown(pd.DataFrame(rows).drop(columns="_ci").set_index("rows"), ".3f")


def by_source(rows: Sequence[Mapping], idx: Sequence[int]) -> dict[str, list[int]]:
    """Row indices per source, then the first three generated sources together, the two harder ones together, and
    all rows."""
    out: dict[str, list[int]] = {}
    for i in idx:
        out.setdefault(str(rows[i]["source"]), []).append(i)
    pools = {"hard generated (the three sources)": [i for i in idx if rows[i].get("family")
                                                    and rows[i]["source"] not in HARDER],
             "harder generated (overlap + category)": [i for i in idx if rows[i]["source"] in HARDER]}
    out.update({name: pool for name, pool in pools.items() if pool})
    out["all"] = list(idx)
    return out


def report(rows: Sequence[Mapping], outcomes: Mapping[str, Sequence[tuple[int, int] | None]],
           padded: Mapping[str, Sequence[tuple[int, int] | None]] | None = None, pad_label: str = "+distractors"
           ) -> dict:
    """The nested-fold figures: ``difficulty`` (every setting on the tuning part), ``nested`` (the procedure's
    outer-fold estimate beside the default's), ``held-out`` (the default and the final choice, scored once) as
    lists of table rows, ``choices`` per outer fold, the ``final`` choice, and ``compare`` lines. ``padded``: the
    same outcomes over the corpora with distractors (None for a row not scored there); a row's selection score is
    then the mean of its (R@1 + RR) / 2 over both corpora, and every table has both (column ``corpus``)."""
    from scripts.negation.negation_harm import held_out

    tune = [i for i, r in enumerate(rows) if not held_out(r["id"])]
    test = [i for i, r in enumerate(rows) if held_out(r["id"])]
    conditions = {"benchmark": outcomes} | ({pad_label: padded} if padded is not None else {})

    def scored(cond: str, idx: Sequence[int]) -> list[int]:
        return [i for i in idx if conditions[cond][PLAIN][i] is not None]

    def fig(cond: str, name: str, idx: Sequence[int]) -> dict:
        return figure_of(conditions[cond][name], idx)  # type: ignore[arg-type]  # rows of ``scored``: no None

    def row_score(c: str, i: int) -> float:
        values = [sum(o[c][i]) / 2 for o in conditions.values() if o[c][i] is not None]  # type: ignore[arg-type]
        return sum(values) / len(values)

    score = {c: [row_score(c, i) for i in tune] for c in CANDIDATES}
    groups = [group_of(rows[i]) for i in tune]
    where, chosen = nested(score, groups)
    picked = {i: chosen[where[k]] for k, i in enumerate(tune)}  # row -> the setting its outer fold chose
    difficulty, nested_rows, held = [], [], []
    final = choose(score, groups, OUTER_FOLDS)
    for cond, got in conditions.items():
        for src, idx in by_source(rows, scored(cond, tune)).items():
            difficulty += [{"rows": src, "corpus": cond, "setting": name, **fig(cond, name, idx)} for name in got]
            nested_rows.append({"rows": src, "corpus": cond, "setting": "selection procedure (outer folds)",
                                **figure_of({i: got[picked[i]][i] for i in idx}, idx)})  # type: ignore[misc]
            nested_rows.append({"rows": src, "corpus": cond, "setting": "default, no selection",
                                **fig(cond, "default", idx)})
        held += [{"rows": src, "corpus": cond, "setting": name, **fig(cond, name, idx)}
                 for src, idx in by_source(rows, scored(cond, test)).items()
                 for name in dict.fromkeys((PLAIN, "default", final))]
    choices = [f"outer fold {k + 1} ({len(f)} rows; held out: {', '.join(sorted({groups[i] for i in f}))}): "
               f"chose **{chosen[k]}**" for k, f in enumerate(group_folds(groups, OUTER_FOLDS))]
    every = sorted(tune + test)
    spans = [(f"default, all rows{'' if cond == 'benchmark' else ', ' + cond}: {src}", fig(cond, "default", idx)["_ci"])
             for cond in conditions for src, idx in by_source(rows, scored(cond, every)).items() if src != "all"]
    spans += [(f"selection procedure, outer folds{'' if r['corpus'] == 'benchmark' else ', ' + r['corpus']}: "
               f"{r['rows']}", r["_ci"]) for r in nested_rows if r["setting"].startswith("selection")]
    return {"difficulty": difficulty, "nested": nested_rows, "held-out": held, "choices": choices, "final": final,
            "compare": compare(spans)}


def compare(spans: Sequence[tuple[str, tuple]]) -> list[dict]:
    """Table rows: for each of ``spans`` (name, ((R@1 low, high), (RR low, high))), where each of the issue's held-out
    test figures of the default lies: ``inside`` the interval, or the interval lies ``above`` / ``below`` it."""
    out = []
    for name, ci in spans:
        row = {"interval": name}
        for dev, (r1, rr) in ISSUE_HELD_OUT.items():
            for metric, value, k in (("R@1", r1, 0), ("RR", rr, 1)):
                low, high = ci[k]
                where = "inside" if low <= value <= high else "above" if low > value else "below"
                row[f"{dev.replace(' dev', ' test')} {metric} {value:.3f}"] = where
        out.append(row)
    return out


def row_table(rows: Sequence[Mapping], outcomes: Mapping[str, Sequence[tuple[int, int] | None]],
              padded: Mapping[str, Sequence[tuple[int, int] | None]] | None = None, pad_label: str = "+distractors"):
    """DataFrame, one line per row: its source, family, fold group, part and every setting's R@1 and RR (with
    ``padded``, also over the corpora with distractors: columns ending in ``pad_label``, empty where not scored)."""
    import pandas as pd

    from scripts.negation.negation_harm import held_out

    records = []
    for i, row in enumerate(rows):
        record = {"id": row["id"], "source": row["source"], "family": row.get("family", ""), "group": group_of(row),
                  "part": "held-out" if held_out(row["id"]) else "tune"}
        for suffix, got in (("", outcomes), (f" {pad_label}", padded or {})):
            for name, values in got.items():
                record[f"{name} R@1{suffix}"], record[f"{name} RR{suffix}"] = values[i] or (None, None)
        records.append(record)
    return pd.DataFrame(records).set_index("id")


def markdown(result: dict, preamble: str) -> str:
    """The Markdown page: ``preamble``, the comparison with the issue's figures, then the three tables."""
    import pandas as pd

    from lsr_lucene.eval.trec import to_markdown

    return "\n\n".join([
        preamble,
        "## The estimate against the issue's held-out test figures (the default, the README's path)",
        "Where each held-out test figure of the issue lies against each interval (`above`: the whole interval lies "
        "above the figure, the estimate was too optimistic):",
        to_markdown(pd.DataFrame(result["compare"]).set_index("interval")),
        "## Nested folds: the selection procedure on unseen template families",
        "\n".join(f"- {line}" for line in result["choices"]) + f"\n- on the whole tuning part: **{result['final']}**",
        figure_table(result["nested"]),
        "## How hard the rows are: every setting on the tuning part",
        figure_table(result["difficulty"]),
        "## Held-out part (one row in three by hash, fixed before any run), scored once",
        figure_table(result["held-out"]), ""])


def row_arguments(parser) -> None:
    """The options that name the rows (:func:`load_rows`) and the vectors' cache, shared by the experiments on them."""
    parser.add_argument("--excluir", required=True, type=Path, help="ExcluIR folder (corpus.jsonl, dev.jsonl)")
    parser.add_argument("--boolq", required=True, type=Path, help="BoolQuestions NOT folder (corpus.jsonl, dev.jsonl)")
    parser.add_argument("--wiki", type=Path, help="wiki2015 passages.jsonl.xz (the wiki-article pairs)")
    parser.add_argument("--work", required=True, type=Path, help="cache of corpus and query vectors")
    parser.add_argument("--model", default="splade-tiny")
    parser.add_argument("--limit", type=int, default=200, help="hard pairs per source at most (default 200)")


def main(argv: list[str] | None = None) -> int:
    """CLI: ``--excluir DIR --boolq DIR [--wiki FILE] --work W --output STEM``: writes STEM.md, STEM.csv (every
    row's outcomes) and the hard pairs (``--pairs``)."""
    import argparse
    import shlex
    import sys

    from scripts.bench.scale_report import machine
    from scripts.negation.negation_hard_pairs import SEED as hard_seed
    from lsr_lucene.io.output import refuse_existing, write_text_atomic

    parser = argparse.ArgumentParser(prog="python -m scripts.negation.negation_nested",
                                     description=__doc__.splitlines()[0])
    row_arguments(parser)
    parser.add_argument("--pairs", type=Path, help="also write the hard pairs here (JSONL)")
    parser.add_argument("--pad", type=Path, help="distractor passages (JSONL; negation_scale distractors): every "
                        "ExcluIR and BoolQuestions row is also scored with them added to its corpus, and the "
                        "selection scores both")
    parser.add_argument("--output", required=True, type=Path, help="stem: writes STEM.md and STEM.csv")
    parser.add_argument("--overwrite", action="store_true")
    args = parser.parse_args(argv)
    md, csv = args.output.with_name(args.output.name + ".md"), args.output.with_name(args.output.name + ".csv")
    for path in (md, csv, args.pairs):
        if path:
            refuse_existing(path, args.overwrite)
    rows, corpora = load_rows(args.excluir, args.boolq, args.wiki, args.work, args.limit)
    outcomes = score_rows(rows, corpora, args.work, args.model)
    padded = score_rows(rows, corpora, args.work, args.model, pad=args.pad) if args.pad else None
    label = f"+{args.pad.stem}" if args.pad else "+distractors"
    result = report(rows, outcomes, padded, label)
    counts = ", ".join(f"{src} {len(idx)}" for src, idx in by_source(rows, range(len(rows))).items())
    preamble = (f"# Negation default: nested-fold estimate (issue 49)\n\n"
                f"Command: `python -m scripts.negation.negation_nested {shlex.join(argv or sys.argv[1:])}` "
                f"(scripts/run_negation_estimate.sh). Machine: {machine()}. "
                f"Generator seed {hard_seed} (scripts/negation/negation_hard_pairs.py).\n\n"
                f"{__doc__.split(chr(10), 2)[2].strip()}\n\nRows: {counts}. A row is right for R@1 when the wanted "
                "passage ranks first, for RR when it scores strictly above every excluded passage (a hard row may "
                "exclude two). Candidates: " + "; ".join(f"{c} ({o})" for c, o in CANDIDATES.items()) +
                ". Plain search: the whole request as one sparse query. Intervals: 2,000 bootstrap resamplings of "
                "the rows (seed 0). Every row's outcomes: the .csv beside this page." + (
                    f"\n\nCorpus `{label}`: each benchmark corpus with the passages of `{args.pad}` added "
                    "(scripts/negation/negation_scale.py; the wiki rows, drawn from wiki2015 themselves, are "
                    "scored on their own corpus only). A row's selection score is the mean of its (R@1 + RR) / 2 "
                    "over the benchmark corpus and the padded one." if args.pad else ""))
    write_text_atomic(md, markdown(result, preamble))
    write_text_atomic(csv, row_table(rows, outcomes, padded, label).to_csv())
    if args.pairs:
        pairs = [{k: v for k, v in r.items() if k != "corpus"} for r in rows if r.get("family")]
        write_text_atomic(args.pairs, "".join(json.dumps(r) + "\n" for r in pairs))
    print(f"final choice: {result['final']}; written {md}, {csv}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    import sys

    from lsr_lucene.cli import run_main

    sys.exit(run_main(main))
