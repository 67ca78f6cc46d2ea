"""The dense leg's int8 encoding (per-token activation scales: a text's vector depends on its own tokens only) and
its approximate HNSW index (hits as the exact flat scan gives them on a collection the graph covers), and an
embeddings folder written before either (fp32, no ann.faiss), which keeps its fp32 queries and exact scan."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch

pytest.importorskip("faiss")
pytest.importorskip("all_minilm_l6_v2")


@pytest.fixture(scope="module")
def encoders(one_torch_thread):
    from lsr_lucene.dense.encoder import DenseEncoder

    return DenseEncoder(threads=1, dtype="int8"), DenseEncoder(threads=1, dtype="fp32")


def test_int8_linear_is_the_integer_product_of_its_quantised_operands():
    from lsr_lucene.dense.int8 import Int8Linear

    torch.manual_seed(0)
    linear = torch.nn.Linear(48, 24)
    layer = Int8Linear(linear)
    x = torch.randn(5, 3, 48) * torch.tensor([1.0, 10.0, 0.1])[None, :, None]  # rows of very different ranges
    rows = x.reshape(-1, 48).double()
    scales = rows.abs().amax(dim=1, keepdim=True) / 127
    quantised = torch.round(rows / scales)
    assert quantised.abs().max() <= 127
    expected = (quantised @ layer.weight_t.double()) * scales * layer.weight_scales.double() + linear.bias.double()
    got = layer(x).reshape(-1, 24).double()
    assert torch.allclose(got, expected, rtol=1e-5, atol=1e-5)
    assert torch.allclose(got, linear(x).reshape(-1, 24).double(), atol=0.05 * got.abs().max().item())


def test_int8_vectors_are_close_to_fp32_and_do_not_depend_on_their_batch(encoders, demo_head):
    int8, fp32 = encoders
    texts = [d.contents for d in demo_head[0]][:16]
    together = int8.encode(texts, batch_size=16)
    alone = np.stack([int8.encode([t])[0] for t in texts])
    assert np.abs(together - alone).max() < 1e-4  # padding and batch mates do not move a text's vector
    assert (np.einsum("ij,ij->i", together, fp32.encode(texts)) > 0.99).all()
    assert int8.settings()["dtype"] == "int8" and int8.settings()["query_dtype"] == "fp32"
    assert fp32.settings()["query_dtype"] == "fp32"


def test_queries_are_fp32_whatever_the_documents_precision():
    from lsr_lucene.dense.encoder import query_dtype

    assert query_dtype("int8") == query_dtype("fp32") == query_dtype("bf16") == query_dtype(None) == "fp32"


def test_ann_hits_equal_the_exact_scan_on_a_small_collection(tmp_path):
    from lsr_lucene.dense.ann import AnnSearcher, build_ann
    from lsr_lucene.dense.search import FlatSearcher
    from lsr_lucene.dense.store import read_embeddings, write_embeddings

    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(300, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors[7] = vectors[3]  # a tie, ordered by docid as the flat scan does
    write_embeddings(tmp_path / "emb", [f"d{i:03d}" for i in reversed(range(300))], vectors, {})
    embeddings = read_embeddings(tmp_path / "emb")
    settings = build_ann(tmp_path / "emb", embeddings, threads=1)
    assert settings["count"] == 300 and (tmp_path / "emb" / "ann.json").is_file()
    queries = vectors[:6] * 0.6 + vectors[6:12] * 0.4
    exact, approximate = FlatSearcher(embeddings, 1), AnnSearcher(tmp_path / "emb", embeddings, 1)
    for k in (1, 10, 100):
        assert approximate.search(queries, k) == exact.search(queries, k)


def test_dense_leg_without_ann_scans_exactly_and_keeps_fp32_queries(tmp_path, demo_head, one_torch_thread):
    from lsr_lucene.compose.dense_leg import DenseLeg
    from lsr_lucene.dense.ann import AnnSearcher
    from lsr_lucene.dense.leg import add_ann, encode_documents
    from lsr_lucene.dense.search import FlatSearcher

    docs = demo_head[0]
    encode_documents([d.id for d in docs], [d.contents for d in docs], "demo", tmp_path / "old", threads=1,
                     dtype="fp32", ann=False)
    meta = json.loads((tmp_path / "old" / "metadata.json").read_text())
    meta.pop("query_dtype")  # as folders written before int8 have it
    (tmp_path / "old" / "metadata.json").write_text(json.dumps(meta))
    old = DenseLeg(tmp_path / "old")
    hits = old.search(["solar power"], 5)
    assert isinstance(old._flat, FlatSearcher) and old.encoder.query_dtype == "fp32"
    assert add_ann(tmp_path / "old", threads=1)["added"]
    new = DenseLeg(tmp_path / "old")
    assert new.search(["solar power"], 5) == hits and isinstance(new._flat, AnnSearcher)
