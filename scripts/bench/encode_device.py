"""The device checks of scripts/device_encode_check.sh (issue 41, items 2-4; issue 37's AMX item; issue 38's thread
defaults): one run on a machine with a GPU and a many-core CPU, every result appended to ``OUT/results.csv`` as it
is measured and the rest written to ``OUT/checks.json``."""
from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import torch

from lsr_lucene.errors import Interrupted
from scripts.bench.encode_host import host_only, same_files
from scripts.bench.encode_speed import (Rows, batching_check, device_only, end_to_end, hardware, model_only,
                                           read_passages, stage_table, thread_sweep, vector_differences)

MAX_LENGTH = 256


def base_size_model(tokenizer_from: str, folder: Path, texts: list[str], terms: int = 300) -> str:
    """A BERT-base-size masked-LM with random weights (speed only), saved with ``tokenizer_from``'s tokenizer. Its
    vocabulary bias is lowered so that about ``terms`` terms per text get a positive pooled logit, as a trained
    SPLADE model's few hundred (random weights make every term positive: the JSON, not the model, would be timed)."""
    from transformers import AutoTokenizer, BertConfig, BertForMaskedLM

    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_from)
    model = BertForMaskedLM(BertConfig(vocab_size=len(tokenizer))).eval()
    batch = tokenizer(texts[:16], max_length=256, truncation=True, padding=True, return_tensors="pt")
    with torch.inference_mode():
        logits = model(**batch).logits.masked_fill(~batch["attention_mask"].bool()[..., None], -1e9).amax(dim=1)
    cut = torch.quantile(logits.flatten()[:1_000_000].float(), 1 - terms / logits.shape[1])
    model.cls.predictions.bias.data -= cut
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


def gpu_stage_seconds(encoder, docs, batch: int, out: Path) -> dict:
    """One end-to-end run with the wall seconds spent in each stage and where each thread was (``sampler``). With
    worker processes: the pipeline's own stage clock (``WindowPipeline.seconds``: the device thread's stages, its
    idle rest, the main process's waits) and the shard writing; with windows in threads: the seconds in the functions
    that path calls, summed over the threads that ran them."""
    import threading

    from lsr_lucene.encode import device as dev
    from lsr_lucene.io import vectors

    totals: dict[str, float] = {}
    lock = threading.Lock()
    pipeline = encoder.window_pipeline()
    if pipeline is not None:
        originals: dict[str, tuple[object, str]] = {"main: writing shards": (vectors._OpenShard, "add")}
        pipeline.seconds.clear()
    else:
        originals = {"tokenize": (dev.FastTokenizer, "ids"),
                     "batch (device + host selection)": (dev, "quantised_batch"),
                     "window (all of it)": (vectors, "window_lines"), "pad + copy": (type(encoder), "_pad"),
                     "transformer": (type(encoder), "_hidden"),
                     "projection + pooling": (type(encoder), "_weights")}
    saved = {name: getattr(owner, attr) for name, (owner, attr) in originals.items()}

    def timed(name, function):
        def wrapper(*a, **k):
            started = time.perf_counter()
            try:
                return function(*a, **k)
            finally:
                with lock:
                    totals[name] = totals.get(name, 0.0) + time.perf_counter() - started
        return wrapper

    for name, (owner, attr) in originals.items():
        setattr(owner, attr, timed(name, saved[name]))
    samples, stop = sampler()
    try:
        totals["wall"] = end_to_end(encoder, docs, batch, out)
    finally:
        stop.set()
        for name, (owner, attr) in originals.items():
            setattr(owner, attr, saved[name])
    if pipeline is not None:
        totals.update(pipeline.seconds)
        busy = sum(v for k, v in pipeline.seconds.items() if k.startswith("device thread"))
        totals["device thread: idle (no window ready)"] = totals["wall"] - busy
    result: dict[str, object] = {k: round(v, 3) for k, v in totals.items()}
    result["samples (thread kind: innermost frame, then the lsr_lucene frame)"] = dict(samples.most_common(45))
    return result


