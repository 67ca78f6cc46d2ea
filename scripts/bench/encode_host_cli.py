"""``python -m scripts.bench.encode_host_cli``: the host's share of GPU encoding (``bench.encode_host``) on a
JSONL corpus, one CSV row appended: passages/s with the device's results replayed, and whether the files are the
recording's."""
from __future__ import annotations

import argparse
import csv
import hashlib
import os
import sys
from pathlib import Path

import torch

from scripts.bench.encode_host import host_only
from scripts.bench.encode_speed import read_passages


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        allow_abbrev=False, description="the host's share of GPU encoding (device results replayed)")
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
    docs = read_passages(args.corpus, args.passages)
    encoder = SparseEncoder(args.model, max_length=256, dtype="fp32", device="cpu", device_quantise=True)
    encoder.host_workers = args.workers
    if args.workers and encoder.window_pipeline() is None:
        print("error: worker processes could not be started here", file=sys.stderr)
        return 2
    digest = hashlib.sha1(repr(docs).encode()).hexdigest()[:12]  # a recording holds one corpus's results
    work = args.work / f"{Path(args.model).name}-{len(docs)}-b{args.batch_size}-{digest}"
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
