"""lsr_lucene: learned sparse retrieval on Lucene impact indexes, with negation, set compositions and long documents."""

__version__ = "0.1.0"