def sampler(every: float = 0.001):
    """A thread that counts, every ``every`` seconds, where each other thread is (a poor man's py-spy)."""
    import collections
    import sys
    import threading

    counts: collections.Counter = collections.Counter()
    stop = threading.Event()

    def run():
        me = threading.get_ident()
        names = {}
        while not stop.wait(every):
            for ident, frame in sys._current_frames().items():
                if ident == me:
                    continue
                if ident not in names:
                    thread = next((t for t in threading.enumerate() if t.ident == ident), None)
                    names[ident] = (thread.name.split("_")[0] if thread else "?")
                inner = f"{Path(frame.f_code.co_filename).name}:{frame.f_code.co_name}:{frame.f_lineno}"
                ours = frame
                while ours is not None and "lsr_lucene" not in ours.f_code.co_filename:
                    ours = ours.f_back
                where = f"{Path(ours.f_code.co_filename).name}:{ours.f_code.co_name}:{ours.f_lineno}" if ours else "-"
                counts[f"{names[ident]}: {inner} | {where}"] += 1

    threading.Thread(target=run, daemon=True, name="sampler").start()
    return counts, stop


def _configure(encoder, workers: int, depth: int) -> None:
    """The GPU pipeline to time: windows in threads of this process (``workers`` 0, the path before worker processes)
    or ``workers`` worker processes (encode.pipeline); ``depth`` windows in flight either way."""
    encoder.host_workers = workers
    pipeline = encoder.window_pipeline() if workers else None
    if pipeline is not None:
        pipeline.depth = depth
    elif workers:
        raise RuntimeError("worker processes could not be started here")
    else:
        encoder.pipeline_depth = depth


def _note(workers: int, depth: int) -> str:
    return (f"{workers} worker processes, {depth} windows in flight" if workers else
            f"one process, {depth} window threads")


def _device_rows(rows: Rows, encoder, model: str, kind: str, name: str, docs, batch: int, repeats: int) -> None:
    """Model-only rates: on random ids at full length (ours, naive), and the device part alone on ``docs``."""
    dtype = encoder.dtype
    for naive in (False, True):
        per_batch = model_only(encoder, batch, MAX_LENGTH, repeats, naive)
        rows.add(device=kind, hardware=name, model=model, dtype=dtype,
                 kind=f"model only ({'naive' if naive else 'ours'})", batch_size=batch, max_length=MAX_LENGTH,
                 passages=batch, seconds=per_batch, note="random ids, full length")
    device_only(encoder, docs, batch)  # warm: every batch width once (runs 5-6 warmed two batches only)
    rows.add(device=kind, hardware=name, model=model, dtype=dtype, kind="model only (same passages)", batch_size=batch,
             max_length=MAX_LENGTH, passages=len(docs), seconds=device_only(encoder, docs, batch),
             note="the end-to-end passages, tokenised and padded beforehand; with copies to and from the device")


