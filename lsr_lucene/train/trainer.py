"""Training runs: configuration, learning-rate/FLOPS/dead-zone schedules, epochs, checkpoints, early stopping.

The output directory holds the best model (dev pairwise accuracy, or the last epoch without a dev set) as a
Hugging Face masked-LM plus ``lsr_lucene.json`` (activation, pooling, epsilon), so that
``SparseEncoder(model=<output>)`` and ``lsr-lucene encode --model <output>`` reproduce its vectors;
``checkpoints/epoch-N`` hold every epoch, ``train_log.jsonl`` the loss and dev figures per epoch. The latest
checkpoint also holds ``trainer_state.pt`` (optimiser, scheduler, RNG and loop state as tensors and plain data,
loaded with ``weights_only=True``), from which ``--resume`` continues exactly as an uninterrupted run would.
"""
from __future__ import annotations

import json
import math
import pickle
import random
import re
import shutil
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Sequence

import torch

from lsr_lucene.errors import InputError, SetupError
from lsr_lucene.io.claims import claim_output
from lsr_lucene.io.output import atomic_output, install, make_parent, write_text_atomic
from lsr_lucene.train.data import (Example, NevirRow, examples_as_nevir, read_examples, read_nevir_rows,
                                   split_holdout)
from lsr_lucene.train.losses import batch_loss
from lsr_lucene.train.metrics import evaluate_nevir
from lsr_lucene.train.model import TrainableEncoder

TRAINER_STATE = "trainer_state.pt"
LOG_FILE = "train_log.jsonl"
ARGS_FILE = "train_args.json"
FIT_EVAL_ROWS = 50  # training rows whose pairwise accuracy is logged each epoch


@dataclass
class TrainConfig:
    """Everything that determines a training run (saved as train_args.json)."""

    model: str = "splade-tiny"
    train: list[str] = field(default_factory=list)
    dev: str | None = None
    holdout: int = 0
    output: str = ""
    activation: str = "snrelu"
    pooling: str | None = None
    epsilon: float | None = None
    init_shift: float | None = None
    dead_zone_grad: float = 0.0
    epsilon_start: float | None = None
    anneal: float = 0.5
    freeze_vocabulary: bool = False
    negative_head: str | None = None
    doc_to_query: float = 0.0
    in_batch: bool = True
    epochs: int = 4
    batch_size: int = 8
    lr: float = 1e-4
    weight_decay: float = 0.01
    warmup: float = 0.1
    lambda_q: float = 1e-3
    lambda_d: float = 1e-3
    flops_warmup: float = 0.3
    max_length: int = 256
    query_max_length: int = 64
    seed: int = 13
    patience: int = 2
    max_steps: int = 0
    matmul: str = "bf16"
    device: str | None = None
    threads: int | None = None
    grad_clip: float = 1.0


def _set_seed(seed: int) -> None:
    random.seed(seed)
    torch.manual_seed(seed)


def _epoch_batches(examples: Sequence[Example], batch_size: int, seed: int, epoch: int) -> list[list[Example]]:
    order = list(range(len(examples)))
    random.Random(seed * 1000 + epoch).shuffle(order)
    return [[examples[i] for i in order[s:s + batch_size]] for s in range(0, len(order), batch_size)]


def _schedule(step: int, total: int, warmup: int) -> float:
    """Linear warm-up then linear decay to 10% of the peak learning rate."""
    if warmup and step < warmup:
        return (step + 1) / warmup
    progress = (step - warmup) / max(1, total - warmup)
    return max(0.1, 1.0 - 0.9 * progress)


def _widening(step: int, total: int, start: float | None, end: float, fraction: float) -> float:
    """Dead-zone annealing: extra half-width (start - end) shrinking linearly to 0 over ``fraction`` of the steps."""
    if start is None or start <= end:
        return 0.0
    ramp = int(total * fraction)
    if ramp <= 0 or step >= ramp:
        return 0.0
    return (start - end) * (1.0 - step / ramp)


def _flops_factor(step: int, total: int, fraction: float) -> float:
    """Quadratic FLOPS warm-up (SPLADE): lambda grows as (step/T)^2 over the first ``fraction`` of steps."""
    ramp = int(total * fraction)
    if ramp <= 0 or step >= ramp:
        return 1.0
    return ((step + 1) / ramp) ** 2


def _latest_checkpoint(work: Path) -> Path | None:
    found = sorted((p for p in (work / "checkpoints").glob("epoch-*")
                    if re.fullmatch(r"epoch-\d+", p.name) and (p / TRAINER_STATE).is_file()),
                   key=lambda p: int(p.name.split("-")[1]))
    return found[-1] if found else None


