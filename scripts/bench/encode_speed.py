"""Encoding speed (issue 41): passages/s per device, dtype, batch size and thread count, end to end and model only.

``python -m scripts.bench.encode_cli cpu`` times ``write_vectors`` (the ``encode`` verb's path) on this CPU for
each thread count, fp32 and int8 interleaved (a burst of load from other processes hits both); ``device`` runs the
GPU checks of scripts/device_encode_check.sh (end to end, model only, GPU against CPU vectors, the batching check
of issue 37 where the CPU has AMX, and the CPU thread sweep); ``report`` merges result CSVs into
runs/encode/results.{csv,md} and a plot. Every row names the CPU capability (torch's, with native bf16 sets) or the
GPU. "Model only" is the transformer plus pooling on random ids at the batch size: ``naive`` materialises every
position's vocabulary logits then takes log1p∘ReLU and the masked max (the issue's reference), ``ours`` is the
encoder's own projection and pooling (screened on GPU and on CPUs with native bf16, int8 for ``--dtype int8``).
"""
from __future__ import annotations

import csv
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import torch

FIELDS = ("device", "hardware", "model", "dtype", "kind", "batch_size", "threads", "max_length", "passages",
          "seconds", "passages_per_s", "note")


def hardware(device: str) -> str:
    """The GPU's name, or torch's CPU capability with its native bf16 sets and the core count."""
    if device.startswith("cuda"):
        return torch.cuda.get_device_name(torch.device(device))
    from lsr_lucene.encode.precision import capability_string

    return f"{capability_string()} ({os.cpu_count()} cores)"


class Rows:
    """Result rows appended to a CSV as they come (a run cut short keeps what it measured) and printed."""

    def __init__(self, path: Path):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            with path.open("w", newline="") as handle:
                csv.DictWriter(handle, FIELDS).writeheader()

    def add(self, **row) -> dict:
        row = {key: row.get(key, "") for key in FIELDS}
        if row["seconds"] and row["passages"]:
            row["passages_per_s"] = round(float(row["passages"]) / float(row["seconds"]), 1)
            row["seconds"] = round(float(row["seconds"]), 3)
        with self.path.open("a", newline="") as handle:
            csv.DictWriter(handle, FIELDS).writerow(row)
        print("  ".join(f"{k}={row[k]}" for k in FIELDS if row[k] != ""), flush=True)
        return row


def read_passages(path: Path, limit: int | None = None) -> list[tuple[str, str]]:
    """(id, text) of a JSONL corpus (``id`` with ``contents``, or ``title`` + ``text``)."""
    from lsr_lucene.io.corpus import doc_contents

    out: list = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if limit is not None and len(out) >= limit:
                break
            obj = json.loads(line)
            text = obj.get("contents") or doc_contents(obj.get("title") or "", obj.get("text") or "")
            out.append((str(obj["id"]), text))
    return out


def end_to_end(encoder, docs, batch_size: int, out: Path) -> float:
    """Seconds ``write_vectors`` takes for ``docs`` (tokenising, encoding, rounding, JSON, shards)."""
    from lsr_lucene.io.vectors import write_vectors

    if out.exists():
        shutil.rmtree(out)
    if encoder.device.type == "cuda":
        torch.cuda.synchronize()
    started = time.perf_counter()
    write_vectors(docs, encoder, out, batch_size=batch_size, shard_size=100_000)
    return time.perf_counter() - started


