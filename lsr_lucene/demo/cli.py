"""The main job: encode → index → search → trec_eval on the shipped demo collection, beside BM25.

Runs each step through the same ``main`` functions as the command line, so the demo
exercises exactly what users run; its index is built as ``index --dense`` builds it (the
dense-impacts sidecar and the dense leg of negated queries), so ``compose`` on it runs the full
default. Like every verb it refuses an existing output folder unless ``--overwrite``.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

from lsr_lucene.demo import demo_files
from lsr_lucene.encode.models import DEFAULT_MODEL


def run_demo(output_dir: Path, model: str = DEFAULT_MODEL, threads: int = 2, max_length: int = 256,
             dtype: str = "fp32", overwrite: bool = False):
    """Run the whole pipeline into ``output_dir`` (documents encoded in ``dtype``); returns the results table. An
    existing ``output_dir`` is refused unless ``overwrite`` (then the files the demo writes there are replaced)."""
    from lsr_lucene.io.output import refuse_existing

    from lsr_lucene.search import cli_bm25 as bm25
    from lsr_lucene.encode import cli as encode
    from lsr_lucene.eval import trec as evaluation
    from lsr_lucene.index import cli as index
    from lsr_lucene.search import cli as search

    files = demo_files()
    refuse_existing(output_dir, overwrite, directory=True)
    output_dir.mkdir(parents=True, exist_ok=True)
    name = Path(model).name if Path(model).is_dir() else model.split("/")[-1]
    vectors, impact_index = output_dir / f"vectors-{name}", output_dir / f"index-{name}"
    run, bm25_index, bm25_run = output_dir / f"{name}.run", output_dir / "index-bm25", output_dir / "bm25.run"
    steps = [
        ("encode", encode.main, ["--corpus", str(files["corpus"]), "--output", str(vectors), "--model", model,
                                 "--max-length", str(max_length), "--threads", str(threads), "--dtype", dtype,
                                 "--overwrite"]),
        ("index", index.main, ["--input", str(vectors), "--index", str(impact_index), "--threads", str(threads),
                               "--dense", "--overwrite"]),
        ("search", search.main, ["--index", str(impact_index), "--topics", str(files["topics"]), "--output", str(run),
                                 "--threads", str(threads), "--run-tag", name, "--overwrite"]),
        ("bm25", bm25.main, ["--corpus", str(files["corpus"]), "--index", str(bm25_index), "--rebuild-index",
                             "--topics", str(files["topics"]), "--output", str(bm25_run), "--overwrite"]),
    ]
    for step, step_main, argv in steps:
        started = time.perf_counter()
        print(f"== {step}", file=sys.stderr)
        step_main(argv)
        print(f"   {step} took {time.perf_counter() - started:.1f}s", file=sys.stderr)
    table = evaluation.evaluate(files["qrels"], {name: run, "bm25": bm25_run})
    evaluation.write_table(table, output_dir / "results", overwrite=True)
    return table


def main(argv: list[str] | None = None) -> int:
    """CLI: the demo pipeline into ``--output-dir``."""
    from lsr_lucene.encode.cli import add_dtype_arguments

    from lsr_lucene import cli_options as opt

    parser = opt.Parser(prog="lsr-lucene demo", description=__doc__.splitlines()[0])
    opt.add_output(parser, "folder where vectors, indexes, runs and the table go", "--output-dir",
                   required=False, default="work/demo")
    opt.add_encoder(parser, DEFAULT_MODEL, "sparse encoder: registry name, HF id or local model folder", dest="model")
    opt.add_threads(parser, help="threads of every step")
    opt.add_max_length(parser)
    add_dtype_arguments(parser, int8=True)  # the sparse encoder's choices (encode --dtype)
    opt.add_overwrite(parser, "replace the demo's files in an existing output folder (without it, an existing "
                              "folder is refused)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    output_dir = Path(args.output)
    table = run_demo(output_dir, args.model, args.threads, args.max_length, args.dtype, args.overwrite)
    print(table.to_string(float_format=lambda x: f"{x:.4f}"))
    print(f"\nrun files: {', '.join(str(p) for p in sorted(output_dir.glob('*.run')))}")
    print(f"results table: {output_dir / 'results.md'} and .csv; total {time.perf_counter() - started:.0f}s")
    return 0


if __name__ == "__main__":
    from lsr_lucene.cli import run_main

    sys.exit(run_main(main))
