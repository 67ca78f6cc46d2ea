"""``lsr-lucene serve``: an HTTP/JSON search server (Anserini's REST v1 shape) over one impact index."""
