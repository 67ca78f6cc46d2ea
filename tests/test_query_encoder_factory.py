"""One query-encoder factory (search.impact.query_encoder_for): the search command, ImpactSearcher and
ComposeSearcher encode a query text into the same vector, bit for bit, as the SparseEncoder the index records."""
from __future__ import annotations

import argparse

from lsr_lucene.io.topics import read_topics
from lsr_lucene.io.vectors import quantise_query

from test_compose_searcher import DEMO


def test_the_three_ways_in_encode_the_same_vectors(demo, one_torch_thread):
    from lsr_lucene.compose import ComposeSearcher
    from lsr_lucene.encode.encoder import SparseEncoder
    from lsr_lucene.search.impact_searcher import ImpactSearcher
    from lsr_lucene.search.cli import load_queries
    from lsr_lucene.search.impact import index_settings

    index = demo / "index"
    topics = read_topics(DEMO / "topics.tsv")
    settings = index_settings(index)
    scale = settings.get("scale") or 100
    recorded = {k: settings[k] for k in ("activation", "pooling", "epsilon") if settings.get(k) is not None}
    reference = SparseEncoder(model=settings["model"], threads=1, **recorded).encode_queries(list(topics.values()))
    expected = {q: quantise_query(v, scale) for q, v in zip(topics, reference)}

    args = argparse.Namespace(index=str(index), query_vectors=None, specs=None, encoder=None, query=None,
                              topics=str(DEMO / "topics.tsv"), scale=None, query_max_length=None, threads=1)
    assert load_queries(args) == expected  # lsr-lucene search
    with ImpactSearcher(index, threads=1) as searcher:
        assert dict(zip(topics, searcher.encode(list(topics.values())))) == expected
    with ComposeSearcher(index, threads=1, dense="none") as composer:
        floats = composer.query_encoder.encode(list(topics.values()))
    assert floats == reference  # the unquantised weights, which compose's operations combine
