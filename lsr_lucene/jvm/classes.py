"""Our Java classes from Python: lookup by name under our package, and Java exceptions as one-line user errors."""
from __future__ import annotations

import contextlib
from typing import Iterator

from lsr_lucene.errors import InputError
from lsr_lucene.jvm.runtime import autoclass

JAVA_PACKAGE = "io.github.lsrlucene"


def java_class(name: str):
    """A class of our Java package (the JVM is started our way first)."""
    return autoclass(f"{JAVA_PACKAGE}.{name}")


_INPUT_EXCEPTIONS = ("QuerySpecException", "IllegalArgumentException", "NoSuchFileException",
                     "IllegalStateException", "FileNotFoundException", "IndexNotFoundException",
                     "AccessDeniedException")


def _java_message(exc) -> str:
    msg = getattr(exc, "innermessage", None) or str(exc)
    return str(msg).strip().splitlines()[0] if str(msg).strip() else type(exc).__name__


@contextlib.contextmanager
def java_errors(context: str = "") -> Iterator[None]:
    """Turn Java exceptions a user can fix into InputError (one line); others into RuntimeError."""
    from jnius import JavaException

    try:
        yield
    except JavaException as exc:
        classname = getattr(exc, "classname", "") or ""
        message = _java_message(exc)
        prefix = f"{context}: " if context and context not in message else ""
        if classname.rsplit(".", 1)[-1] in _INPUT_EXCEPTIONS:
            raise InputError(f"{prefix}{message}") from None
        raise RuntimeError(f"{prefix}{classname}: {message}") from exc
