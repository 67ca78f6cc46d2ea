"""The indexes an MCP server holds: one ``SearchEngine`` each, opened at start, loaded and searched on one JVM thread.

Every Java call runs on one long-lived worker (``JvmWorkerPool(1)``): attached to the JVM once, and never calling
the same method of two searchers of one class at once (pyjnius keeps one ``j_self`` per method: serve/pool.py).
The engines are opened before the server answers (a bad index or encoder is an error at start); their models load
on that worker right after, so the protocol's handshake and tool list answer at once and a tool call waits behind
the loading of the indexes.
"""
from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Callable, Sequence

from lsr_lucene.errors import InputError
from lsr_lucene.serve.engine import SearchEngine
from lsr_lucene.serve.pool import JvmWorkerPool


class Indexes:
    """Named engines over impact index folders (names: the folders', which must differ)."""

    def __init__(self, folders: Sequence[str | Path], encoder: str | None = None, loading: str = "later"):
        """``loading``: "later" (each engine's models load on the worker once :meth:`start_loading` is called: the
        server's start) or "now"."""
        if not folders:
            raise InputError("--index: give at least one impact index folder")
        self.engines: dict[str, SearchEngine] = {}
        self.pool: JvmWorkerPool | None = None
        try:
            for folder in folders:
                engine = SearchEngine(folder, encoder=encoder, loading="now" if loading == "now" else "later")
                if engine.name in self.engines:
                    raise InputError(f"--index {folder}: a second index named {engine.name!r} "
                                     f"(give folders with different names)")
                self.engines[engine.name] = engine
        except BaseException:
            self.close()
            raise
        self.pool = JvmWorkerPool(1, name="lsr-mcp")  # after the engines: the JVM runs (one thread starts it)
        self._loading = loading == "now"  # the loads were queued (start_loading)

    def start_loading(self) -> None:
        """Queue every engine's loading on the JVM worker (once; the server calls it when it starts answering:
        tool calls queue behind the loads)."""
        if self._loading or self.pool is None:
            return
        self._loading = True
        for engine in self.engines.values():
            self.pool.submit(engine.load)

    @property
    def names(self) -> list[str]:
        return list(self.engines)

    def engine(self, name: str | None) -> SearchEngine:
        """The engine of ``name`` (None: the only one); InputError naming the ``index`` argument otherwise."""
        if name is None or name == "":
            if len(self.engines) == 1:
                return next(iter(self.engines.values()))
            raise InputError(f"index: this server has {len(self.engines)} indexes ({', '.join(self.engines)}); "
                             f"name one")
        if name not in self.engines:
            raise InputError(f"index: unknown index {name!r}; this server has {', '.join(self.engines)} "
                             f"(list_indexes describes them)")
        return self.engines[name]

    async def run(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """``fn(*args, **kwargs)`` on the JVM worker, awaited without blocking the event loop."""
        assert self.pool is not None
        return await asyncio.wrap_future(self.pool.submit(fn, *args, **kwargs))

    def wait(self) -> None:
        """Until every engine has loaded (a load failure raised)."""
        for engine in self.engines.values():
            engine.wait()

    def describe(self, name: str, full: bool = False) -> dict:
        """What an index records: its documents, query encoder, dense leg, sidecars (``full``: its metadata)."""
        from lsr_lucene.dense.leg import DENSE_DIR
        from lsr_lucene.index.impact import read_index_metadata

        engine = self.engines[name]
        meta = read_index_metadata(engine.index_dir)
        dense_meta = Path(engine.index_dir) / DENSE_DIR / "metadata.json"
        dense = None
        if dense_meta.is_file():
            import json

            recorded = json.loads(dense_meta.read_text(encoding="utf-8"))
            dense = {"model": recorded.get("model"), "documents": recorded.get("count"), "dim": recorded.get("dim")}
        out = {"name": name, "path": str(Path(engine.index_dir).resolve()), "documents": engine.num_docs,
               "model": engine.model, "model_recorded": bool((meta.get("encoder") or {}).get("model")),
               "dense_leg": dense, "positions": bool(meta.get("positions")),
               "ready": engine.ready}
        if full:
            out["metadata"] = meta
        return out

    def close(self) -> None:
        if self.pool is not None:
            self.pool.close()
        for engine in self.engines.values():
            engine.close()
