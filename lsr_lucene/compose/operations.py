"""The linear algebra operations (LAO) that combine atomic sparse query vectors, and the plans they make of a tree.

Krasakis, Yates and Kanoulas (paper 000, Table 1) build a query for a set composition from the sparse
vectors of its atomic queries; the composition is a tree of ``not`` / ``and`` / ``or`` nodes
(:mod:`lsr_lucene.compose.tree`). A tree under :class:`Settings` becomes a plan: one vector
(:class:`VectorPlan`) or children whose scores are fused (:class:`FusionPlan`).

Operations (every one selectable by name; ``A``, ``B`` are the children's vectors):

=============== ============ ===============================================================
name            node types   representation
=============== ============ ===============================================================
vanilla         all          the whole (sub)composition encoded as ONE text (the original query
                             when the composition came from one, else a QUEST template:
                             "A that are not B", "A that are also B", "A or B")
subtract        not          A − B
ignore          not          A (the negated part is dropped)
nrf             not          A − λ·B (negative relevance feedback; λ default 0.5)
orthogonal      not          A − (A·B / |B|²)·B (Widdows); A when B is empty
disentangled    not          A − λ·B*, B* = B with every term of A zeroed (λ default 1, the paper's)
orthonrf        not          orthogonal projection then NRF: A − (A·B / |B|² + λ)·B (λ default 0.3)
adaptive        not          NRF with a per-query λ: A − λ·(1 − m)·B, m = share of A's mass on B's terms
                             (B overlapping A's intent is penalised less; λ default 0.5)
add             and, or      A + B
maxpool         and, or      max(A_t, B_t) per term (an absent term counts as 0)
cpt             and          maxpool(A, B) plus the top-k Combined Pseudo-Terms (a, b), a from A,
                             b from B, a != b, weight sqrt(w_a·w_b) (k default 5), scored in Lucene
                             by CombinedTermQuery as w·sqrt(impact_a·impact_b)
fusion          all          score(A) ∘ score(B), ∘ = − (not, times λ), · (and), + (or)
fusion-scaled   all          as fusion, each child's scores min-max normalised first
fusion-gated    not          as fusion-scaled, but only documents that carry most of B's score pay:
                             max(Â − λ·max(0, B̂ − τ)/(1 − τ), φ·Â) (Â, B̂ min-max scaled; gate τ default 0.9;
                             floor φ 0.05: a penalised A-match stays above every candidate that does not
                             match A, so a penalty cannot push it out of the list; a short-term B also costs
                             a text containing it min(1, B̂/β): :mod:`lsr_lucene.compose.penalty`; on and/or
                             nodes it is fusion-scaled); with a dense leg (``Settings.dense``, see
                             :mod:`lsr_lucene.compose.dense_leg`) Â is first blended with the dense
                             cosine of A's text and with the dense cosine of each candidate to the
                             best A match d* (the top of that blend, a one-document dense feedback):
                             Â ← minmax(Â + w·minmax(cos) + v·minmax(cos(·, d*))) (w 1, v 1, λ 0.7)
=============== ============ ===============================================================

Vectors are ``dict`` of key -> float where a key is a term (``str``) or a Combined Pseudo-Term
(a sorted ``(a, b)`` tuple). Pairs are extra dimensions of the same vector space (the paper's |V|²
expansion), so every linear operation above treats them exactly like terms; only ``cpt`` creates them,
from the children's positive single terms.

Edge cases (documented behaviour):

- a ``not`` whose B covers every term of A: ``disentangled`` gives A unchanged (B* is empty);
  ``subtract``/``nrf``/``orthogonal`` may leave no positive weight: such a vector matches no document
  (every candidate must match a positive weight), so the query gets no hits and a warning;
- unknown operation names, and names that do not apply to a node type, are input errors listing the
  valid names;
- a vector operation cannot combine the output of ``fusion`` (a ranking, not a vector): once a node uses
  fusion, its ancestors must use fusion too (input error otherwise); the `default` for not nodes (fusion-gated)
  gives way to ``DEFAULT_NOT_VECTOR`` (nrf) under a node that combines vectors, so default settings never fail.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Union

from lsr_lucene.compose.absence import READ_DEPTH
from lsr_lucene.compose.dense_leg import blend
from lsr_lucene.compose.penalty import GATED_FLOOR, gated  # noqa: F401  (re-exported: fusion-gated's scoring)
from lsr_lucene.compose.penalty import TERM_SCALE, gated_not, term_shaped
from lsr_lucene.compose.scaling import minmax
from lsr_lucene.compose.tree import NODE_OPS, Node, Tree, verbalize
from lsr_lucene.errors import InputError

Key = Union[str, tuple]
Vector = dict  # Key -> float


# ------------------------------------------------------------------------------------------ operations
def dot(a: Mapping, b: Mapping) -> float:
    """Sparse dot product of two {term: weight} vectors."""
    if len(a) > len(b):
        a, b = b, a
    return sum(w * b[k] for k, w in a.items() if k in b)


def _clean(vec: Mapping) -> Vector:
    return {k: w for k, w in vec.items() if w != 0}


def add(a: Mapping, b: Mapping) -> Vector:
    """A + B (union or intersection by addition)."""
    out = dict(a)
    for k, w in b.items():
        out[k] = out.get(k, 0.0) + w
    return _clean(out)


def subtract(a: Mapping, b: Mapping) -> Vector:
    """A − B (plain subtraction)."""
    return nrf(a, b, 1.0)


def nrf(a: Mapping, b: Mapping, lam: float = 0.5) -> Vector:
    """A − λ·B (negative relevance feedback, Rocchio-style)."""
    out = dict(a)
    for k, w in b.items():
        out[k] = out.get(k, 0.0) - lam * w
    return _clean(out)


def ignore(a: Mapping, b: Mapping) -> Vector:
    """A: the negated part is ignored."""
    return _clean(a)


def orthogonal(a: Mapping, b: Mapping) -> Vector:
    """A − (A·B / |B|²)·B: removes A's projection on B (Widdows' orthogonal negation); A when B is empty."""
    norm = dot(b, b)
    if norm == 0:
        return _clean(a)
    return nrf(a, b, dot(a, b) / norm)


def disentangled(a: Mapping, b: Mapping, lam: float = 1.0) -> Vector:
    """A − λ·B*, B* = B with A's terms zeroed: penalises only B's other terms, leaves A's untouched."""
    b_star = {k: w for k, w in b.items() if a.get(k, 0) == 0}
    return nrf(a, b_star, lam)


