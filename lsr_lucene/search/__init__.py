"""Search: query specs, batch search through our Lucene Query classes, and BM25 baselines."""
