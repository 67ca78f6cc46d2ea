"""Dense leg of hybrid runs: all-MiniLM-L6-v2 embeddings (mean pooling, L2-normalised) searched exactly by inner
product in a Faiss flat index, written as a TREC run.

``lsr-lucene dense encode|search`` (``python -m lsr_lucene.dense``, :mod:`lsr_lucene.dense.cli`); library:
``models`` (the model wheel and other models), ``encoder`` (``DenseEncoder``), ``store`` (embeddings on disk),
``search`` (``FlatSearcher``).
"""
