"""Distributed search against one index on real text, measured in one run: whole commands and the search alone.

The first N passages of an encoded collection (whole ``part-*.jsonl`` files of a vectors folder, in order; linked,
not copied) are indexed once as one index (``lsr-lucene index``) and as 2, 4, ... shards of consecutive parts
(``lsr-lucene distributed index --shards N``), each with the dense-impacts sidecar ``auto`` (``--reorder bp``: BP
order, everywhere). Then, for each k, every query is searched by ``lsr-lucene search`` on the one index and by
``lsr-lucene distributed search`` on each sharded index, twice: on a local Ray instance the command starts (and
stops) itself, and joining a local Ray instance already running (``--address``; how a cluster is used, Ray's own
start left out), each with the machine's cores. Timed: the whole command (subprocess wall time) and the search
alone (one index: ``SpecSearcher.search_to_run`` on the open index in this process; distributed: the search the
command reports in its ``time:`` line, its searchers already started). Every run is checked byte-identical to the
one index's; the distributed breakdown is kept. Usage: ``python -m scripts.bench.distributed_real --help``.
"""
from __future__ import annotations

import argparse
import csv
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from lsr_lucene import cli_options as opt
from scripts.bench.parts import first_parts, link_parts
from lsr_lucene.io.output import write_text_atomic

# the searchers' start, the part of it the command waited for (they start while the queries are read), the search
TIME_LINE = re.compile(r"^time: searchers started in ([\d.]+) s(?: \(([\d.]+) s of it waited for\))?; "
                       r"search ([\d.]+) s", re.M)
COLUMNS = ["docs", "k", "round", "setup", "shards", "command_s", "search_s", "searchers_start_s", "command_ratio",
           "search_ratio", "identical", "load", "breakdown"]
PAUSE = 5.0  # seconds between timed commands: a command's exit (Ray's processes stopping) not in the next one's time
SETUPS = {"running": "running Ray", "own": "own Ray"}  # --setups names -> the report's


def run(command: list[str], log: Path, pause: float = 0.0) -> tuple[float, str]:
    """Run a command (its output to ``log``) after ``pause`` seconds; its wall seconds and output. A failure stops
    the benchmark."""
    time.sleep(pause)
    started = time.perf_counter()
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seconds = time.perf_counter() - started
    log.write_text(done.stdout)
    if done.returncode != 0:
        tail = "\n".join(done.stdout.strip().splitlines()[-5:])
        raise SystemExit(f"error: {' '.join(command)} failed ({done.returncode}); see {log}:\n{tail}")
    return seconds, done.stdout


def build(args: argparse.Namespace, collection: Path, work: Path) -> dict:
    """The one index and the sharded ones (each kept when complete and ``--reuse``); seconds of those built."""
    import shutil

    built = {}
    order = ["--reorder", "bp", "--seed", "0"] if args.reorder == "bp" else []
    single = work / "single"
    if not (args.reuse and single.is_dir()):  # (an index folder is renamed into place when complete)
        shutil.rmtree(single, ignore_errors=True)
        built["single"] = run(["lsr-lucene", "index", "--input", str(collection), "--index", str(single),
                               "--threads", str(args.threads), *order], work / "single-index.log")[0]
    for n in args.shards:
        index = work / f"shards-{n}"
        if args.reuse and (index / "shards.json").is_file():
            continue
        shutil.rmtree(index, ignore_errors=True)
        built[f"{n} shards"] = run(["lsr-lucene", "distributed", "index", "--input", str(collection), "--index",
                                    str(index), "--shards", str(n), "--num-workers", str(min(n, args.threads)),
                                    "--num-cpus", str(args.threads), *order], work / f"shards-{n}-index.log")[0]
    return built