def orthonrf(a: Mapping, b: Mapping, lam: float = 0.3) -> Vector:
    """Orthogonal projection then NRF: A − (A·B / |B|² + λ)·B (λ past the projection, so B always costs)."""
    norm = dot(b, b)
    if norm == 0:
        return _clean(a)
    return nrf(a, b, dot(a, b) / norm + lam)


def mass_share(a: Mapping, b: Mapping) -> float:
    """Share of A's positive mass on the terms B carries (0: B is disjoint from A, 1: B covers A)."""
    total = sum(w for w in a.values() if w > 0)
    if total == 0:
        return 0.0
    return sum(w for k, w in a.items() if w > 0 and b.get(k, 0) > 0) / total


def adaptive(a: Mapping, b: Mapping, lam: float = 0.5) -> Vector:
    """NRF with a per-query λ·(1 − m), m = :func:`mass_share` (A, B): the more of A's mass B carries, the
    more B names A's own intent, and the less it is subtracted."""
    return nrf(a, b, lam * (1.0 - mass_share(a, b)))


def maxpool(a: Mapping, b: Mapping) -> Vector:
    """Element-wise max(A_t, B_t); a term absent from one side counts as 0 there."""
    out = {}
    for k in set(a) | set(b):
        out[k] = max(a.get(k, 0.0), b.get(k, 0.0))
    return _clean(out)


