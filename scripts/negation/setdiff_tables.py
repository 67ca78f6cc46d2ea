"""The Markdown and CSV tables of :mod:`scripts.negation.setdiff_score`: the selection of β inside folds, the
set-difference figures per system, part and query group, and the pair benchmarks beside them."""
from __future__ import annotations

import csv
from pathlib import Path
from typing import Mapping, Sequence

from scripts.negation.setdiff_score import (EXPLICIT, FOLDS, NATURAL, PAIR_SLACK, bootstrap, fold_of, held_out_pair,
                                            objective)

GROUPS = {
    "word / short term, natural language (but not, excluding, without)":
        lambda r: r["kind"] in ("word", "phrase") and r["phrasing"] in NATURAL,
    "word / short term, explicit syntax (-B, NOT B)": lambda r: r["kind"] in ("word", "phrase") and
    r["phrasing"] in EXPLICIT,
    "one word B only, natural language": lambda r: r["kind"] == "word" and r["phrasing"] in NATURAL,
    "description of one document (its title), natural language": lambda r: r["kind"] == "description",
}
PARTS = {"tuning": lambda r: not r["heldout"], "held-out": lambda r: r["heldout"]}


def _ci(v: tuple[float, float, float]) -> str:
    return f"{v[0]:.3f} ({v[1]:.3f}–{v[2]:.3f})"


def _column(figs: Mapping[str, tuple[float, float]], k: int):
    """A row's k-th figure (0 nDCG@10, 1 B share) of one system."""
    return lambda r: figs[r["id"]][k]


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def select(rows: Sequence[Mapping], betas: Mapping[str, Mapping], pair_figs: Mapping, pairs: Mapping):
    """(eligible labels, per-fold choice, outer-fold per-row figures, the choice on every tuning row, lines)."""
    tune = [r for r in rows if not r["heldout"] and GROUPS[next(iter(GROUPS))](r)]
    lines = ["| β | tuning objective | nDCG@10 | B share | ExcluIR tune R@1 / RR | BoolQuestions tune R@1 / RR "
             "| eligible |", "|---|---:|---:|---:|---|---|---|"]
    eligible = []
    base = {name: _pair_means(pair_figs[name]["old default"], pairs[name], "tune") for name in pairs}
    for label, figs in betas.items():
        means = {name: _pair_means(pair_figs[name].get(label, {}), pairs[name], "tune") for name in pairs}
        ok = all(means[n][i] >= base[n][i] - PAIR_SLACK for n in pairs for i in (0, 1))
        eligible += [label] if ok else []
        lines.append(f"| {label.removeprefix('compose-beta')} | {objective(tune, figs):.4f} | "
                     f"{_mean([figs[r['id']][0] for r in tune]):.4f} | {_mean([figs[r['id']][1] for r in tune]):.4f} | "
                     + " | ".join(f"{means[n][0]:.3f} / {means[n][1]:.3f}" for n in pairs) + f" | {'yes' if ok else 'no'} |")
    lines.append("| today's default (old code) | | | | " + " | ".join(f"{base[n][0]:.3f} / {base[n][1]:.3f}" for n in pairs)
                 + " | |")
    chosen, outer = {}, {}
    for fold in range(FOLDS):
        train = [r for r in tune if fold_of(r) != fold]
        pick = max(eligible, key=lambda b: (objective(train, betas[b]), b)) if eligible else None
        chosen[fold] = pick
        for r in tune:
            if fold_of(r) == fold and pick is not None:
                outer[r["id"]] = betas[pick][r["id"]]
    final = max(eligible, key=lambda b: (objective(tune, betas[b]), b)) if eligible else None
    return eligible, chosen, outer, final, tune, lines


def _pair_means(outcomes: Mapping[str, tuple[float, float]], rows: Sequence[Mapping], part: str) -> tuple[float, float]:
    ids = [str(r["id"]) for r in rows if part == "all" or held_out_pair(str(r["id"])) == (part == "held-out")]
    got = [outcomes[i] for i in ids if i in outcomes]
    return _mean([g[0] for g in got]), _mean([g[1] for g in got])


def _pair_ci(outcomes: Mapping[str, tuple[float, float]], rows: Sequence[Mapping], part: str, k: int) -> str:
    picked = [{"collection": "", "qid": str(r["id"]), "id": str(r["id"])} for r in rows
              if part == "all" or held_out_pair(str(r["id"])) == (part == "held-out")]
    return _ci(bootstrap(picked, lambda r: outcomes[r["id"]][k]))


def _capability() -> str:
    import torch

    return str(torch.backends.cpu.get_cpu_capability())