def search_alone(index: str, queries: str, output: str, k: int, threads: int) -> float:
    """Seconds of ``lsr-lucene search``'s search call (SpecSearcher.search_to_run) on the open one index (run in a
    process of its own: a fresh JVM, as the command's)."""
    from lsr_lucene.io.topics import read_query_vectors
    from lsr_lucene.search.impact import plain_specs
    from lsr_lucene.search.spec_searcher import SpecSearcher

    specs = [s for s in plain_specs(read_query_vectors(queries)) if s.get("terms")]
    with SpecSearcher(index) as searcher:
        started = time.perf_counter()
        searcher.search_to_run(specs, output, k=k, threads=threads, tag="lsr_lucene")
        return time.perf_counter() - started


def same(a: Path, b: Path) -> bool:
    return a.read_bytes() == b.read_bytes()


def measure(args: argparse.Namespace, work: Path, docs: int, address: str) -> list[dict]:
    """Every timed command of every k and round (see the module docstring)."""
    runs = work / ("runs-topics" if args.topics else "runs")
    runs.mkdir(exist_ok=True)
    # what every timed command reads: the encoded queries, or (--topics) their texts, which each command encodes
    queries = ["--topics", str(args.topics)] if args.topics else ["--query-vectors", str(args.queries)]
    rows = []
    for k in args.hits:
        for number in range(1, args.rounds + 1):
            reference = runs / f"single-{k}.run"
            whole, _ = run(["lsr-lucene", "search", "--index", str(work / "single"), *queries,
                            "--output", str(reference), "--hits", str(k), "--threads",
                            str(args.threads), "--overwrite"], runs / f"single-{k}.log", PAUSE)
            alone = float(run([sys.executable, "-c", "from scripts.bench.distributed_real import search_alone; "
                               f"print(search_alone({str(work / 'single')!r}, {str(args.queries)!r}, "
                               f"{str(runs / f'single-{k}-alone.run')!r}, {k}, {args.threads}))"],
                              runs / f"single-{k}-alone.log", PAUSE)[1].strip().splitlines()[-1])
            base = {"docs": docs, "k": k, "round": number}
            rows.append({**base, "setup": "one index", "shards": 1, "command_s": whole, "search_s": alone,
                         "identical": same(runs / f"single-{k}-alone.run", reference),
                         "load": os.getloadavg()[0]})
            for n in args.shards:
                for setup, cluster in [(SETUPS[name], ["--address", address] if name == "running" else
                                        ["--num-cpus", str(args.threads)]) for name in args.setups]:
                    name = f"shards-{n}-{k}-{'own' if setup == 'own Ray' else 'joined'}"
                    seconds, out = run(["lsr-lucene", "distributed", "search", "--index", str(work / f"shards-{n}"),
                                        *queries, "--output", str(runs / f"{name}.run"),
                                        "--hits", str(k), "--threads", str(args.threads), "--overwrite",
                                        *cluster], runs / f"{name}.log", PAUSE)
                    timing = TIME_LINE.search(out)
                    rows.append({**base, "setup": setup, "shards": n, "command_s": seconds,
                                 "search_s": float(timing.group(3)) if timing else None,
                                 "searchers_start_s": float(timing.group(2) or timing.group(1)) if timing else None,
                                 "identical": same(runs / f"{name}.run", reference), "load": os.getloadavg()[0],
                                 "breakdown": next((line for line in out.splitlines() if line.startswith("time:")),
                                                   "")})
            print(f"k={k} round {number}: " + "; ".join(f"{r['setup']} {r['shards']}: {r['command_s']:.1f} s"
                                                        for r in rows if r["k"] == k and r["round"] == number),
                  file=sys.stderr)
    for row in rows:  # ratios against the one index of the same k and round
        single = next(r for r in rows if (r["k"], r["round"], r["setup"]) == (row["k"], row["round"], "one index"))
        row["command_ratio"] = row["command_s"] / single["command_s"]
        row["search_ratio"] = row["search_s"] / single["search_s"] if row["search_s"] else None
    return rows


