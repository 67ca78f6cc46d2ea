"""What the cue parser reports: every candidate cue's decision (:class:`CueDecision`) and the parse
(:class:`ParseReport`: tree, fired and rejected cues), kept apart from the rules in
:mod:`lsr_lucene.compose.negation_parser`, which re-exports both."""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from lsr_lucene.compose.tree import Tree, tree_to_json


@dataclass
class CueDecision:
    """One candidate cue and what the parser did with it: ``cue`` (its label), ``text`` (the matched text),
    ``start`` (offset in the normalised text of the clause it was found in), ``reason`` (why it fired or was
    rejected); for a fired cue also ``kind`` (not / and) and the ``a`` / ``b`` it split off."""

    cue: str
    text: str
    start: int
    reason: str
    kind: str = "not"
    a: str = ""
    b: str = ""

    @property
    def label(self) -> str:
        """The cue's label (alias of ``cue``)."""
        return self.cue

    @property
    def matched(self) -> str:
        """The matched text (alias of ``text``)."""
        return self.text


Cue = CueDecision  # the name used before decisions were reported


@dataclass
class ParseReport:
    """A parsed query: the tree (the text itself when no cue fires), the cues that split it (outermost first)
    and the candidate cues that were considered and rejected, each with its reason."""

    text: str
    tree: Tree
    fired: list[CueDecision] = field(default_factory=list)
    rejected: list[CueDecision] = field(default_factory=list)

    @property
    def composed(self) -> bool:
        """Whether the parser found a usable cue."""
        return not isinstance(self.tree, str)

    @property
    def cues(self) -> list[CueDecision]:
        """The cues that fired (alias of ``fired``)."""
        return self.fired

    def lines(self) -> list[str]:
        """Human-readable account of the parse: the tree (as JSON, the server's "composition"), then
        :meth:`decisions`."""
        tree = json.dumps(tree_to_json(self.tree), ensure_ascii=False)
        return [f"tree: {tree}" if self.composed else f"tree: {tree} (one atomic query)", *self.decisions()]

    def decisions(self) -> list[str]:
        """One line per fired cue (outermost first), then one per rejected candidate."""
        decisions = [(c, "fired") for c in self.fired] + [(c, "rejected") for c in self.rejected]
        out = []
        for c, what in decisions:
            line = f"cue {c.cue!r} ({c.text!r}) at {c.start} {what}: {c.reason}"
            if what == "fired":
                line += f"; A={c.a!r} B={c.b!r}"
            out.append(line)
        if not self.fired:
            out.append("no cue fired: one atomic query, searched as plain search searches it")
        return out


Parse = ParseReport  # the name used before decisions were reported
