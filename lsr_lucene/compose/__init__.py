"""Composition: negated, conjunctive and disjunctive queries as trees of atomic queries combined by vector operations.

``from lsr_lucene.compose import ComposeSearcher`` is the Python API (:mod:`lsr_lucene.compose.searcher`); it is
imported on first access, so importing this package starts neither the JVM nor torch.
"""

__all__ = ["ComposeSearcher"]


def __getattr__(name: str):
    """``ComposeSearcher`` on first access (lazily: the package's modules import this package first)."""
    if name == "ComposeSearcher":
        from lsr_lucene.compose.searcher import ComposeSearcher

        return ComposeSearcher
    raise AttributeError(f"module 'lsr_lucene.compose' has no attribute {name!r}")
