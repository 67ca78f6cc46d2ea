"""Indexing: Lucene impact indexes (Anserini IndexCollection), the positional weight field and CPT pair terms."""
