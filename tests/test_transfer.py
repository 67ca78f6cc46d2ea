"""Exclusion across benchmarks: the `default` setting, the cross-benchmark command and selection that never reads
the split it reports on (tiny hand-made benchmarks, fake encoder, exact scoring)."""
from __future__ import annotations

import json

import pytest

from lsr_lucene.compose import operations
from lsr_lucene.compose.backends import ExactBackend
from lsr_lucene.compose.operations import Settings, adaptive, mass_share, orthogonal, orthonrf
from lsr_lucene.compose.query_encoder import CachedQueryEncoder, QueryEncoder
from scripts.negation import contrastive, contrastive_runs
from scripts.negation.contrastive_configs import DEFAULT, Config
from lsr_lucene.eval.contrastive_metrics import excluir_metrics
from scripts.negation.excluir import EXCLUIR_COLUMNS, excluir_runs, excluir_table
from scripts.negation.transfer import (WORST, cross_validated, fold_choice, fold_rows, mean_figures, query_figures,
                                      selection_table)
from test_contrastive import DOCS, EXCLUIR, VECTORS, FakeEncoder  # tests/ is on sys.path (rootdir conftest)

ROWS2 = [{"id": "b1", "query": "tea besides green tea", "pos_id": "t-black", "neg_id": "t-green"},
         {"id": "b2", "query": "coffee without sugar", "pos_id": "c-black", "neg_id": "c-sugar"},
         {"id": "b3", "query": "plain coffee", "pos_id": "c-sugar", "neg_id": "c-black"}]


def backend():
    return ExactBackend([(d, v) for d, v in DOCS.items() if "/" not in d])


def test_new_operations():
    a, b = {"x": 2.0, "y": 1.0}, {"y": 1.0, "z": 1.0}
    # orthonrf = orthogonal projection, then λ·B more
    assert orthonrf(a, b, 0.0) == orthogonal(a, b)
    assert orthonrf(a, b, 0.3) == pytest.approx({"x": 2.0, "y": 1.0 - 0.8, "z": -0.8})
    assert mass_share(a, b) == pytest.approx(1 / 3)
    assert adaptive(a, b, 0.6) == pytest.approx({"x": 2.0, "y": 1.0 - 0.4, "z": -0.4})
    assert orthonrf(a, {}, 0.5) == a and adaptive(a, {}, 0.5) == a


def test_default_row_equals_the_explicit_setting(monkeypatch):
    """The `default` row is what compose does without --operation, and equals the named operation and λ."""
    monkeypatch.setattr(operations, "DEFAULTS", {**operations.DEFAULTS, "not": "nrf"})
    monkeypatch.setattr(operations, "DEFAULT_NOT_LAMBDA", 0.7)
    assert Settings().op_for("not") == "nrf" and Settings().lam_for("nrf") == 0.7
    assert Settings("nrf").lam_for("nrf") == 0.5  # naming the operation gives its own default λ
    enc = {"full": QueryEncoder(encoder=FakeEncoder())}
    configs = [Config(DEFAULT), Config("nrf", 0.7), Config("nrf")]
    runs = excluir_runs(EXCLUIR, configs, backend(), enc, 100, progress=False)
    assert runs["default"] == runs["nrf λ=0.7"] and runs["default"] != runs["nrf"]
    table = excluir_table(runs, EXCLUIR)
    assert list(table.columns) == ["R@1", "MRR@10", "ΔR@1", "ΔMRR@10", "RR", "RR ties"]
    assert table.loc["default"].equals(table.loc["nrf λ=0.7"])


def test_shipped_default_is_what_compose_uses():
    """The shipped default names an operation valid for not nodes, and its λ applies only when none is named."""
    assert operations.DEFAULTS["not"] in operations.VECTOR_OPS["not"] + operations.FUSION
    lam = Settings().lam_for(operations.DEFAULTS["not"])
    assert lam == (operations.DEFAULT_NOT_LAMBDA if operations.DEFAULT_NOT_LAMBDA is not None
                   else operations.DEFAULT_LAMBDA.get(operations.DEFAULTS["not"], 1.0))
    assert Settings(lam=0.123).lam_for(operations.DEFAULTS["not"]) == 0.123


def test_cached_encoder_encodes_each_text_once():
    calls = []

    class Counting(FakeEncoder):
        def encode_queries(self, texts):
            calls.append(list(texts))
            return super().encode_queries(texts)

    enc = CachedQueryEncoder(QueryEncoder(encoder=Counting()))
    first = enc.encode(["coffee", "sugar", "coffee"])
    first[0]["coffee"] = 99.0  # callers may modify what they get
    assert enc.encode(["sugar", "coffee"]) == [VECTORS["sugar"], VECTORS["coffee"]]
    assert calls == [["coffee", "sugar"]]


class RecordingRun(dict):
    """A run that records which queries are read."""

    def __init__(self, data, log):
        super().__init__(data)
        self.log = log

    def get(self, qid, default=None):
        self.log.append(qid)
        return super().get(qid, default)

    def __getitem__(self, qid):
        self.log.append(qid)
        return super().__getitem__(qid)


