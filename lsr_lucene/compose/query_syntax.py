"""Explicit query syntax (issue 50): Lucene-like operators a user can rely on when the cue parser is not what they
want, with no JSON: ``films -dogs -cats``, ``films NOT (dogs OR cats)``, ``"python tutorials" NOT beginners``.

Grammar (upper-case operators; lower-case not/and/or are ordinary words)::

    query    := or_expr
    or_expr  := and_expr ("OR" and_expr)*
    and_expr := sequence ("AND" sequence)*
    sequence := (word | "quoted phrase" | "(" or_expr ")" | "-" item | "NOT" words)+

Words and phrases next to each other form one text (searched as one encoded query); ``-item`` excludes one word,
quoted phrase or bracketed group; ``NOT`` excludes the words up to the next operator or bracket (``films NOT about
dogs`` excludes "about dogs"). A sequence's exclusions form one union: ``films -dogs -cats`` = ``films NOT (dogs OR
cats)`` = not(films, or(dogs, cats)). A bracketed group next to words needs an operator between them. The
exclusions are strict (issue 65, :mod:`lsr_lucene.compose.exclusion`): every document whose text contains an
excluded word or phrase is removed inside the search, as Lucene's MUST_NOT removes it; the rest are ranked as the not
node's operation ranks them (the default: as "A but not B").

Opt-in (predictable, no flag): a query uses this syntax when it has an upper-case ``NOT``, ``AND`` or ``OR`` word, or
a word that starts with ``-`` after a space or at the start and goes on with a letter, a quote or a bracket
(``-dogs``, ``-"hot dogs"``, ``-(a OR b)``; not ``-2``, nor ``-dash``, Cranfield's spelled-out dash). Otherwise
the cue parser reads it. To search a query with such a word as plain text, write the operator in lower case.
"""
from __future__ import annotations

import re

from lsr_lucene.compose.negation_parser import CueDecision, ParseReport, explain_parse, normalise
from lsr_lucene.compose.tree import Node, Tree
from lsr_lucene.errors import InputError

_OPERATOR = re.compile(r"(?:^|(?<=[\s(]))(?:NOT|AND|OR)(?=$|[\s()\"])|(?:^|(?<=[\s(]))-(?!dash\b)(?=[^\W\d_]|[\"(])")
_TOKEN = re.compile(r'\s*(?:(?P<phrase>"[^"]*")|(?P<open>\()|(?P<close>\))|(?P<minus>-(?!dash\b)(?=[^\W\d_]|["(]))'
                    r'|(?P<word>[^\s()"]+))')
SYNTAX_REASON = "explicit query syntax (upper-case NOT/AND/OR or a -term)"
FOLDING = "words as Lucene's EnglishAnalyzer folds them: case, possessive 's, Porter stems (dogs = dog)"


class SyntaxReport(ParseReport):
    """The parse of a query in the explicit syntax: its operators, and what its exclusions do (a strict filter on
    the index's text field, not a penalty)."""

    def decisions(self) -> list[str]:
        """One line per operator, saying what it does where it stands, then the filter the query searches with."""
        from lsr_lucene.compose.exclusion import split_exclusions, written as filter_written

        out = _operator_lines(self.tree)
        kept, exclude = split_exclusions(self.tree)
        if exclude is not None:
            out.append(f"explicit query syntax: removes inside the search every document matching "
                       f"{filter_written(exclude)} ({FOLDING}), and ranks the rest for {written(kept, False)!r} as the "
                       f"same exclusion in words does (the not node's operation: the default's dense leg and penalty)")
        return out


def uses_syntax(text: str) -> bool:
    """Whether ``text`` opts in to the explicit syntax (an upper-case NOT/AND/OR word or a ``-``-prefixed word)."""
    return bool(_OPERATOR.search(text))


def _operator_lines(tree: Tree, excluded: bool = False) -> list[str]:
    """One line per operator of a syntax tree, outermost first, saying what it does where it stands."""
    if isinstance(tree, str):
        return []
    op = tree.op.upper()
    if tree.op == "not":
        line = (f"NOT (explicit query syntax): a strict filter on the text field: every document whose text contains "
                f"{written(tree.b)} is removed from the results of {written(tree.a, excluded)!r}")
    elif excluded:
        line = (f"{op} (explicit query syntax): inside an excluded part, documents containing {written(tree.a)} "
                f"{op.lower()} {written(tree.b)} are removed")
    else:
        line = (f"{op} (explicit query syntax): {written(tree.a, False)!r} {op} {written(tree.b, False)!r}, ranked "
                f"by the {tree.op!r} node's operation")
    return [line] + _operator_lines(tree.a, excluded) + _operator_lines(tree.b, excluded or tree.op == "not")