def _rng_state() -> dict:
    """Every RNG a training step draws from, as tensors and lists (loadable with ``weights_only=True``)."""
    version, internal, gauss = random.getstate()
    rng = {"torch": torch.get_rng_state(), "python": [version, list(internal), gauss]}
    if torch.cuda.is_available():
        rng["cuda"] = torch.cuda.get_rng_state_all()
    return rng


def _set_rng_state(rng: dict) -> None:
    """Restore what :func:`_rng_state` saved."""
    torch.set_rng_state(rng["torch"])
    version, internal, gauss = rng["python"]
    random.setstate((version, tuple(internal), gauss))
    if "cuda" in rng and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(rng["cuda"])


def load_trainer_state(path: Path) -> dict:
    """A checkpoint's trainer state, unpickling tensors and plain data only; anything else is an InputError."""
    try:
        saved = torch.load(path, map_location="cpu", weights_only=True)
    except (pickle.UnpicklingError, RuntimeError, EOFError, OSError, ValueError) as exc:
        reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
        raise InputError(f"{path}: not a trainer state that loads safely (tensors and plain data only): {reason}; "
                         "start again with --overwrite") from None
    keys = ("optimizer", "scheduler", "state", "rng")
    if not isinstance(saved, dict) or any(not isinstance(saved.get(k), dict) for k in keys):
        raise InputError(f"{path}: not a trainer state (expected a dict with {', '.join(keys)}); "
                         "start again with --overwrite")
    return saved


