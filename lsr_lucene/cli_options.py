"""Options every ``lsr-lucene`` verb shares: one spelling, one default, one help text and one error wording.

Each verb builds its parser with :class:`Parser` (``--help`` shows every default; ``-v/--verbose`` shows library
logs and progress bars) and adds the shared options with the ``add_*`` functions. Numeric options take a
validator (:data:`POSITIVE_INT` ...) through :func:`add_number`, so a bad value fails while the arguments are read,
before any work, as one line: ``error: --hits must be a positive integer, got 0``. Old spellings stay accepted as
aliases (argparse takes several option strings for one destination), and so do Pyserini's names where Pyserini
has the same option (``--runtag``, ``--k``, ``--rrf.k``).
"""
from __future__ import annotations

import argparse
import copy
import math
from dataclasses import dataclass
from typing import Any, Callable

from lsr_lucene.cores import available_cores
from lsr_lucene.errors import InputError, retired

DEFAULT_HITS = 1000


# One policy for every verb's --threads: the cores available. Each verb keeps workers x inner threads within
# that: Lucene search/index threads run alone; the sparse encoder runs that many batches at once with one torch
# thread each; dense search encodes its (small) query batches with one torch thread and searches with that many
# Faiss threads (docs/pipeline.md, `--threads`; runs/threads measures it).
DEFAULT_THREADS = available_cores()
DEFAULT_MAX_LENGTH = 256  # document truncation in tokens of the README's figures


def is_switch(action: argparse.Action) -> bool:
    """A flag that takes no value and sets a bool (store_true/store_false): its name says what it does."""
    return (isinstance(action, (argparse._StoreTrueAction, argparse._StoreFalseAction))
            and not isinstance(action, argparse.BooleanOptionalAction))


class DefaultsHelpFormatter(argparse.HelpFormatter):
    """Appends ``(default: X)`` to every option that has a default its help does not already state."""

    def _format_action(self, action: argparse.Action) -> str:
        if (not action.help and action.option_strings and action.default not in (None, False, argparse.SUPPRESS)
                and not is_switch(action)):
            action = copy.copy(action)  # an option without help still shows its default
            action.help = "default: %(default)s"
        return super()._format_action(action)

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        if (default in (None, False, argparse.SUPPRESS) or not action.option_strings or "default" in text
                or is_switch(action)  # --no-x (store_false): "(default: True)" would read backwards
                or (isinstance(default, (str, list, tuple)) and not default)  # empty: no "(default: )"
                or isinstance(action, (argparse._HelpAction, argparse._VersionAction))):
            return text
        shown = " ".join(map(str, default)) if isinstance(default, (list, tuple)) else "%(default)s"
        return f"{text} (default: {shown})".strip()


class _Verbose(argparse.Action):
    """``-v/--verbose``: library logs, warnings and progress bars are shown (lsr_lucene.verbosity)."""

    def __init__(self, option_strings, dest, **kwargs) -> None:
        super().__init__(option_strings, argparse.SUPPRESS, nargs=0, default=argparse.SUPPRESS,
                         help="show library logs, warnings and the model loading bar (hidden by default)")

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        from lsr_lucene.verbosity import set_verbose

        set_verbose(True)


class Parser(argparse.ArgumentParser):
    """argparse parser of every verb: shows defaults in ``--help``, takes ``-v/--verbose`` and no abbreviated
    option (``--heap`` is not taken for ``--heap-factor``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", DefaultsHelpFormatter)
        if kwargs.get("description"):  # a docstring's line: --help shows plain text, not reST ``markup``
            kwargs["description"] = plain(kwargs["description"])
        kwargs.setdefault("allow_abbrev", False)  # a misspelled --heap is an error, not --heap-factor
        super().__init__(*args, **kwargs)
        if self.add_help:
            self.add_argument("-v", "--verbose", action=_Verbose)
        self._given: list[str] = []

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        import sys

        self._given = list(sys.argv[1:] if args is None else args)  # for error(): a misspelled option, by name
        return super().parse_known_args(args, namespace)

    def error(self, message: str) -> Any:  # type: ignore[override]
        """argparse's error, or rather the first misspelled option with the nearest real one (``--toppics``: "unknown
        option --toppics; did you mean --topics?"), which is the cause of whatever argparse then missed."""
        super().error(misspelled_option(self, self._given) or message)


def plain(text: str) -> str:
    """reST inline literals as plain text: ````lsr-lucene x```` -> ``lsr-lucene x`` (as --help shows text)."""
    return text.replace("``", "")


def summary(doc: str | None) -> str:
    """A module docstring's first paragraph as one line of plain text: the description its --help shows (the
    first line alone may stop mid-sentence)."""
    paragraph = (doc or "").strip().split("\n\n", 1)[0]
    return plain(" ".join(paragraph.split()))


def _option_strings(parser: argparse.ArgumentParser) -> list[str]:
    """Every option string of ``parser`` and of its sub-commands' parsers."""
    found: list[str] = []
    for action in parser._actions:
        found += action.option_strings
        if isinstance(action, argparse._SubParsersAction):
            for sub in set(action.choices.values()):
                found += _option_strings(sub)
    return found


