"""``lsr-lucene serve``: an HTTP/JSON search server (Anserini's REST v1 shape) over one impact index."""

MAX_BODY_MB = 64  # the default request body limit (``serve --max-body-mb``): a larger body is answered 413
