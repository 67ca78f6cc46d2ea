"""Why a composed query ranked its top documents: per document, both legs' scores, the gate and the fused score.

A score-fused query (``fusion``, ``fusion-scaled``, ``fusion-gated``: the default for ``not``) is explained per
document by every fused node's account: A's and B's scores (raw, and min-max scaled over the candidates for
scaled fusion), the dense cosine of A's text where a dense leg is blended into Â (and the cosine with the best A
match), the gate τ, the penalty
λ·max(0, B̂ − τ)/(1 − τ) (λ·B̂ or λ·B without a gate) and the fused score.
A vector query (one signed query) is explained by every term's and pair's contribution to the document's score
(negative ones penalise it). ``lsr-lucene compose --explain`` prints these; ``ComposeSearcher.explain`` returns them.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Mapping, Sequence

from lsr_lucene.compose.compositions import Composition
from lsr_lucene.compose.penalty import GATED_FLOOR, penalty
from lsr_lucene.compose.operations import FusedNode, Plan, Settings, VectorPlan, fuse, quantise_composed
from lsr_lucene.compose.plan_format import format_plan
from lsr_lucene.compose.tree import format_tree


def contributions(backend, vector: Mapping, scale: float, docs: Sequence[str]) -> dict[str, list[tuple[str, float]]]:
    """Per document: each term's / pair's non-zero contribution to its score, largest magnitude first."""
    terms, pairs = quantise_composed(vector, scale)
    clauses: list[tuple[str, dict]] = [(t, {"qid": "explain", "terms": {t: w}}) for t, w in terms.items()]
    clauses += [(f"{a} ∩ {b}", {"qid": "explain", "terms": {}, "pairs": [[a, b, w]]}) for a, b, w in pairs]
    out: dict[str, list[tuple[str, float]]] = {d: [] for d in docs}
    for label, spec in clauses:
        for doc, value in zip(docs, backend.score(spec, list(docs))):
            if value:
                out[doc].append((label, value))
    return {d: sorted(parts, key=lambda kv: -abs(kv[1])) for d, parts in out.items()}


@dataclass(frozen=True)
class NodeAccount:
    """One fused node's computation for one document. ``path``: "" the root, "A", "A.B", ... ; ``a`` / ``b``: the
    children's scores (a leaf's exact score, or a fused child's fused score); ``a_scaled`` / ``b_scaled``: min-max
    scaled over the candidates (None without scaling); ``gate``: τ of fusion-gated (None otherwise); ``penalty``:
    what a ``not`` node subtracts (λ·max(0, B̂ − τ)/(1 − τ), λ·B̂ or λ·B; None on and/or); ``fused``: the result;
    ``dense``: the dense cosine of A's text blended into Â with weight ``dense_weight`` (None without a dense leg;
    ``a_scaled`` is then the blend); ``neighbour``: the document's dense cosine with the best A match
    ``neighbour_doc``, blended with weight ``neighbour_weight`` (None without a neighbour leg); ``absent``: the share
    of the document's mentions of B that state B absent (that share of the penalty waived, never a lift; 0 when
    none); ``contains``: whether its text contains a short-term B (None when B is no short term or the text was not
    read), ``term_scale``: β of that penalty."""

    path: str
    op: str
    lam: float
    a: float
    b: float
    a_scaled: float | None
    b_scaled: float | None
    gate: float | None
    penalty: float | None
    fused: float
    dense: float | None = None
    dense_weight: float = 0.0
    neighbour: float | None = None
    neighbour_doc: str | None = None
    neighbour_weight: float = 0.0
    absent: float = 0.0
    contains: bool | None = None
    term_scale: float | None = None

    def text(self) -> str:
        """One line: A and B (raw, scaled), gate and penalty, fused."""
        def leg(name: str, raw: float, scaled: float | None) -> str:
            return f"{name} {raw:.6g}" + (f" (scaled {scaled:.4f})" if scaled is not None else "")

        a = leg("A", self.a, None)
        if self.dense is not None:
            a += f" + {self.dense_weight:g}·dense {self.dense:.4f}"
        if self.neighbour is not None:
            a += f" + {self.neighbour_weight:g}·cos with best A match {self.neighbour_doc} {self.neighbour:.4f}"
        if self.a_scaled is not None:
            a += f" (scaled {self.a_scaled:.4f})"
        parts = [a, leg("B", self.b, self.b_scaled)]
        if self.gate is not None:
            parts.append(self._gated_text())
        elif self.penalty is not None:
            parts.append(f"penalty {self.lam:g}·B{'̂' if self.b_scaled is not None else ''} = {self.penalty:.4f}")
        else:
            parts.append("A · B" if self.op == "and" else "A + B")
        return ", ".join(parts) + f" -> fused {self.fused:.4f}"

    def _gated_text(self) -> str:
        """The penalty of fusion-gated: whether the document was penalised, why and by how much, or waived."""
        gate = self.gate or 0.0
        rule = f"gate {gate:g}: {self.lam:g}·max(0, B̂ − {gate:g})/{1 - gate:g}"
        if self.contains and self.term_scale is not None:
            rule = f"text contains B: max({rule}, min(1, B̂/{self.term_scale:g}))"
        full = penalty(self.b_scaled or 0.0, self.lam, gate, 0.0, bool(self.contains), self.term_scale)
        if self.absent and full:
            waived = "waived" if self.absent >= 1 else f"{self.absent:.0%} waived"
            return (f"B stated absent in {self.absent:.0%} of its mentions: penalty {rule} = {full:.4f} {waived}, "
                    f"pays {self.penalty:.4f} (never more than A alone)")
        if not self.penalty:
            return f"not penalised ({rule} = 0)"
        return f"penalised: {rule} = {self.penalty:.4f}, floor {GATED_FLOOR:g}·Â"


@dataclass(frozen=True)
class DocExplanation:
    """Why one document ranked where it did: ``nodes`` (score fusion: every fused node's account, root first) or
    ``terms`` (a vector query: each term's / pair's contribution, largest magnitude first)."""

    rank: int
    docid: str
    score: float
    nodes: tuple[NodeAccount, ...] = ()
    terms: tuple[tuple[str, float], ...] = field(default=())

    def _root(self, name: str):
        return getattr(self.nodes[0], name) if self.nodes else None

    a = property(lambda self: self._root("a"), doc="the root's A score (None for a vector query)")
    b = property(lambda self: self._root("b"), doc="the root's B score (None for a vector query)")
    a_scaled = property(lambda self: self._root("a_scaled"), doc="the root's scaled A score")
    b_scaled = property(lambda self: self._root("b_scaled"), doc="the root's scaled B score")
    gate = property(lambda self: self._root("gate"), doc="the root's gate τ (fusion-gated)")
    penalty = property(lambda self: self._root("penalty"), doc="what the root not node subtracts")

    def to_dict(self) -> dict:
        """Plain JSON-ready form."""
        return asdict(self)

    def lines(self) -> list[str]:
        """The document's account as text lines (what ``--explain`` prints)."""
        if self.nodes:
            head = f"{self.rank}. {self.docid} score {self.score:.6f}"
            return [head] + [f"   {n.path or 'root'}: {n.text()}" for n in self.nodes]
        shown = ", ".join(f"{t} {v:+.0f}" for t, v in self.terms[:8])
        lines = [f"{self.rank}. {self.docid} score {self.score:.1f} = {shown}{' …' if len(self.terms) > 8 else ''}"]
        penal = [f"{t} {v:+.0f}" for t, v in self.terms if v < 0]
        if penal:
            lines.append(f"   penalised by: {', '.join(penal[:8])}")
        return lines


def _account(node: FusedNode, doc: str) -> NodeAccount:
    a_s = node.a_scaled.get(doc, 0.0) if node.a_scaled is not None else None
    b_s = node.b_scaled.get(doc, 0.0) if node.b_scaled is not None else None
    b_used = b_s if b_s is not None else node.b.get(doc, 0.0)
    penalty = None
    absent = (node.absence or {}).get(doc, 0.0)
    contains = None if node.contains is None else doc in node.contains
    if node.node_op == "not":
        penalty = penalty_of(node, b_used, absent, bool(contains))
    dense = node.dense.get(doc, 0.0) if node.dense is not None else None
    near = node.neighbour.get(doc, 0.0) if node.neighbour is not None else None
    return NodeAccount(node.path, node.node_op, node.lam, node.a.get(doc, 0.0), node.b.get(doc, 0.0), a_s, b_s,
                       node.gate, penalty, node.fused.get(doc, 0.0), dense, node.dense_weight, near,
                       node.neighbour_doc, node.neighbour_weight, absent, contains, node.term_scale)


def penalty_of(node: FusedNode, b: float, absent: float, contains: bool) -> float:
    """What a not node subtracts: fusion-gated's :func:`~lsr_lucene.compose.penalty.penalty`, λ·B̂ or λ·B."""
    if node.gate is None:
        return node.lam * b
    return penalty(b, node.lam, node.gate, absent, contains, node.term_scale)


def explain_docs(plan: Plan, ranked: Sequence[tuple[str, float]], backend, scale: float, top: int,
                 leaf_scores: Sequence[Mapping[str, float]] | None = None) -> list[DocExplanation]:
    """Accounts of the ``top`` first documents of ``ranked``. A fused plan needs ``leaf_scores``, its leaves'
    scores over the candidates (``execute(..., traces=...)``); a vector plan is scored term by term."""
    shown = list(ranked[:top])
    if isinstance(plan, VectorPlan):
        parts = contributions(backend, plan.vector, scale, [d for d, _ in shown]) if shown else {}
        return [DocExplanation(r, d, s, terms=tuple(parts[d])) for r, (d, s) in enumerate(shown, 1)]
    record: list[FusedNode] = []
    if leaf_scores is not None:
        fuse(plan, leaf_scores, record)
    record.sort(key=lambda n: (n.path.count(".") + bool(n.path), n.path))  # root first
    return [DocExplanation(r, d, s, nodes=tuple(_account(n, d) for n in record)) for r, (d, s) in enumerate(shown, 1)]


def explain_query(comp: Composition, plan: Plan, settings: Settings, docs: Sequence[DocExplanation],
                  parse_lines: Sequence[str] | None = None) -> str:
    """The ``--explain`` report of one query: parse (cue decisions), tree, operations, composed representation,
    and the top documents' accounts (:func:`explain_docs`)."""
    lines = [f"== query {comp.qid}" + (f": {comp.text}" if comp.text else "")]
    lines += ["  " + line for line in parse_lines or ()]
    lines.append(format_tree(comp.tree, "  "))
    lines.append(f"  operations: {settings.describe()}")
    lines.append("  representation (term: weight, sorted; negative terms penalise documents):")
    lines.append(format_plan(plan, top=12, indent="    "))
    for doc in docs:
        lines += ["  " + line for line in doc.lines()]
    return "\n".join(lines)
