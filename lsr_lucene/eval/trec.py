"""Evaluate TREC runs with trec_eval (the binary bundled in Pyserini's Anserini fat jar): measures, run and qrels
files, and the result tables (CSV and Markdown).

:func:`evaluate` gives a DataFrame with rows = runs and columns nDCG@10, MAP, R@100, R@1000 by default
(``trec_eval -c``); the command is ``lsr-lucene eval`` (:mod:`lsr_lucene.eval.cli`).
"""
from __future__ import annotations

import math
import re
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from lsr_lucene.errors import InputError, SetupError
from lsr_lucene.io.corpus import open_text
from lsr_lucene.io.output import atomic_output, refuse_existing

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


def _measure_args(measures: Sequence[str]) -> list[str]:
    """``-m`` arguments, grouping parameters per measure (trec_eval keeps only the last ``-m`` of a measure)."""
    grouped: dict[str, list[str]] = {}
    for name in measures:
        base, param = canonical_measure(name)
        params = grouped.setdefault(base, [])
        if param is not None and param not in params:
            params.append(param)
    args: list[str] = []
    for base, params in grouped.items():
        args += ["-m", f"{base}.{','.join(params)}" if params else base]
    return args


# ---------------------------------------------------------------- file validation


def read_run(path: str | Path) -> dict[str, dict[str, float]]:
    """Read a TREC run ``qid Q0 docid rank score tag`` into ``{qid: {docid: score}}``; bad lines raise InputError."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such run file")
    run: dict[str, dict[str, float]] = {}
    with open_text(path) as handle:
        for line_no, line in enumerate(handle, 1):
            cols = line.split()
            if not cols:
                continue
            where = f"{path}:{line_no}"
            if len(cols) != 6:
                raise InputError(f"{where}: expected 6 columns 'qid Q0 docid rank score tag', got {len(cols)}")
            qid, _, docid, rank, score, _ = cols
            try:
                int(rank)
            except ValueError:
                raise InputError(f"{where}: rank {rank!r} is not an integer") from None
            try:
                value = float(score)
            except ValueError:
                raise InputError(f"{where}: score {score!r} is not a number") from None
            if not math.isfinite(value):
                raise InputError(f"{where}: score {score!r} is not finite")
            docs = run.setdefault(qid, {})
            if docid in docs:
                raise InputError(f"{where}: document {docid} appears twice for query {qid}")
            docs[docid] = value
    if not run:
        raise InputError(f"{path}: empty run file")
    return run


def read_qrels(path: str | Path) -> dict[str, dict[str, int]]:
    """Read TREC qrels ``qid iter docid gain`` into ``{qid: {docid: gain}}``; bad lines raise InputError."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such qrels file")
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
            qrels.setdefault(cols[0], {})[cols[2]] = gain
    if not qrels:
        raise InputError(f"{path}: empty qrels file")
    return qrels


def ranking(scores: Mapping[str, float]) -> list[str]:
    """Doc ids by score descending, ties by doc id ascending (the Anserini run-file convention)."""
    return sorted(scores, key=lambda doc: (-scores[doc], doc))


# ---------------------------------------------------------------- trec_eval


def trec_eval_command(args: Sequence[str]) -> list[str]:
    """``java -cp <anserini fat jar> trec_eval <args>``: Pyserini's bundled trec_eval, run as Pyserini runs it."""
    from lsr_lucene.jvm import runtime as jvm

    home = jvm.prepare_environment()
    return [str(home / "bin" / "java"), "-cp", str(jvm.anserini_jar()), "trec_eval", *args]


def run_trec_eval(args: Sequence[str]) -> str:
    """Run trec_eval and return its stdout; a trec_eval complaint becomes an InputError."""
    try:
        proc = subprocess.run(trec_eval_command(args), capture_output=True, text=True, timeout=3600)
    except OSError as exc:
        raise SetupError(f"cannot run trec_eval through Java: {exc}") from None
    # Anserini's wrapper exits 0 even when trec_eval fails, so look at stderr as well.
    errors = [line for line in proc.stderr.splitlines() if line.strip() and "WARNING" not in line]
    if proc.returncode != 0 or (errors and not proc.stdout.strip()):
        raise InputError(f"trec_eval failed: {' / '.join(errors) or f'exit status {proc.returncode}'}")
    return proc.stdout


def _parse_trec_eval(output: str) -> dict[str, dict[str, float]]:
    """``{qid or "all": {measure: value}}`` from trec_eval's ``measure\\tqid\\tvalue`` lines."""
    parsed: dict[str, dict[str, float]] = {}
    for line in output.splitlines():
        cols = line.split()
        if len(cols) != 3:
            continue
        try:
            parsed.setdefault(cols[1], {})[cols[0]] = float(cols[2])
        except ValueError:
            continue  # runid line
    return parsed


