"""Fine-tune a (signed) SPLADE encoder on contrastive pairs (NevIR rows) and query/positive/negative triples.

``lsr-lucene train`` / ``python -m lsr_lucene.train``: the arguments become a :class:`TrainConfig`. Input
formats: :mod:`lsr_lucene.train.data`; loss: :mod:`lsr_lucene.train.losses`; output directory:
:mod:`lsr_lucene.train.trainer`.
"""
from __future__ import annotations

import argparse
import json
import sys

from lsr_lucene import cli_options as opt
from lsr_lucene.encode import activations as act
from lsr_lucene.encode import negative_head as nh
from lsr_lucene.train.model import MATMUL_DTYPES
from lsr_lucene.train.trainer import Trainer, TrainConfig, train


def build_parser() -> argparse.ArgumentParser:
    """Arguments of ``python -m lsr_lucene.train`` / ``lsr-lucene train``."""
    d = TrainConfig()
    p = opt.Parser(prog="lsr-lucene train", description=__doc__.splitlines()[0])
    p.add_argument("--train", action="append", required=True,
                   help="training JSONL: NevIR rows {q1,doc1,q2,doc2} and/or triples {query,positive,negative}; "
                        "repeatable")
    opt.add_output(p, "model folder to write (loadable by lsr-lucene encode --encoder)")
    opt.add_encoder(p, d.model, "starting masked-LM sparse encoder: registry name, HF id or local folder", dest="model")
    p.add_argument("--dev", default=None, help="NevIR-format dev JSONL for early stopping on pairwise accuracy")
    opt.add_number(p, "--holdout", kind=opt.NON_NEGATIVE_INT, default=0,
                   help="hold out about N training rows (grouped by shared documents) as the dev set")
    p.add_argument("--activation", choices=act.ACTIVATIONS, default=d.activation,
                   help="snrelu: signed weights (default); splade: positive-only")
    p.add_argument("--pooling", choices=act.POOLINGS, default=None,
                   help="default: absmax for snrelu, max for splade")
    opt.add_number(p, "--epsilon", kind=opt.NON_NEGATIVE_NUMBER, default=None,
                   help=f"SNReLU dead-zone half width (default: the model's, else {act.DEFAULT_EPSILON})")
    opt.add_number(p, "--init-shift", kind=opt.NUMBER, default=None,
                   help="add this to every vocabulary bias before training (default: epsilon when turning a SPLADE "
                        "model into SNReLU, so its positive weights start equal to SPLADE's; else 0)")
    opt.add_number(p, "--epsilon-start", kind=opt.NON_NEGATIVE_NUMBER, default=None,
                   help="dead-zone annealing: start with this half-width (negatives only below -2*START in SPLADE "
                        "logit units) and narrow it linearly to --epsilon over the first --anneal share of steps")
    opt.add_number(p, "--anneal", kind=opt.SHARE, default=d.anneal, help="share of steps for dead-zone annealing")
    opt.add_number(p, "--doc-to-query", kind=opt.NON_NEGATIVE_NUMBER, default=d.doc_to_query,
                   help="weight of the reverse InfoNCE (each relevant document over the batch's queries)")
    p.add_argument("--no-in-batch-negatives", dest="in_batch", action="store_false",
                   help="rank each query among its own row's documents only (the contrastive pair), not the "
                        "other rows' documents")
    p.add_argument("--freeze-vocabulary", action="store_true",
                   help="keep the vocabulary embeddings (tied to the output projection) and output biases fixed; "
                        "only the transformer and the projection head learn")
    p.add_argument("--negative-head", choices=nh.HEAD_KINDS, default=None,
                   help="snrelu only: negative weights from a head instead of the MLM logits' negative tail: "
                        "'mean' adds a per-text, per-term offset (zero at the start), 'scope' multiplies each "
                        "position's logits by a learned sign (-1 inside a negation); see lsr_lucene/encode/negative_head.py")
    opt.add_number(p, "--dead-zone-grad", kind=opt.NON_NEGATIVE_NUMBER, default=d.dead_zone_grad,
                   help="surrogate gradient slope inside the dead zone during training (0: exact gradient)")
    opt.add_number(p, "--epochs", kind=opt.POSITIVE_INT, default=d.epochs)
    opt.add_batch_size(p, d.batch_size, "rows per batch")
    opt.add_number(p, "--lr", kind=opt.POSITIVE_NUMBER, default=d.lr)
    opt.add_number(p, "--weight-decay", kind=opt.NON_NEGATIVE_NUMBER, default=d.weight_decay)
    opt.add_number(p, "--warmup", kind=opt.SHARE, default=d.warmup, help="share of steps with linear lr warm-up")
    opt.add_number(p, "--lambda-q", kind=opt.NON_NEGATIVE_NUMBER, default=d.lambda_q, help="FLOPS weight for queries")
    opt.add_number(p, "--lambda-d", kind=opt.NON_NEGATIVE_NUMBER, default=d.lambda_d, help="FLOPS weight for documents")
    opt.add_number(p, "--flops-warmup", kind=opt.SHARE, default=d.flops_warmup,
                   help="share of steps over which the FLOPS weights grow quadratically")
    opt.add_max_length(p, d.max_length)
    opt.add_number(p, "--query-max-length", kind=opt.POSITIVE_INT, default=d.query_max_length)
    opt.add_number(p, "--seed", kind=opt.INTEGER, default=d.seed)
    opt.add_number(p, "--patience", kind=opt.NON_NEGATIVE_INT, default=d.patience,
                   help="stop after this many epochs without dev improvement (0: never)")
    opt.add_number(p, "--max-steps", kind=opt.NON_NEGATIVE_INT, default=0, help="stop after this many steps (0: no limit)")
    p.add_argument("--matmul", choices=tuple(MATMUL_DTYPES), default=d.matmul,
                   help="precision of the vocabulary projection during training (bf16: faster on recent CPUs)")
    opt.add_device(p)
    opt.add_threads(p, None, "torch CPU threads (default: torch's thread count)")
    p.add_argument("--resume", action="store_true", help="continue an interrupted run from its last checkpoint")
    opt.add_overwrite(p)
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    return p


def main(argv: list[str] | None = None) -> int:
    """Train from the command line; prints the summary as JSON."""
    args = build_parser().parse_args(argv)
    names = set(TrainConfig.__dataclass_fields__)
    config = TrainConfig(**{k: v for k, v in vars(args).items() if k in names})
    try:
        summary = train(config, resume=args.resume, overwrite=args.overwrite, progress=not args.quiet)
    except KeyboardInterrupt:
        print(f"interrupted; checkpoints kept in {Trainer(config).work} (rerun with --resume)", file=sys.stderr)
        return 130
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    from lsr_lucene.cli import run_main

    sys.exit(run_main(main))