def many_rows(prefix, n):
    base = EXCLUIR if prefix == "e" else ROWS2
    return [{**base[i % len(base)], "id": f"{prefix}{i}"} for i in range(n)]


def fake_runs(rows_by_bench, labels, log):
    """Per-query figures of runs in which each label ranks the positive first on a label- and query-dependent
    subset; reads of them are recorded in ``log``."""
    runs = {}
    for name, rows in rows_by_bench.items():
        by_label = {}
        for j, label in enumerate(labels):
            data = {}
            for i, r in enumerate(rows):
                good = (i * 7 + j * 3 + len(name)) % 5 < 3
                first, second = (r["pos_id"], r["neg_id"]) if good else (r["neg_id"], r["pos_id"])
                data[r["id"]] = {first: 2.0, second: 1.0}
            by_label[label] = data
        runs[name] = {label: RecordingRun(q, log) for label, q in query_figures(by_label, rows).items()}
    return runs


def test_mean_of_query_figures_equals_the_metrics():
    enc = {"full": QueryEncoder(encoder=FakeEncoder())}
    runs = excluir_runs(EXCLUIR, [Config("nrf"), Config("orthogonal")], backend(), enc, 100, progress=False)
    figures = query_figures(runs, EXCLUIR)
    for label, run in runs.items():
        assert mean_figures(figures[label], EXCLUIR) == pytest.approx(
            {k: excluir_metrics(run, EXCLUIR)[k] for k in EXCLUIR_COLUMNS})


def test_selection_never_reads_the_split_it_reports_on():
    rows = {"A dev": many_rows("e", 20), "B dev": many_rows("b", 15)}
    labels = ["s1", "s2", "s3", "s4"]
    log: list = []
    runs = fake_runs(rows, labels, log)
    folds = 5
    for criterion in (["A dev"], ["B dev"], ["A dev", "B dev"]):
        for k in range(folds):
            log.clear()
            fold_choice(runs, rows, criterion, labels, folds, k)
            read = set(log)
            allowed = {r["id"] for name in criterion for r in fold_rows(rows[name], folds, k, held_out=False)}
            assert read and read <= allowed
            held_out = {r["id"] for name in rows for r in fold_rows(rows[name], folds, k, held_out=True)}
            assert not read & held_out
            outside = {r["id"] for name in rows if name not in criterion for r in rows[name]}
            assert not read & outside


def test_cross_validation_uses_only_the_training_choice():
    """Changing the held-out fold's runs arbitrarily never changes that fold's choice."""
    rows = {"A dev": many_rows("e", 20), "B dev": many_rows("b", 15)}
    labels = ["s1", "s2", "s3"]
    runs = fake_runs(rows, labels, [])
    seen = []

    def spy(runs_, rows_, criterion, labels_, folds, k):
        label = fold_choice(runs_, rows_, criterion, labels_, folds, k)
        poisoned = {name: {lab: dict(run) for lab, run in by_label.items()} for name, by_label in runs_.items()}
        for name in rows_:
            for r in fold_rows(rows_[name], folds, k, held_out=True):
                for lab in labels_:  # make every other label perfect on the held-out fold
                    if lab != label:
                        poisoned[name][lab][r["id"]] = dict.fromkeys(EXCLUIR_COLUMNS, 1.0)
        assert fold_choice(poisoned, rows_, criterion, labels_, folds, k) == label
        seen.append(k)
        return label

    cv = cross_validated(runs, rows, ["A dev", "B dev"], labels, 5, chooser=spy)
    assert seen == list(range(5)) and len(cv["chosen"]) == 5
    assert set(cv["figures"]) == {"A dev", "B dev"}


def test_selection_table_rows():
    rows = {"A dev": many_rows("e", 10), "B dev": many_rows("b", 10)}
    labels = ["s1", "s2"]
    runs = fake_runs(rows, labels + [DEFAULT], [])
    sel = selection_table(runs, rows, labels, folds=2)
    assert list(sel.index) == ["chosen on A dev (all queries)", "chosen on B dev (all queries)",
                               "chosen on the worst case of all (all queries)", "chosen on A dev, 2-fold CV",
                               "chosen on B dev, 2-fold CV", "chosen on the worst case of all, 2-fold CV", DEFAULT]
    assert (sel[f"{WORST}: R@1"] == sel[["A dev: R@1", "B dev: R@1"]].min(axis=1)).all()


