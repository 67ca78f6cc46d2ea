"""Fuse two or more TREC runs (RRF, linear on min-max/z-score/raw scores), or fit the fusion on training topics.

Apply: ``lsr-lucene fuse --run a=A.run --run b=B.run --method rrf --output F.run`` (or ``--setting FILE`` saved
by a fit). Fit: ``lsr-lucene fuse --run ... --method linear --fit QRELS --topics-subset TRAIN_TOPICS
--save-setting FILE``: grid search on the training topics only; applying the setting to other topics is a
separate call.
"""
from __future__ import annotations

import argparse
import json

from lsr_lucene import cli_options as opt
from lsr_lucene.errors import InputError
from lsr_lucene.fuse.setting import DEFAULT_DEPTH, DEFAULT_RRF_K, METHODS, NORMALISATIONS, Setting


def _parser() -> argparse.ArgumentParser:
    parser = opt.Parser(prog="lsr-lucene fuse", description=__doc__.splitlines()[0])
    parser.add_argument("--run", action="append", default=[], metavar="NAME=FILE",
                        help="an input TREC run and its name (two or more)")
    parser.add_argument("--method", choices=METHODS, default=None,
                        help="rrf: Σ w/(k + rank); linear: Σ w·normalised score; zscore: linear on z-scores "
                             "(default rrf)")
    opt.add_number(parser, "--rrf-k", "--rrf.k", kind=opt.NON_NEGATIVE_NUMBER, default=None,
                   help=f"RRF's k (default: {DEFAULT_RRF_K:g}; Pyserini's --rrf.k)")
    parser.add_argument("--weight", action="append", default=[], metavar="NAME=W",
                        help="weight of a run (default 1 each); rrf weights each run's 1/(k + rank)")
    parser.add_argument("--normalisation", "--normalization", choices=NORMALISATIONS, default=None,
                        help="score normalisation per query for --method linear (default minmax)")
    opt.add_number(parser, "--depth", default=None,
                   help=f"documents of each run considered per query (default: {DEFAULT_DEPTH})")
    opt.add_hits(parser, "--k", help="documents written per query (Pyserini's --k)")
    opt.add_output(parser, "fused TREC run to write", required=False)
    opt.add_run_tag(parser, help="run tag, the last column of the run file (default: fuse-<method>)")
    parser.add_argument("--topics-subset", metavar="FILE",
                        help="only these topics (a topics file): the training topics of --fit, or the topics "
                             "written by an apply")
    parser.add_argument("--setting", metavar="FILE", help="apply a setting saved by --fit --save-setting")
    fit = parser.add_argument_group("fitting on training topics")
    fit.add_argument("--fit", metavar="QRELS", help="choose weights (and RRF k) by grid search on --topics-subset")
    fit.add_argument("--metric", default="ndcg_cut_10", help="trec_eval measure the fit maximises (default ndcg_cut_10)")
    opt.add_number(fit, "--grid-step", kind=opt.POSITIVE_NUMBER, default=0.1,
                   help="weight grid step on the simplex")
    fit.add_argument("--rrf-k-grid", default="5,10,20,40,60,80,100", help="RRF k values tried by --fit")
    fit.add_argument("--save-setting", metavar="FILE", help="write the fitted setting as JSON (for --setting)")
    opt.add_overwrite(parser)
    return parser


def _check_modes(args: argparse.Namespace) -> None:
    if args.fit:
        if not args.topics_subset:
            raise InputError("--fit needs --topics-subset FILE: the training topics the fit may look at")
        if args.output or args.setting:
            raise InputError("--fit chooses a setting; apply it in a separate call (--setting FILE --output RUN)")
        if args.weight or args.rrf_k is not None:
            raise InputError("--fit chooses the weights and RRF k itself; leave out --weight and --rrf-k")
    else:
        if not args.output:
            raise InputError("nothing to do: give --output RUN (apply) or --fit QRELS (fit)")
        if args.save_setting:
            raise InputError("--save-setting goes with --fit")
        if args.setting and (args.method or args.weight or args.rrf_k is not None or args.normalisation
                             or args.depth is not None):
            raise InputError("--setting FILE fixes method, weights, RRF k, normalisation and depth; "
                             "leave those options out")
    if args.normalisation and (args.method or "rrf") != "linear":
        raise InputError("--normalisation goes with --method linear (zscore normalises by z-scores, rrf by ranks)")


