"""Every composition operation on a collection with qrels, through Lucene: the run files, and nDCG@10 / R@100 per
root operation (not, and, or) of the queries."""
from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

from lsr_lucene.compose.compositions import Composition
from lsr_lucene.compose.execute import compose, execute
from lsr_lucene.compose.query_encoder import QueryEncoder
from scripts.negation.contrastive_configs import Config
from lsr_lucene.eval.trec import evaluate
from lsr_lucene.io.runs import write_run

COLLECTION_OPS = ("vanilla", "subtract", "ignore", "nrf", "orthogonal", "disentangled", "add", "maxpool", "cpt",
                  "fusion", "fusion-scaled")


def root_operations(comps: Sequence[Composition]) -> dict[str, str]:
    """qid -> the operation at the root of its tree (not, and, or), or "atomic"."""
    return {c.qid: (c.tree.op if not isinstance(c.tree, str) else "atomic") for c in comps}


def collection_runs(comps: Sequence[Composition], modes: Sequence[str], backend, encoders: Mapping[str, QueryEncoder],
                    scale: float, hits: int, work: Path) -> dict[str, Path]:
    """Write one run file under ``work`` (replacing it) per operation of :data:`COLLECTION_OPS` and encoder mode;
    returns ``{configuration label: run path}``."""
    runs = {}
    for mode in modes:
        for op in COLLECTION_OPS:
            config = Config(op, None, mode)
            plans = compose(comps, config.settings(), encoders[mode])
            results = execute([c.qid for c in comps], plans, backend, scale, hits)
            path = work / f"{config.label.replace(' ', '_').replace('[', '').replace(']', '')}.run"
            write_run(results, path, f"compose-{op}", overwrite=True)
            runs[config.label] = path
    return runs


def root_operation_table(qrels: str | Path, runs: Mapping[str, Path], kinds: Mapping[str, str]):
    """DataFrame, one row per run: mean nDCG@10 and R@100 over the queries of each root operation, nDCG@10 over all."""
    import pandas as pd

    per_query = evaluate(qrels, runs, ("ndcg_cut_10", "recall_100"), per_query=True)
    table = {}
    for label in runs:
        rows = per_query.loc[label]
        entry = {}
        for kind in ("not", "and", "or"):
            ids = [q for q, k in kinds.items() if k == kind and q in rows.index]
            if ids:
                entry[f"{kind} nDCG@10"] = rows.loc[ids, "nDCG@10"].mean()
                entry[f"{kind} R@100"] = rows.loc[ids, "R@100"].mean()
        ids = [q for q in kinds if q in rows.index]
        entry["all nDCG@10"] = rows.loc[ids, "nDCG@10"].mean()
        table[label] = entry
    df = pd.DataFrame.from_dict(table, orient="index")
    df.index.name = "operation"
    return df