def pair_key(x: str, y: str) -> tuple:
    """Canonical (sorted) key of the Combined Pseudo-Term of terms x and y."""
    return (x, y) if x <= y else (y, x)


def cpt_pairs(a: Mapping, b: Mapping, top: int = 5) -> Vector:
    """Top-``top`` Combined Pseudo-Terms of A ⊗ B: weight sqrt(w_a·w_b), positive single terms, a != b."""
    ta = sorted(((k, w) for k, w in a.items() if isinstance(k, str) and w > 0), key=lambda kw: (-kw[1], kw[0]))
    tb = sorted(((k, w) for k, w in b.items() if isinstance(k, str) and w > 0), key=lambda kw: (-kw[1], kw[0]))
    best: dict[tuple, float] = {}
    # only the top `top` terms of each side can form a top-`top` pair (weights are monotone in both)
    for x, wx in ta[:max(top, 0) + 1]:
        for y, wy in tb[:max(top, 0) + 1]:
            if x == y:
                continue
            key = pair_key(x, y)
            best[key] = max(best.get(key, 0.0), math.sqrt(wx * wy))
    ranked = sorted(best.items(), key=lambda kv: (-kv[1], kv[0]))[:max(top, 0)]
    return dict(ranked)


def cpt(a: Mapping, b: Mapping, top: int = 5, pair_weight: float = 1.0) -> Vector:
    """Intersection by Combined Pseudo-Terms: maxpool(A, B) plus the top pairs (times ``pair_weight``)."""
    out = maxpool(a, b)
    for key, w in cpt_pairs(a, b, top).items():
        out[key] = out.get(key, 0.0) + pair_weight * w
    return _clean(out)


# ------------------------------------------------------------------------------------------ selection
VANILLA = "vanilla"
FUSION = ("fusion", "fusion-scaled", "fusion-gated")
SCALED_FUSION = ("fusion-scaled", "fusion-gated")
DEFAULT_GATE = 0.9
VECTOR_OPS = {
    "not": ("subtract", "ignore", "nrf", "orthogonal", "disentangled", "orthonrf", "adaptive"),
    "and": ("add", "maxpool", "cpt"),
    "or": ("add", "maxpool"),
}
OPERATIONS = tuple(dict.fromkeys((VANILLA,) + VECTOR_OPS["not"] + VECTOR_OPS["and"] + FUSION))
# not: the `default` setting for negated queries, chosen by the cross-validated worst case over ExcluIR dev and
# BoolQuestions dev (runs/compositional/transfer/, docs/negation.md "How the default was chosen")
DEFAULTS = {"not": "fusion-gated", "and": "cpt", "or": "maxpool"}
# the default's stand-in where a not node must give a vector (under an and/or node that uses a vector operation)
DEFAULT_NOT_VECTOR = "nrf"
DEFAULT_LAMBDA = {"nrf": 0.5, "orthonrf": 0.3, "adaptive": 0.5}
# λ of the `default` setting when it differs from its operation's own default (None: the operation's own)
DEFAULT_NOT_LAMBDA: float | None = None
# the `default` with a dense leg (issue 36): weight w of the dense cosine blended into Â, and λ of the gated penalty,
# chosen by the worst case over ExcluIR dev and BoolQuestions dev (runs/negation/positive_leg*.md, docs/negation.md)
DEFAULT_DENSE_WEIGHT = 1.0
DENSE_NOT_LAMBDA = 0.7
# v of the neighbour leg: the dense cosine of every candidate with the best A match d* (the top of Â + w·cos), chosen
# by repeated 5-fold CV over both benchmarks (runs/negation/leg_fusion.md, docs/negation.md)
DEFAULT_NEIGHBOUR_WEIGHT = 1.0


# B's excluded items under the `default`: "maxpool", one pooled vector; "each", every item searched alone and B̂ the
# largest of their min-max scaled scores (issue 49; runs/negation/estimate.md: worse on BoolQuestions, not the default)
ITEMS = ("maxpool", "each")