def write_benchmark(folder, rows):
    folder.mkdir()
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"id": d, "title": "", "text": d}) + "\n"
                                                 for d in DOCS if "/" not in d))
    (folder / "dev.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    vectors = folder.parent / "work" / folder.name / "vectors"
    vectors.mkdir(parents=True)
    (vectors / "metadata.json").write_text(json.dumps({"scale": 100}))
    (vectors / "part-00000.jsonl").write_text("".join(json.dumps({"id": d, "contents": "", "vector": v}) + "\n"
                                                      for d, v in DOCS.items() if "/" not in d))


def test_transfer_command_on_tiny_benchmarks(tmp_path, monkeypatch, capsys):
    write_benchmark(tmp_path / "excluir", EXCLUIR)
    write_benchmark(tmp_path / "boolq", ROWS2)
    monkeypatch.setattr(contrastive_runs, "make_encoders",
                        lambda model, modes, threads=None: {m: QueryEncoder(mode=m, encoder=FakeEncoder())
                                                            for m in modes})
    out = tmp_path / "out"
    args = ["transfer", "--data", str(tmp_path / "excluir"), "--data", str(tmp_path / "boolq"),
            "--work", str(tmp_path / "work"), "--output-dir", str(out), "--folds", "3"]
    assert contrastive.main(args) == 0
    printed = capsys.readouterr().out
    assert "ExcluIR dev" in printed and "boolq dev" in printed
    for slug in ("excluir", "boolq"):
        lines = (out / slug / "operations.csv").read_text().splitlines()
        assert lines[0] == "operation,R@1,MRR@10,ΔR@1,ΔMRR@10,RR,RR ties"
        assert any(line.startswith("default,") for line in lines)
        assert "RR ties: share where the two score the same" in (out / slug / "operations.md").read_text()
    header = (out / "transfer.csv").read_text().splitlines()[0].split(",")
    assert header[:2] == ["operation", "ExcluIR dev: R@1"] and "worst case: RR" in header
    assert (out / "selection.md").read_text().count("3-fold CV") == 3
    with pytest.raises(Exception, match="exists"):
        contrastive.main(args)


def test_gated_fusion_penalises_only_documents_above_the_gate():
    plan = operations.FusionPlan("not", True, 1.0, operations.VectorPlan({}), operations.VectorPlan({}), gate=0.5)
    a = {"pos": 10.0, "neg": 10.0, "mention": 9.0, "other": 0.0}
    b = {"pos": 2.0, "neg": 10.0, "mention": 5.0, "other": 0.0}  # scaled: 0.2, 1, 0.5, 0
    fused = operations.fuse(plan, [a, b])
    # neg keeps the floor share of its A score: above "other", which does not match A
    assert fused == pytest.approx({"pos": 1.0, "neg": operations.GATED_FLOOR, "mention": 0.9, "other": 0.0})
    plain = operations.fuse(operations.FusionPlan("not", True, 1.0, plan.a, plan.b), [a, b])
    assert plain["pos"] == pytest.approx(0.8)  # fusion-scaled penalises every mention of B
    assert Settings("fusion-gated", gate=0.9).describe().startswith("not: fusion-gated(λ=1, gate 0.9")
    with pytest.raises(Exception, match="gate"):
        Settings(gate=1.0)


def test_shipped_default_row_equals_its_explicit_setting():
    """`default` (no operation named) gives the same runs as fusion-gated with the default's λ and gate named."""
    assert operations.DEFAULTS["not"] == "fusion-gated"
    enc = {"full": QueryEncoder(encoder=FakeEncoder())}
    explicit = Config("fusion-gated", 1.0, gate=operations.DEFAULT_GATE)
    runs = excluir_runs(EXCLUIR, [Config(DEFAULT), explicit, Config("ignore")], backend(), enc, 100,
                        progress=False)
    assert runs["default"] == runs[explicit.label] and runs["default"] != runs["ignore"]


def test_default_under_a_vector_operation_falls_back_to_a_vector():
    """and(not(A, B), C) with default settings composes (nrf on the not node); naming fusion still fails."""
    from lsr_lucene.compose.operations import VectorPlan, build_plan, nrf
    from lsr_lucene.compose.tree import Node
    from lsr_lucene.errors import InputError

    tree = Node("and", Node("not", "coffee", "sugar"), "tea")
    plan = build_plan(tree, Settings(), VECTORS)
    assert isinstance(plan, VectorPlan)
    expected = operations.cpt(nrf(VECTORS["coffee"], VECTORS["sugar"], 0.5), VECTORS["tea"])
    assert plan.vector == pytest.approx(expected)
    with pytest.raises(InputError, match="score-fused"):
        build_plan(tree, Settings(per_type={"not": "fusion-gated", "and": "cpt"}), VECTORS)
    root = build_plan(Node("not", "coffee", "sugar"), Settings(), VECTORS)
    assert isinstance(root, operations.FusionPlan) and root.gate == operations.DEFAULT_GATE


def test_transfer_command_names_a_missing_file(tmp_path):
    from lsr_lucene.errors import InputError

    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "corpus.jsonl").write_text("")
    with pytest.raises(InputError, match=r"bench/dev\.jsonl: no such file"):
        contrastive.main(["transfer", "--data", str(tmp_path / "bench"), "--work", str(tmp_path / "w"),
                          "--output-dir", str(tmp_path / "out")])
    assert not (tmp_path / "out").exists()
