"""lsr_lucene: learned sparse retrieval on Lucene impact indexes, with negation, set compositions and long documents."""

__version__ = "0.1.0"  # the one place it is written: setup.cfg reads it (attr:); CHANGELOG.md says what changed

__all__ = ["ImpactSearcher", "ImpactHit", "ImpactDocument"]


def __getattr__(name: str):
    """``from lsr_lucene import ImpactSearcher`` without importing torch or starting the JVM at package import."""
    if name in ("ImpactSearcher", "ImpactHit", "ImpactDocument"):
        from lsr_lucene.search import impact_searcher

        return getattr(impact_searcher, name)
    raise AttributeError(f"module 'lsr_lucene' has no attribute {name!r}")