def valid_for(node_op: str) -> tuple[str, ...]:
    """Operation names that apply to ``node_op`` nodes."""
    return (VANILLA,) + VECTOR_OPS[node_op] + FUSION


def check_name(name: str, node_op: str | None = None) -> str:
    """Return ``name`` if it is a known operation (valid for ``node_op`` when given), else InputError."""
    if name not in OPERATIONS:
        raise InputError(f"unknown operation {name!r}; expected one of {', '.join(OPERATIONS)}")
    if node_op is not None and name not in valid_for(node_op):
        raise InputError(f"operation {name!r} does not apply to {node_op!r} nodes; "
                         f"valid: {', '.join(valid_for(node_op))}")
    return name


@dataclass
class Settings:
    """Which operation each node type uses, and the operations' parameters.

    ``operation`` applies to every node type it is valid for; the others use ``DEFAULTS``; ``per_type``
    (``{"not": ..., "and": ..., "or": ...}``) overrides both. ``lam`` is λ of nrf / disentangled / fusion
    on ``not`` nodes (None: nrf 0.5, the others 1.0; the `default` with a dense leg: 0.7). ``dense``: a dense leg is
    attached (the searcher sets it), so fusion-gated not nodes blend the dense cosine of A's text into Â with weight
    ``dense_weight`` (0: off), and the dense cosine of every candidate with the best A match d* with weight
    ``neighbour_weight`` (0: off). ``absence``: fusion-gated not nodes read the candidates' stored texts for B stated
    absent ("no caffeine", "caffeine-free"), which waives that share of the penalty (:mod:`lsr_lucene.compose.absence`),
    and for a short-term B in them (:mod:`lsr_lucene.compose.penalty`); False reads no text (neither rule).
    """

    operation: str | None = None
    per_type: dict = field(default_factory=dict)
    lam: float | None = None
    top_pairs: int = 5
    pair_weight: float = 1.0
    gate: float = DEFAULT_GATE
    dense_weight: float = DEFAULT_DENSE_WEIGHT
    dense: bool = False
    neighbour_weight: float = DEFAULT_NEIGHBOUR_WEIGHT
    absence: bool = True
    items: str = "maxpool"

    def __post_init__(self) -> None:
        if self.operation is not None:
            check_name(self.operation)
        for node_op, name in self.per_type.items():
            if node_op not in NODE_OPS:
                raise InputError(f"unknown node type {node_op!r}; expected one of {', '.join(NODE_OPS)}")
            if name is not None:
                check_name(name, node_op)
        if self.top_pairs < 0:
            raise InputError(f"--top-pairs must be >= 0, got {self.top_pairs}")
        if self.lam is not None and not math.isfinite(self.lam):
            raise InputError(f"λ must be a finite number, got {self.lam}")
        if not 0 <= self.gate < 1:
            raise InputError(f"--gate must be in [0, 1), got {self.gate}")
        if not (math.isfinite(self.dense_weight) and self.dense_weight >= 0):
            raise InputError(f"--dense-weight must be a finite number >= 0, got {self.dense_weight}")
        if self.items not in ITEMS:
            raise InputError(f"items must be one of {', '.join(ITEMS)}, got {self.items!r}")
        if not (math.isfinite(self.neighbour_weight) and self.neighbour_weight >= 0):
            raise InputError(f"--neighbour-weight must be a finite number >= 0, got {self.neighbour_weight}")

    @classmethod
    def of(cls, operation: str | None = None, not_op: str | None = None, and_op: str | None = None,
           or_op: str | None = None, **parameters) -> "Settings":
        """Settings from compose's option names (``--operation``, ``--not-op``/``--and-op``/``--or-op``, and
        ``lam``/``top_pairs``/``pair_weight``/``gate``/``dense_weight``/``dense``/``neighbour_weight``), the unnamed
        ones at their defaults."""
        per_type = {op: name for op, name in (("not", not_op), ("and", and_op), ("or", or_op)) if name}
        return cls(operation, per_type, **parameters)

    def op_for(self, node_op: str) -> str:
        """Operation used on ``node_op`` nodes."""
        if self.per_type.get(node_op):
            return self.per_type[node_op]
        if self.operation is not None and self.operation in valid_for(node_op):
            return self.operation
        return DEFAULTS[node_op]

    def not_is_default(self) -> bool:
        """Whether ``not`` nodes use the `default` setting (no operation named for them)."""
        return not self.per_type.get("not") and (self.operation is None or self.operation not in valid_for("not"))

    def lam_for(self, name: str) -> float:
        """λ of operation ``name`` (explicit setting, else the `default` setting's λ when ``not`` nodes use the
        default, else the operation's own default)."""
        if self.lam is not None:
            return self.lam
        if name == DEFAULTS["not"] and self.not_is_default():
            if self.dense_leg():
                return DENSE_NOT_LAMBDA
            if DEFAULT_NOT_LAMBDA is not None:
                return DEFAULT_NOT_LAMBDA
        return DEFAULT_LAMBDA.get(name, 1.0)

    def dense_leg(self) -> bool:
        """Whether fusion-gated not nodes blend the dense cosine of A's text into Â."""
        return self.dense and self.dense_weight > 0 and self.op_for("not") == "fusion-gated"

    def neighbour_leg(self) -> bool:  # the dense leg also adds each candidate's cosine with the best A match d*
        return self.dense_leg() and self.neighbour_weight > 0

    def describe(self) -> str:
        """One line: the operation per node type and its parameters."""
        parts = []
        for node_op in NODE_OPS:
            name = self.op_for(node_op)
            extra = ""
            if node_op == "not" and name == "fusion-gated":
                dense = f", dense A leg w {self.dense_weight:g}" if self.dense_leg() else ""
                dense += f", best-match neighbour leg v {self.neighbour_weight:g}" if self.neighbour_leg() else ""
                dense += f", a short-term B in the text penalised (β {TERM_SCALE:g}), B stated absent waived" \
                    if self.absence else ""
                extra = f"(λ={self.lam_for(name):g}, gate {self.gate:g}{dense})"
            elif name in ("nrf", "disentangled", "orthonrf", "adaptive") or (node_op == "not" and name in FUSION):
                extra = f"(λ={self.lam_for(name):g})"
            elif name == "cpt":
                extra = f"(top {self.top_pairs} pairs, pair weight {self.pair_weight:g})"
            if node_op == "not" and name in FUSION and self.not_is_default():
                extra += f" [default; {DEFAULT_NOT_VECTOR} under vector operations]"
            parts.append(f"{node_op}: {name}{extra}")
        return ", ".join(parts)