def _rrf_ks(text: str) -> list[float]:
    try:
        values = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise InputError(f"--rrf-k-grid {text!r}: expected comma-separated numbers") from None
    if not values or any(v < 0 for v in values):
        raise InputError(f"--rrf-k-grid {text!r}: expected numbers >= 0")
    return values


def _fit(args: argparse.Namespace, paths: dict[str, str]) -> int:
    from lsr_lucene.fuse.fit import fit_files
    from lsr_lucene.io.output import atomic_output, refuse_existing

    if args.save_setting:
        refuse_existing(args.save_setting, args.overwrite, directory=False)
    method = args.method or "rrf"
    result = fit_files(paths, args.fit, args.topics_subset, method, measure=args.metric,
                       normalisation=args.normalisation or "minmax",
                       depth=DEFAULT_DEPTH if args.depth is None else args.depth, hits=args.hits,
                       step=args.grid_step, rrf_ks=_rrf_ks(args.rrf_k_grid))
    setting = result.setting
    print(f"fitted {setting.describe()}: {setting.fitted['metric']} {result.score:.4f} on "
          f"{setting.fitted['topics']} judged topics of {args.topics_subset} "
          f"({setting.fitted['settings_tried']} settings tried)")
    text = json.dumps(setting.to_json(), indent=2) + "\n"
    if args.save_setting:
        with atomic_output(args.save_setting, args.overwrite) as tmp:
            tmp.write_text(text, encoding="utf-8")
        print(f"wrote {args.save_setting}")
    else:
        print(text, end="")
    return 0


def main(argv: list[str] | None = None) -> int:
    from lsr_lucene.fuse.pools import parse_named

    args = _parser().parse_args(argv)
    paths = parse_named(args.run, "--run")
    if len(paths) < 2:
        raise InputError(f"fusion needs at least two runs (--run NAME=FILE), got {len(paths)}")
    _check_modes(args)
    if args.fit:
        return _fit(args, paths)
    return _apply(args, paths)


def _apply(args: argparse.Namespace, paths: dict[str, str]) -> int:
    from lsr_lucene.fuse.fit import topic_ids
    from lsr_lucene.fuse.methods import DECIMALS, fuse_pools
    from lsr_lucene.fuse.pools import build_pools, parse_named, read_runs
    from lsr_lucene.fuse.setting import read_setting, weights_for
    from lsr_lucene.io.output import refuse_existing
    from lsr_lucene.io.runs import write_run

    refuse_existing(args.output, args.overwrite, directory=False)
    names = list(paths)
    if args.setting:
        setting = read_setting(args.setting, names)
    else:
        setting = Setting(args.method or "rrf", weights_for(names, parse_named(args.weight, "--weight")),
                          DEFAULT_RRF_K if args.rrf_k is None else args.rrf_k, args.normalisation or "minmax",
                          DEFAULT_DEPTH if args.depth is None else args.depth)
    topics = topic_ids(args.topics_subset) if args.topics_subset else None
    runs = read_runs(paths, topics=topics)
    fused = fuse_pools(build_pools(runs, setting.depth), setting, args.hits)
    if not fused:
        raise InputError("the runs answer no query" + (f" of {args.topics_subset}" if topics is not None else ""))
    write_run(fused, args.output, args.run_tag or f"fuse-{setting.method}", overwrite=args.overwrite,
              decimals=DECIMALS)
    print(f"wrote {args.output} ({setting.describe()}; {len(fused)} queries)")
    return 0
