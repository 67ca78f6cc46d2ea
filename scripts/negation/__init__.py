"""Negation and exclusion studies above ``lsr_lucene.compose``: the contrastive benchmarks (NevIR, ExcluIR, transfer),
compositional collections and the negation studies behind runs/negation, which encode, index and search with the
package and measure with :mod:`lsr_lucene.eval` (``python -m scripts.negation.<module>``)."""