def apply_vector_op(name: str, node_op: str, a: Mapping, b: Mapping, settings: Settings) -> Vector:
    """Combine two vectors with the named vector operation."""
    if name == "subtract":
        return subtract(a, b)
    if name == "ignore":
        return ignore(a, b)
    if name == "nrf":
        return nrf(a, b, settings.lam_for(name))
    if name == "orthogonal":
        return orthogonal(a, b)
    if name == "disentangled":
        return disentangled(a, b, settings.lam_for(name))
    if name == "orthonrf":
        return orthonrf(a, b, settings.lam_for(name))
    if name == "adaptive":
        return adaptive(a, b, settings.lam_for(name))
    if name == "add":
        return add(a, b)
    if name == "maxpool":
        return maxpool(a, b)
    if name == "cpt":
        return cpt(a, b, settings.top_pairs, settings.pair_weight)
    raise InputError(f"operation {name!r} is not a vector operation for {node_op!r} nodes")


# ------------------------------------------------------------------------------------------ plans
@dataclass
class VectorPlan:
    """A composition reduced to one query vector (searched as one signed impact query)."""

    vector: Vector


@dataclass
class FusionPlan:
    """A node whose children are searched separately and whose scores are fused (``fusion``)."""

    node_op: str
    scaled: bool
    lam: float
    a: "Plan"
    b: "Plan"
    gate: float | None = None  # fusion-gated on not nodes: only B̂ above the gate is penalised
    dense_text: str | None = None  # fusion-gated with a dense leg: A's text, whose dense cosine is blended into Â
    dense_weight: float = 0.0
    neighbour_weight: float = 0.0  # with a dense leg: v of the cosine with the best A match d*, added to the blend
    absence_texts: tuple[str, ...] = ()  # fusion-gated: B's texts, read in candidates' texts (stated absent, contained)
    term_scale: float | None = None  # fusion-gated, B a short term: β of the penalty of a text containing B (penalty.py)
    largest: bool = False  # an or node of B's items (Settings.items "each"): the largest scaled score, not the sum