def misspelled_option(parser: argparse.ArgumentParser, given: list[str]) -> str:
    """"unknown option X; did you mean Y?" for the first ``--option`` in ``given`` that ``parser`` lacks ("" if none);
    a value after ``--`` is not an option."""
    import difflib

    known = _option_strings(parser)
    for token in given:
        if token == "--":
            break
        name = token.split("=", 1)[0]
        if not name.startswith("--") or name in known:
            continue
        close = difflib.get_close_matches(name, [k for k in known if k.startswith("--")], n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]}?" if close else ""
        return f"unknown option {name}{hint}"
    return ""


@dataclass(frozen=True)
class Kind:
    """A numeric option's type and range: ``convert`` parses, ``ok`` checks, ``wording`` names it in errors."""
    convert: Callable[[str], float]
    ok: Callable[[float], bool]
    wording: str


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(text)
    return value


POSITIVE_INT = Kind(int, lambda v: v >= 1, "a positive integer")
NON_NEGATIVE_INT = Kind(int, lambda v: v >= 0, "a non-negative integer")
INTEGER = Kind(int, lambda v: True, "an integer")
POSITIVE_NUMBER = Kind(_finite, lambda v: v > 0, "a positive number")
NON_NEGATIVE_NUMBER = Kind(_finite, lambda v: v >= 0, "a non-negative number")
SHARE = Kind(_finite, lambda v: 0 <= v <= 1, "a number from 0 to 1")
HEAP_FACTOR = Kind(_finite, lambda v: 0 < v <= 1, "a number above 0 and at most 1")
NUMBER = Kind(_finite, lambda v: True, "a number")
PORT = Kind(int, lambda v: 0 <= v <= 65535, "a port number from 0 to 65535")


class Checked:
    """argparse ``type`` of a numeric option: the value, or InputError ``--NAME must be KIND, got TEXT``."""

    def __init__(self, kind: Kind, option: str) -> None:
        self.kind, self.option = kind, option
        self.__name__ = kind.wording  # argparse names the type in some messages

    def __call__(self, text: str):
        try:
            value = self.kind.convert(str(text).strip().replace("_", ""))
        except ValueError:
            value = None
        if value is None or not self.kind.ok(value):
            raise InputError(f"{self.option} must be {self.kind.wording}, got {text}")
        return value


def check(value: Any, option: str, kind: Kind = POSITIVE_INT) -> Any:
    """The same check for a value that did not come from the command line (e.g. a library call)."""
    return Checked(kind, option)(value)


def add_number(parser, *flags: str, kind: Kind = POSITIVE_INT, **kwargs: Any) -> argparse.Action:
    """A numeric option checked while the arguments are read (``kind`` gives its range and error wording)."""
    return parser.add_argument(*flags, type=Checked(kind, flags[0]), **kwargs)


def device_name(text: str) -> str:
    """argparse ``type`` of ``--device``: a torch device this machine has (``cpu``, ``cuda``, ``cuda:1``, ``mps``),
    else InputError naming the option, so a typo or a missing GPU is one line before any model loads."""
    import torch

    try:
        device = torch.device(str(text).strip())
    except (RuntimeError, ValueError):
        raise InputError(f"--device must be a torch device such as cpu, cuda or cuda:0, got {text!r}") from None
    if device.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if count == 0:
            raise InputError(f"--device {text}: no CUDA GPU is available here (torch {torch.__version__}); "
                             "use --device cpu")
        if device.index is not None and device.index >= count:
            raise InputError(f"--device {text}: this machine has {count} CUDA GPU(s) (cuda:0 ... cuda:{count - 1})")
    elif device.type == "mps" and not (hasattr(torch.backends, "mps") and torch.backends.mps.is_available()):
        raise InputError(f"--device {text}: no Apple MPS device is available here; use --device cpu")
    elif device.type not in ("cpu", "cuda", "mps"):
        raise InputError(f"--device {text}: not supported (use cpu, cuda or mps)")
    return str(text).strip()


def add_device(parser, help: str = "cpu, cuda, cuda:N or mps (default: cuda when present)", **kwargs: Any
               ) -> argparse.Action:
    """``--device NAME``: the torch device, checked while the arguments are read (:func:`device_name`)."""
    return parser.add_argument("--device", type=device_name, default=None, metavar="DEVICE", help=help, **kwargs)


# ---- the shared options -----------------------------------------------------------------------------------
def add_index(parser, help: str, required: bool = True, **kwargs: Any) -> argparse.Action:
    """``--index DIR``: the index a verb reads (search) or builds (index), as in Pyserini."""
    return parser.add_argument("--index", required=required, metavar="DIR", help=help, **kwargs)


def add_input(parser, help: str, *aliases: str, required: bool = True, **kwargs: Any) -> argparse.Action:
    """``--input PATH``: the vectors an indexing verb reads (Pyserini's ``--input``)."""
    return parser.add_argument("--input", *aliases, required=required, help=help, **kwargs)