class Trainer:
    """Runs the epochs: batches, optimiser, dev evaluation, checkpoints, early stopping."""

    def __init__(self, config: TrainConfig, progress: bool = True):
        self.config = config
        self.progress = progress
        self.final = Path(config.output)
        self.work = self.final.with_name(self.final.name + ".partial")

    def _load_data(self) -> tuple[list[Example], list[NevirRow]]:
        cfg = self.config
        if not cfg.train:
            raise InputError("no training file given (--train FILE)")
        examples = [ex for path in cfg.train for ex in read_examples(path)]
        dev: list[NevirRow] = []
        if cfg.holdout:
            examples, held = split_holdout(examples, cfg.holdout, cfg.seed)
            dev = examples_as_nevir(held)
            if not dev:
                raise InputError("--holdout needs NevIR rows (q1, doc1, q2, doc2) in the training data")
        if cfg.dev:
            dev = read_nevir_rows(cfg.dev)
        return examples, dev

    def run(self, resume: bool = False, overwrite: bool = False) -> dict:
        """Train; returns a summary (best epoch, dev figures, time). The model ends up in ``config.output``."""
        cfg = self.config
        if self.final.exists() and not overwrite:
            raise InputError(f"{self.final} already exists; pass --overwrite to replace it")
        for name, value in (("epochs", cfg.epochs), ("batch-size", cfg.batch_size)):
            if value < 1:
                raise InputError(f"--{name} must be at least 1, got {value}")
        if cfg.max_length < 2 or cfg.query_max_length < 2:
            raise InputError("--max-length and --query-max-length must be at least 2")
        if cfg.holdout and cfg.dev:  # the held-out rows left training, and --dev replaced them as the dev set
            raise InputError("--holdout and --dev do not combine: --holdout makes the dev set from the training rows, "
                             "--dev reads one")
        if cfg.epsilon_start is not None and cfg.activation != "snrelu":
            raise InputError("--epsilon-start (dead-zone annealing) applies to --activation snrelu only")
        if cfg.epsilon_start is not None and cfg.negative_head:
            raise InputError("--epsilon-start (dead-zone annealing) and --negative-head do not combine")
        examples, dev = self._load_data()
        if cfg.threads:
            torch.set_num_threads(cfg.threads)
        checkpoint = _latest_checkpoint(self.work) if resume else None
        saved = load_trainer_state(checkpoint / TRAINER_STATE) if checkpoint is not None else None
        if resume and checkpoint is None:
            print(f"no checkpoint in {self.work}; starting from scratch", file=sys.stderr)
        if checkpoint is None:
            if self.work.exists():  # without a checkpoint (e.g. a run that failed loading its model) nothing is lost
                if not (overwrite or resume) and _latest_checkpoint(self.work) is not None:
                    raise InputError(f"{self.work} holds an interrupted run; pass --resume to continue it "
                                     f"or --overwrite to start again")
                shutil.rmtree(self.work)
            self.work.mkdir(parents=True)
        _set_seed(cfg.seed)
        try:
            model = TrainableEncoder(str(checkpoint) if checkpoint else cfg.model, activation=cfg.activation,
                                     pooling=cfg.pooling, epsilon=cfg.epsilon, device=cfg.device, matmul=cfg.matmul,
                                     dead_zone_grad=cfg.dead_zone_grad,
                                     init_shift=0.0 if checkpoint else cfg.init_shift,
                                     negative_head=cfg.negative_head)
        except BaseException:
            if checkpoint is None:  # the work directory made just now: no ".partial" left for a model that won't load
                shutil.rmtree(self.work, ignore_errors=True)
            raise
        model.source = cfg.model
        cfg.pooling, cfg.epsilon = model.pooling, model.epsilon
        if checkpoint is None:
            cfg.init_shift = model.init_shift
        if cfg.epsilon_start is not None and cfg.epsilon_start < model.epsilon:
            raise InputError(f"--epsilon-start {cfg.epsilon_start} is below --epsilon {model.epsilon}")
        write_text_atomic(self.work / ARGS_FILE, json.dumps(asdict(cfg), indent=2) + "\n")
        if cfg.freeze_vocabulary:  # vocabulary embeddings (tied to the projection) and biases stay as they are
            model.decoder.weight.requires_grad_(False)
            model.decoder.bias.requires_grad_(False)
            model.net.get_input_embeddings().weight.requires_grad_(False)
        params = [p for p in model.parameters() if p.requires_grad]
        decay = [p for p in params if p.dim() >= 2]
        no_decay = [p for p in params if p.dim() < 2]
        optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": cfg.weight_decay},
                                       {"params": no_decay, "weight_decay": 0.0}], lr=cfg.lr)
        steps_per_epoch = math.ceil(len(examples) / cfg.batch_size)
        total = steps_per_epoch * cfg.epochs
        if cfg.max_steps:
            total = min(total, cfg.max_steps)
        warmup = int(total * cfg.warmup)
        scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: _schedule(s, total, warmup))
        state: dict[str, Any] = {"epoch": 0, "step": 0, "best": None, "best_epoch": None, "bad_epochs": 0,
                                 "elapsed": 0.0}
        log_path = self.work / LOG_FILE
        if saved is not None:
            optimizer.load_state_dict(saved["optimizer"])
            scheduler.load_state_dict(saved["scheduler"])
            state = saved["state"]
            _set_rng_state(saved["rng"])
            self._trim_log(log_path, state["epoch"])
            print(f"resuming after epoch {state['epoch']} from {checkpoint}", file=sys.stderr)
        started = time.perf_counter() - state["elapsed"]
        if checkpoint is None and dev:
            record = {"epoch": 0, "step": 0, "dev": evaluate_nevir(model, dev, cfg.max_length,
                                                                      cfg.query_max_length)}
            self._log(log_path, record)
            state["baseline_dev"] = record["dev"]["pairwise_accuracy"]
        fit_rows = examples_as_nevir(examples[:FIT_EVAL_ROWS])
        model.train()
        stopped_early = False
        while state["epoch"] < cfg.epochs and state["step"] < total:
            epoch = state["epoch"] + 1
            sums: dict[str, float] = {}
            batches = _epoch_batches(examples, cfg.batch_size, cfg.seed, epoch)
            bar = None
            if self.progress:
                from lsr_lucene.progress import progress_bar

                bar = progress_bar(total=min(len(batches), total - state["step"]), desc=f"epoch {epoch}/{cfg.epochs}",
                           unit="batch", file=sys.stderr, leave=False)
            count = 0
            for batch in batches:
                if state["step"] >= total:
                    break
                factor = _flops_factor(state["step"], total, cfg.flops_warmup)
                model.widen = _widening(state["step"], total, cfg.epsilon_start, model.epsilon, cfg.anneal)
                loss, parts = batch_loss(model, batch, cfg.lambda_q * factor, cfg.lambda_d * factor,
                                         cfg.max_length, cfg.query_max_length, cfg.doc_to_query, cfg.in_batch)
                if not torch.isfinite(loss):
                    raise SetupError(f"loss became {float(loss)} at step {state['step']}; lower --lr")
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                if cfg.grad_clip:
                    torch.nn.utils.clip_grad_norm_(params, cfg.grad_clip)
                optimizer.step()
                scheduler.step()
                state["step"] += 1
                count += 1
                for k, v in parts.items():
                    sums[k] = sums.get(k, 0.0) + v
                if bar is not None:
                    bar.update(1)
                    bar.set_postfix(loss=f"{sums['loss'] / count:.3f}", ce=f"{sums['ce'] / count:.3f}",
                                    nnz_d=f"{parts['nnz_d']:.0f}")
            if bar is not None:
                bar.close()
            model.widen = 0.0  # evaluate and save the model as it will be used
            state["epoch"] = epoch
            record = {"epoch": epoch, "step": state["step"], "train": {k: v / max(1, count) for k, v in sums.items()}}
            improved = True
            if fit_rows:  # how well the training pairs themselves are separated (under/over-fitting)
                record["train"]["pairwise_accuracy"] = evaluate_nevir(
                    model, fit_rows, cfg.max_length, cfg.query_max_length)["pairwise_accuracy"]
            if dev:
                record["dev"] = evaluate_nevir(model, dev, cfg.max_length, cfg.query_max_length)
                score = record["dev"]["pairwise_accuracy"]
                improved = state["best"] is None or score > state["best"]
            state["elapsed"] = time.perf_counter() - started
            record["elapsed_s"] = round(state["elapsed"], 1)
            annealing = _widening(state["step"], total, cfg.epsilon_start, model.epsilon, cfg.anneal) > 0
            if annealing:  # the dead zone is still being narrowed: not a candidate, patience not counted
                record["annealing"] = True
            elif improved:
                state["best"] = record["dev"]["pairwise_accuracy"] if dev else None
                state["best_epoch"] = epoch
                state["bad_epochs"] = 0
            else:
                state["bad_epochs"] += 1
            state["last_epoch"] = epoch
            self._log(log_path, record)
            self._checkpoint(model, optimizer, scheduler, state, epoch)
            if self.progress:
                dev_text = f", dev pairwise accuracy {record['dev']['pairwise_accuracy']:.3f}" if dev else ""
                print(f"epoch {epoch}: loss {record['train'].get('loss', float('nan')):.4f}{dev_text} "
                      f"({record['elapsed_s']:.0f}s)", file=sys.stderr)
            if dev and cfg.patience and state["bad_epochs"] >= cfg.patience:
                stopped_early = state["epoch"] < cfg.epochs and state["step"] < total
                break
        return self._finish(state, stopped_early, bool(dev), overwrite)

    @staticmethod
    def _trim_log(path: Path, epoch: int) -> None:
        """Drop log records of epochs after ``epoch`` (a run killed between logging and checkpointing)."""
        if path.exists():
            lines = [line for line in path.read_text(encoding="utf-8").splitlines(keepends=True)
                     if line.endswith("\n") and json.loads(line).get("epoch", 0) <= epoch]
            write_text_atomic(path, "".join(lines))

    @staticmethod
    def _log(path: Path, record: dict) -> None:
        with path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")

    def _checkpoint(self, model: TrainableEncoder, optimizer, scheduler, state: dict, epoch: int) -> None:
        target = self.work / "checkpoints" / f"epoch-{epoch}"
        with atomic_output(target, overwrite=True, directory=True) as tmp:  # a re-run epoch replaces its checkpoint
            model.save(tmp, {"epoch": epoch})
            torch.save({"optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict(),
                        "state": json.loads(json.dumps(state)), "rng": _rng_state()}, tmp / TRAINER_STATE)
        for older in (self.work / "checkpoints").glob("epoch-*"):  # optimiser state: latest epoch only
            if older != target and (older / TRAINER_STATE).is_file():
                (older / TRAINER_STATE).unlink()

    def _finish(self, state: dict, stopped_early: bool, has_dev: bool, overwrite: bool) -> dict:
        if state["best_epoch"] is None:  # every epoch was still annealing: keep the last one
            state["best_epoch"], state["best"] = state["last_epoch"], None
        best = self.work / "checkpoints" / f"epoch-{state['best_epoch']}"
        for item in best.iterdir():
            if item.is_file() and item.name != TRAINER_STATE:
                shutil.copy2(item, self.work / item.name)
        summary = {"best_epoch": state["best_epoch"], "epochs_run": state["epoch"], "steps": state["step"],
                   "stopped_early": stopped_early, "elapsed_s": round(state["elapsed"], 1)}
        if has_dev:
            summary["dev_pairwise_accuracy"] = state["best"]
            summary["dev_pairwise_accuracy_before"] = state.get("baseline_dev")
        write_text_atomic(self.work / "train_summary.json", json.dumps(summary, indent=2) + "\n")
        install(self.work, self.final, overwrite)
        return summary


def train(config: TrainConfig, resume: bool = False, overwrite: bool = False, progress: bool = True) -> dict:
    """Train a sparse encoder as configured; returns the summary written to ``<output>/train_summary.json``."""
    make_parent(config.output)
    with claim_output(Path(config.output)):  # one trainer per output directory (and its .partial work)
        return Trainer(config, progress=progress).run(resume=resume, overwrite=overwrite)
