"""Experiments above ``compose``: the contrastive (NevIR, ExcluIR, transfer), compositional-collection and QUEST
studies that encode, index, search and then measure with :mod:`lsr_lucene.eval` (which imports none of them)."""
