"""GPU document encoding with the host's Python work in worker processes (issue 41): ``WindowPipeline``.

``io.vectors.write_vectors`` hands it whole windows (``submit``). Each window is tokenised in chunks by worker
processes (``encode.host_workers``), its length-sorted batches (``SparseEncoder._batches``, the same batches as
``encode_documents_quantised``) run one after another in one device thread (transformer, pooling, rounding and nonzero
selection on the device: ``encode.device.quantised_arrays``), and each batch's JSON lines are formatted by a worker as
soon as the batch is back (as UTF-8 bytes). The main process only pads with numpy, launches kernels and writes, so the
device is no longer starved by a GIL shared with tokenising and JSON (4.2-5.4k passages/s in threads for splade-tiny
on an H100, whose model part alone runs 23-28k; runs/encode/README.md). Lines are byte for byte those of
``io.vectors.window_lines``.
"""
from __future__ import annotations

import contextlib
import multiprocessing
import sys
import time
from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np
import torch

from lsr_lucene.cores import available_cores
from lsr_lucene.encode import host_workers
from lsr_lucene.errors import InputError

CHUNK = 256  # texts per tokenising task: enough to amortise a task, small enough to spread a window over workers


def default_workers(device: torch.device) -> int:
    """Worker processes for an encoder on ``device``: on a GPU every core but two (the launching thread and the
    main one), at least 2 and at most 8, when there are 4 cores or more (on an H100 with 16 cores, 8 workers encoded
    splade-tiny 7 % faster than 14: runs/encode/README.md); 0 (one-process path) on CPU, whose cores run the model."""
    cores = available_cores()
    if device.type != "cuda" or cores < 4:
        return 0
    return max(2, min(cores - 2, 8))


def _offsets(counts: np.ndarray) -> np.ndarray:
    """Start of each segment of a flattened array of ``counts``-long segments."""
    starts = np.zeros(len(counts), dtype=np.int64)
    np.cumsum(counts[:-1], out=starts[1:])
    return starts


