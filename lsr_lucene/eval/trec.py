"""Evaluate TREC runs in process with trec_eval's own code (``pytrec_eval``): measures, qrels, and the result
tables (CSV and Markdown).

:func:`evaluate` gives a DataFrame with rows = runs and columns nDCG@10, MAP, R@100, R@1000 by default, averaged
as ``trec_eval -c`` averages (every query of the qrels counts; a query the run does not answer is evaluated as
an empty ranking, so it scores 0); the command is ``lsr-lucene eval`` (:mod:`lsr_lucene.eval.cli`). Run files
are read by :mod:`lsr_lucene.io.runs`.
"""
from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from lsr_lucene.errors import InputError
from lsr_lucene.io.corpus import missing as missing_input, open_text
from lsr_lucene.io.output import atomic_output, refuse_existing
from lsr_lucene.io.runs import read_run

DEFAULT_MEASURES = ("ndcg_cut_10", "map", "recall_100", "recall_1000")
# trec_eval measures that take a cutoff/parameter: ``-m base.k`` reports ``base_k``.
PARAMETRISED = ("ndcg_cut", "map_cut", "recall", "P", "success", "Rprec_mult", "iprec_at_recall", "set_F",
                "ndcg_rel", "relative_P", "Rndcg", "P_avgjg", "num_nonrel_judged_ret")
FRIENDLY = {  # friendly prefix (lower case) -> trec_eval base
    "ndcg@": "ndcg_cut", "map@": "map_cut", "r@": "recall", "recall@": "recall", "p@": "P", "success@": "success",
}
FRIENDLY_PLAIN = {"map": "map", "mrr": "recip_rank", "ndcg": "ndcg", "rr": "recip_rank"}
COLUMN_NAMES = {"ndcg_cut": "nDCG@{}", "map_cut": "MAP@{}", "recall": "R@{}", "P": "P@{}", "success": "Success@{}"}
COLUMN_PLAIN = {"map": "MAP", "recip_rank": "MRR", "ndcg": "nDCG"}


# ---------------------------------------------------------------- measures


def canonical_measure(name: str) -> tuple[str, str | None]:
    """``(trec_eval base, parameter or None)`` for names like ``ndcg_cut_10``, ``ndcg_cut.10``, ``nDCG@10``, ``MAP``."""
    text = name.strip()
    if not text:
        raise InputError("empty measure name")
    lower = text.lower()
    for prefix, base in FRIENDLY.items():
        if lower.startswith(prefix) and re.fullmatch(r"\d+", lower[len(prefix):]):
            return base, lower[len(prefix):]
    if lower in FRIENDLY_PLAIN:
        return FRIENDLY_PLAIN[lower], None
    if "." in text and not re.fullmatch(r".*_\d+\.\d+", text):
        base, _, param = text.partition(".")
        return base, param
    for base in sorted(PARAMETRISED, key=len, reverse=True):
        match = re.fullmatch(re.escape(base) + r"_(\d+(?:\.\d+)?)", text)
        if match:
            return base, match.group(1)
    return text, None


def expand_measures(items: Iterable[str]) -> list[str]:
    """Split comma lists: ``"map,ndcg_cut.5,10"`` -> ``["map", "ndcg_cut.5", "ndcg_cut.10"]``."""
    out: list[str] = []
    for item in items:
        base = None
        for piece in filter(None, (p.strip() for p in item.split(","))):
            if re.fullmatch(r"\d+(\.\d+)?", piece) and base is not None:
                out.append(f"{base}.{piece}")
                continue
            out.append(piece)
            base = piece.partition(".")[0] if "." in piece else None
    return out


def unique_measures(names: Iterable[str]) -> list[str]:
    """The measures once each, in first-given order: ``map map`` or ``nDCG@10 ndcg_cut_10`` name one measure
    (trec_eval's key), and a table has one column per measure."""
    seen: dict[str, str] = {}
    for name in names:
        seen.setdefault(measure_key(name), name)
    return list(seen.values())


def measure_key(name: str) -> str:
    """The key trec_eval prints for a measure (``ndcg_cut.10`` -> ``ndcg_cut_10``)."""
    base, param = canonical_measure(name)
    return f"{base}_{param}" if param is not None else base


def column_name(name: str) -> str:
    """Table column for a measure: nDCG@10, MAP, R@100, P@10, MRR; other trec_eval keys unchanged."""
    base, param = canonical_measure(name)
    if param is not None and base in COLUMN_NAMES:
        return COLUMN_NAMES[base].format(param)
    if param is None and base in COLUMN_PLAIN:
        return COLUMN_PLAIN[base]
    return measure_key(name)