Plan = Union[VectorPlan, FusionPlan]


def required_texts(tree: Tree, settings: Settings, text: str | None = None) -> list[str]:
    """Texts to encode for ``tree`` under ``settings`` (``text``: the original query, used by vanilla)."""
    if isinstance(tree, str):
        return [tree]
    if settings.op_for(tree.op) == VANILLA:
        return [text or verbalize(tree)]
    return required_texts(tree.a, settings) + required_texts(tree.b, settings)


def node_operation(tree: Node, settings: Settings, vector_only: bool = False) -> str:
    """The operation a node uses (``vector_only``: under a vector operation, where the fused `default` for not
    nodes gives way to ``DEFAULT_NOT_VECTOR``)."""
    name = settings.op_for(tree.op)
    if vector_only and tree.op == "not" and name in FUSION and settings.not_is_default():
        return DEFAULT_NOT_VECTOR
    return name


def first_fusion(tree: Tree, settings: Settings, vector_only: bool = False) -> tuple[str, str] | None:
    """(node type, operation) of the first node that :func:`build_plan` would fuse (searched as several queries,
    so no single query spec expresses it), None when the whole tree is one vector; needs no encoding."""
    if isinstance(tree, str):
        return None
    name = node_operation(tree, settings, vector_only)
    if name == VANILLA:
        return None
    if name in FUSION:
        return tree.op, name
    return first_fusion(tree.a, settings, True) or first_fusion(tree.b, settings, True)


def build_plan(tree: Tree, settings: Settings, vectors: Mapping[str, Mapping], text: str | None = None,
               where: str = "query", vector_only: bool = False) -> Plan:
    """Compose a tree into a plan, given encoded vectors of every text of :func:`required_texts`.

    ``vector_only``: the parent combines vectors, so a not node under the (fused) `default` setting uses
    ``DEFAULT_NOT_VECTOR`` instead; an operation named explicitly is never replaced.
    """
    if isinstance(tree, str):
        return VectorPlan(dict(vectors[tree]))
    name = node_operation(tree, settings, vector_only)
    if name == VANILLA:
        return VectorPlan(dict(vectors[text or verbalize(tree)]))
    a = build_plan(tree.a, settings, vectors, where=where, vector_only=name not in FUSION)
    b = build_plan(tree.b, settings, vectors, where=where, vector_only=name not in FUSION)
    if name in FUSION:
        gate = settings.gate if name == "fusion-gated" and tree.op == "not" else None
        if gate is not None and settings.items == "each" and settings.not_is_default() and _items_only(tree.b):
            b = _each_item(tree.b, vectors)
        dense_text = None  # the innermost gated not node of a chain takes the dense leg (A's own text)
        if gate is not None and settings.dense_leg() and not (isinstance(a, FusionPlan) and a.gate is not None):
            dense_text = tree.a if isinstance(tree.a, str) else verbalize(tree.a)
        absence = tuple(leaf_texts(tree.b)) if gate is not None and settings.absence else ()
        return FusionPlan(tree.op, name in SCALED_FUSION, settings.lam_for(name), a, b, gate, dense_text,
                          settings.dense_weight if dense_text is not None else 0.0,
                          settings.neighbour_weight if dense_text is not None and settings.neighbour_leg() else 0.0,
                          absence, term_scale=TERM_SCALE if absence and term_shaped(absence) else None)
    if not isinstance(a, VectorPlan) or not isinstance(b, VectorPlan):
        raise InputError(f"{where}: {name!r} on a {tree.op!r} node cannot combine a score-fused subtree; "
                         "use fusion for its parent too")
    return VectorPlan(apply_vector_op(name, tree.op, a.vector, b.vector, settings))


