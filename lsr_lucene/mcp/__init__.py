"""``lsr-lucene mcp``: a Model Context Protocol server (fastmcp) over impact indexes, for agents as users.

Tools in the shape of Pyserini's MCP server (``python -m pyserini.server.mcp``): ``search``, ``compose`` (negated
and set-compositional queries, with the tree searched and why each hit scored), ``get_document``,
``list_indexes``, ``get_index`` and ``eval_hits`` (trec_eval measures of hits against a qrels file). They answer as
the CLI does: the same ``SearchEngine`` as ``lsr-lucene serve``.
"""
