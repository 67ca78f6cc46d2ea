"""The dense leg's encoding time against the sparse encoding's (issue 68 item 2), in one interleaved run.

``python -m scripts.bench.dense_encode_speed --corpus ../shared/data/npl/corpus.jsonl --output
runs/dense/encode_speed.md [--documents N] [--chunk 500] [--threads 2] [--dtype int8 --dtype fp32]``: the corpus is
cut into chunks, and each chunk is encoded in turn by splade-tiny (``lsr-lucene encode``'s defaults: 256 tokens,
batches of 16) and by the dense leg in each ``--dtype`` (``index --dense``'s encoder: 256 tokens, batches of 32), the
order reversed every other chunk, so that load from other work falls on every encoder alike; the table gives each
encoder's seconds summed over the chunks and the dense / sparse ratio, with the range of the per-chunk ratios.
"""
from __future__ import annotations

import argparse
import os
import time
from functools import partial
from pathlib import Path
from typing import Callable

import numpy as np


def main(argv: list[str] | None = None) -> int:
    import torch

    from lsr_lucene.dense.encoder import DEFAULT_BATCH_SIZE, DenseEncoder
    from lsr_lucene.encode.choices import DEFAULT_BATCH_SIZE as SPARSE_BATCH
    from lsr_lucene.encode.encoder import SparseEncoder
    from lsr_lucene.encode.precision import capability_string
    from lsr_lucene.io.corpus import read_corpus
    from lsr_lucene.io.output import write_text_atomic
    from lsr_lucene.io.vectors import DEFAULT_SCALE

    parser = argparse.ArgumentParser(prog="python -m scripts.bench.dense_encode_speed",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--output", type=Path, required=True, help="Markdown table to write")
    parser.add_argument("--documents", type=int, default=0, help="the corpus's first N documents (0: all)")
    parser.add_argument("--chunk", type=int, default=500, help="documents per interleaved chunk")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--max-length", type=int, default=256)
    parser.add_argument("--dtype", action="append", help="dense precisions to time (default: int8 and fp32)")
    args = parser.parse_args(argv)
    docs = list(read_corpus(args.corpus))
    texts = [d.contents for d in (docs[:args.documents] if args.documents else docs)]
    sparse_encoder = SparseEncoder(max_length=args.max_length, threads=args.threads)
    encoders: dict[str, Callable[[list[str]], object]] = {
        "sparse (splade-tiny)": lambda chunk: sparse_encoder.encode_documents_quantised(chunk, DEFAULT_SCALE,
                                                                                        SPARSE_BATCH)}
    for dtype in args.dtype or ["int8", "fp32"]:
        encoders[f"dense {dtype}"] = partial(DenseEncoder(max_length=args.max_length, threads=args.threads,
                                                          dtype=dtype).encode, batch_size=DEFAULT_BATCH_SIZE)
    for encode in encoders.values():  # warm-up: first calls allocate and pick kernels
        encode(texts[:64])
    seconds: dict[str, list[float]] = {name: [] for name in encoders}
    cpu: dict[str, float] = dict.fromkeys(encoders, 0.0)  # the process's CPU seconds: what load does not inflate
    loads = []
    chunks = [texts[start:start + args.chunk] for start in range(0, len(texts), args.chunk)]
    for number, chunk in enumerate(chunks):
        names = list(encoders) if number % 2 == 0 else list(reversed(encoders))
        for name in names:
            started, cpu_started = time.perf_counter(), time.process_time()
            encoders[name](chunk)
            seconds[name].append(time.perf_counter() - started)
            cpu[name] += time.process_time() - cpu_started
        loads.append(os.getloadavg()[0])
        print(f"chunk {number + 1}/{len(chunks)}: " + ", ".join(f"{n} {seconds[n][-1]:.1f} s" for n in encoders),
              flush=True)
    sparse = np.asarray(seconds["sparse (splade-tiny)"])
    lines = ["| encoder | seconds (sum of chunks) | documents/s | / sparse | per-chunk ratio min – max | CPU seconds "
             "| / sparse in CPU time |", "|---|---:|---:|---:|---|---:|---:|"]
    for name, values in seconds.items():
        total, ratios = float(np.sum(values)), np.asarray(values) / sparse
        lines.append(f"| {name} | {total:.1f} | {len(texts) / total:.0f} | **{total / sparse.sum():.2f}** | "
                     f"{ratios.min():.2f} – {ratios.max():.2f} | {cpu[name]:.1f} | "
                     f"{cpu[name] / cpu['sparse (splade-tiny)']:.2f} |")
    name = Path(args.corpus).parent.name
    text = (f"# Dense leg encoding against sparse encoding ({name}, {len(texts):,} documents)\n\n"
            f"CPU capability {capability_string()} (torch {torch.backends.cpu.get_cpu_capability()}), "
            f"{os.cpu_count()} cores, {args.threads} threads each, max length {args.max_length}; {len(chunks)} chunks "
            f"of {args.chunk} interleaved (order reversed every other chunk); 1-minute load average during the run "
            f"{min(loads):.1f}–{max(loads):.1f} (a machine shared with other work).\n"
            f"`python -m scripts.bench.dense_encode_speed --corpus {args.corpus}"
            f"{f' --documents {args.documents}' if args.documents else ''} --chunk {args.chunk} "
            f"--threads {args.threads}{''.join(f' --dtype {d}' for d in args.dtype or [])}`\n\n"
            + "\n".join(lines) + "\n")
    write_text_atomic(args.output, text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
