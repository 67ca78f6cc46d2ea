"""SoftSDM: sparse top-k store round trip, vectorised soft potentials = the paper's equations by brute force."""
from __future__ import annotations

import random

import numpy as np
import pytest

from lsr_lucene.longdocs import softsdm
from lsr_lucene.longdocs.sdm import Clause

VOCAB = {t: i for i, t in enumerate(["court", "appeal", "section", "act", "held", "judge", "law", "order"])}


def random_topk(rng: random.Random, length: int, k: int = 3):
    ids = np.zeros((length, k), dtype=np.int32)
    weights = np.zeros((length, k), dtype=np.float16)
    for r in range(length):
        terms = rng.sample(range(len(VOCAB)), k)
        for j, t in enumerate(terms):
            ids[r, j] = t
            weights[r, j] = rng.choice([0.0, 0.5, 1.25, 2.0])
    return ids, weights


def as_dict(ids, weights, own=None):
    names = {i: t for t, i in VOCAB.items()}
    w = {}
    for r in range(len(ids)):
        for j in range(ids.shape[1]):
            if weights[r, j] > 0:
                key = (r, names[int(ids[r, j])])
                w[key] = max(w.get(key, 0.0), float(weights[r, j]))
    for r, (t, value) in enumerate(own or []):
        if value > w.get((r, t), 0.0):
            w[(r, t)] = value
    return w


@pytest.mark.parametrize("seed", range(6))
def test_soft_potentials_equal_brute_force(tmp_path, seed):
    rng = random.Random(seed)
    lengths = [0, 1, 2, 5, 9, 17]
    segs = {f"d@@{i}": random_topk(rng, n) for i, n in enumerate(lengths)}
    own = {s: [(rng.choice(list(VOCAB)), rng.choice([0.0, 3.0])) for _ in range(len(v[0]))] for s, v in segs.items()}
    softsdm.write_store(tmp_path / "soft-00000.npz", list(segs), list(segs.values()))
    store = softsdm.TopKStore(tmp_path)
    assert len(store) == len(segs)
    n = rng.choice([2, 3])
    clauses = [Clause(tuple(rng.choice(list(VOCAB)) for _ in range(n)), tuple(rng.choice([0.5, 1.0, 2.0])
                                                                             for _ in range(n))) for _ in range(5)]
    width = rng.choice([2, 4, 8])
    query = softsdm.SoftQuery(clauses, VOCAB, width)
    arrays = {s: softsdm.own_arrays(toks, VOCAB) for s, toks in own.items()}
    got = dict((s, (o, u)) for s, o, u in softsdm.soft_features(query, store, arrays, list(segs)))
    for seg_id, (ids, weights) in segs.items():
        want = softsdm.brute_soft_potentials(as_dict(ids, weights, own[seg_id]), len(ids), clauses, width)
        assert got[seg_id] == pytest.approx(want, abs=1e-6), seg_id


def test_store_round_trip_keeps_positive_entries(tmp_path):
    ids = np.array([[1, 2], [3, 4]], dtype=np.int32)
    weights = np.array([[1.5, 0.0], [0.25, 2.0]], dtype=np.float16)
    softsdm.write_store(tmp_path / "soft-00000.npz", ["x@@0", "y@@0"], [(ids, weights), (ids[:0], weights[:0])])
    store = softsdm.TopKStore(tmp_path)
    length, pos, term, weight = store.get("x@@0")
    assert length == 2 and list(pos) == [0, 1, 1] and list(term) == [1, 3, 4]
    assert list(weight.astype(float)) == [1.5, 0.25, 2.0]
    assert store.get("y@@0")[0] == 0
    report = softsdm.store_report(tmp_path)
    assert report["segments"] == 2 and report["entries"] == 3 and report["positions"] == 2 and report["top_k"] == 2


def test_soft_query_without_usable_clauses():
    query = softsdm.SoftQuery([], VOCAB, 8)
    assert query.potentials(np.zeros((0, 5))) == (0.0, 0.0)


def test_position_topk_matches_full_logits():
    import torch

    from lsr_lucene.encode import activations as act
    from lsr_lucene.encode.encoder import SparseEncoder

    encoder = SparseEncoder("splade-tiny", threads=2)
    texts = ["The appeal was dismissed by the High Court.", "Section 151 of the Civil Procedure Code"]
    tops = encoder.position_topk(texts, top_k=4)
    tokens = encoder.token_weights(texts)
    for text, (ids, weights), toks in zip(texts, tops, tokens):
        assert ids.shape == (len(toks), 4)
        enc = encoder.tokenizer([text], return_tensors="pt")
        with torch.inference_mode():
            hidden = encoder._hidden(enc["input_ids"], enc["attention_mask"]).float()[0, 1:-1]
            full = act.splade(hidden @ encoder._weight.T + encoder._bias)
        best = full.topk(4, dim=1)
        # weights agree to bf16/fp16 precision; every clearly positive top term is kept (zeros tie arbitrarily)
        assert np.allclose(weights.astype(float), best.values.numpy(), atol=0.03)
        for r in range(len(ids)):
            for term, value in zip(best.indices[r].tolist(), best.values[r].tolist()):
                if value > 0.05:
                    assert term in ids[r].tolist()
