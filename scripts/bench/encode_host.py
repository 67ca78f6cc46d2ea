"""The host's share of GPU document encoding alone (issue 41): ``write_vectors`` with the device's results replayed.

``encode.device.quantised_arrays`` (a batch's nonzero impacts, computed on the device) is recorded in a first run
and then returns the recorded arrays at once, so a replayed run times tokenising, padding, formatting and writing:
the rate the host could feed a device of any speed. It runs where there is no GPU (the encoder on CPU with device
quantisation). It uses only ``write_vectors`` and that function, so scripts/run_encode_host.sh copies it (with its
command, ``bench.encode_host_cli``) into an older checkout to compare the code before and after a change on the same
machine in one run.
"""
from __future__ import annotations

import shutil
import time
from pathlib import Path

import torch
from lsr_lucene.io.vectors import metadata_file


def _end_to_end(encoder, docs, batch_size: int, out: Path) -> float:
    """Seconds of ``write_vectors`` with the ``encode`` verb's shard size (``bench.encode_speed.end_to_end`` writes
    one shard, which older checkouts write only at the end: not the comparison wanted here)."""
    from lsr_lucene.io.vectors import write_vectors

    shutil.rmtree(out, ignore_errors=True)
    started = time.perf_counter()
    write_vectors(docs, encoder, out, batch_size=batch_size, shard_size=10_000)
    return time.perf_counter() - started


def same_files(a: Path, b: Path) -> bool:
    """Whether two vector directories hold byte-identical shards."""
    names = sorted(p.name for p in a.glob("part-*.jsonl"))
    return names == sorted(p.name for p in b.glob("part-*.jsonl")) and all(
        (a / n).read_bytes() == (b / n).read_bytes() for n in names)


def host_only(encoder, docs, batch_size: int, out: Path, repeats: int = 1, keep: bool = False) -> tuple[float, bool]:
    """Best seconds of ``repeats`` replayed runs, and whether every replayed run wrote the recording run's files byte
    for byte (it must). The recording (arrays and files, under ``out``) is reused when ``keep`` and present."""
    from lsr_lucene.encode import device

    arrays, reference = out / "recorded.pt", out / "recorded"
    real = device.quantised_arrays
    try:
        if keep and arrays.exists() and (metadata_file(reference) is not None):
            recorded = torch.load(arrays, weights_only=False)
        else:
            recorded = []

            def record(*args):
                recorded.append(real(*args))
                return recorded[-1]

            device.quantised_arrays = record
            _end_to_end(encoder, docs, batch_size, reference)
            torch.save(recorded, arrays)
        best, same = float("inf"), True
        for _ in range(repeats):
            replay = iter(recorded)
            device.quantised_arrays = lambda *args: next(replay)  # noqa: B023 (used in this iteration)
            best = min(best, _end_to_end(encoder, docs, batch_size, out / "replayed"))
            same = same and same_files(reference, out / "replayed")
    finally:
        device.quantised_arrays = real
    return best, same
