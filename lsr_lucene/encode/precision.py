"""Encoder precision: fp32 (the default), bf16 or int8 (CPU), with ``auto`` choosing fp32 or bf16, whichever is
faster on this machine.

fp32 is the default for documents and the only precision for queries: bf16 vectors depend on whether and how the
CPU computes bf16, and on the batch a text is padded in (bf16 rounds each padded shape differently), so the same
command would give another index (and a query other scores) from one machine or batch to the next. bf16
(``--dtype bf16``, or ``auto``) trades that for 10-20 % speed, and pays only where the CPU computes it natively
(AMX, AVX512_BF16); elsewhere it is emulated and slower than fp32 (AVX2: SciFact encoding 30 docs/s in bf16
against 53 in fp32, a SoftSDM top-k segment 360 ms against 64). ``auto`` takes bf16 on native hardware, fp32
where oneDNN has no bf16 kernels at all (``projection.bf16_matmul_is_fast``), and otherwise (e.g. AVX512 without
BF16, Arm) times a matmul of the model's projection shape once and keeps the faster. On a GPU ``auto`` keeps the
earlier rule: an fp32 transformer, a bf16 top-k projection.

int8 (``--dtype int8``, CPU only, opt-in, never chosen by ``auto``; documents only): the vocabulary projection, most
of the work, runs as an int8 × int8 → int32 product (per-term weight scales, one activation scale per document)
pooled in int32 (lsr_lucene.encode.int8); the transformer runs as a bf16 copy with eager attention where the CPU
has native bf16 (AMX, AVX512_BF16: the same hardware rule as ``auto``), else in fp32. Weights move by about one unit
of 1/scale.
"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from typing import Callable, Mapping

import torch

from lsr_lucene.encode.choices import DEFAULT, DTYPES, PRECISIONS, QUERY_DTYPE  # noqa: F401  (named here too)
from lsr_lucene.encode.projection import bf16_matmul_is_fast
from lsr_lucene.errors import InputError
TORCH_DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}
# torch.cpu.get_capabilities() keys of native bf16 arithmetic, reported by name
NATIVE_BF16 = (("amx_bf16", "AMX_BF16"), ("avx512_bf16", "AVX512_BF16"))
CALIBRATION_ROWS = 64  # positions in the calibration matmul (a short segment)
CALIBRATION_VOCAB = 8192  # vocabulary rows timed: the ratio, not the full product, decides
BF16_MARGIN = 0.9  # bf16 must be this much faster in the calibration (autocast adds conversions)
_calibrated: dict[tuple[int, int], tuple[float, float]] = {}
_announced: set[object] = set()  # lines (and notes) already printed


@dataclass(frozen=True)
class Precision:
    """A resolved precision: the transformer's (``dtype``) and the SoftSDM top-k projection's (``topk``)."""

    requested: str
    dtype: str
    topk: str
    capability: str
    reason: str
    processor: str = "CPU"  # what ``capability`` names: "CPU" (torch's capability string) or "GPU" (its name)

    def line(self) -> str:
        """The one line printed at start-up (when not the plain fp32 default)."""
        reason = "" if self.reason == "as requested" else f"; {self.reason}"
        return f"precision: {self.dtype} (requested {self.requested}; {self.processor} {self.capability}{reason})"

    @property
    def plain(self) -> bool:
        """fp32 asked for and used throughout: nothing worth a start-up line."""
        return self.requested == "fp32" and self.dtype == "fp32" and self.topk == "fp32"

    def metadata(self) -> dict:
        """What outputs record beside the resolved ``dtype`` (which is part of the encoder settings)."""
        return {"dtype_requested": self.requested, "cpu_capability": self.capability, "precision_reason": self.reason}


def cpu_features() -> Mapping[str, object]:
    """torch's runtime CPU feature map (``torch.cpu.get_capabilities``; {} on an older torch)."""
    get = getattr(torch.cpu, "get_capabilities", None)
    try:
        return get() if get is not None else {}
    except RuntimeError:
        return {}


def native_bf16(features: Mapping[str, object]) -> list[str]:
    """Names of the native bf16 instruction sets in a feature map (e.g. ["AMX_BF16", "AVX512_BF16"])."""
    return [name for key, name in NATIVE_BF16 if features.get(key)]


def capability_string(capability: str | None = None, features: Mapping[str, object] | None = None) -> str:
    """torch's CPU capability (``AVX2``, ``AVX512`` ...) with the native bf16 sets appended: ``AVX512+AMX_BF16``."""
    capability = capability if capability is not None else torch.backends.cpu.get_cpu_capability()
    native = native_bf16(cpu_features() if features is None else features)
    return "+".join([capability, *native])


