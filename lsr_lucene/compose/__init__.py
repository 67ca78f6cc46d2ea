"""Composition: negated, conjunctive and disjunctive queries as trees of atomic queries combined by vector operations."""
