"""Evaluation: trec_eval tables and the contrastive metrics of NevIR, ExcluIR and QUEST."""