def _tokens(text: str, where: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise InputError(f"{where}: unbalanced quote in {text!r}")
        pos = m.end()
        kind = m.lastgroup or ""
        value = m.group(kind)
        if kind == "word" and value in ("NOT", "AND", "OR"):
            kind = value
        out.append((kind, value))
    return out


class _Parser:
    """Recursive descent over the tokens; every fired operator is recorded as a :class:`CueDecision`."""

    def __init__(self, text: str, where: str):
        self.text, self.where = text, where
        self.tokens = _tokens(text, where)
        self.i = 0
        self.fired: list[CueDecision] = []

    def error(self, why: str) -> InputError:
        return InputError(f"{self.where}: {why} in {self.text!r} (explicit query syntax: docs/negation.md)")

    def peek(self) -> str | None:
        return self.tokens[self.i][0] if self.i < len(self.tokens) else None

    def parse(self) -> Tree:
        tree = self.or_expr()
        if self.peek() is not None:
            raise self.error("unmatched ')'")
        return tree

    def or_expr(self) -> Tree:
        return self._chain("OR", "or", self.and_expr)

    def and_expr(self) -> Tree:
        return self._chain("AND", "and", self.sequence)

    def _chain(self, operator: str, op: str, operand) -> Tree:
        """``operand (operator operand)*``, left-nested."""
        tree = operand()
        while self.peek() == operator:
            self.i += 1
            right = operand()
            self._record(operator, op, tree, right)
            tree = Node(op, tree, right)
        return tree

    def sequence(self) -> Tree:
        kept: list[Tree] = []
        excluded: list[Tree] = []
        words: list[str] = []

        def flush() -> None:
            if words:
                kept.append(" ".join(words))
                words.clear()

        while self.peek() not in (None, "OR", "AND", "close"):
            kind = self.peek()
            if kind == "NOT":
                self.i += 1
                flush()
                excluded.append(self.not_operand())
            elif kind == "minus":
                self.i += 1
                flush()
                excluded.append(self.item())
            elif kind == "open":
                flush()
                kept.append(self.item())
            else:
                value = self.tokens[self.i][1]
                words.append(value[1:-1].strip() if kind == "phrase" else value)
                self.i += 1
        flush()
        if not kept:
            raise self.error("an exclusion needs something to keep (nothing before NOT or -)" if excluded
                             else "an operator or bracket has nothing on one side")
        if len(kept) > 1:
            if any(not isinstance(k, str) for k in kept):
                raise self.error("a bracketed group next to words needs AND, OR or NOT between them")
            kept = [" ".join(kept)]  # type: ignore[arg-type]
        tree = kept[0]
        if excluded:
            union = excluded[0]
            for other in excluded[1:]:
                union = Node("or", union, other)
            self._record("NOT", "not", tree, union)
            tree = Node("not", tree, union)
        return tree

    def not_operand(self) -> Tree:
        """The words after NOT up to the next operator or bracket, or one phrase / bracketed group."""
        if self.peek() in ("open", "phrase", "minus"):
            if self.peek() == "minus":
                self.i += 1
            return self.item()
        words = []
        while self.peek() == "word":
            words.append(self.tokens[self.i][1])
            self.i += 1
        if not words:
            raise self.error("NOT has nothing to exclude")
        return " ".join(words)

    def item(self) -> Tree:
        kind = self.peek()
        if kind == "open":
            self.i += 1
            tree = self.or_expr()
            if self.peek() != "close":
                raise self.error("unclosed '('")
            self.i += 1
            return tree
        if kind == "phrase":
            self.i += 1
            phrase = self.tokens[self.i - 1][1][1:-1].strip()
            if not phrase:
                raise self.error("empty quoted phrase")
            return phrase
        if kind == "word":
            self.i += 1
            return self.tokens[self.i - 1][1]
        raise self.error("'-' must be followed by a word, a quoted phrase or a bracketed group")

    def _record(self, operator: str, op: str, a: Tree, b: Tree) -> None:
        self.fired.append(CueDecision(operator, operator, 0, SYNTAX_REASON, op, written(a, False),
                                      written(b, op == "not")))


def written(tree: Tree, quote: bool = True) -> str:
    """A tree in the explicit syntax ("(dogs OR cats)"; ``quote``: an excluded text of several words in quotes, as
    the filter reads it: a phrase), for explanations."""
    if isinstance(tree, str):
        return f'"{tree}"' if quote and " " in tree else tree
    b_quote = quote or tree.op == "not"
    return f"({written(tree.a, quote)} {tree.op.upper()} {written(tree.b, b_quote)})"


def parse_syntax(text: str, where: str = "query") -> ParseReport:
    """The tree of a query written in the explicit syntax, as a :class:`ParseReport` (its operators reported as
    fired cues); InputError naming ``where`` for a malformed query."""
    norm = normalise(text)
    parser = _Parser(norm, where)
    tree = parser.parse()
    report = SyntaxReport(text, tree)
    report.fired = list(reversed(parser.fired))  # outermost first, as the cue parser reports them
    return report


def read_query(text: str, where: str = "query") -> ParseReport:
    """How a text query is read: the explicit syntax when it opts in (:func:`uses_syntax`), else the cue parser."""
    if uses_syntax(text):
        return parse_syntax(text, where)
    return explain_parse(text)