def _gather(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Indices of the segments [starts[i], starts[i] + counts[i]) concatenated in order."""
    total = int(counts.sum())
    return np.repeat(starts - _offsets(counts), counts) + np.arange(total, dtype=np.int64)


@contextlib.contextmanager
def _main_hidden():
    """While worker processes start: the caller's main module shows neither file nor module name, so that the workers
    do not run it again (multiprocessing would, and a script without an ``if __name__ == "__main__"`` guard would
    encode again in every worker)."""
    main = sys.modules.get("__main__")
    saved = {key: main.__dict__[key] for key in ("__file__", "__spec__") if main is not None and key in main.__dict__}
    try:
        if main is not None:
            main.__dict__.pop("__file__", None)
            main.__spec__ = None
        yield
    finally:
        if main is not None:
            main.__dict__.update(saved)
            if "__spec__" not in saved:
                main.__dict__.pop("__spec__", None)


def _since(seconds: Counter[str], stage: str, started: float) -> float:
    """Add the wall seconds since ``started`` to ``stage``; now."""
    now = time.perf_counter()
    seconds[stage] += now - started  # type: ignore[assignment]  # a Counter of float seconds
    return now


class WindowJob:
    """One window in flight: ``result()`` gives ``io.vectors.window_lines``' rows (line as UTF-8 bytes, None,
    postings) in input order."""

    def __init__(self, device_future: Future, docs: list[tuple[str, str, str]], seconds: Counter[str]):
        self.device_future = device_future
        self.docs = docs
        self.seconds = seconds

    def result(self) -> list[tuple[bytes, None, int]]:
        lines: list = [None] * len(self.docs)
        postings = [0] * len(self.docs)
        started = time.perf_counter()
        batches = self.device_future.result()  # per batch: its rows and their formatting task
        started = _since(self.seconds, "main: waiting for the device thread", started)
        for rows, task in batches:
            batch_lines, batch_postings = task.get()
            for row, line, count in zip(rows, batch_lines, batch_postings):
                lines[row], postings[row] = line, count
        _since(self.seconds, "main: waiting for lines", started)
        for (doc_id, _, origin), line in zip(self.docs, lines):
            if line is None:
                raise InputError(f"{origin}: document {doc_id!r}: a weight is not a finite number")
        return [(line, None, count) for line, count in zip(lines, postings)]

    def cancel(self) -> None:
        """Skip the device work if it has not started (an interrupted run)."""
        self.device_future.cancel()


class WindowPipeline:
    """Worker processes for tokens and lines, one thread for the device; several windows in flight (``depth``).
    ``seconds``: wall seconds per stage of the device thread and of the main process's waits, summed since it was
    last cleared (the device check's stage table: which side waits on which)."""

    depth = 4

    def __init__(self, encoder, workers: int):
        self.encoder = encoder
        self.workers = int(workers)
        self.seconds: Counter[str] = Counter()
        methods = multiprocessing.get_all_start_methods()
        # never fork (the parent holds CUDA and threads); the workers import only encode.host_workers
        context = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
        with _main_hidden():
            self.pool = context.Pool(self.workers, initializer=host_workers.init,
                                     initargs=(encoder.tokenizer.backend_tokenizer.to_str(), encoder.max_length,
                                               encoder.vocab))
        self.device_thread = ThreadPoolExecutor(1, thread_name_prefix="lsr-device")

    def submit(self, docs: list[tuple[str, str, str]], scale: float, batch_size: int) -> WindowJob:
        """Start one window of (id, text, origin) documents: tokenise now, encode and format when its turn comes."""
        texts = [text for _, text, _ in docs]
        tokens = [self.pool.apply_async(host_workers.tokenize, (texts[start:start + CHUNK],))
                  for start in range(0, len(texts), CHUNK)]
        return WindowJob(self.device_thread.submit(self._encode, docs, texts, tokens, scale, batch_size), docs,
                         self.seconds)

    def _encode(self, docs, texts, tokens, scale: float, batch_size: int) -> list:
        """In the device thread: the window's batches, each handed to a worker for formatting as soon as it is back
        from the device; returns (rows, formatting task) per batch."""
        from lsr_lucene.encode.device import quantised_arrays

        encoder, seconds = self.encoder, self.seconds
        started = time.perf_counter()
        parts = [task.get() for task in tokens]
        started = _since(seconds, "device thread: waiting for tokens", started)
        lengths = np.concatenate([p[0] for p in parts]).astype(np.int64)
        flat = np.concatenate([p[1] for p in parts]).astype(np.int64)
        starts = _offsets(lengths)
        out = []
        cpu = encoder.device.type == "cpu"
        previous = torch.get_num_threads()
        if cpu:  # as ``SparseEncoder._run_batches``: one torch thread a batch on CPU (the same float results)
            torch.set_num_threads(1)
        try:
            with torch.inference_mode():
                for rows in encoder._batches(lengths.tolist(), batch_size):
                    index = np.asarray(rows, dtype=np.int64)
                    width = int(lengths[index].max())
                    input_ids = np.full((len(rows), width), encoder._pad_id, dtype=np.int64)
                    mask = np.arange(width)[None, :] < lengths[index][:, None]
                    input_ids[mask] = flat[_gather(starts[index], lengths[index])]
                    input_ids, mask = encoder._to_device(input_ids, mask.astype(np.int64))
                    started = _since(seconds, "device thread: padding, copying in", started)
                    counts, terms, values, negative, finite = quantised_arrays(encoder, input_ids, mask, scale)
                    started = _since(seconds, "device thread: model, pooling, selection, copying back", started)
                    task = self.pool.apply_async(host_workers.format_lines, (
                        [docs[r][0] for r in rows], [texts[r] for r in rows], counts, terms, values, negative,
                        finite))
                    out.append((rows, task))
                    started = _since(seconds, "device thread: handing lines to a worker", started)
        finally:
            if cpu:
                torch.set_num_threads(previous)
        return out

    def close(self) -> None:
        self.device_thread.shutdown(wait=True, cancel_futures=True)
        self.pool.terminate()