def add_topics(parser, help: str = "topics: TSV, TREC topic file, JSONL or an ir_datasets id (irds:...)",
               **kwargs: Any) -> argparse.Action:
    """``--topics SPEC``: the queries to search or encode."""
    return parser.add_argument("--topics", help=help, **kwargs)


def add_output(parser, help: str, *aliases: str, required: bool = True, **kwargs: Any) -> argparse.Action:
    """``--output PATH``: the file or folder a verb writes (a temporary renamed when complete)."""
    return parser.add_argument("--output", *aliases, required=required, help=help, **kwargs)


def add_overwrite(parser, help: str = "replace existing outputs (without it, an existing output is refused)"
                  ) -> argparse.Action:
    """``--overwrite``: replace an existing output instead of refusing."""
    return parser.add_argument("--overwrite", action="store_true", help=help)


def add_hits(parser, *aliases: str, default: int = DEFAULT_HITS, help: str = "results per query") -> argparse.Action:
    """``--hits N``: results written per query (Pyserini's name)."""
    return add_number(parser, "--hits", *aliases, default=default, metavar="N", help=help)


def add_threads(parser, default: int | None = DEFAULT_THREADS, help: str | None = None) -> argparse.Action:
    """``--threads N``: threads of the verb's main work; by default the cores available (one policy for every
    verb: DEFAULT_THREADS)."""
    if default is None:  # former per-verb "library default" (torch's thread count): the shared policy instead
        default = DEFAULT_THREADS
    if help is None:
        help = "threads"
    help = help.replace("(default: torch's thread count)", "").replace("(default: all cores)", "").strip()
    if default == DEFAULT_THREADS and "default" not in help:
        help += f" (default: the cores available, {DEFAULT_THREADS})"
    return add_number(parser, "--threads", default=default, metavar="N", help=help)


def add_batch_size(parser, default: int, help: str = "texts encoded per batch") -> argparse.Action:
    """``--batch-size N`` (Pyserini's name)."""
    return add_number(parser, "--batch-size", default=default, metavar="N", help=help)


def add_encoder(parser, default: str | None, help: str, dest: str = "encoder") -> argparse.Action:
    """``--encoder NAME`` (Pyserini's name; ``--model`` is its alias): a registry name, HF id or local model folder."""
    return parser.add_argument("--encoder", "--model", dest=dest, default=default, metavar="NAME", help=help)


def add_max_length(parser, default: int = DEFAULT_MAX_LENGTH, help: str = "document truncation in tokens"
                   ) -> argparse.Action:
    """``--max-length N``: document truncation in model tokens."""
    return add_number(parser, "--max-length", default=default, metavar="N", help=help)


def add_run_tag(parser, default: str | None = None, help: str = "run tag, the last column of the run file"
                ) -> argparse.Action:
    """``--run-tag TAG`` (Pyserini's ``--runtag`` is its alias)."""
    return parser.add_argument("--run-tag", "--runtag", dest="run_tag", default=default, metavar="TAG", help=help)


def add_dense_impacts(parser, default: str | None = "auto", help: str = "") -> argparse.Action:
    """``--dense-impacts auto|S``: the dense-impacts sidecar of faster exact search, built by default with the
    share ``auto`` chooses from the collection (lsr_lucene.index.dense_impacts.auto_share); 0: none."""
    from lsr_lucene.index.dense_impacts import parse_share

    return parser.add_argument(
        "--dense-impacts", type=parse_share, default=default, metavar="auto|S",
        help=help or "the dense-impacts sidecar of faster exact search (about 3.5x faster at 666k passages), the "
                     "terms in at least a share S of the documents as a byte per document; auto: those in 1/16 of "
                     "the documents, as many of the most frequent as fit in a quarter of the index's size; 0: none")


def add_heap_factor(parser) -> argparse.Action:
    """``--heap-factor H``: 1 (default) exact; below 1, plain queries on an index with the dense-impacts sidecar
    prune blocks of documents against threshold / H (faster, approximate)."""
    return add_number(parser, "--heap-factor", kind=HEAP_FACTOR, default=1.0, metavar="H",
                      help="1 (default): exact; H < 1: approximate block-max search of plain queries (BMP's and "
                           "Seismic's parameter of the kind), pruning against threshold / H: faster, may miss "
                           "documents that would only just enter the top hits; hits keep exact scores. Fastest on "
                           "an index with the dense-impacts sidecar (index --dense-impacts)")


class _Retired(argparse.Action):
    """A retired option, hidden from ``--help``: given, one ``error:`` line saying what replaces it."""

    def __init__(self, option_strings, dest, **kwargs) -> None:
        super().__init__(option_strings, argparse.SUPPRESS, nargs="?", default=argparse.SUPPRESS, help=argparse.SUPPRESS)

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        raise InputError(retired(str(option_string)))


def add_retired(parser, *options: str) -> None:
    """Options of the retired top-postings mode (``--approximate``, ``--query-cut``, ``--top-postings``): refused in
    one line naming the heap factor, not argparse's "unrecognized arguments"."""
    for option in options:
        parser.add_argument(option, action=_Retired)
