"""The settings the contrastive experiments compare: negation operations, their λ grid and the encoder ablations."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from lsr_lucene.compose.operations import Settings
from lsr_lucene.compose.query_encoder import QueryEncoder

DEFAULT = "default"  # what `lsr-lucene compose` uses on not nodes when no --operation is given
NEGATION_OPS = (DEFAULT, "vanilla", "ignore", "subtract", "nrf", "orthogonal", "disentangled", "fusion",
                "fusion-scaled")
LAMBDA_OPS = ("nrf", "disentangled", "fusion", "fusion-scaled")
LAMBDA_GRID = (0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0)
MODES = ("full", "no-expansion", "no-term-weights")


@dataclass(frozen=True)
class Config:
    """One evaluated setting: operation on ``not`` nodes, its λ (None: default) and the encoder mode."""

    operation: str
    lam: float | None = None
    mode: str = "full"
    gate: float | None = None  # fusion-gated only (None: the default gate)

    @property
    def label(self) -> str:
        """Row label, e.g. ``disentangled λ=0.3 [no-expansion]``."""
        text = self.operation + (f" λ={self.lam:g}" if self.lam is not None else "")
        text += f" τ={self.gate:g}" if self.gate is not None else ""
        return text + (f" [{self.mode}]" if self.mode != "full" else "")

    def settings(self) -> Settings:
        """Compose settings of this configuration (``default``: no operation named, as `lsr-lucene compose`)."""
        extra: dict[str, Any] = {"gate": self.gate} if self.gate is not None else {}
        return Settings(None if self.operation == DEFAULT else self.operation, lam=self.lam, **extra)


def default_configs(modes: Sequence[str] = MODES) -> list[Config]:
    """Every negation operation at its default settings, for each encoder mode."""
    return [Config(op, None, mode) for mode in modes for op in NEGATION_OPS]


def lambda_configs(grid: Sequence[float] = LAMBDA_GRID) -> list[Config]:
    """The λ sweep of the operations that have a λ (full encoder)."""
    return [Config(op, lam) for op in LAMBDA_OPS for lam in grid]


def make_encoders(model: str, modes: Sequence[str], threads: int | None = None, **options) -> dict[str, QueryEncoder]:
    """One QueryEncoder per mode, sharing one loaded model."""
    base = QueryEncoder(model, "full", threads=threads, **options)
    return {mode: QueryEncoder(mode=mode, encoder=base.encoder) for mode in modes}
