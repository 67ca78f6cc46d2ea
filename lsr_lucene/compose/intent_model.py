"""The negation intent model: a logistic regression over a cue's context that says whether the cue asks to exclude.

Why a model over the rules: the phrasing rules (:func:`lsr_lucene.compose.intent.rule_decision`) decide each
wording on its own, so paraphrases of one request got different answers ("recipes without nuts" fired, "recipes
that contain no nuts" did not). The model reads the rules' verdict as one feature beside the words around the cue,
the kind of sentence and the word classes before and after it, and the all-MiniLM-L6-v2 embedding of the cue's
sentence (the installed dense model, on the CPU, fp32): the words say how the negation is phrased, the embedding
what the query is about ("laptops without a touchscreen" is shopping, "countries without an army" a phenomenon).
It is trained on the labelled intent set (``lsr_lucene/data/negation_intent``, development part only) by
``scripts/negation/negation_intent.py``; the weights ship as ``intent_model.json`` beside this module. The shipped
weights were made from a checkout by ``scripts/run_negation_intent.sh`` (``python -m scripts.negation.negation_intent
train``, repository root).
Cost: a sum of a few dozen weights per cue, plus one embedding per sentence that has a candidate cue (a few ms on
an idle CPU thread; the model loads on first use, torch with it); queries without a cue pay nothing.
Deterministic on one machine; on another CPU the embedding may differ in the 6th decimal, which flips a decision
only at the boundary.
"""
from __future__ import annotations

import json
import math
import re
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Sequence

from lsr_lucene.compose.intent import (AUX_SET, CONTRAST, COPULA, PERSON, RELATIVE, REQUEST_VERB, TOPIC, Intent,
                                       text_after, sentence_span, words_before, lexical_veto, rule_decision, sentence_kind)

MODEL_PATH = Path(__file__).with_name("intent_model.json")
_QUOTED = re.compile(r"'[^']*'")
_POSSESS = set("contain contains containing have has having had use uses using include includes including with "
               "need needs require requires feature features made".split())
_REQUEST_WORDS = set("please i i'm im we want need looking find show give recommend suggest list".split())


def _word_class(word: str) -> str:
    """A coarse class of a word next to the cue (what generalises across paraphrases, unlike the word itself)."""
    if not word:
        return "none"
    if word in RELATIVE:
        return "relative"
    if word in COPULA:
        return "copula"
    if word in AUX_SET:
        return "aux"
    if word in PERSON:
        return "person"
    if word in CONTRAST:
        return "contrast"
    if word in _POSSESS:
        return "possess"
    if word.endswith("ing"):
        return "ing"
    if word.endswith("ed"):
        return "ed"
    if word.endswith("s") and len(word) > 3:
        return "plural"
    return "other"


def _reason_key(reason: str) -> str:
    """The rule's reason without the quoted words it names (so "exclusion: 'without' in a fragment" and the
    same with another cue share one feature)."""
    return " ".join(_QUOTED.sub("Q", reason).split()[:6])


def cue_features(text: str, start: int, end: int, label: str, rule: Intent) -> list[str]:
    """The names of the features that hold for the cue ``text[start:end]``: the rule's verdict and reason, the cue,
    the sentence kind, the words and word classes either side, and a few frames."""
    cue = " ".join(text[start:end].lower().replace("’", "'").split())
    before = words_before(text, start, 6)
    after_text = text_after(text, end)
    after = [w.lower() for w in re.findall(r"[\w'’-]+", after_text)[:3]]
    prev = before[-1] if before else ""
    prev2 = before[-2] if len(before) >= 2 else ""
    nxt = after[0] if after else ""
    kind = sentence_kind(text, start)
    head = text[:start].rstrip()
    feats = ["bias", f"rule={'fire' if rule.fire else 'plain'}", f"reason={_reason_key(rule.reason)}",
             f"label={label}", f"cue={cue}", f"kind={kind}", f"rule={'fire' if rule.fire else 'plain'}&kind={kind}",
             f"prev={prev}", f"next={nxt}", f"prevclass={_word_class(prev)}", f"prev2class={_word_class(prev2)}",
             f"nextclass={_word_class(nxt)}", f"cue={cue}&prevclass={_word_class(prev)}",
             f"words_before={min(len(before), 4)}"]
    if head.endswith(","):
        feats.append("comma_before")
    if TOPIC.match(after_text):
        feats.append("topic_after")
    if REQUEST_VERB.match(after_text):
        feats.append("request_verb_after")
    if any(w in _REQUEST_WORDS for w in words_before(text, start, 12)):
        feats.append("request_words_before")
    if any(w in RELATIVE for w in before[-3:]):
        feats.append("relative_before")
    if text.rstrip().endswith("?"):
        feats.append("question_mark")
    return feats


