"""Capacity plan arithmetic (issue 52, items 3-4): growth fits recover known curves, the shard plan counts shards,
nodes and build rounds as its model says, and the off-heap benchmark's ratio interval and bound verdict; all on
synthetic numbers (the measurements themselves live in scripts/run_capacity.sh and runs/)."""
from __future__ import annotations


import numpy as np
import pandas as pd
import pytest
from scripts.bench.capacity import Fit, Node, fit, merge_overhead_ms, shard_plan
from scripts.bench.dense_heap import per_document, ratio_interval, verdict

SIZES = [100_000, 300_000, 666_157]


def test_power_and_linear_fits_recover_their_curves():
    power = fit("ms", SIZES, [0.002 * n ** 0.6 for n in SIZES])
    assert power.b == pytest.approx(0.6) and power.a == pytest.approx(0.002) and power.r2 == pytest.approx(1.0)
    assert power(10**8) == pytest.approx(0.002 * 1e8 ** 0.6)
    linear = fit("heap", SIZES, [5e6 + 90 * n for n in SIZES], model="linear")
    assert linear.a == pytest.approx(5e6) and linear.b == pytest.approx(90)
    noisy = fit("ms", SIZES, [1.0, 2.5, 3.0])
    assert 0 < noisy.r2 < 1
    assert not power.extrapolates(300_000) and power.extrapolates(1_000_000) and power.extrapolates(50_000)


def test_a_fit_needs_two_sizes_and_positive_values_for_a_power_law():
    with pytest.raises(ValueError, match="two sizes"):
        fit("ms", [100_000, 100_000], [1.0, 2.0])
    with pytest.raises(ValueError, match="positive"):
        fit("ms", SIZES, [1.0, 0.0, 2.0])


def _flat(quantity: str, value: float) -> Fit:
    return Fit(quantity, "power", value, 0.0, (100_000, 1_000_000), 1.0, "synthetic")


def test_shard_plan_counts_shards_nodes_and_build_rounds():
    values = {"index_bytes": 3 * 2**30, "sidecar_bytes": 2**30, "heap_bytes": 100 * 2**20,
              "rss_anon_bytes": 2**30, "build_bp_s": 600.0, "build_peak_rss_bytes": 6 * 2**30,
              **{f"{kind}_k{k}_{stat}_ms": 2.0 for kind in ("exact", "approx") for k in (10, 1000)
                 for stat in ("mean", "p99")}}
    fits = {q: _flat(q, v) for q, v in values.items()}
    plan = shard_plan(fits, 8_800_000, 1_000_000, Node(cores=16, memory_gib=64, usable=0.85),
                      {10: 0.5, 1000: 10.0}, workers=[1, 4, 9])
    assert plan["shards"] == 9 and plan["shard_docs"] == 977_778
    assert plan["memory_per_shard_gib"] == pytest.approx(5.0)  # 4 GiB cached + 1 GiB own
    assert plan["shards_per_node"] == 10 and plan["nodes"] == 1  # 54.4 GiB usable / 5 GiB, under 16 cores
    assert plan["xmx"] == "1g"
    assert plan["exact_k1000_mean_ms"] == pytest.approx(12.0) and plan["approx_k10_p99_ms"] == pytest.approx(2.5)
    assert [plan[f"build_{w}_workers_s"] for w in (1, 4, 9)] == [5400.0, 1800.0, 600.0]
    assert plan["extrapolated"] == ""  # 977,778 lies inside the synthetic fits' sizes
    small = shard_plan(fits, 100_000_000, 1_000_000, Node(cores=4, memory_gib=64), {10: 0, 1000: 0}, [32])
    assert small["shards"] == 100 and small["shards_per_node"] == 4 and small["nodes"] == 25  # cores bound
    assert small["build_32_workers_s"] == 4 * 600.0
    assert small["one_index_extrapolated"]  # one index of 100M: beyond the sizes
    assert small["one_index_build_s"] == pytest.approx(600.0)
    tiny = shard_plan(fits, 1_000_000, 50_000, Node(), {10: 0, 1000: 0}, [1])
    assert set(tiny["extrapolated"].split(",")) == set(values)  # shards of 50k: below every fit's sizes
    assert not tiny["one_index_extrapolated"]


def test_merge_overhead_is_measured_on_the_distributed_merge():
    assert 0 < merge_overhead_ms(3, 10, repeats=2) < 1000


def test_ratio_interval_and_the_bound():
    rng = np.random.default_rng(0)
    base = rng.uniform(1, 3, 200)
    rows = [{"qid": str(q), "round": r, "layout": layout, "wall_ms": t * (1.02 if layout == "mapped" else 1.0)}
            for q, t in enumerate(base) for r in range(2) for layout in ("heap", "mapped")]
    ratio, low, high = ratio_interval(pd.DataFrame(rows), "wall_ms", 500, 0)
    assert ratio == pytest.approx(1.02) and low == pytest.approx(1.02) and high == pytest.approx(1.02)
    assert verdict(low, high) == "yes" and verdict(1.06, 1.2) == "no" and verdict(1.0, 1.1) == "undecided"


def test_memory_per_document_uses_the_heap_growth_between_the_largest_sizes():
    indexes = pd.DataFrame([{"docs": 100, "index_bytes": 3000, "sidecar_bytes": 500},
                            {"docs": 300, "index_bytes": 9000, "sidecar_bytes": 1500}])
    memory = pd.DataFrame([{"docs": d, "layout": layout, "heap_before_open": 1000, "heap_after_search": h}
                           for d, h in ((100, 6000), (300, 8000)) for layout in ("none", "mapped")])
    assert per_document(indexes, memory) == {"docs": 300, "index": 30.0, "sidecar": 5.0, "heap": 10.0}