def report(rows: list[dict], built: dict, args: argparse.Namespace, docs: int, machine: str, command: str) -> str:
    """The Markdown report: machine, what was run, the table, the distributed breakdowns."""
    lines = [f"# Distributed search against one index: wiki2015, {docs:,} passages, {len(_queries(args))} NQ test "
             "questions", "", f"Machine: {machine}. Each command with the machine's {args.threads} cores (one "
             f"index: `--threads {args.threads}`; distributed: a local Ray instance of {args.threads} CPUs, one "
             f"searcher actor (one node) holding every shard in one JVM, `--threads {args.threads}`). Indexes: the "
             "dense-impacts sidecar `auto` on the "
             f"one index and on every shard{', BP order everywhere' if args.reorder else ''}.", "",
             f"Command: `{command}`", "",
             *([f"Queries: every command reads the texts of `{args.topics}` and encodes them (the model the index "
                "records, on the driver's CPU); `search_s` of the one index still reads the encoded queries.", ""]
               if args.topics else []),
             "`command_s`: wall time of the whole command (process start to exit: imports, Ray start or join, "
             "searcher actors with their JVMs and shards, queries read, search, run written, shutdown). "
             "`search_s`: the search alone (one index: SpecSearcher.search_to_run on the open index, the call "
             "`lsr-lucene search` makes; distributed: DistributedSearcher.search_to_run with its searchers started, "
             "as the command's `time:` line reports it). `searchers start s`: the part of the searchers' start "
             "(processes, JVMs, shards opened) the distributed command waited for; they start while it reads the "
             "queries. `rest`: the command's time outside these (process start, "
             "imports, JVM start and index open of the one index, Ray's start or join and shutdown, queries read). "
             "Ratios: against the one index of the same k and round. "
             "`own Ray`: the command starts a local Ray instance and stops it; `running Ray`: it joins one already "
             "running on this machine (`--address`), as commands on a cluster do. `identical`: the run file is "
             "byte-identical to `lsr-lucene search`'s.", ""]
    if built:
        lines += ["Built in this run: " + ", ".join(f"{name} {seconds:.0f} s" for name, seconds in built.items()),
                  ""]
    lines += ["Command ratios (distributed / one index, same k and round):", "", *summary(rows), ""]
    header = ["k", "round", "setup", "shards", "command s", "search s", "searchers start s", "rest s",
              "command ratio", "search ratio", "identical", "load"]
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        lines.append("| " + " | ".join([
            str(r["k"]), str(r["round"]), r["setup"], str(r["shards"]), f"{r['command_s']:.1f}",
            f"{r['search_s']:.1f}" if r["search_s"] else "", f"{r['searchers_start_s']:.1f}"
            if r.get("searchers_start_s") is not None else "",
            f"{r['command_s'] - r['search_s'] - (r.get('searchers_start_s') or 0):.1f}", f"{r['command_ratio']:.2f}",
            f"{r['search_ratio']:.2f}" if r.get("search_ratio") else "", "yes" if r["identical"] else "NO",
            f"{r['load']:.1f}"]) + " |")
    lines += ["", "Where the distributed time goes (each command's `time:` line):", ""]
    lines += [f"- k={r['k']}, round {r['round']}, {r['shards']} shards, {r['setup']}: {r['breakdown']}"
              for r in rows if r.get("breakdown")]
    return "\n".join(lines) + "\n"


def _setups(text: str) -> list[str]:
    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names or any(name not in SETUPS for name in names):
        raise argparse.ArgumentTypeError(f"expected running, own or running,own, got {text!r}")
    return names


def summary(rows: list[dict]) -> list[str]:
    """Per k, shard count and setup: the command ratio of every round, and their median (the table's ratios are
    each against the one index of the same round)."""
    from statistics import median

    keys = sorted({(r["k"], r["shards"], r["setup"]) for r in rows if r["setup"] != "one index"},
                  key=lambda key: (-key[0], key[2] != "running Ray", key[1]))
    lines = ["| k | setup | shards | command ratio by round | median | search ratio median |", "|---|---|---|---|---|---|"]
    for k, shards, setup in keys:
        mine = [r for r in rows if (r["k"], r["shards"], r["setup"]) == (k, shards, setup)]
        ratios = [r["command_ratio"] for r in mine]
        searches = [r["search_ratio"] for r in mine if r.get("search_ratio")]
        search = f"{median(searches):.2f}" if searches else ""
        lines.append(f"| {k} | {setup} | {shards} | {', '.join(f'{x:.2f}' for x in ratios)} | {median(ratios):.2f} | "
                     f"{search} |")
    return lines