def measure_specs(measures: Sequence[str]) -> set[str]:
    """trec_eval ``-m`` names with each measure's parameters grouped (``ndcg_cut.5,10``): trec_eval keeps only
    the last ``-m`` of a measure, and so does pytrec_eval."""
    grouped: dict[str, list[str]] = {}
    for name in measures:
        base, param = canonical_measure(name)
        params = grouped.setdefault(base, [])
        if param is not None and param not in params:
            params.append(param)
    return {f"{base}.{','.join(params)}" if params else base for base, params in grouped.items()}


# ---------------------------------------------------------------- qrels


def read_qrels(path: str | Path) -> dict[str, dict[str, int]]:
    """Read TREC qrels ``qid iter docid gain`` into ``{qid: {docid: gain}}``; bad lines raise InputError."""
    path = Path(path)
    if not path.is_file():
        raise missing_input(path, "qrels file")
    qrels: dict[str, dict[str, int]] = {}
    with open_text(path) as handle:
        for line_no, line in enumerate(handle, 1):
            cols = line.split()
            if not cols:
                continue
            if len(cols) != 4:
                raise InputError(f"{path}:{line_no}: expected 4 columns 'qid 0 docid gain', got {len(cols)}")
            try:
                gain = int(cols[3])
            except ValueError:
                raise InputError(f"{path}:{line_no}: relevance {cols[3]!r} is not an integer") from None
            judged = qrels.setdefault(cols[0], {})
            if judged.get(cols[2], gain) != gain:  # the same judgment twice is harmless; two gains are not
                raise InputError(f"{path}:{line_no}: document {cols[2]} of query {cols[0]} is judged again with "
                                 f"relevance {gain} (first {judged[cols[2]]})")
            judged[cols[2]] = gain
    if not qrels:
        raise InputError(f"{path}: empty qrels file")
    return qrels


# ---------------------------------------------------------------- trec_eval measures (pytrec_eval)


def evaluator(qrels: Mapping[str, Mapping[str, int]], measures: Sequence[str]):
    """A ``pytrec_eval.RelevanceEvaluator`` (trec_eval's C code in process) for ``measures``; unknown: InputError."""
    import pytrec_eval

    try:
        return pytrec_eval.RelevanceEvaluator({q: dict(d) for q, d in qrels.items()}, measure_specs(measures))
    except ValueError as exc:
        raise InputError(f"trec_eval measure: {exc}") from None


def evaluate_complete(judge, qrels: Mapping[str, Mapping[str, int]], run: Mapping[str, Mapping[str, float]]
                      ) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, float]]]:
    """(per-query values of the queries the run answers, per-query values of every qrels query) as ``trec_eval
    -c`` counts them: a qrels query without a run line is evaluated as an empty ranking (0 for the usual measures,
    its relevant documents still counted in ``num_rel``)."""
    answered = judge.evaluate({q: dict(docs) for q, docs in run.items() if docs})
    missing: dict[str, dict[str, float]] = {q: {} for q in qrels if q not in answered}
    complete = {**answered, **(judge.evaluate(missing) if missing else {})}
    return answered, complete


def aggregate(per_query: Mapping[str, Mapping[str, float]], key: str) -> float:
    """trec_eval's summary of one measure over queries: sum for ``num_*``, geometric mean for ``gm_*``, else mean."""
    import pytrec_eval

    values = [values[key] for values in per_query.values() if key in values]
    return pytrec_eval.compute_aggregated_measure(key, values) if values else float("nan")


