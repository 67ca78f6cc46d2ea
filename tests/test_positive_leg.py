"""The positive-leg experiment (issue 36 item 2): BM25, the A text of a tree, and the re-fusion of fired queries."""
from __future__ import annotations

import math

from lsr_lucene.compose.compositions import Composition
from lsr_lucene.compose.operations import FusionPlan, VectorPlan, fuse
from lsr_lucene.compose.tree import Node
from scripts.negation.positive_leg import MemoryBM25, fused_run, negative_text, positive_text


def test_bm25_matches_the_formula_by_hand():
    docs = {"d1": "red apples and red pears", "d2": "green pears", "d3": "bananas"}
    bm = MemoryBM25(docs, k1=0.9, b=0.4)
    s = bm.scores("red pears")
    avg = (4 + 2 + 1) / 3  # "and" is a stop word
    idf_red, idf_pears = math.log(1 + (3 - 1 + 0.5) / 1.5), math.log(1 + (3 - 2 + 0.5) / 2.5)

    def part(idf, tf, length):
        return idf * tf * 1.9 / (tf + 0.9 * (1 - 0.4 + 0.4 * length / avg))

    assert math.isclose(s["d1"], part(idf_red, 2, 4) + part(idf_pears, 1, 4))
    assert math.isclose(s["d2"], part(idf_pears, 1, 2))
    assert s["d3"] == 0


def test_positive_and_negative_text_of_nested_trees():
    tree = Node("not", Node("not", "films about dogs", "cartoons"), Node("or", "musicals", "dramas"))
    assert positive_text(tree) == "films about dogs"
    assert "musicals" in negative_text(tree) and "dramas" in negative_text(tree)


def test_fused_run_weight_zero_is_the_default_and_unfired_queries_are_untouched():
    plan = FusionPlan("not", True, 1.0, VectorPlan({"a": 1.0}), VectorPlan({"b": 1.0}), gate=0.9)
    leaves = [{"d1": 3.0, "d2": 2.0, "d3": 1.0}, {"d1": 5.0, "d2": 0.0, "d3": 0.0}]
    comps = [Composition("q1", Node("not", "A", "B"), "A but not B"), Composition("q2", "plain", "plain")]
    base = {"q1": fuse(plan, leaves), "q2": {"d9": 1.0}}
    extra = {"q1": {"d1": 0.0, "d2": 0.0, "d3": 9.0}}
    same = fused_run(comps, [plan, VectorPlan({"x": 1.0})], {"q1": leaves}, base, extra, 0.0)
    assert same == base
    moved = fused_run(comps, [plan, VectorPlan({"x": 1.0})], {"q1": leaves}, base, extra, 2.0)
    assert moved["q2"] == base["q2"]
    assert max(moved["q1"], key=moved["q1"].get) == "d3"  # the extra scorer lifts d3 over d2


def test_fused_run_passes_the_defaults_absence_input_through():
    """The default's plans read B stated absent: its Absence input stays in the trace, untouched by the extra leg."""
    from lsr_lucene.compose.absence import Absence

    plan = FusionPlan("not", True, 1.0, VectorPlan({"a": 1.0}), VectorPlan({"b": 1.0}), gate=0.9,
                      absence_texts=("b",))
    trace = [{"d1": 3.0, "d2": 2.0}, {"d1": 5.0, "d2": 0.0}, Absence(("b",), lambda docs: {})]
    comps = [Composition("q1", Node("not", "A", "B"), "A but not B")]
    base = {"q1": fuse(plan, trace)}
    extra = {"q1": {"d1": 0.0, "d2": 9.0}}
    assert fused_run(comps, [plan], {"q1": trace}, base, extra, 0.0, extra_b=extra) == base
    moved = fused_run(comps, [plan], {"q1": trace}, base, extra, 2.0)["q1"]
    assert max(moved, key=moved.get) == "d2"  # the extra scorer lifts d2 over d1


def test_with_positive_replaces_the_a_side_down_the_not_nodes():
    from scripts.negation.positive_leg import with_positive

    tree = Node("not", Node("not", "films", "cartoons"), "musicals")
    assert with_positive(tree, lambda a: "Q") == Node("not", Node("not", "Q", "cartoons"), "musicals")
    assert with_positive("plain", lambda a: a + "!") == "plain!"