def _queries(args: argparse.Namespace) -> list[str]:
    return [line for line in args.queries.read_text().splitlines() if line.strip()]


def main(argv: list[str] | None = None) -> int:
    from scripts.bench.scale_report import machine
    from lsr_lucene.distributed.cluster import ray_cluster

    parser = opt.Parser(prog="python -m scripts.bench.distributed_real", description=__doc__.splitlines()[0])
    parser.add_argument("--vectors", type=Path, required=True, help="folder of encoded part-*.jsonl files")
    parser.add_argument("--queries", type=Path, required=True, help="encoded queries (JSONL {id, vector})")
    parser.add_argument("--topics", type=Path,
                        help="the same queries' texts (TSV): every command encodes them (`--topics`, a user's path) "
                             "instead of reading --queries, which the search-alone baseline still reads; writes "
                             "wiki2015-N-topics.*")
    opt.add_number(parser, "--docs", kind=opt.NON_NEGATIVE_INT, default=0,
                   help="the first N passages (whole part files; default 0: all)")
    parser.add_argument("--shards", type=lambda t: [int(x) for x in t.split(",")], default=[2, 4],
                        help="shard counts, comma separated (default 2,4)")
    parser.add_argument("--hits", type=lambda t: [int(x) for x in t.split(",")], default=[1000, 10],
                        help="k values, comma separated (default 1000,10)")
    parser.add_argument("--reorder", choices=["bp"], help="BP order for the one index and every shard")
    parser.add_argument("--work", type=Path, default=Path("work/distributed/wiki2015"),
                        help="indexes and runs go to WORK/N (default work/distributed/wiki2015)")
    parser.add_argument("--output", type=Path, default=Path("runs/distributed"),
                        help="writes OUTPUT/wiki2015-N.md and .csv (default runs/distributed)")
    parser.add_argument("--reuse", action="store_true", help="keep indexes already built under WORK/N")
    opt.add_number(parser, "--rounds", kind=opt.POSITIVE_INT, default=1, help="measurements of each k (default 1)")
    parser.add_argument("--setups", type=_setups, default=list(SETUPS),
                        help="distributed commands that join a running Ray (running), start their own (own), or both "
                             "(default running,own)")
    opt.add_threads(parser, help="cores given to every command")
    args = parser.parse_args(argv)
    parts = first_parts(args.vectors, args.docs)
    docs = parts.documents
    work = args.work / str(docs)
    collection = link_parts(parts, work / "vectors")
    print(f"{docs} passages in {len(parts.files)} part files; indexes and runs under {work}", file=sys.stderr)
    started_on = machine()
    built = build(args, collection, work)
    with ray_cluster(None, num_cpus=args.threads):  # the running instance the joining commands use
        import ray

        rows = measure(args, work, docs, ray.get_runtime_context().gcs_address)
    command = " ".join(["python -m scripts.bench.distributed_real", *(argv if argv is not None else sys.argv[1:])])
    args.output.mkdir(parents=True, exist_ok=True)
    stem = args.output / f"wiki2015-{docs}{'-bp' if args.reorder else ''}{'-topics' if args.topics else ''}"
    write_text_atomic(stem.with_suffix(".md"), report(rows, built, args, docs, started_on, command))
    with open(stem.with_suffix(".csv.tmp"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows({**r, **{c: round(r[c], 3) for c in COLUMNS if isinstance(r.get(c), float)}} for r in rows)
    os.replace(stem.with_suffix(".csv.tmp"), stem.with_suffix(".csv"))
    print(stem.with_suffix(".md").read_text())
    return 0 if all(r["identical"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
