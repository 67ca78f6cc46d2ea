"""The encoder's named choices (activations, poolings, precisions, batch size), importable without torch: the
commands that only parse options (``distributed search`` builds every subcommand's parser) do not pay torch's
import."""
from __future__ import annotations

ACTIVATIONS = ("splade", "snrelu")
POOLINGS = ("max", "absmax", "sum")
PRECISIONS = ("auto", "fp32", "bf16", "int8")
DTYPES = ("fp32", "bf16", "int8")
DEFAULT = "fp32"  # documents, unless asked otherwise: vectors independent of the CPU's bf16 support
QUERY_DTYPE = "fp32"  # queries, always: a query's vector must not depend on its batch
DEFAULT_BATCH_SIZE = 16
