"""The host's share of GPU document encoding alone (issue 41): ``write_vectors`` with the device's results replayed.

``encode.device.quantised_arrays`` (a batch's nonzero impacts, computed on the device) is recorded in a first run
and then returns the recorded arrays at once, so a replayed run times tokenising, padding, formatting and writing:
the rate the host could feed a device of any speed. It runs where there is no GPU (the encoder on CPU with device
quantisation), and as a file against another checkout of the package (``PYTHONPATH=<checkout> python
lsr_lucene/bench/encode_host.py``: it uses only ``SparseEncoder``, ``write_vectors`` and that function), which is
how scripts/run_encode_host.sh compares the code before and after a change on the same machine in one run.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import sys
import time
from pathlib import Path

import torch


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
        if keep and arrays.exists() and (reference / "metadata.json").exists():
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
            device.quantised_arrays = lambda *args: next(replay)
            best = min(best, _end_to_end(encoder, docs, batch_size, out / "replayed"))
            same = same and same_files(reference, out / "replayed")
    finally:
        device.quantised_arrays = real
    return best, same


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, required=True, help="JSONL passages (id with contents, or title + text)")
    parser.add_argument("--model", default="splade-tiny")
    parser.add_argument("--passages", type=int, default=10_000)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--workers", type=int, default=2, help="worker processes (0: windows in threads)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--label", default="", help="what is measured (e.g. the commit)")
    parser.add_argument("--csv", type=Path, required=True, help="appended to")
    parser.add_argument("--work", type=Path, default=Path("work/encode-host"), help="the recording, kept for reruns")
    args = parser.parse_args(argv)
    import lsr_lucene
    from lsr_lucene.encode.encoder import SparseEncoder

    torch.set_num_threads(1)
    docs = []
    with args.corpus.open(encoding="utf-8") as handle:
        for line in handle:
            if len(docs) >= args.passages:
                break
            obj = json.loads(line)
            docs.append({"id": str(obj["id"]), "contents": obj.get("contents") or
                         f"{obj.get('title') or ''} {obj.get('text') or ''}".strip()})
    encoder = SparseEncoder(args.model, max_length=256, dtype="fp32", device="cpu", device_quantise=True)
    encoder.host_workers = args.workers
    if args.workers and encoder.window_pipeline() is None:
        print("error: worker processes could not be started here", file=sys.stderr)
        return 2
    work = args.work / f"{Path(args.model).name}-{len(docs)}-b{args.batch_size}"
    seconds, same = host_only(encoder, docs, args.batch_size, work, args.repeats, keep=True)
    encoder.close()
    row = {"label": args.label, "package": str(Path(lsr_lucene.__file__).parent),
           "cpu_capability": torch.backends.cpu.get_cpu_capability(), "cores": os.cpu_count(),
           "workers": args.workers, "passages": len(docs), "batch_size": args.batch_size, "seconds": round(seconds, 3),
           "passages_per_s": round(len(docs) / seconds, 1), "identical_files": same}
    new = not args.csv.exists()
    args.csv.parent.mkdir(parents=True, exist_ok=True)
    with args.csv.open("a", newline="") as handle:
        writer = csv.DictWriter(handle, list(row))
        if new:
            writer.writeheader()
        writer.writerow(row)
    print("  ".join(f"{k}={v}" for k, v in row.items()), flush=True)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
