"""NevIR / ExcluIR evaluation of composed queries on tiny hand-made sets (fake encoder, exact scoring)."""
from __future__ import annotations

import json

import pytest

from lsr_lucene.compose.backends import ExactBackend
from lsr_lucene.compose.query_encoder import QueryEncoder
from scripts.negation import contrastive, contrastive_runs
from scripts.negation.contrastive_configs import MODES, NEGATION_OPS, Config, default_configs
from lsr_lucene.eval.contrastive_metrics import excluir_metrics, nevir_pairwise_accuracy
from scripts.negation.excluir import EXCLUIR_COLUMNS, cross_validate, excluir_runs, excluir_table, objective, select
from scripts.negation.nevir import nevir_chart, nevir_scores, nevir_table, plan_scores
from scripts.negation.parser_coverage import excluir_coverage

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


WORDS = ["[CLS]"] + sorted({w for text in VECTORS for w in text.split()} | {t for v in VECTORS.values() for t in v})


class FakeTokenizer:
    all_special_ids = [0]

    def __call__(self, texts, **_):
        return {"input_ids": [[0] + [WORDS.index(w) for w in t.split()] + [0] for t in texts]}


class FakeEncoder:
    """Stands in for SparseEncoder: the hand-made VECTORS for queries, weight 1 per word for documents."""

    query_max_length = 64
    vocab = WORDS
    tokenizer = FakeTokenizer()

    def encode_queries(self, texts):
        return [dict(VECTORS[t]) for t in texts]

    def encode_documents(self, texts):
        return [dict.fromkeys(t.split(), 1.0) for t in texts]


def encoders():
    base = FakeEncoder()
    return {mode: QueryEncoder(mode=mode, encoder=base) for mode in ("full",)}


EXCLUIR = [{"id": "1", "query": "coffee without sugar", "pos_id": "c-black", "neg_id": "c-sugar"},
           {"id": "2", "query": "tea besides green tea", "pos_id": "t-black", "neg_id": "t-green"},
           {"id": "3", "query": "plain coffee", "pos_id": "c-black", "neg_id": "c-sugar"}]


def test_excluir_runs_tables_and_selection():
    backend = ExactBackend({d: v for d, v in DOCS.items() if "/" not in d}.items())
    configs = [Config("vanilla"), Config("ignore"), Config("disentangled"),
               Config("fusion", 1.0)]
    runs = excluir_runs(EXCLUIR, configs, backend, encoders(), 100, progress=False)
    table = excluir_table(runs, EXCLUIR)
    assert list(table.columns) == list(EXCLUIR_COLUMNS)
    for label, run in runs.items():
        assert table.loc[label, "RR"] == excluir_metrics(run, EXCLUIR)["RR"]
    # vanilla ranks the sugared coffee first; penalising B puts the black teas/coffees first
    assert table.loc["vanilla", "R@1"] < table.loc["disentangled", "R@1"] == 1.0
    assert runs["ignore"]["1"].keys() == {"c-sugar", "c-black"}
    best = select(runs, EXCLUIR)
    assert objective(excluir_metrics(runs[best], EXCLUIR)) == max(
        objective(excluir_metrics(r, EXCLUIR)) for r in runs.values())
    cv = cross_validate(runs, EXCLUIR, folds=3)
    assert len(cv["chosen"]) == 3 and set(cv["metrics"]) == set(EXCLUIR_COLUMNS)


def test_excluir_coverage_counts_b_naming_the_negative(tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"id": "c-sugar", "title": "Sugar in coffee", "text": "x"}\n'
                      '{"id": "c-black", "title": "Black coffee", "text": "y"}\n'
                      '{"id": "t-green", "title": "Green tea", "text": "z"}\n'
                      '{"id": "t-black", "title": "Black tea", "text": "w"}\n')
    cov = excluir_coverage(EXCLUIR, corpus)
    assert cov["queries"] == 3 and cov["parsed"] == 2
    assert cov["B names neg"] == 1.0 and cov["B names pos"] == 0.0


