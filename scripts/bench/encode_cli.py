"""``python -m scripts.bench.encode_cli {cpu,device,report}``: the encoding speed benchmark's command line
(library: scripts.bench.encode_speed and encode_device; scripts/run_encode_bench.sh, device_encode_check.sh)."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from scripts.bench.encode_device import run_device_checks
from scripts.bench.encode_speed import Rows, read_passages, stage_table, thread_sweep, write_report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        allow_abbrev=False, prog="python -m scripts.bench.encode_cli", description="encoding speed (issue 41)")
    sub = parser.add_subparsers(dest="command", required=True)
    cpu = sub.add_parser("cpu", help="thread sweep on this CPU, fp32 and int8 interleaved")
    cpu.add_argument("--corpus", required=True, type=Path)
    cpu.add_argument("--passages", type=int, default=400)
    cpu.add_argument("--threads", default="1,2")
    cpu.add_argument("--dtypes", default="fp32,int8")
    cpu.add_argument("--model", default="splade-tiny")
    cpu.add_argument("--batch-size", type=int, default=16)
    cpu.add_argument("--max-length", type=int, default=256)
    cpu.add_argument("--repeats", type=int, default=2)
    cpu.add_argument("--csv", type=Path, required=True)
    cpu.add_argument("--stages", type=int, default=0, help="also time each stage on this many passages, one thread")
    cpu.add_argument("--stages-json", type=Path, default=None, help="where the stage times go (JSON)")
    dev = sub.add_parser("device", help="the GPU and CPU checks of scripts/device_encode_check.sh")
    dev.add_argument("--corpus", required=True, type=Path)
    dev.add_argument("--out", required=True, type=Path)
    dev.add_argument("--model", default="splade-tiny")
    dev.add_argument("--base-model", default=None, help="a BERT-base-size masked-LM folder (random weights)")
    dev.add_argument("--passages", type=int, default=20_000)
    dev.add_argument("--batch-size", type=int, default=256)
    dev.add_argument("--sweep-passages", type=int, default=320)
    dev.add_argument("--compare-passages", type=int, default=2000, help="GPU against CPU fp32 vectors")
    dev.add_argument("--base-passages", type=int, default=4096, help="BERT-base-size end to end on the GPU")
    dev.add_argument("--device", default="cuda", help="the accelerator (cpu: try the GPU part here, slowly)")
    dev.add_argument("--batching-check", action="store_true", help="issue 37's check even without AMX")
    dev.add_argument("--depths", default="4", help="windows in flight to try with worker processes (GPU)")
    dev.add_argument("--host-workers", default=None,
                     help="worker process counts to try (GPU; 0: windows in threads); default 0 and the encoder's")
    dev.add_argument("--repeats", type=int, default=2, help="GPU end-to-end runs per variant (best kept)")
    dev.add_argument("--gpu-stages", action="store_true", help="time each stage and sample the threads (GPU)")
    dev.add_argument("--sweep-threads", default="1,2,4,8,16")
    dev.add_argument("--cpu-base-passages", type=int, default=256)
    dev.add_argument("--only", default="gpu,cpu")
    dev.add_argument("--sweep-repeats", type=int, default=1, help="interleaved fp32/int8 rounds (CPU sweep)")
    dev.add_argument("--stages", type=int, default=0, help="CPU: time each stage on this many passages, one thread")
    dev.add_argument("--no-batching-check", action="store_true", help="skip issue 37's check even with AMX")
    rep = sub.add_parser("report", help="merge result CSVs into runs/encode/")
    rep.add_argument("csvs", nargs="+", type=Path)
    rep.add_argument("--out", type=Path, default=Path("runs/encode"))
    args = parser.parse_args(argv)
    if args.command == "report":
        write_report(args.csvs, args.out)
        return 0
    if args.command == "cpu":
        docs = read_passages(args.corpus, args.passages)
        thread_sweep(Rows(args.csv), args.model, docs, [int(t) for t in args.threads.split(",")],
                     args.dtypes.split(","), args.batch_size, args.max_length, args.repeats)
        if args.stages:
            table = stage_table(args.model, docs[:args.stages], args.dtypes.split(","), args.batch_size,
                                args.max_length, args.repeats)
            print(json.dumps(table, indent=2), flush=True)
            if args.stages_json:
                args.stages_json.write_text(json.dumps(table, indent=2) + "\n")
        return 0
    return run_device_checks(args)


if __name__ == "__main__":
    sys.exit(main())