def evaluate(qrels: str | Path | Mapping[str, Mapping[str, int]],
             runs: Mapping[str, str | Path | Mapping] | Sequence[str | Path],
             measures: Sequence[str] = DEFAULT_MEASURES, per_query: bool = False):
    """trec_eval ``-c`` of each run (a run file, or one already read by lsr_lucene.io.runs.read_run) against
    ``qrels`` (a qrels file, or one already read by ``read_qrels``): a DataFrame with rows = run names and
    columns nDCG@10, MAP, ...

    ``per_query=True`` returns rows indexed by (run, qid) instead (queries the run does not answer are absent,
    as in ``trec_eval -q``).
    """
    import pandas as pd

    if not isinstance(runs, Mapping):
        paths = list(runs)
        runs = {Path(p).stem: p for p in paths}
        if len(runs) < len(paths):
            raise InputError("two runs share a file name; pass a {name: path} mapping")
    if not runs:
        raise InputError("no run to evaluate")
    measures = unique_measures(expand_measures(measures))
    if not measures:
        raise InputError("no measure to compute")
    if not isinstance(qrels, Mapping):
        qrels = read_qrels(qrels)
    judge = evaluator(qrels, measures)
    keys = [measure_key(m) for m in measures]
    columns = [column_name(m) for m in measures]
    rows: list[list[float]] = []
    index: list[str | tuple[str, str]] = []
    for name, run_path in runs.items():
        run = run_path if isinstance(run_path, Mapping) else read_run(run_path)
        answered, complete = evaluate_complete(judge, qrels, run)
        missing = [k for k in keys if not any(k in values for values in complete.values())]
        if missing:
            raise InputError(f"trec_eval reports no {', '.join(missing)} (unknown measure or parameter?)")
        if per_query:
            for qid, values in answered.items():
                rows.append([values.get(k, float("nan")) for k in keys])
                index.append((name, qid))
        else:
            rows.append([aggregate(complete, k) for k in keys])
            index.append(name)
    if per_query:
        return pd.DataFrame(rows, index=pd.MultiIndex.from_tuples(index, names=["run", "qid"]), columns=columns)
    return pd.DataFrame(rows, index=pd.Index(index, name="run"), columns=columns)


def paired_tests(qrels: Mapping[str, Mapping[str, int]], runs: Mapping[str, Mapping[str, Mapping[str, float]]],
                 measures: Sequence[str], baseline: str):
    """PyTerrier's baseline columns for each measure: queries better (``+``) and worse (``-``) than the run named
    ``baseline``, and the two-sided paired t-test p-value (scipy's ``ttest_rel``, as ir_measures and PyTerrier
    report it) over every qrels query (``-c``: a query a run does not answer scores 0); NaN in the baseline's row."""
    import numpy as np
    import pandas as pd
    from scipy.stats import ttest_rel

    if baseline not in runs:
        raise InputError(f"--baseline {baseline}: no run of that name (runs: {', '.join(runs)})")
    measures = unique_measures(expand_measures(measures))
    judge = evaluator(qrels, measures)
    qids = sorted(qrels)
    per_run = {name: evaluate_complete(judge, qrels, run)[1] for name, run in runs.items()}
    columns: dict[str, list[float]] = {}
    for measure in measures:
        key, column = measure_key(measure), column_name(measure)
        base = np.array([per_run[baseline][q].get(key, np.nan) for q in qids])
        better, worse, p_values = [], [], []
        for name in runs:
            values = np.array([per_run[name][q].get(key, np.nan) for q in qids])
            same = name == baseline or np.array_equal(values, base)
            better.append(None if name == baseline else int(np.sum(values > base)))
            worse.append(None if name == baseline else int(np.sum(values < base)))
            p_values.append(np.nan if name == baseline else 1.0 if same else float(ttest_rel(values, base).pvalue))
        columns.update({f"{column} +": pd.array(better, dtype="Int64"), f"{column} -": pd.array(worse, dtype="Int64"),
                        f"{column} p-value": p_values})
    return pd.DataFrame(columns, index=pd.Index(list(runs), name="run"))


# ---------------------------------------------------------------- trec_eval's own output

# trec_eval's measure table order (it prints measures in this order, whatever the order of its -m options)
TREC_EVAL_ORDER = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                   "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "infAP", "gm_bpref", "Rprec_mult",
                   "utility", "11pt_avg", "binG", "G", "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut", "map_cut",
                   "relative_P", "success", "set_P", "set_relative_P", "set_recall", "set_map", "set_F",
                   "num_nonrel_judged_ret")