def _gpu(args, rows: Rows, checks: dict, docs, work: Path) -> None:
    from lsr_lucene.encode.device import FastTokenizer
    from lsr_lucene.encode.encoder import SparseEncoder
    from lsr_lucene.encode.models import resolve
    from lsr_lucene.io.vectors import write_vectors

    device, batch = args.device, args.batch_size
    name, kind = hardware(device), device.split(":")[0]
    checks["gpu"] = name
    def fp32_encoder():
        return SparseEncoder(args.model, max_length=MAX_LENGTH, dtype="fp32", device=device, device_quantise=True)

    encoder = fp32_encoder()
    default_workers = encoder.host_workers
    checks["default_host_workers"] = default_workers
    workers_list = [int(w) for w in args.host_workers.split(",")] if args.host_workers else [0, default_workers]
    depths = [int(d) for d in args.depths.split(",")]
    variants = [(w, 3 if w == 0 else d) for w in workers_list for d in (depths if w else [3])]
    # one encoder per variant, each keeping its worker processes: no timed run pays for starting them
    encoders: dict = {}
    for workers, depth in variants:  # CUDA context, kernels, cuBLAS handles, worker processes
        candidate = encoder if not encoders else fp32_encoder()
        try:
            _configure(candidate, workers, depth)
        except RuntimeError as exc:  # time what can run
            checks["pipeline_error"] = str(exc)
            continue
        end_to_end(candidate, docs[:batch * 8], batch, work / "warm")
        encoders[workers, depth] = candidate
    variants = list(encoders)
    texts = [t for _, t in docs]
    started = time.perf_counter()
    FastTokenizer(encoder.tokenizer, MAX_LENGTH).ids(texts)
    rows.add(device="host", hardware=hardware("cpu"), model=args.model, kind="tokenize only (one fast call)",
             max_length=MAX_LENGTH, passages=len(texts), seconds=time.perf_counter() - started)
    best_of: dict = {}
    for _ in range(args.repeats):  # interleaved: a slow moment of the host hits every variant alike
        for workers, depth in variants:
            seconds = end_to_end(encoders[workers, depth], docs, batch, work / f"gpu-fp32-w{workers}-d{depth}")
            best_of[workers, depth] = min(best_of.get((workers, depth), float("inf")), seconds)
    for (workers, depth), seconds in best_of.items():
        rows.add(device=kind, hardware=name, model=args.model, dtype="fp32", kind="end-to-end", batch_size=batch,
                 max_length=MAX_LENGTH, passages=len(docs), seconds=seconds,
                 note=_note(workers, depth) + f", best of {args.repeats}" + (", workers started before" if workers
                                                                              else ""))
    process_variants = [v for v in variants if v[0]] or variants
    workers, depth = min(process_variants, key=lambda v: best_of[v])
    checks["best_pipeline"] = {"host_workers": workers, "depth": depth}
    if (0, 3) in best_of and workers:
        checks["processes_vs_threads_identical_files"] = same_files(work / "gpu-fp32-w0-d3",
                                                                     work / f"gpu-fp32-w{workers}-d{depth}")
        print("worker processes give the same files as threads:", checks["processes_vs_threads_identical_files"],
              flush=True)
    encoder = encoders.pop((workers, depth))
    for other in encoders.values():
        other.close()
    del encoders
    _configure(encoder, workers, depth)
    seconds, same = host_only(encoder, docs, batch, work / "host-only", repeats=args.repeats)
    checks["host_only_identical_files"] = same
    rows.add(device="host", hardware=hardware("cpu"), model=args.model, dtype="fp32", kind="host only (device replayed)",
             batch_size=batch, max_length=MAX_LENGTH, passages=len(docs), seconds=seconds,
             note=_note(workers, depth) + f", the device's results replayed from a run just before, best of {args.repeats}")
    print(f"host only: {len(docs) / seconds:.0f} passages/s (identical files: {same})", flush=True)
    if args.gpu_stages:
        checks["stages_seconds"] = gpu_stage_seconds(encoder, docs, batch, work / "gpu-stages")
        print("stages (seconds summed over threads):", checks["stages_seconds"], flush=True)
    for dtype in ("fp32", "bf16"):
        if dtype != "fp32":
            encoder.close()
            encoder = SparseEncoder(args.model, max_length=MAX_LENGTH, dtype=dtype, device=device,
                                    device_quantise=True)
            _configure(encoder, workers, depth)
            end_to_end(encoder, docs[:batch * 8], batch, work / "warm")
            best = min(end_to_end(encoder, docs, batch, work / f"gpu-{dtype}") for _ in range(args.repeats))
            rows.add(device=kind, hardware=name, model=args.model, dtype=dtype, kind="end-to-end", batch_size=batch,
                     max_length=MAX_LENGTH, passages=len(docs), seconds=best,
                     note=_note(workers, depth) + f", best of {args.repeats}")
        else:
            end_to_end(encoder, docs, batch, work / f"gpu-{dtype}")  # the outputs compared below
        _device_rows(rows, encoder, args.model, kind, name, docs, batch, 10)
    encoder.close()
    # GPU fp32 against CPU fp32 on the first documents (quantised vectors, ±1 expected at most)
    cpu = SparseEncoder(args.model, max_length=MAX_LENGTH, dtype="fp32", device="cpu", threads=os.cpu_count())
    count = min(len(docs), args.compare_passages)
    started = time.perf_counter()
    write_vectors(docs[:count], cpu, work / "cpu-fp32", batch_size=16)
    rows.add(device="cpu", hardware=hardware("cpu"), model=args.model, dtype="fp32", kind="end-to-end", batch_size=16,
             threads=os.cpu_count(), max_length=MAX_LENGTH, passages=count, seconds=time.perf_counter() - started,
             note="reference for the GPU comparison")
    for dtype in ("fp32", "bf16"):
        checks[f"gpu_{dtype}_vs_cpu_fp32"] = vector_differences(work / "cpu-fp32", work / f"gpu-{dtype}")
        print(f"GPU {dtype} vs CPU fp32:", checks[f"gpu_{dtype}_vs_cpu_fp32"], flush=True)
    if args.base_passages <= 0:
        return
    # a BERT-base-size model: end to end against model only, both dtypes
    base = args.base_model or base_size_model(resolve(args.model), work / "bert-base-random", texts)
    base_docs = docs[:args.base_passages]
    for dtype in ("fp32", "bf16"):
        encoder = SparseEncoder(base, max_length=MAX_LENGTH, dtype=dtype, device=device,
                                device_quantise=True)
        _configure(encoder, workers, depth)
        end_to_end(encoder, base_docs[:batch * 8], batch, work / "warm")
        seconds = end_to_end(encoder, base_docs, batch, work / f"base-{dtype}")
        rows.add(device=kind, hardware=name, model="bert-base-random", dtype=dtype, kind="end-to-end",
                 batch_size=batch, max_length=MAX_LENGTH, passages=len(base_docs), seconds=seconds,
                 note=_note(workers, depth))
        _device_rows(rows, encoder, "bert-base-random", kind, name, base_docs, batch, 5)
        encoder.close()
        del encoder
        torch.cuda.empty_cache() if device.startswith("cuda") else None
    checks["base_model"] = base


