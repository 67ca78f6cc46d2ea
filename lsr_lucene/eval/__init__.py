"""Evaluation, metrics only: trec_eval's measures in process and the NevIR / ExcluIR metrics (experiments that
encode, index and search live in scripts/negation, outside the package)."""