def model_only(encoder, batch_size: int, length: int, repeats: int, naive: bool) -> float:
    """Seconds per batch of the transformer plus pooling on random ids (``naive``: full logits, log1p∘ReLU, masked
    max; else the encoder's own projection and pooling)."""
    from lsr_lucene.encode import activations as act

    generator = torch.Generator().manual_seed(0)
    ids = torch.randint(1000, 29000, (batch_size, length), generator=generator).to(encoder.device)
    mask = torch.ones_like(ids)
    cuda = encoder.device.type == "cuda"

    def step():
        with torch.inference_mode():
            hidden = encoder._hidden(ids, mask)
            if naive:
                logits = hidden.float() @ encoder._weight.T + encoder._bias
                return act.pool(act.activate(logits, "splade", 0.0), mask, "max")
            return encoder._weights(hidden, mask, ids)

    previous = torch.get_num_threads()
    if not cuda:
        torch.set_num_threads(encoder.threads)
    try:
        step()
        if cuda:
            torch.cuda.synchronize()
        started = time.perf_counter()
        for _ in range(repeats):
            step()
        if cuda:
            torch.cuda.synchronize()
        return (time.perf_counter() - started) / repeats
    finally:
        torch.set_num_threads(previous)


def device_only(encoder, docs, batch_size: int, scale: float = 100) -> float:
    """Seconds of the device's part alone on ``docs``: their length-sorted batches (the windows of ``write_vectors``)
    tokenised and padded beforehand, then copied to the device, encoded, pooled, rounded and selected, the nonzero
    pairs copied back (``encode.device.quantised_arrays``): the rate the host's work should keep up with."""
    import numpy as np

    from lsr_lucene.encode.device import FastTokenizer, quantised_arrays
    from lsr_lucene.io.vectors import encode_window

    ids = FastTokenizer(encoder.tokenizer, encoder.max_length).ids([text for _, text in docs])
    window = encode_window(batch_size)
    padded = []
    for start in range(0, len(ids), window):
        chunk = ids[start:start + window]
        for rows in encoder._batches([len(x) for x in chunk], batch_size):
            width = max(len(chunk[r]) for r in rows)
            input_ids = np.full((len(rows), width), encoder._pad_id, dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.int64)
            for row, r in enumerate(rows):
                input_ids[row, :len(chunk[r])] = chunk[r]
                mask[row, :len(chunk[r])] = 1
            padded.append((input_ids, mask))
    cuda = encoder.device.type == "cuda"
    if cuda:
        torch.cuda.synchronize()
    started = time.perf_counter()
    with torch.inference_mode():
        for input_ids, mask in padded:
            on_device = encoder._to_device(input_ids, mask)
            quantised_arrays(encoder, on_device[0], on_device[1], scale)
    if cuda:
        torch.cuda.synchronize()
    return time.perf_counter() - started


STAGES = ("tokenize", "transformer", "projection", "vectors", "json")


def stage_seconds(encoder, docs, batch_size: int = 16, repeats: int = 2) -> dict[str, float]:
    """Where one thread's time goes for ``docs`` (best of ``repeats``): tokenising, the transformer, the vocabulary
    projection with pooling and activation, {term: weight} dicts, and rounding + JSON lines; the stages of
    ``write_vectors`` on CPU, timed one after another on length-sorted batches."""
    from lsr_lucene.io.vectors import quantise

    texts = [text for _, text in docs]
    best = {stage: float("inf") for stage in STAGES}
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        for _ in range(repeats):
            spent = dict.fromkeys(STAGES, 0.0)
            started = time.perf_counter()
            ids = encoder._tokenize(texts, encoder.max_length)
            spent["tokenize"] = time.perf_counter() - started
            order = sorted(range(len(ids)), key=lambda i: (-len(ids[i]), i))
            with torch.inference_mode():
                for start in range(0, len(order), batch_size):
                    input_ids, mask = encoder._pad([ids[i] for i in order[start:start + batch_size]])
                    clock = time.perf_counter()
                    hidden = encoder._hidden(input_ids, mask)
                    spent["transformer"] += time.perf_counter() - clock
                    clock = time.perf_counter()
                    weights = encoder._weights(hidden, mask, input_ids)
                    spent["projection"] += time.perf_counter() - clock
                    clock = time.perf_counter()
                    vectors = encoder._to_dicts(weights)
                    spent["vectors"] += time.perf_counter() - clock
                    clock = time.perf_counter()
                    for vector in vectors:
                        json.dumps({"vector": quantise(vector, 100)})
                    spent["json"] += time.perf_counter() - clock
            best = {stage: min(best[stage], spent[stage]) for stage in STAGES}
    finally:
        torch.set_num_threads(previous)
    return {stage: round(seconds, 4) for stage, seconds in best.items()}


