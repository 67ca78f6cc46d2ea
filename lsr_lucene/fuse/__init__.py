"""Fusion of TREC runs (RRF, min-max/z-score linear), with weights and RRF k fitted on training topics only.

``lsr-lucene fuse`` (``python -m lsr_lucene.fuse``, :mod:`lsr_lucene.fuse.cli`); library: ``pools`` (each query's
documents across runs), ``methods`` (normalisation, fused scores, top-k with ties by docid), ``setting`` (a fitted
setting as JSON), ``fit`` (grid search scored by lsr_lucene.eval.trec), ``topics`` (topic subsets and the fixed-seed
split).
"""