def write_tables(out: Path, rows: Sequence[Mapping], figures: Mapping[str, Mapping], betas: Mapping[str, Mapping],
                 pairs: Mapping, pair_figs: Mapping) -> None:
    from lsr_lucene.compose.negation_parser import parse

    fired = {r["id"]: bool(parse(r["query"]).composed) for r in rows if r["phrasing"] not in EXPLICIT}
    eligible, chosen, outer, final, tune, sel_lines = select(rows, betas, pair_figs, pairs)
    md = [f"# Set-difference exclusion benchmark (issue 65), {len(rows)} rows over "
          f"{len({(r['collection'], r['qid']) for r in rows})} topics "
          f"({', '.join(sorted({str(r['collection']) for r in rows}))})",
          "", "How the rows are built: runs/negation/README.md (\"The set-difference benchmark\"). nDCG@10 against the "
          "topic's relevant documents that do not contain B; B share: share of the top-10 slots holding a document "
          "that contains B (a description row: the described document). 95% bootstrap intervals over topics "
          "(2,000 resamplings). Tuning and held-out topics were fixed by sha1 before any run.", "",
          f"Regenerate: `SETS=\"{' '.join(sorted({str(r['collection']) for r in rows}))}\" nice "
          "scripts/run_negation_setdiff.sh` (the scores alone: `python -m scripts.negation.setdiff_score --new "
          "work/setdiff/new --old work/setdiff/old --output runs/negation/setdiff`); torch CPU capability "
          f"{_capability()}.", ""]
    for group, keep in GROUPS.items():
        md += [f"## {group}", ""]
        head = "| system |" + "".join(f" {p} nDCG@10 | {p} B share |" for p in PARTS)
        md += [head, "|---|" + "---:|" * (2 * len(PARTS))]
        for name, figs in figures.items():
            cells = []
            for inside in PARTS.values():
                sub = [r for r in rows if keep(r) and inside(r)]
                cells += [_ci(bootstrap(sub, _column(figs, 0))), _ci(bootstrap(sub, _column(figs, 1)))]
            md.append(f"| {name} | " + " | ".join(cells) + " |")
        counts = {p: len([r for r in rows if keep(r) and inside(r)]) for p, inside in PARTS.items()}
        nl = [r for r in rows if keep(r) and r["id"] in fired]
        md += ["", f"Rows: {counts}; the parser composes {_mean([fired[r['id']] for r in nl]):.3f} of the "
                   f"natural-language ones." if nl else f"Rows: {counts}.", ""]
    md += ["## β of the short-term penalty, chosen inside folds", "",
           f"Tuning rows: the {len(tune)} natural-language word / short-term rows of the tuning topics; objective "
           "nDCG@10 − max(0, B share − 0.05); a β is eligible when ExcluIR's and BoolQuestions' tuning parts lose at "
           f"most {PAIR_SLACK} R@1 and RR against today's default (old code). {FOLDS} folds by topic.", ""] + sel_lines
    if outer:
        o_rows = [r for r in tune if r["id"] in outer]
        md += ["", f"Chosen per fold: {', '.join(str(chosen[f]).removeprefix('compose-beta') for f in sorted(chosen))}; "
               f"on all tuning rows: {str(final).removeprefix('compose-beta')}. Outer-fold estimate on the tuning rows: "
               f"nDCG@10 {_ci(bootstrap(o_rows, lambda r: outer[r['id']][0]))}, "
               f"B share {_ci(bootstrap(o_rows, lambda r: outer[r['id']][1]))}.", ""]
    md += ["## The pair benchmarks beside them (R@1 / RR)", "",
           "| system | ExcluIR dev (all) | ExcluIR held-out third | BoolQuestions dev (all) "
           "| BoolQuestions held-out third |",
           "|---|---|---|---|---|"]
    for label in ["plain", "old default", "new default", "hard filter (old default, B removed)"]:
        cells = []
        for name in pairs:
            o = pair_figs[name].get(label)
            if o is None:
                cells += ["", ""]
                continue
            a = _pair_means(o, pairs[name], "all")
            cells.append(f"{a[0]:.3f} / {a[1]:.3f}")
            cells.append(f"{_pair_ci(o, pairs[name], 'held-out', 0)} / {_pair_ci(o, pairs[name], 'held-out', 1)}")
        md.append(f"| {label} | " + " | ".join(cells) + " |")
    tmp = out.with_suffix(".md.tmp")
    tmp.write_text("\n".join(md) + "\n")
    tmp.replace(out.with_suffix(".md"))
    tmp = out.with_suffix(".csv.tmp")
    with open(tmp, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "collection", "qid", "kind", "phrasing", "heldout", "system", "ndcg10", "b_share"])
        for name, figs in {**figures, **betas}.items():
            for r in rows:
                w.writerow([r["id"], r["collection"], r["qid"], r["kind"], r["phrasing"], int(r["heldout"]), name,
                            f"{figs[r['id']][0]:.4f}", f"{figs[r['id']][1]:.1f}"])
    tmp.replace(out.with_suffix(".csv"))
    print("\n".join(md))