def _items_only(tree: Tree) -> bool:
    """Whether a tree is a union of texts (B's excluded items), at least two."""
    items = (tree.a, tree.b) if isinstance(tree, Node) and tree.op == "or" else ()
    return bool(items) and all(isinstance(t, str) or _items_only(t) for t in items)


def _each_item(tree: Tree, vectors: Mapping[str, Mapping]) -> Plan:
    """B's items searched one by one, fused by the largest min-max scaled score (``Settings.items`` "each")."""
    if isinstance(tree, str):
        return VectorPlan(dict(vectors[tree]))
    return FusionPlan("or", True, 1.0, _each_item(tree.a, vectors), _each_item(tree.b, vectors), largest=True)


def leaf_texts(tree: Tree) -> list[str]:
    """The texts at the leaves of a tree (B's alternatives of a union, in order)."""
    return [tree] if isinstance(tree, str) else leaf_texts(tree.a) + leaf_texts(tree.b)


def plan_vectors(plan: Plan) -> list[Vector]:
    """The vectors a plan searches (one for a VectorPlan; the fused leaves' for a FusionPlan)."""
    if isinstance(plan, VectorPlan):
        return [plan.vector]
    return plan_vectors(plan.a) + plan_vectors(plan.b)


def plan_inputs(plan: Plan) -> list[tuple[str, object]]:
    """What :func:`fuse` reads, in its order: ``("vector", vector)`` per searched leaf, ``("dense", text)`` after
    the children of every node with a dense leg (the text whose cosine it blends into Â), then ``("neighbour", None)``
    where it adds the cosine with the best A match (a :class:`~lsr_lucene.compose.dense_leg.Neighbours`), then
    ``("absence", texts)`` where a gated node reads B stated absent (an :class:`~lsr_lucene.compose.absence.Absence`)."""
    if isinstance(plan, VectorPlan):
        return [("vector", plan.vector)]
    dense: list[tuple[str, object]] = [("dense", plan.dense_text)] if plan.dense_text is not None else []
    if plan.dense_text is not None and plan.neighbour_weight > 0:
        dense.append(("neighbour", None))
    if plan.absence_texts:
        dense.append(("absence", plan.absence_texts))
    return plan_inputs(plan.a) + plan_inputs(plan.b) + dense


@dataclass
class FusedNode:
    """What one fused node computed over its candidates (``--explain``): the children's scores A and B, their
    min-max scaled values (scaled fusion), B's gated value (fusion-gated), the fused scores; ``path`` names the
    node in the plan ("" the root, "A", "A.B", ...)."""

    path: str
    node_op: str
    lam: float
    gate: float | None
    a: dict
    b: dict
    a_scaled: dict | None
    b_scaled: dict | None
    fused: dict
    dense: dict | None = None  # the dense cosine of A's text (a node with a dense leg; a_scaled is then the blend)
    dense_weight: float = 0.0
    neighbour: dict | None = None  # each candidate's dense cosine with the best A match (a node with a neighbour leg)
    neighbour_doc: str | None = None  # that best A match d*
    neighbour_weight: float = 0.0
    absence: dict | None = None  # per candidate stating B absent: the share of its B mentions that do (waived)
    contains: set | None = None  # a short-term B (term_scale): the candidates read whose text contains B
    term_scale: float | None = None