COUNTS = ("num_q", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret")  # printed as integers


def _trec_eval_rank(key: str) -> tuple[int, float, str]:
    """Where trec_eval prints a result key (``recall_100``): its measure's place, then its parameter."""
    for place, base in sorted(enumerate(TREC_EVAL_ORDER), key=lambda item: -len(item[1])):
        if key == base or key.startswith(base + "_"):
            param = key[len(base) + 1:]
            return place, float(param) if re.fullmatch(r"\d+(\.\d+)?", param) else 0.0, key
    return len(TREC_EVAL_ORDER), 0.0, key


def trec_eval_lines(qrels: Mapping[str, Mapping[str, int]], run: Mapping[str, Mapping[str, float]],
                    measures: Sequence[str], per_query: bool = False, complete: bool = False,
                    run_tag: str = "") -> list[str]:
    """``trec_eval [-q] [-c] -m ...`` output: ``measure<TAB>qid<TAB>value`` lines (the measure padded to 22
    characters, values to 4 decimals, counts as integers), per query (``-q``, qids in string order) then ``all``
    averaged over the queries the run answers, or with ``complete`` over every qrels query; ``runid`` is the run's
    tag (``run_tag``, its last column)."""
    measures = unique_measures(expand_measures(measures))
    if not measures:
        raise InputError("no measure to compute")
    judge = evaluator(qrels, measures)
    answered, every = evaluate_complete(judge, qrels, run)
    summary = every if complete else answered
    keys = sorted({k for values in every.values() for k in values}, key=_trec_eval_rank)
    missing = [measure_key(m) for m in measures
               if not any(k == measure_key(m) or k.startswith(canonical_measure(m)[0] + "_") for k in keys)]
    if missing:
        raise InputError(f"trec_eval reports no {', '.join(missing)} (unknown measure or parameter?)")

    def line(key: str, qid: str, value: float) -> str:
        shown = run_tag if key == "runid" else str(int(round(value))) if key in COUNTS else f"{value:.4f}"
        return f"{key:<22}\t{qid}\t{shown}"

    lines = []
    if per_query:
        for qid in sorted(answered):
            lines += [line(k, qid, answered[qid][k]) for k in keys
                      if k not in ("num_q", "runid") and k in answered[qid]]
    lines += [line(k, "all", 0.0 if k == "runid" else aggregate(summary, k)) for k in keys]
    return lines


def evaluate_rankings(qrels: Mapping[str, Mapping[str, int]], rankings: Sequence[Mapping[str, Sequence[str]]],
                      measure: str = "ndcg_cut_10") -> list[float]:
    """trec_eval ``-c`` mean of ``measure`` for each of many in-memory rankings ``{qid: [docid, ...]}`` (best
    first) over the same qrels, in process. Scores given to trec_eval are rank-based, so it keeps each ranking's
    order exactly."""
    judge = evaluator(qrels, [measure])
    key = measure_key(measure)
    means = []
    for ranked in rankings:
        run = {qid: {doc: float(len(docs) - r) for r, doc in enumerate(docs)} for qid, docs in ranked.items()}
        _, complete = evaluate_complete(judge, qrels, run)
        value = aggregate(complete, key)
        if math.isnan(value):
            raise InputError(f"trec_eval reports no {key} (unknown measure or parameter?)")
        means.append(value)
    return means

# ---------------------------------------------------------------- tables


def _cell(value, floatfmt: str) -> str:
    import pandas as pd

    if value is None or value is pd.NA:
        return ""
    if isinstance(value, float):
        return "" if math.isnan(value) else format(value, floatfmt)
    return str(value).replace("|", "\\|")


def to_markdown(df, floatfmt: str = ".4f") -> str:
    """A GitHub Markdown table of a DataFrame (index included) without needing ``tabulate``."""
    flat = df.reset_index()
    header = [str(c) for c in flat.columns]
    numeric = [flat[c].dtype.kind in "fiu" for c in flat.columns]
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---:" if num else ":---" for num in numeric) + "|"]
    for row in flat.itertuples(index=False):
        lines.append("| " + " | ".join(_cell(v, floatfmt) for v in row) + " |")
    return "\n".join(lines) + "\n"


def table_paths(path_stem: str | Path) -> tuple[Path, Path]:
    """``(<stem>.csv, <stem>.md)``; a stem already ending in .csv or .md loses that suffix."""
    stem = Path(path_stem)
    if stem.suffix in (".csv", ".md"):
        stem = stem.with_suffix("")
    return stem.with_name(stem.name + ".csv"), stem.with_name(stem.name + ".md")


def write_table(df, path_stem: str | Path, overwrite: bool = False, floatfmt: str = ".4f",
                preamble: str = "") -> tuple[Path, Path]:
    """Write ``<stem>.csv`` and ``<stem>.md`` (``preamble`` text before the Markdown table); refuses existing
    files unless ``overwrite``."""
    csv_path, md_path = table_paths(path_stem)
    refuse_existing(csv_path, overwrite)
    refuse_existing(md_path, overwrite)
    with atomic_output(csv_path, overwrite) as tmp:
        df.to_csv(tmp, float_format="%" + floatfmt)
    with atomic_output(md_path, overwrite) as tmp:
        Path(tmp).write_text(preamble + to_markdown(df, floatfmt), encoding="utf-8")
    return csv_path, md_path