def projection_split(hidden: int = 128, vocab: int = 30522, length: int = 240, chunk: int = 4096,
                     repeats: int = 5) -> dict[str, float]:
    """Milliseconds (one thread's CPU time, best of ``repeats``) to project one ``length``-token text onto ``vocab``
    terms and max-pool it: the int8 product alone (terms × positions, as ``Int8Projection``), with its pooling, the
    other orientation (positions × terms, pooled down the columns), and fp32's bf16 screening product with its
    pooling: where the projection's time goes on this CPU (random values; only the shapes matter)."""
    generator = torch.Generator().manual_seed(0)
    states = torch.randint(-127, 128, (length, hidden), dtype=torch.int8, generator=generator)
    weight = torch.randint(-127, 128, (vocab, hidden), dtype=torch.int8, generator=generator)
    blocks = [weight[start:start + chunk].contiguous() for start in range(0, vocab, chunk)]
    columns = states.T.contiguous()
    transposed = [block.T.contiguous() for block in blocks]
    states_bf16, blocks_bf16 = states.to(torch.bfloat16), [block.to(torch.bfloat16) for block in blocks]
    # outputs into preallocated buffers (and pooled maxima into one row), so the allocator's state does not decide
    logits = torch.empty((chunk, length), dtype=torch.int32)
    flat = torch.empty(length * chunk, dtype=torch.int32)  # contiguous (length × block terms) views of it
    flat_bf16 = torch.empty(length * chunk, dtype=torch.bfloat16)
    pooled = torch.empty(vocab + chunk, dtype=torch.int32)
    pooled_bf16 = torch.empty(vocab + chunk, dtype=torch.bfloat16)

    def product_only() -> None:
        for block in blocks:
            torch._int_mm(block, columns, out=logits[:len(block)])

    def terms_x_positions() -> None:
        for number, block in enumerate(blocks):
            torch._int_mm(block, columns, out=logits[:len(block)])
            torch.amax(logits[:len(block)], dim=1, out=pooled[number * chunk:number * chunk + len(block)])

    def positions_x_terms() -> None:
        for number, block in enumerate(transposed):
            out = flat[:length * block.shape[1]].view(length, block.shape[1])
            torch._int_mm(states, block, out=out)
            torch.amax(out, dim=0, out=pooled[number * chunk:number * chunk + block.shape[1]])

    def bf16_screen() -> None:
        for number, block in enumerate(blocks_bf16):
            out = flat_bf16[:length * len(block)].view(length, len(block))
            torch.matmul(states_bf16, block.T, out=out)
            torch.amax(out, dim=0, out=pooled_bf16[number * chunk:number * chunk + len(block)])

    runs = {"int8_product": product_only, "int8_terms_x_positions": terms_x_positions,
            "int8_positions_x_terms": positions_x_terms, "bf16_screen": bf16_screen}
    best = dict.fromkeys(runs, float("inf"))
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with torch.inference_mode():
            for _ in range(repeats):
                for name, run in runs.items():  # interleaved
                    run()
                    started = time.thread_time()
                    run()
                    best[name] = min(best[name], time.thread_time() - started)
    finally:
        torch.set_num_threads(previous)
    return {name: round(seconds * 1e3, 3) for name, seconds in best.items()}