def fuse(plan: Plan, leaf_scores: Iterable[Mapping[str, float]], record: list | None = None) -> dict[str, float]:
    """Fused scores {doc: score} of a plan from each leaf vector's scores over the same candidates.

    ``leaf_scores`` follows :func:`plan_inputs` order (:func:`plan_vectors` order, with the dense cosines of a node
    with a dense leg, and its neighbour cosines, after its children); every mapping must hold the same candidate docs
    (a document a leaf does not match scores 0 there). Scaled fusion min-max normalises each child's
    scores over the candidates (all equal: every score becomes 0). ``record``, when given, receives a
    :class:`FusedNode` per fused node, children before parents.
    """
    iterator = iter(leaf_scores)
    return _fuse(plan, iterator, record, "")


def _fuse(plan: Plan, it, record: list | None = None, path: str = "") -> dict[str, float]:
    if isinstance(plan, VectorPlan):
        return dict(next(it))
    raw_a = _fuse(plan.a, it, record, f"{path}.A".lstrip("."))
    raw_b = _fuse(plan.b, it, record, f"{path}.B".lstrip("."))
    dense = dict(next(it)) if plan.dense_text is not None else None
    neighbours = next(it) if plan.dense_text is not None and plan.neighbour_weight > 0 else None
    absence = next(it) if plan.absence_texts else None
    a, b = (minmax(raw_a), minmax(raw_b)) if plan.scaled else (raw_a, raw_b)
    a, near, best = (a, None, None) if dense is None else blend(  # Â ← minmax(Â + w·cos + v·cos(·, d*)), scaled
        a, dense, plan.dense_weight, neighbours, plan.neighbour_weight)
    docs = a.keys() | b.keys()
    shares, contains = None, None
    if absence is not None:  # documents that match both legs, the best READ_DEPTH by Â (reading texts costs)
        both = sorted((d for d in docs if a.get(d, 0.0) > 0 and b.get(d, 0.0) > 0), key=lambda d: (-a[d], d))
        shares = absence.shares(sorted(both[:READ_DEPTH]))
        contains = absence.containing(sorted(both[:READ_DEPTH])) if plan.term_scale is not None else None
    if plan.node_op == "not" and plan.gate is not None:
        fused = {d: gated_not(a.get(d, 0.0), b.get(d, 0.0), plan.lam, plan.gate,
                              absent=shares.get(d, 0.0) if shares else 0.0, contains=d in (contains or ()),
                              term_scale=plan.term_scale) for d in docs}
    elif plan.node_op == "not":
        fused = {d: a.get(d, 0.0) - plan.lam * b.get(d, 0.0) for d in docs}
    elif plan.node_op == "and":
        fused = {d: a.get(d, 0.0) * b.get(d, 0.0) for d in docs}
    elif plan.largest:
        fused = {d: max(a.get(d, 0.0), b.get(d, 0.0)) for d in docs}
    else:
        fused = {d: a.get(d, 0.0) + b.get(d, 0.0) for d in docs}
    if record is not None:
        record.append(FusedNode(path, plan.node_op, plan.lam, plan.gate, raw_a, raw_b, a if plan.scaled else None,
                                b if plan.scaled else None, fused, dense, plan.dense_weight, near, best,
                                plan.neighbour_weight, {d: v for d, v in shares.items() if v} if shares else None,
                                contains, plan.term_scale))
    return fused


def positive(vec: Mapping) -> bool:
    """Whether a vector has at least one positive weight (else it matches no document)."""
    return any(w > 0 for w in vec.values())


def quantise_composed(vec: Mapping, scale: float, qid: str | None = None) -> tuple[dict[str, int], list[list]]:
    """Signed integer term weights round(w × scale) and pairs ``[a, b, round(w × scale)]``; zeros dropped."""
    from lsr_lucene.io.vectors import quantise_query

    terms = quantise_query({k: w for k, w in vec.items() if isinstance(k, str)}, scale, qid)
    pairs = []
    for key, w in vec.items():
        if isinstance(key, tuple):
            q = round(w * scale)
            if q != 0:
                pairs.append([key[0], key[1], int(q)])
    pairs.sort(key=lambda p: (-p[2], p[0], p[1]))
    return terms, pairs
