"""A fusion setting (method, weights, RRF k, normalisation, depth), checked, described and kept as JSON."""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from lsr_lucene.errors import InputError, json_problem

METHODS = ("rrf", "linear", "zscore")
NORMALISATIONS = ("minmax", "zscore", "none")
DEFAULT_RRF_K = 60.0  # Cormack et al. (SIGIR 2009), Pyserini's default
DEFAULT_DEPTH = 1000  # documents of each input run considered per query (Pyserini's --depth)


@dataclass(frozen=True)
class Setting:
    """How runs are fused. ``weights`` maps run names (in run order) to weights.

    rrf: Σ w·1/(k + rank); linear: Σ w·normalised score (``normalisation``); zscore: linear on z-scores.
    """

    method: str
    weights: Mapping[str, float]
    rrf_k: float = DEFAULT_RRF_K
    normalisation: str = "minmax"
    depth: int | None = DEFAULT_DEPTH
    fitted: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise InputError(f"method must be one of {', '.join(METHODS)}, got {self.method!r}")
        if self.method == "zscore":
            object.__setattr__(self, "normalisation", "zscore")
        if self.normalisation not in NORMALISATIONS:
            raise InputError(f"normalisation must be one of {', '.join(NORMALISATIONS)}, got {self.normalisation!r}")
        if not (isinstance(self.rrf_k, (int, float)) and math.isfinite(self.rrf_k) and self.rrf_k >= 0):
            raise InputError(f"rrf-k must be a finite number >= 0, got {self.rrf_k!r}")
        if self.depth is not None and (not isinstance(self.depth, int) or self.depth < 1):
            raise InputError(f"depth must be a positive integer, got {self.depth!r}")
        for name, weight in self.weights.items():
            if not isinstance(weight, (int, float)) or not math.isfinite(weight) or weight < 0:
                raise InputError(f"weight of run {name!r} must be a finite number >= 0, got {weight!r}")
        if not any(self.weights.values()):
            raise InputError("every weight is 0: nothing to fuse")

    @property
    def names(self) -> list[str]:
        return list(self.weights)

    def vector(self) -> list[float]:
        """Weights in run order."""
        return [float(w) for w in self.weights.values()]

    def describe(self) -> str:
        """One line: ``rrf k=60 splade=0.5 bm25=0.5 depth=1000``, ``linear minmax splade=0.3 ...``, ``zscore ...``."""
        how = {"rrf": f" k={self.rrf_k:g}", "linear": f" {self.normalisation}"}.get(self.method, "")
        weights = " ".join(f"{n}={w:g}" for n, w in self.weights.items())
        return f"{self.method}{how} {weights} depth={self.depth}"

    def to_json(self) -> dict:
        data: dict[str, object] = {"method": self.method, "weights": dict(self.weights), "depth": self.depth}
        if self.method == "rrf":
            data["rrf_k"] = self.rrf_k
        else:
            data["normalisation"] = self.normalisation
        if self.fitted:
            data["fitted"] = dict(self.fitted)
        return data


def weights_for(names: Sequence[str], given: Mapping[str, str] | None) -> dict[str, float]:
    """Run-ordered weights from ``--weight NAME=W`` items (1 for runs not named); unknown names are errors."""
    weights = {name: 1.0 for name in names}
    for name, text in (given or {}).items():
        if name not in weights:
            raise InputError(f"--weight {name}={text}: no run named {name!r} (runs: {', '.join(names)})")
        try:
            weights[name] = float(text)
        except ValueError:
            raise InputError(f"--weight {name}={text}: {text!r} is not a number") from None
    return weights


def read_setting(path: str | Path, names: Sequence[str]) -> Setting:
    """A setting saved by ``lsr-lucene fuse --fit ... --save-setting FILE``, checked against the run names given."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such setting file")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}: malformed JSON ({json_problem(exc)})") from None
    if not isinstance(data, dict) or not isinstance(data.get("weights"), dict) or "method" not in data:
        raise InputError(f"{path}: expected a JSON object with \"method\" and \"weights\"")
    if sorted(data["weights"]) != sorted(names):
        raise InputError(f"{path}: setting is for runs {', '.join(data['weights'])}, but the runs given are "
                         f"{', '.join(names)}")
    try:
        return Setting(method=data["method"], weights={n: data["weights"][n] for n in names},
                       rrf_k=data.get("rrf_k", DEFAULT_RRF_K), normalisation=data.get("normalisation", "minmax"),
                       depth=data.get("depth", DEFAULT_DEPTH), fitted=data.get("fitted") or {})
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None
