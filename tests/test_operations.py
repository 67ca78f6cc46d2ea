"""Linear algebra operations of the compositional framework on hand-made atomic vectors (paper 000, Table 1)."""
from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lsr_lucene.compose import operations as ops
from lsr_lucene.compose import tree as trees
from lsr_lucene.errors import InputError

# "books about monarchs" (A) and "books about European monarchs" (B), as in the paper's Table 2
A = {"monarch": 1.25, "history": 1.13, "book": 1.03, "king": 0.77}
B = {"monarch": 1.0, "book": 0.9, "european": 1.17, "europe": 0.66}


def approx(vec):
    return {k: pytest.approx(v) for k, v in vec.items()}


def test_subtract_and_nrf():
    assert ops.subtract(A, B) == approx({"monarch": 0.25, "history": 1.13, "book": 0.13, "king": 0.77,
                                         "european": -1.17, "europe": -0.66})
    assert ops.nrf(A, B, 0.5) == approx({"monarch": 0.75, "history": 1.13, "book": 0.58, "king": 0.77,
                                         "european": -0.585, "europe": -0.33})


def test_ignore_returns_a():
    assert ops.ignore(A, B) == A


def test_disentangled_keeps_a_untouched_and_penalises_only_b_other_terms():
    out = ops.disentangled(A, B)
    for term, weight in A.items():
        assert out[term] == weight
    assert out["european"] == pytest.approx(-1.17) and out["europe"] == pytest.approx(-0.66)
    assert set(out) == set(A) | {"european", "europe"}
    half = ops.disentangled(A, B, lam=0.5)
    assert half["european"] == pytest.approx(-0.585) and half["monarch"] == 1.25


def test_disentangled_when_b_covers_a_is_a():
    assert ops.disentangled(A, {"monarch": 2.0, "book": 1.0}) == A


def test_orthogonal_removes_projection():
    out = ops.orthogonal(A, B)
    dot = sum(out.get(k, 0) * w for k, w in B.items())
    assert dot == pytest.approx(0, abs=1e-12)
    coef = sum(A[k] * B[k] for k in A if k in B) / sum(w * w for w in B.values())
    assert out["history"] == pytest.approx(1.13)
    assert out["european"] == pytest.approx(-coef * 1.17)
    assert ops.orthogonal(A, {}) == A


def test_add_and_maxpool():
    assert ops.add(A, B)["monarch"] == pytest.approx(2.25)
    assert ops.add(A, B)["european"] == pytest.approx(1.17)
    mp = ops.maxpool(A, B)
    assert mp == {"monarch": 1.25, "history": 1.13, "book": 1.03, "king": 0.77, "european": 1.17, "europe": 0.66}


def test_cpt_pair_weights_are_sqrt_of_products():
    a = {"education": 1.04, "documentary": 1.04, "film": 0.9}
    b = {"intellectual": 1.14, "disability": 1.07, "documentary": 1.0}
    pairs = ops.cpt_pairs(a, b, top=5)
    assert len(pairs) == 5
    for (x, y), w in pairs.items():
        wx = a.get(x) if (x in a and y in b) else a.get(y)
        wy = b.get(y) if (x in a and y in b) else b.get(x)
        assert w == pytest.approx(math.sqrt(wx * wy))
    assert ("documentary", "documentary") not in pairs  # a term paired with itself is not a combined term
    best = max(pairs.values())
    assert best == pytest.approx(math.sqrt(1.04 * 1.14))
    # the five best over all 3x3 - 1 distinct pairs, in order
    everything = {}
    for x, wx in a.items():
        for y, wy in b.items():
            if x != y:
                key = ops.pair_key(x, y)
                everything[key] = max(everything.get(key, 0), math.sqrt(wx * wy))
    assert sorted(pairs.values(), reverse=True) == pytest.approx(sorted(everything.values(), reverse=True)[:5])
    composed = ops.cpt(a, b, top=2)
    single = {k: v for k, v in composed.items() if isinstance(k, str)}
    assert single == ops.maxpool(a, b)
    assert len([k for k in composed if isinstance(k, tuple)]) == 2


def test_cpt_ignores_negative_terms_and_top_zero():
    assert ops.cpt_pairs({"x": 1.0, "y": -2.0}, {"z": 4.0}, top=5) == {("x", "z"): pytest.approx(2.0)}
    assert ops.cpt_pairs(A, B, top=0) == {}


def test_pairs_are_dimensions_for_linear_operations():
    a = {"x": 1.0, ("x", "y"): 2.0}
    b = {("x", "y"): 0.5, "z": 1.0}
    assert ops.subtract(a, b) == {"x": 1.0, ("x", "y"): 1.5, "z": -1.0}
    assert ops.disentangled(a, b) == {"x": 1.0, ("x", "y"): 2.0, "z": -1.0}


def test_settings_select_operations_by_node_type():
    s = ops.Settings("cpt")
    assert (s.op_for("and"), s.op_for("not"), s.op_for("or")) == ("cpt", "fusion-gated", "maxpool")
    s = ops.Settings("fusion", per_type={"and": "add"})
    assert (s.op_for("and"), s.op_for("not"), s.op_for("or")) == ("add", "fusion", "fusion")
    assert ops.Settings("nrf").lam_for("nrf") == 0.5 and ops.Settings("nrf", lam=0.2).lam_for("nrf") == 0.2
    with pytest.raises(InputError, match="unknown operation 'negate'"):
        ops.Settings("negate")
    with pytest.raises(InputError, match="does not apply to 'or' nodes"):
        ops.Settings(per_type={"or": "cpt"})
    with pytest.raises(InputError, match="unknown node type"):
        ops.Settings(per_type={"xor": "add"})