def calibrate(hidden: int, vocab: int, rows: int = CALIBRATION_ROWS, repeats: int = 3) -> tuple[float, float]:
    """Best-of-``repeats`` seconds of a (rows × hidden) @ (hidden × vocab) product in fp32 and in bf16, one thread
    (the encoder's workers run one torch thread each); cached per shape."""
    key = (int(hidden), min(int(vocab), CALIBRATION_VOCAB))
    if key in _calibrated:
        return _calibrated[key]
    generator = torch.Generator().manual_seed(0)
    weight = torch.randn(key[1], key[0], generator=generator)
    states = torch.randn(rows, key[0], generator=generator)
    pairs = {name: (states.to(dt), weight.to(dt)) for name, dt in TORCH_DTYPES.items()}
    best = {name: float("inf") for name in pairs}
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with torch.inference_mode():
            for a, b in pairs.values():  # warm-up: first calls allocate and pick kernels
                a @ b.T
            for _ in range(repeats):  # interleaved, so a burst of load hits both
                for name, (a, b) in pairs.items():
                    started = time.perf_counter()
                    a @ b.T
                    best[name] = min(best[name], time.perf_counter() - started)
    finally:
        torch.set_num_threads(previous)
    _calibrated[key] = (best["fp32"], best["bf16"])
    return _calibrated[key]


def resolve(requested: str, device: torch.device | str, hidden: int, vocab: int,
            timer: Callable[[int, int], tuple[float, float]] | None = None) -> Precision:
    """The precision to use for ``requested`` (auto, fp32, bf16) on ``device`` for a hidden × vocab projection."""
    if requested not in PRECISIONS:
        raise InputError(f"dtype must be one of {', '.join(PRECISIONS)}, got {requested!r}")
    device = torch.device(device)
    if requested == "int8":
        if device.type != "cpu":
            raise InputError(f"--dtype int8 runs on the CPU only, not on {device}; use fp32 or bf16 there")
        native = native_bf16(cpu_features())
        transformer = (f"bf16 with eager attention (native {', '.join(native)})" if native
                       else "fp32 (no native bf16)")
        return Precision(requested, "int8", "fp32", capability_string(),
                         f"int8 vocabulary projection, transformer in {transformer}")
    if device.type != "cpu":
        name = torch.cuda.get_device_name(device) if device.type == "cuda" else device.type
        if requested != "auto":
            return Precision(requested, requested, requested, name, "as requested", "GPU")
        return Precision(requested, "fp32", "bf16", name, "GPU: fp32 transformer, bf16 top-k projection", "GPU")
    capability = capability_string()
    if requested != "auto":
        return Precision(requested, requested, requested, capability, "as requested")
    native = native_bf16(cpu_features())
    if native:
        return Precision(requested, "bf16", "bf16", capability, f"native bf16 ({', '.join(native)})")
    if not bf16_matmul_is_fast(device):
        return Precision(requested, "fp32", "fp32", capability, "no native bf16: emulated, slower than fp32")
    fp32_s, bf16_s = (timer or calibrate)(hidden, vocab)
    chosen = "bf16" if bf16_s < BF16_MARGIN * fp32_s else "fp32"
    return Precision(requested, chosen, chosen, capability,
                     f"calibration {hidden}x{min(vocab, CALIBRATION_VOCAB)}: fp32 {fp32_s * 1e3:.1f} ms, "
                     f"bf16 {bf16_s * 1e3:.1f} ms")


def announce(precision: Precision) -> None:
    """Print the precision line on stderr, once per process for each distinct choice; silent for plain fp32."""
    line = precision.line()
    if not precision.plain and line not in _announced:
        _announced.add(line)
        print(line, file=sys.stderr, flush=True)


def note_documents_precision(documents: object) -> None:
    """Say once on stderr when an index's documents were encoded in another precision than queries (fp32)."""
    if documents in DTYPES and documents != QUERY_DTYPE and ("note", documents) not in _announced:
        _announced.add(("note", documents))
        print(f"note: documents were encoded in {documents}, queries in {QUERY_DTYPE} (scores differ slightly "
              f"from an all-{QUERY_DTYPE} index)", file=sys.stderr, flush=True)


def clear_calibration() -> None:
    """Forget cached calibrations, so the next ``auto`` encoder times its matmul again (benchmarks)."""
    _calibrated.clear()