EMBEDDING_SCALE = 3.0  # unit vectors' components are small; scaled so that L2 does not mute them (fixed, not tuned)
_ENCODER_LOCK = threading.Lock()
_encoder = None


def _dense_encoder():
    """The all-MiniLM-L6-v2 encoder the embedding reads (CPU, fp32, one thread), made on first use; call it with
    :data:`_ENCODER_LOCK` held."""
    global _encoder
    if _encoder is None:
        from lsr_lucene.dense.encoder import DenseEncoder

        _encoder = DenseEncoder(threads=1, device="cpu")
    return _encoder


@lru_cache(maxsize=4096)
def embedding(text: str) -> tuple[float, ...]:
    """The text's all-MiniLM-L6-v2 embedding (CPU, fp32, one thread), times :data:`EMBEDDING_SCALE`; cached."""
    with _ENCODER_LOCK:
        vector = _dense_encoder().encode_queries([text])[0]
    return tuple(float(v) * EMBEDDING_SCALE for v in vector)


def load() -> None:
    """Load the shipped model and, when it reads the embedding, its encoder now (a server, before its first
    request) instead of on the first query with a cue."""
    model = shipped_model()
    if model is not None and model.dense:
        with _ENCODER_LOCK:
            _dense_encoder()


def cue_sentence(text: str, start: int) -> str:
    """The sentence of the cue at ``start`` (what the embedding reads: the decision looks only at the cue's
    sentence, also in a topic of several sentences)."""
    begin, end = sentence_span(text, start)
    return text[begin:end].strip() or text


@dataclass(frozen=True)
class IntentModel:
    """Feature weights (bias included), weights of the embedding's dimensions (``dense``; empty: none) and the
    probability at or above which a cue fires."""

    weights: dict[str, float]
    dense: tuple[float, ...] = ()
    threshold: float = 0.5

    def logit(self, features: Sequence[str], vector: Sequence[float] = ()) -> float:
        """The linear score of one cue (summed in a fixed order: deterministic)."""
        z = sum(self.weights.get(f, 0.0) for f in features)
        return z + sum(w * v for w, v in zip(self.dense, vector))

    def probability(self, features: Sequence[str], vector: Sequence[float] = ()) -> float:
        z = self.logit(features, vector)
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))

    def score(self, text: str, start: int, end: int, label: str, rule: Intent) -> float:
        """Probability that the cue ``text[start:end]`` asks to exclude."""
        vector = embedding(cue_sentence(text, start)) if self.dense else ()
        return self.probability(cue_features(text, start, end, label, rule), vector)

    def to_json(self) -> dict:
        return {"threshold": self.threshold, "embedding_scale": EMBEDDING_SCALE if self.dense else None,
                "dense": list(self.dense), "weights": dict(sorted(self.weights.items()))}


@lru_cache(maxsize=1)
def shipped_model() -> IntentModel | None:
    """The model shipped with the package (None when its file is absent: the rules decide alone)."""
    if not MODEL_PATH.is_file():
        return None
    data = json.loads(MODEL_PATH.read_text(encoding="utf-8"))
    return IntentModel({str(k): float(v) for k, v in data["weights"].items()},
                       tuple(float(v) for v in data.get("dense") or ()), float(data.get("threshold", 0.5)))


def decide(text: str, start: int, end: int, label: str, kind: str) -> Intent:
    """Whether the cue ``text[start:end]`` (parser label ``label``, kind not / and / generic) is an exclusion or
    conjunction the user asks for: the shipped model (a logistic regression over the cue's context and the rules'
    verdict) decides negation cues, the rules alone conjunctions and final word facts (:func:`lexical_veto`).
    Deterministic; looks only at the cue's sentence."""
    rule = rule_decision(text, start, end, label, kind)
    if kind == "and" or lexical_veto(rule):
        return rule
    model = shipped_model()
    if model is None:
        return rule
    score = model.score(text, start, end, label, rule)
    fire = score >= model.threshold
    return Intent(fire, f"intent model: {'fires' if fire else 'plain'} (p={score:.2f}, threshold "
                        f"{model.threshold:.2f}; rule: {rule.reason})", score)
