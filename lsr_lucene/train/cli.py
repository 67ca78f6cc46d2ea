"""Fine-tune a (signed) SPLADE encoder on contrastive pairs (NevIR rows) and query/positive/negative triples.

``lsr-lucene train`` / ``python -m lsr_lucene.train``: the arguments become a :class:`TrainConfig`. Input
formats: :mod:`lsr_lucene.train.data`; loss: :mod:`lsr_lucene.train.losses`; output directory:
:mod:`lsr_lucene.train.trainer`.
"""
from __future__ import annotations

import argparse
import json
import sys

from lsr_lucene.encode import activations as act
from lsr_lucene.encode import negative_head as nh
from lsr_lucene.train.model import MATMUL_DTYPES
from lsr_lucene.train.trainer import Trainer, TrainConfig, train


def build_parser() -> argparse.ArgumentParser:
    """Arguments of ``python -m lsr_lucene.train`` / ``lsr-lucene train``."""
    d = TrainConfig()
    p = argparse.ArgumentParser(prog="lsr-lucene train", description=__doc__.splitlines()[0])
    p.add_argument("--train", action="append", required=True,
                   help="training JSONL: NevIR rows {q1,doc1,q2,doc2} and/or triples {query,positive,negative}; "
                        "repeatable")
    p.add_argument("--output", required=True, help="model directory to write (loadable by lsr-lucene encode --model)")
    p.add_argument("--model", default=d.model, help="starting masked-LM sparse model: registry name, HF id or directory")
    p.add_argument("--dev", default=None, help="NevIR-format dev JSONL for early stopping on pairwise accuracy")
    p.add_argument("--holdout", type=int, default=0,
                   help="hold out about N training rows (grouped by shared documents) as the dev set")
    p.add_argument("--activation", choices=act.ACTIVATIONS, default=d.activation,
                   help="snrelu: signed weights (default); splade: positive-only")
    p.add_argument("--pooling", choices=act.POOLINGS, default=None,
                   help="default: absmax for snrelu, max for splade")
    p.add_argument("--epsilon", type=float, default=None,
                   help=f"SNReLU dead-zone half width (default: the model's, else {act.DEFAULT_EPSILON})")
    p.add_argument("--init-shift", type=float, default=None,
                   help="add this to every vocabulary bias before training (default: epsilon when turning a SPLADE "
                        "model into SNReLU, so its positive weights start equal to SPLADE's; else 0)")
    p.add_argument("--epsilon-start", type=float, default=None,
                   help="dead-zone annealing: start with this half-width (negatives only below -2*START in SPLADE "
                        "logit units) and narrow it linearly to --epsilon over the first --anneal share of steps")
    p.add_argument("--anneal", type=float, default=d.anneal, help="share of steps for dead-zone annealing")
    p.add_argument("--doc-to-query", type=float, default=d.doc_to_query,
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
    p.add_argument("--dead-zone-grad", type=float, default=d.dead_zone_grad,
                   help="surrogate gradient slope inside the dead zone during training (0: exact gradient)")
    p.add_argument("--epochs", type=int, default=d.epochs)
    p.add_argument("--batch-size", type=int, default=d.batch_size, help="rows per batch")
    p.add_argument("--lr", type=float, default=d.lr)
    p.add_argument("--weight-decay", type=float, default=d.weight_decay)
    p.add_argument("--warmup", type=float, default=d.warmup, help="share of steps with linear lr warm-up")
    p.add_argument("--lambda-q", type=float, default=d.lambda_q, help="FLOPS weight for queries")
    p.add_argument("--lambda-d", type=float, default=d.lambda_d, help="FLOPS weight for documents")
    p.add_argument("--flops-warmup", type=float, default=d.flops_warmup,
                   help="share of steps over which the FLOPS weights grow quadratically")
    p.add_argument("--max-length", type=int, default=d.max_length, help="document truncation in tokens")
    p.add_argument("--query-max-length", type=int, default=d.query_max_length)
    p.add_argument("--seed", type=int, default=d.seed)
    p.add_argument("--patience", type=int, default=d.patience,
                   help="stop after this many epochs without dev improvement (0: never)")
    p.add_argument("--max-steps", type=int, default=0, help="stop after this many steps (0: no limit)")
    p.add_argument("--matmul", choices=tuple(MATMUL_DTYPES), default=d.matmul,
                   help="precision of the vocabulary projection during training (bf16: faster on recent CPUs)")
    p.add_argument("--device", default=None, help="cpu, cuda, ... (default: cuda when present)")
    p.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    p.add_argument("--resume", action="store_true", help="continue an interrupted run from its last checkpoint")
    p.add_argument("--overwrite", action="store_true", help="replace an existing output directory")
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