def test_nevir_scores_table_and_chart(tmp_path):
    rows = [{"id": "n1", "q1": "coffee without sugar", "doc1": "-", "q2": "plain coffee", "doc2": "-"}]
    backend = ExactBackend(DOCS.items())
    configs = [Config("vanilla"), Config("disentangled"), Config("fusion-scaled")]
    scores = nevir_scores(rows, configs, backend, encoders(), 100)
    # vanilla q1 = {coffee: 100, sugar: 100, without: 20}: doc1 (coffee+sugar) outscores doc2 (coffee only);
    # disentangled q1 = coffee − sugar: doc1 scores 0, doc2 10000
    assert scores["vanilla"][0] == pytest.approx((200 * 100 + 20 * 0, 100 * 100, 100 * 100, 100 * 100))
    assert scores["disentangled"][0][:2] == pytest.approx((0.0, 10000.0))
    table = nevir_table(scores)
    for label, rows_scores in scores.items():
        assert table.loc[label, "pairwise_accuracy"] == nevir_pairwise_accuracy(rows_scores)["pairwise_accuracy"]
    png = nevir_chart(table, tmp_path / "chart.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plan_scores_fusion_over_the_given_documents():
    from lsr_lucene.compose.operations import FusionPlan, VectorPlan

    backend = ExactBackend(DOCS.items())
    plan = FusionPlan("not", False, 0.5, VectorPlan({"coffee": 1.0}), VectorPlan({"sugar": 1.0}))
    assert plan_scores(plan, backend, 100, ["n1/1", "n1/2"]) == pytest.approx(
        [100 * 100 - 0.5 * 100 * 100, 100 * 100])
    assert plan_scores(VectorPlan({}), backend, 100, ["n1/1"]) == [0.0]


def test_config_labels():
    assert Config("nrf", 0.3, "no-expansion").label == "nrf λ=0.3 [no-expansion]"
    assert Config("vanilla").label == "vanilla"
    assert len(default_configs()) == len(NEGATION_OPS) * len(MODES)


def fake_encoders(model, modes, threads=None):
    return {mode: QueryEncoder(mode=mode, encoder=FakeEncoder()) for mode in modes}


def test_excluir_command_names_the_split_it_ran_on(tmp_path, monkeypatch, capsys):
    """test.jsonl is reported as "ExcluIR test" (heading, coverage and selection tables), not as dev."""
    vectors = tmp_path / "vectors"
    vectors.mkdir()
    (vectors / "part-00000.jsonl").write_text("".join(json.dumps({"id": d, "contents": "", "vector": v}) + "\n"
                                                      for d, v in DOCS.items() if "/" not in d))
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": d, "title": d.replace("-", " "), "text": "x"}) + "\n" for d in DOCS))
    queries = tmp_path / "test.jsonl"
    queries.write_text("".join(json.dumps(row) + "\n" for row in EXCLUIR))
    monkeypatch.setattr(contrastive_runs, "ensure_index", lambda *args, **kwargs: (vectors, tmp_path / "index"))
    monkeypatch.setattr(contrastive_runs, "make_encoders", fake_encoders)
    out = tmp_path / "out"
    assert contrastive.main(["excluir", "--corpus", str(corpus), "--queries", str(queries), "--work", str(tmp_path),
                             "--output-dir", str(out), "--folds", "3"]) == 0
    printed = capsys.readouterr().out
    assert "## ExcluIR test: every operation" in printed and "ExcluIR dev" not in printed
    assert "| ExcluIR test |" in (out / "parser_coverage.md").read_text()
    selected = (out / "selected.md").read_text()
    assert "selected on all of test" in selected and "3-fold CV within test" in selected and " dev" not in selected


def test_nevir_command_names_the_split_it_ran_on(tmp_path, monkeypatch, capsys):
    data = tmp_path / "test.jsonl"
    data.write_text(json.dumps({"id": "n1", "q1": "coffee without sugar", "doc1": "coffee sugar",
                                "q2": "plain coffee", "doc2": "coffee"}) + "\n")
    monkeypatch.setattr(contrastive_runs, "make_encoders", fake_encoders)
    out = tmp_path / "out"
    assert contrastive.main(["nevir", "--data", str(data), "--work", str(tmp_path), "--output-dir", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "## NevIR test: every operation" in printed and "NevIR dev" not in printed
    assert "| NevIR test |" in (out / "parser_coverage.md").read_text()
    assert (out / "categories.png").read_bytes()[:4] == b"\x89PNG"