def stage_table(model: str, docs, dtypes, batch_size: int = 16, max_length: int = 256, repeats: int = 2) -> dict:
    """``stage_seconds`` per dtype (one thread; the dtypes interleaved in each repeat), with the CPU it ran on."""
    from lsr_lucene.encode.encoder import SparseEncoder

    encoders = {d: SparseEncoder(model, max_length=max_length, threads=1, dtype=d, device="cpu") for d in dtypes}
    for encoder in encoders.values():  # warm-up
        stage_seconds(encoder, docs[:batch_size], batch_size, repeats=1)
    best: dict[str, dict[str, float]] = {}
    for _ in range(repeats):
        for d, encoder in encoders.items():
            seconds = stage_seconds(encoder, docs, batch_size, repeats=1)
            best[d] = {k: min(v, best.get(d, {}).get(k, float("inf"))) for k, v in seconds.items()}
    some = next(iter(encoders.values()))
    vocab, hidden = some._weight.shape
    return {"hardware": hardware("cpu"), "passages": len(docs), "threads": 1, "seconds": best,
            "precision": {d: e.precision.reason for d, e in encoders.items()},
            "projection_ms_per_240_tokens": projection_split(hidden, vocab)}


def vector_differences(a: Path, b: Path) -> dict:
    """Documents with identical vectors, weights compared (over terms either has) and the largest difference."""
    from lsr_lucene.io.vectors import read_vectors

    left = dict(read_vectors(a))
    same = weights = differ = largest = 0
    compared = 0
    for doc_id, vector in read_vectors(b):
        if doc_id not in left:
            continue
        compared += 1
        other = left[doc_id]
        same += vector == other
        for term in set(vector) | set(other):
            gap = abs(vector.get(term, 0) - other.get(term, 0))
            weights += 1
            differ += gap > 0
            largest = max(largest, gap)
    return {"documents": compared, "identical_documents": same, "weights": weights, "weights_differing": differ,
            "max_difference": largest}


