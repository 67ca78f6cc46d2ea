"""The negation default's neighbour term (issue 36, item 2): compose's ``fuse`` on a gated not node with a dense leg
equals Â' = minmax(Â + w·minmax(cos) + v·minmax(cos(·, d*))) computed by hand (d* the top of Â + w·minmax(cos),
ties to the smallest docid). (Moved from the retired leg-fusion experiment's tests, issue 66.)"""
from __future__ import annotations

import numpy as np
import pytest

from lsr_lucene.compose.dense_leg import blend
from lsr_lucene.compose.operations import FusionPlan, Settings, VectorPlan, build_plan, fuse, plan_inputs
from lsr_lucene.compose.tree import Node

DOCS = [f"d{i}" for i in range(8)]


class Table:
    """Neighbours over a fixed matrix of unit vectors (rows in DOCS order)."""

    def __init__(self, matrix: np.ndarray):
        self.matrix, self.asked = matrix, []

    def similar(self, doc: str) -> dict:
        self.asked.append(doc)
        return {d: float(self.matrix[i] @ self.matrix[DOCS.index(doc)]) for i, d in enumerate(DOCS)}


def mm(x: dict) -> dict:
    lo, hi = min(x.values()), max(x.values())
    return {d: (v - lo) / (hi - lo) if hi > lo else 0.0 for d, v in x.items()}


def data(seed: int = 3):
    rng = np.random.default_rng(seed)
    a = dict(zip(DOCS, rng.uniform(0, 9, len(DOCS)).tolist()))
    b = dict(zip(DOCS, rng.uniform(0, 5, len(DOCS)).tolist()))
    cos = dict(zip(DOCS, rng.uniform(-0.1, 0.8, len(DOCS)).tolist()))
    matrix = rng.normal(size=(len(DOCS), 6))
    return a, b, cos, matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def plan(v: float = 1.0) -> FusionPlan:
    return FusionPlan("not", True, 0.7, VectorPlan({"x": 1.0}), VectorPlan({"y": 1.0}), 0.9, "A text", 1.0, v)


def test_default_fuse_equals_the_formula_by_hand():
    a, b, cos, matrix = data()
    table = Table(matrix)
    record: list = []
    got = fuse(plan(), [a, b, cos, table], record)
    mixed = {d: mm(a)[d] + mm(cos)[d] for d in DOCS}
    best = sorted(DOCS, key=lambda d: (-mixed[d], d))[0]
    near = mm({d: float(matrix[i] @ matrix[DOCS.index(best)]) for i, d in enumerate(DOCS)})
    hat = mm({d: mixed[d] + near[d] for d in DOCS})
    want = {d: max(hat[d] - 0.7 * max(0.0, mm(b)[d] - 0.9) / 0.1, 0.05 * hat[d]) for d in DOCS}
    assert got == pytest.approx(want, abs=1e-12)
    assert table.asked == [best] and record[-1].neighbour_doc == best
    without = fuse(plan(0.0), [a, b, cos])  # v 0: no neighbour input, the previous formula
    assert without == pytest.approx({d: max(mm(mixed)[d] - 0.7 * max(0.0, mm(b)[d] - 0.9) / 0.1, 0.05 * mm(mixed)[d])
                                     for d in DOCS}, abs=1e-12)
    assert got != pytest.approx(without, abs=1e-6)  # the neighbour term changes scores (else nothing is tested)


def test_best_match_ties_go_to_the_smallest_docid():
    matrix = np.eye(len(DOCS))
    a = dict.fromkeys(DOCS, 0.0) | {"d5": 1.0, "d2": 1.0}
    table = Table(matrix)
    hat, near, best = blend(a, dict.fromkeys(DOCS, 0.3), 1.0, table, 1.0)
    assert best == "d2" and table.asked == ["d2"]
    assert hat["d2"] == 1.0 and hat["d5"] == pytest.approx(0.5) and hat["d0"] == 0.0


def test_settings_give_the_neighbour_input_only_with_a_dense_leg():
    tree = Node("not", "a", "b")
    vectors = {"a": {"x": 1.0}, "b": {"y": 1.0}}
    kinds = [k for k, _ in plan_inputs(build_plan(tree, Settings(dense=True), vectors))]
    assert kinds == ["vector", "vector", "dense", "neighbour", "absence"]
    assert [k for k, _ in plan_inputs(build_plan(tree, Settings(dense=True, neighbour_weight=0), vectors))] == \
        ["vector", "vector", "dense", "absence"]
    assert [k for k, _ in plan_inputs(build_plan(tree, Settings(), vectors))] == ["vector", "vector", "absence"]
    assert [k for k, _ in plan_inputs(build_plan(tree, Settings(absence=False), vectors))] == ["vector", "vector"]
    assert "best-match neighbour leg v 1" in Settings(dense=True).describe()
