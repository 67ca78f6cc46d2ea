"""Errors that the command line reports as one clear line instead of a traceback."""


class LsrError(Exception):
    """Base class: an error the user can fix; the CLI prints it as ``error: <message>``."""


class InputError(LsrError):
    """Bad input: a malformed file, line, query or argument (the message names which)."""


class SetupError(LsrError):
    """A missing runtime piece: Java, javac, pyserini, a model."""


class OutputError(LsrError):
    """An output another writer holds, or created while this run worked (the message says where ours went)."""


class JavaError(LsrError):
    """A Java exception that is not about the user's input (the message names it; one line, not a stack trace)."""


class Interrupted(KeyboardInterrupt):
    """An interrupt after which a resumable command kept its finished work (the message says what, and how to resume)."""


def json_problem(exc) -> str:
    """What a ``json.JSONDecodeError`` says, with where in the line: ``Invalid control character at column 29``
    (its ``msg`` alone ends in a bare "at" for some errors)."""
    msg = exc.msg[:-3] if exc.msg.endswith(" at") else exc.msg
    doc, pos = getattr(exc, "doc", None), getattr(exc, "pos", None)
    if msg.startswith("Invalid control character") and isinstance(doc, str) and pos is not None \
            and not doc[pos:].strip():  # the line's own end inside a string: its closing quote is missing
        start = doc.rfind('"', 0, pos)
        return (f"unterminated string starting at column {start - doc.rfind(chr(10), 0, start)}: the line ends "
                "before its closing quote")
    return f"{msg} at column {exc.colno}"


def retired(name: str) -> str:
    """The error of an option (``--approximate``) or request field (``query_cut``) of the retired top-postings mode
    (issue 66): what to use instead, the heap factor."""
    return (f"{name} is retired with the top-postings approximate mode; search exactly (the default), or "
            "approximately with the heap factor: --heap-factor H (heap_factor=H) below 1")