def thread_sweep(rows: Rows, model: str, docs, threads_list, dtypes, batch_size: int, max_length: int,
                 repeats: int = 1, note: str = "", label: str | None = None) -> None:
    """End-to-end CPU passages/s for each thread count, the dtypes interleaved (same load on each)."""
    from lsr_lucene.encode.encoder import SparseEncoder

    work = Path(tempfile.mkdtemp(prefix="lsr-encode-sweep-"))
    try:
        for threads in threads_list:
            encoders = {d: SparseEncoder(model, max_length=max_length, threads=threads, dtype=d, device="cpu")
                        for d in dtypes}
            for d, encoder in encoders.items():  # warm-up: first calls allocate and pick kernels
                end_to_end(encoder, docs[:batch_size * 2], batch_size, work / f"warm-{d}")
            best = {d: float("inf") for d in dtypes}
            for _ in range(repeats):
                for d, encoder in encoders.items():
                    best[d] = min(best[d], end_to_end(encoder, docs, batch_size, work / d))
            for d in dtypes:
                rows.add(device="cpu", hardware=hardware("cpu"), model=label or model, dtype=d, kind="end-to-end",
                         batch_size=batch_size, threads=threads, max_length=max_length, passages=len(docs),
                         seconds=best[d], note=note)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def batching_check(model: str, docs, out: Path) -> dict:
    """Issue 37 on this CPU: the same documents encoded with two shard sizes and after a resumption must give the same
    vectors; shard-aligned windows (the old behaviour) are counted against them to show what the check guards."""
    from lsr_lucene.encode.encoder import SparseEncoder
    from lsr_lucene.errors import Interrupted
    from lsr_lucene.io.vectors import quantise, read_vectors, write_vectors

    encoder = SparseEncoder(model, max_length=256, threads=min(4, os.cpu_count() or 1), dtype="fp32", device="cpu")
    work = Path(tempfile.mkdtemp(prefix="lsr-encode-batching-"))
    try:
        results = {}
        for shard_size in (100, 37):
            write_vectors(docs, encoder, work / f"s{shard_size}", shard_size=shard_size, batch_size=16, window=64)
            results[shard_size] = list(read_vectors(work / f"s{shard_size}"))

        def stop_after(n):
            for i, doc in enumerate(docs):
                if i == n:
                    raise KeyboardInterrupt
                yield doc
        try:
            write_vectors(stop_after(150), encoder, work / "resumed", shard_size=37, batch_size=16, window=64)
        except Interrupted:
            pass
        write_vectors(docs, encoder, work / "resumed", shard_size=37, batch_size=16, window=64)
        resumed = list(read_vectors(work / "resumed"))
        old = []  # windows restarting at every 37-document shard, as before the fix
        for start in range(0, len(docs), 37):
            shard = docs[start:start + 37]
            old += [quantise(v, 100) for v in encoder.encode_documents([t for _, t in shard], batch_size=16)]
        reference = results[100]
        return {"documents": len(reference),
                "shard_sizes_identical": results[37] == reference, "resumed_identical": resumed == reference,
                "old_shard_windows_differing_documents": sum(v != r[1] for v, r in zip(old, reference))}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def write_report(csv_paths: list[Path], out_dir: Path) -> None:
    """Merge result CSVs into ``out_dir``/results.{csv,md} (later files replace rows of the same configuration)
    and plot passages/s against threads (CPU) beside the GPU rates."""
    rows: dict[tuple, dict] = {}
    for path in csv_paths:
        with path.open(newline="") as handle:
            for row in csv.DictReader(handle):
                key = tuple(row[k] for k in ("device", "hardware", "model", "dtype", "kind", "batch_size", "threads",
                                             "max_length", "note"))
                rows[key] = row
    ordered = sorted(rows.values(), key=lambda r: (r["device"] != "cuda", r["hardware"], r["model"], r["kind"],
                                                  r["dtype"], int(r["threads"] or 0), int(r["batch_size"] or 0)))
    out_dir.mkdir(parents=True, exist_ok=True)
    with (out_dir / "results.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, FIELDS)
        writer.writeheader()
        writer.writerows(ordered)
    lines = ["| device | hardware | model | dtype | kind | batch | threads | max len | passages | s | passages/s | note |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    lines += ["| " + " | ".join(str(r[k]) for k in FIELDS) + " |" for r in ordered]
    (out_dir / "results.md").write_text("\n".join(lines) + "\n")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    figure, axis = plt.subplots(figsize=(7, 4.5))
    series: dict[tuple, list] = {}
    for r in ordered:
        if r["device"] == "cpu" and r["kind"] == "end-to-end" and r["threads"]:
            series.setdefault((r["hardware"], r["model"], r["dtype"]), []).append(
                (int(r["threads"]), float(r["passages_per_s"])))
    for (hw, model, dtype), points in sorted(series.items()):
        if len(points) > 1:
            points.sort()
            axis.plot(*zip(*points), marker="o", label=f"{model} {dtype}, {hw}")
    axis.set_xscale("log", base=2)
    axis.set_yscale("log")
    axis.set_xlabel("CPU threads")
    axis.set_ylabel("passages/s (end to end, max length 256)")
    gpu: dict[tuple, dict] = {}  # the best end-to-end row per model and dtype (variants of the pipeline aside)
    for r in ordered:
        key = (r["model"], r["dtype"], r["hardware"])
        if r["device"] == "cuda" and r["kind"] == "end-to-end" and (
                key not in gpu or float(r["passages_per_s"]) > float(gpu[key]["passages_per_s"])):
            gpu[key] = r
    for r in gpu.values():
        axis.axhline(float(r["passages_per_s"]), linestyle="--", linewidth=0.8)
        axis.annotate(f"{r['model']} {r['dtype']} GPU ({r['hardware']}), batch {r['batch_size']}",
                      (1, float(r["passages_per_s"])), fontsize=7, va="bottom")
    axis.legend(fontsize=7)
    axis.set_title("lsr-lucene encode: passages/s")
    figure.tight_layout()
    figure.savefig(out_dir / "passages_per_s.png", dpi=120)
