"""Our Java classes from Python: lookup by name under our package, and Java exceptions as one-line user errors."""
from __future__ import annotations

import contextlib
import re
import sys
from typing import Iterator

from lsr_lucene.errors import InputError, JavaError
from lsr_lucene.jvm.runtime import autoclass

JAVA_PACKAGE = "io.github.lsrlucene"


def java_class(name: str):
    """A class of our Java package (the JVM is started our way first)."""
    return autoclass(f"{JAVA_PACKAGE}.{name}")


_INPUT_EXCEPTIONS = ("QuerySpecException", "IllegalArgumentException", "NoSuchFileException",
                     "IllegalStateException", "FileNotFoundException", "IndexNotFoundException",
                     "AccessDeniedException")


def java_exception_line(exc) -> str:
    """``<Java class>: <first line of its message>`` of a pyjnius JavaException."""
    classname = (getattr(exc, "classname", "") or "").rsplit(".", 1)[-1] or "Java exception"
    return f"{classname}: {_java_message(exc)}"


def _java_message(exc) -> str:
    msg = getattr(exc, "innermessage", None) or str(exc)
    return str(msg).strip().splitlines()[0] if str(msg).strip() else type(exc).__name__


@contextlib.contextmanager
def java_errors(context: str = "") -> Iterator[None]:
    """Turn Java exceptions a user can fix into InputError, others into JavaError: one line each, no stack trace."""
    from jnius import JavaException

    try:
        yield
    except JavaException as exc:
        classname = getattr(exc, "classname", "") or ""
        message = _java_message(exc)
        prefix = f"{context}: " if context and context not in message else ""
        if classname.rsplit(".", 1)[-1] in _INPUT_EXCEPTIONS:
            raise InputError(f"{prefix}{message}") from None
        raise JavaError(f"{prefix}{classname}: {message}") from exc


_TRACE_HEAD = re.compile(r"^(?:Exception in thread \S+ )?((?:[\w$]+\.)+[\w$]*(?:Exception|Error))(?::\s*(.*))?$")
_TRACE_BODY = re.compile(r"^(?:\s+at |\s+\.\.\. \d+ more|Caused by: |\s+Suppressed: )")


def _printed_exceptions(text: str) -> tuple[list[str], list[str]]:
    """(first line of each Java stack trace, the other lines) of what Java printed."""
    heads, others = [], []
    for line in text.splitlines():
        match = _TRACE_HEAD.match(line)
        if match:
            name = match.group(1).rsplit(".", 1)[-1]
            heads.append(f"{name}: {match.group(2)}" if match.group(2) else name)
        elif not _TRACE_BODY.match(line) and line.strip():
            others.append(line)
    return heads, others


@contextlib.contextmanager
def java_printed_errors(context: str) -> Iterator[None]:
    """Java code that prints its workers' exceptions and carries on (Anserini's SearchCollection): while it runs,
    Java's System.err is captured; the stack traces printed become one InputError line naming ``context`` and the
    first exception (instead of thousands of lines and an empty result); other lines are passed on to stderr."""
    system = autoclass("java.lang.System")
    buffer = autoclass("java.io.ByteArrayOutputStream")()
    previous = system.err
    system.setErr(autoclass("java.io.PrintStream")(buffer, True, "UTF-8"))
    try:
        with java_errors(context):
            yield
    finally:
        system.setErr(previous)
        heads, others = _printed_exceptions(buffer.toString("UTF-8"))
        for line in others:
            print(line, file=sys.stderr)
    if heads:
        more = f" ({len(heads)} Java exceptions in all)" if len(heads) > 1 else ""
        raise InputError(f"{context}: {heads[0]}{more}")