def evaluate(qrels_path: str | Path, runs: Mapping[str, str | Path] | Sequence[str | Path],
             measures: Sequence[str] = DEFAULT_MEASURES, per_query: bool = False):
    """trec_eval ``-c`` of each run: a DataFrame with rows = run names and columns nDCG@10, MAP, ...

    ``per_query=True`` returns rows indexed by (run, qid) instead (queries the run does not answer are absent).
    """
    import pandas as pd

    if not isinstance(runs, Mapping):
        paths = list(runs)
        runs = {Path(p).stem: p for p in paths}
        if len(runs) < len(paths):
            raise InputError("two runs share a file name; pass a {name: path} mapping")
    if not runs:
        raise InputError("no run to evaluate")
    measures = expand_measures(measures)
    if not measures:
        raise InputError("no measure to compute")
    read_qrels(qrels_path)  # clear file:line errors before trec_eval sees the files
    keys = [measure_key(m) for m in measures]
    columns = [column_name(m) for m in measures]
    args = ["-c", *(["-q"] if per_query else []), *_measure_args(measures)]
    rows, index = [], []
    for name, run_path in runs.items():
        read_run(run_path)
        parsed = _parse_trec_eval(run_trec_eval([*args, str(qrels_path), str(run_path)]))
        missing = [k for k in keys if k not in parsed.get("all", {})]
        if missing:
            raise InputError(f"trec_eval reported no {', '.join(missing)} for {run_path} (unknown measure?)")
        qids = [q for q in parsed if q != "all"] if per_query else ["all"]
        for qid in qids:
            rows.append([parsed[qid].get(k, float("nan")) for k in keys])
            index.append((name, qid) if per_query else name)
    if per_query:
        return pd.DataFrame(rows, index=pd.MultiIndex.from_tuples(index, names=["run", "qid"]), columns=columns)
    return pd.DataFrame(rows, index=pd.Index(index, name="run"), columns=columns)


QUERIES_PER_CALL = 8000  # trec_eval slows down more than linearly with the number of queries in one call


def evaluate_rankings(qrels: Mapping[str, Mapping[str, int]], rankings: Sequence[Mapping[str, Sequence[str]]],
                      measure: str = "ndcg_cut_10") -> list[float]:
    """trec_eval ``-c`` mean of ``measure`` for each of many in-memory rankings ``{qid: [docid, ...]}`` (best
    first) over the same qrels, in few trec_eval calls: ranking i's queries become ``i:qid`` in one run file and
    one qrels file (a grid search would otherwise start a JVM per candidate), up to ``QUERIES_PER_CALL`` queries
    a call. Scores written are rank-based, so trec_eval keeps each ranking's order exactly."""
    per_call = max(1, QUERIES_PER_CALL // max(1, len(qrels)))
    means: list[float] = []
    for start in range(0, len(rankings), per_call):
        means += _evaluate_rankings_once(qrels, rankings[start:start + per_call], measure)
    return means


def _evaluate_rankings_once(qrels: Mapping[str, Mapping[str, int]],
                            rankings: Sequence[Mapping[str, Sequence[str]]], measure: str) -> list[float]:
    import tempfile

    key = measure_key(measure)
    with tempfile.TemporaryDirectory(prefix="lsr-eval-") as tmp:
        qrels_path, run_path = Path(tmp, "qrels.txt"), Path(tmp, "run.txt")
        with open(qrels_path, "w", encoding="utf-8") as out:
            for i in range(len(rankings)):
                out.writelines(f"{i}:{qid} 0 {doc} {gain}\n" for qid, docs in qrels.items()
                               for doc, gain in docs.items())
        with open(run_path, "w", encoding="utf-8") as out:
            for i, ranked in enumerate(rankings):
                for qid, docs in ranked.items():
                    out.writelines(f"{i}:{qid} Q0 {doc} {r} {len(docs) - r + 1} fit\n" for r, doc in enumerate(docs, 1))
        output = run_trec_eval(["-c", "-q", *_measure_args([measure, "num_q"]), str(qrels_path), str(run_path)])
    parsed = _parse_trec_eval(output)
    counted = parsed.get("all", {}).get("num_q")
    if key not in parsed.get("all", {}) or not counted:
        raise InputError(f"trec_eval reported no {key} (unknown measure?)")
    per_query = int(counted) // len(rankings)  # -c: every qrels query counts, answered or not
    sums = [0.0] * len(rankings)
    for qid, values in parsed.items():
        if qid != "all" and key in values:
            sums[int(qid.partition(":")[0])] += values[key]
    return [total / per_query for total in sums]


# ---------------------------------------------------------------- tables


def _cell(value, floatfmt: str) -> str:
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