def test_trees_from_json_and_edge_cases():
    tree = trees.tree_from_json({"op": "not", "a": {"op": "and", "a": "x", "b": "y"}, "b": " z "})
    assert tree == trees.Node("not", trees.Node("and", "x", "y"), "z")
    assert trees.tree_to_json(tree) == {"op": "not", "a": {"op": "and", "a": "x", "b": "y"}, "b": "z"}
    assert trees.leaves(tree) == ["x", "y", "z"] and trees.depth(tree) == 3
    assert trees.verbalize(tree) == "x that are also y that are not z"
    with pytest.raises(InputError, match=r"query\.b: empty atomic query"):
        trees.tree_from_json({"op": "not", "a": "x", "b": "  "})
    with pytest.raises(InputError, match="unknown op 'xor'"):
        trees.tree_from_json({"op": "xor", "a": "x", "b": "y"})
    with pytest.raises(InputError, match="lacks 'b'"):
        trees.tree_from_json({"op": "and", "a": "x"})
    deep = "leaf"
    for _ in range(trees.MAX_DEPTH):
        deep = {"op": "or", "a": deep, "b": "x"}
    with pytest.raises(InputError, match="deeper than"):
        trees.tree_from_json(deep)


def test_build_plan_vanilla_vector_and_fusion():
    vectors = {"x": {"a": 1.0}, "y": {"b": 2.0}, "whole text": {"w": 3.0}, "x that are not y": {"t": 1.0}}
    tree = trees.Node("not", "x", "y")
    assert ops.build_plan(tree, ops.Settings("vanilla"), vectors, "whole text").vector == {"w": 3.0}
    assert ops.build_plan(tree, ops.Settings("vanilla"), vectors).vector == {"t": 1.0}
    assert ops.required_texts(tree, ops.Settings("vanilla")) == ["x that are not y"]
    plan = ops.build_plan(tree, ops.Settings("disentangled"), vectors)
    assert plan.vector == {"a": 1.0, "b": -2.0}
    fused = ops.build_plan(tree, ops.Settings("fusion"), vectors)
    assert isinstance(fused, ops.FusionPlan) and ops.plan_vectors(fused) == [{"a": 1.0}, {"b": 2.0}]
    nested = trees.Node("and", trees.Node("not", "x", "y"), "x")
    with pytest.raises(InputError, match="score-fused subtree"):
        ops.build_plan(nested, ops.Settings(per_type={"not": "fusion", "and": "add"}), vectors)


def test_fuse_operators_and_scaling():
    a, b = {"d1": 4.0, "d2": 2.0, "d3": 0.0}, {"d1": 1.0, "d2": 3.0, "d3": 0.0}
    plan = ops.FusionPlan("not", False, 1.0, ops.VectorPlan({}), ops.VectorPlan({}))
    assert ops.fuse(plan, [a, b]) == {"d1": 3.0, "d2": -1.0, "d3": 0.0}
    plan = ops.FusionPlan("and", False, 1.0, ops.VectorPlan({}), ops.VectorPlan({}))
    assert ops.fuse(plan, [a, b]) == {"d1": 4.0, "d2": 6.0, "d3": 0.0}
    plan = ops.FusionPlan("or", True, 1.0, ops.VectorPlan({}), ops.VectorPlan({}))
    assert ops.fuse(plan, [a, b]) == {"d1": pytest.approx(1 + 1 / 3), "d2": pytest.approx(1.5), "d3": 0.0}
    assert ops.minmax({"x": 2.0, "y": 2.0}) == {"x": 0.0, "y": 0.0}


def test_format_vector_shows_sorted_terms_and_negative_terms():
    from lsr_lucene.compose.plan_format import format_vector

    text = format_vector(ops.disentangled(A, B), top=2)
    assert text == "(monarch: 1.25, history: 1.13, …, europe: -0.66, european: -1.17)"
    assert format_vector({("a", "b"): 1.5}) == "(a ∩ b: 1.50)"


def test_quantise_composed_splits_terms_and_pairs():
    terms, pairs = ops.quantise_composed({"x": 1.234, "y": -0.5, ("a", "b"): 0.777, "tiny": 0.001}, 100)
    assert terms == {"x": 123, "y": -50}
    assert pairs == [["a", "b", 78]]


weights = st.dictionaries(st.sampled_from(list("abcdefgh")), st.floats(0.01, 3.0), max_size=6)


@settings(max_examples=60, deadline=None)
@given(weights, weights, st.floats(0.05, 2.0))
def test_properties(a, b, lam):
    dis = ops.disentangled(a, b, lam)
    for term, weight in a.items():
        assert dis[term] == weight
    for term, weight in b.items():
        if term not in a:
            assert dis[term] == pytest.approx(-lam * weight)
    mp = ops.maxpool(a, b)
    assert all(mp.get(t, 0) >= max(a.get(t, 0), b.get(t, 0)) for t in set(a) | set(b))
    orth = ops.orthogonal(a, b)
    assert sum(orth.get(k, 0) * w for k, w in b.items()) == pytest.approx(0, abs=1e-9)
    assert ops.add(a, b) == pytest.approx({k: a.get(k, 0) + b.get(k, 0) for k in set(a) | set(b)})