def _cpu(args, rows: Rows, checks: dict, docs, work: Path) -> None:
    from lsr_lucene.encode.encoder import SparseEncoder

    capability = torch.backends.cpu.get_cpu_capability()
    checks["cpu_capability"] = capability
    checks["cpu"] = hardware("cpu")
    print("CPU capability:", capability, hardware("cpu"), flush=True)
    if ("AMX" in checks["cpu"] or args.batching_check) and not args.no_batching_check:
        checks["batching_check"] = batching_check(args.model, docs[:300], work)
        print("batching check (issue 37):", checks["batching_check"], flush=True)
    sweep = docs[:args.sweep_passages]
    cores = os.cpu_count() or 1
    threads = [t for t in (int(x) for x in args.sweep_threads.split(",")) if t <= cores]
    thread_sweep(rows, args.model, sweep, threads, ["fp32", "int8"], 16, MAX_LENGTH, repeats=args.sweep_repeats)
    if args.stages:  # where one thread's time goes, fp32 against int8 (issue 41 item 1)
        checks["cpu_stages"] = stage_table(args.model, docs[:args.stages], ["fp32", "int8"], 16, MAX_LENGTH)
        print("CPU stages (seconds, one thread):", json.dumps(checks["cpu_stages"]), flush=True)
    if args.base_passages <= 0:
        return
    # a BERT-base-size model on all cores: end to end against model only
    base = checks.get("base_model")
    if base is None:
        from lsr_lucene.encode.models import resolve

        base = base_size_model(resolve(args.model), work / "bert-base-random", [t for _, t in docs[:16]])
    base_docs = docs[:args.cpu_base_passages]
    thread_sweep(rows, base, base_docs, [cores], ["fp32", "int8"], 16, MAX_LENGTH, repeats=1, label="bert-base-random")
    for dtype in ("fp32", "int8"):
        encoder = SparseEncoder(base, max_length=MAX_LENGTH, dtype=dtype, device="cpu", threads=cores)
        for naive in ((False, True) if dtype == "fp32" else (False,)):
            per_batch = model_only(encoder, 16, MAX_LENGTH, 2, naive)
            rows.add(device="cpu", hardware=hardware("cpu"), model="bert-base-random", dtype=dtype,
                     kind=f"model only ({'naive' if naive else 'ours'})", batch_size=16, threads=cores,
                     max_length=MAX_LENGTH, passages=16, seconds=per_batch, note="random ids, full length, intra-op")


def run_device_checks(args) -> int:
    """Run the GPU part (when a GPU is there) and the CPU part; ``OUT/results.csv`` and ``OUT/checks.json``."""
    args.out.mkdir(parents=True, exist_ok=True)
    rows = Rows(args.out / "results.csv")
    checks: dict = {"torch": torch.__version__, "cpu_count": os.cpu_count(),
                    "cpu_capability": torch.backends.cpu.get_cpu_capability()}
    print("torch", torch.__version__, "CPU capability", checks["cpu_capability"], "cores", os.cpu_count(),
          "cuda", torch.cuda.is_available(), flush=True)
    docs = read_passages(args.corpus, args.passages)
    work = Path(tempfile.mkdtemp(prefix="lsr-encode-device-"))
    only = set(args.only.split(","))
    try:
        for part, run in (("gpu", _gpu), ("cpu", _cpu)):
            if part not in only or (part == "gpu" and args.device.startswith("cuda") and not torch.cuda.is_available()):
                continue
            started = time.perf_counter()
            try:
                run(args, rows, checks, docs, work)
            except (Exception, Interrupted) as exc:  # keep what the other part measures
                checks[f"{part}_error"] = f"{type(exc).__name__}: {exc}"
                import traceback

                traceback.print_exc()
            checks[f"{part}_seconds"] = round(time.perf_counter() - started, 1)
            (args.out / "checks.json").write_text(json.dumps(checks, indent=2) + "\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(checks, indent=2), flush=True)
    return 0
