"""NevIR / ExcluIR evaluation of composed queries on tiny hand-made sets (fake encoder, exact scoring)."""
from __future__ import annotations

import pytest

from lsr_lucene import contrastive
from lsr_lucene.compose import ExactBackend, QueryEncoder
from lsr_lucene.eval import excluir_metrics, nevir_pairwise_accuracy

# atomic and whole-query vectors; the parser splits "X without Y" into X and Y
VECTORS = {
    "coffee without sugar": {"coffee": 1.0, "sugar": 1.0, "without": 0.2},
    "coffee": {"coffee": 1.0},
    "sugar": {"sugar": 1.0},
    "tea besides green tea": {"tea": 1.0, "green": 1.0},
    "tea": {"tea": 1.0},
    "green tea": {"green": 1.0, "tea": 0.5},
    "plain coffee": {"coffee": 1.0, "plain": 0.5},
}
DOCS = {
    "c-sugar": {"coffee": 100, "sugar": 120},
    "c-black": {"coffee": 100, "black": 50},
    "t-green": {"tea": 100, "green": 130},
    "t-black": {"tea": 100, "black": 40},
    "n1/1": {"coffee": 100, "sugar": 100},
    "n1/2": {"coffee": 100},
}


class FakeEncoder:
    query_max_length = 64
    vocab = ["[CLS]"]

    def encode_queries(self, texts):
        return [dict(VECTORS[t]) for t in texts]


def encoders():
    base = FakeEncoder()
    return {mode: QueryEncoder(mode=mode, encoder=base) for mode in ("full",)}


EXCLUIR = [{"id": "1", "query": "coffee without sugar", "pos_id": "c-black", "neg_id": "c-sugar"},
           {"id": "2", "query": "tea besides green tea", "pos_id": "t-black", "neg_id": "t-green"},
           {"id": "3", "query": "plain coffee", "pos_id": "c-black", "neg_id": "c-sugar"}]


def test_excluir_runs_tables_and_selection():
    backend = ExactBackend({d: v for d, v in DOCS.items() if "/" not in d}.items())
    configs = [contrastive.Config("vanilla"), contrastive.Config("ignore"), contrastive.Config("disentangled"),
               contrastive.Config("fusion", 1.0)]
    runs = contrastive.excluir_runs(EXCLUIR, configs, backend, encoders(), 100, progress=False)
    table = contrastive.excluir_table(runs, EXCLUIR)
    assert list(table.columns) == list(contrastive.EXCLUIR_COLUMNS)
    for label, run in runs.items():
        assert table.loc[label, "RR"] == excluir_metrics(run, EXCLUIR)["RR"]
    # vanilla ranks the sugared coffee first; penalising B puts the black teas/coffees first
    assert table.loc["vanilla", "R@1"] < table.loc["disentangled", "R@1"] == 1.0
    assert runs["ignore"]["1"].keys() == {"c-sugar", "c-black"}
    best = contrastive.select(runs, EXCLUIR)
    assert contrastive.objective(excluir_metrics(runs[best], EXCLUIR)) == max(
        contrastive.objective(excluir_metrics(r, EXCLUIR)) for r in runs.values())
    cv = contrastive.cross_validate(runs, EXCLUIR, folds=3)
    assert len(cv["chosen"]) == 3 and set(cv["metrics"]) == set(contrastive.EXCLUIR_COLUMNS)


def test_excluir_coverage_counts_b_naming_the_negative(tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"id": "c-sugar", "title": "Sugar in coffee", "text": "x"}\n'
                      '{"id": "c-black", "title": "Black coffee", "text": "y"}\n'
                      '{"id": "t-green", "title": "Green tea", "text": "z"}\n'
                      '{"id": "t-black", "title": "Black tea", "text": "w"}\n')
    cov = contrastive.excluir_coverage(EXCLUIR, corpus)
    assert cov["queries"] == 3 and cov["parsed"] == 2
    assert cov["B names neg"] == 1.0 and cov["B names pos"] == 0.0


def test_nevir_scores_table_and_chart(tmp_path):
    rows = [{"id": "n1", "q1": "coffee without sugar", "doc1": "-", "q2": "plain coffee", "doc2": "-"}]
    backend = ExactBackend(DOCS.items())
    configs = [contrastive.Config("vanilla"), contrastive.Config("disentangled"), contrastive.Config("fusion-scaled")]
    scores = contrastive.nevir_scores(rows, configs, backend, encoders(), 100)
    # vanilla q1 = {coffee: 100, sugar: 100, without: 20}: doc1 (coffee+sugar) outscores doc2 (coffee only);
    # disentangled q1 = coffee − sugar: doc1 scores 0, doc2 10000
    assert scores["vanilla"][0] == pytest.approx((200 * 100 + 20 * 0, 100 * 100, 100 * 100, 100 * 100))
    assert scores["disentangled"][0][:2] == pytest.approx((0.0, 10000.0))
    table = contrastive.nevir_table(scores)
    for label, rows_scores in scores.items():
        assert table.loc[label, "pairwise_accuracy"] == nevir_pairwise_accuracy(rows_scores)["pairwise_accuracy"]
    png = contrastive.nevir_chart(table, tmp_path / "chart.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plan_scores_fusion_over_the_given_documents():
    from lsr_lucene.operations import FusionPlan, VectorPlan

    backend = ExactBackend(DOCS.items())
    plan = FusionPlan("not", False, 0.5, VectorPlan({"coffee": 1.0}), VectorPlan({"sugar": 1.0}))
    assert contrastive.plan_scores(plan, backend, 100, ["n1/1", "n1/2"]) == pytest.approx(
        [100 * 100 - 0.5 * 100 * 100, 100 * 100])
    assert contrastive.plan_scores(VectorPlan({}), backend, 100, ["n1/1"]) == [0.0]


def test_config_labels():
    assert contrastive.Config("nrf", 0.3, "no-expansion").label == "nrf λ=0.3 [no-expansion]"
    assert contrastive.Config("vanilla").label == "vanilla"
    assert len(contrastive.default_configs()) == len(contrastive.NEGATION_OPS) * len(contrastive.MODES)
