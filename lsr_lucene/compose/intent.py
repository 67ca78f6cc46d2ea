"""Does a negation cue ask to exclude something? Phrasing rules give a verdict and a reason; the intent model
(:mod:`lsr_lucene.compose.intent_model`) weighs that verdict with the cue's context and decides (issue 50).

The cue parser (:mod:`lsr_lucene.compose.negation_parser`) finds candidate cues;
:func:`lsr_lucene.compose.intent_model.decide` says whether a
candidate expresses exclusion intent (the user asks for A without B) or is ordinary negation that belongs to the
text (searched exactly as plain search searches it). Rejections that are facts about words (:func:`lexical_veto`:
hedges "but not exclusively", "not necessarily"; idioms "with or without", "whether or not", "if not,", "not only
… but also"; numbering "no. 4"; the chemical symbol NO; purpose clauses "to avoid") are final. Every other cue is
decided by the model, whose features include :func:`rule_decision`'s verdict and reason: the rules below were
written first (issue 36) and decided alone, so paraphrases of one request could get different answers.

The rules' verdicts: rejected are negated statements of fact ("X does not improve Y", "There is no association
…"), negation that narrows a noun ("cylinders having no wall stiffness", "the series that didn't go 7 games"),
rhetorical negation ("it is not likely that"), negation inside titles, lyrics and first-person quotations ("who
sings war don't let me down"); accepted are explicit exclusion phrases in a request or question ("excluding X",
"besides X, …", "other than X", "without mentioning X", "please don't mention X", "not interested in X"),
contrastive negation in a question or request ("… but not X", "… but aren't X"), relative negation of identity or
topic ("works that are not related to X", "a mechanism that isn't spitting"), and "not" before a topic marker
("…, not any information about X").
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from lsr_lucene.compose.query_text import sentence_end

AUX = ("is are was were be been am do does did has have had can could will would shall should may might must "
       "isn't aren't wasn't weren't don't doesn't didn't hasn't haven't hadn't can't couldn't won't wouldn't "
       "shouldn't mustn't cannot ain't 's 're").split()
AUX_SET = set(AUX)
COPULA = set("is are was were be been am".split())
RELATIVE = set("that which who whom whose".split())
CONTRAST = set("but yet while whereas although though".split())
_QUESTION_OPEN = set("""what what's which who who's whom whose where where's when when's why how how's is are was were
do does did can could would will should shall has have had may might must am isn't aren't wasn't weren't don't
doesn't didn't hasn't haven't""".split())
_REQUEST_OPEN = re.compile(
    r"^(?:please|kindly|tell|list|give|provide|describe|explain|show|find|name|recommend|suggest|identify|share|"
    r"compare|summari[sz]e|introduce|search|retrieve|looking|seeking|i'?m|i\s+am|i\s+want|i'?d\s+like|i\s+would|"
    r"i\s+need|we\s+(?:are|want|need)|we'?re|any|information|info|articles?|papers?|documents?|reports?|"
    r"material|literature|publications?|studies|references?|interested|help)\b", re.IGNORECASE)
# what may follow "without", "avoiding", "leaving out" ... when it names the excluded topic (ExcluIR's requests)
_REQUEST_OBJ = re.compile(
    r"(?:(?:even|also|specifically|particularly|any|the)\s+)*(?:mention\w*|includ\w*|involv\w*|discuss\w*|consider\w*|"
    r"referenc\w*|refer\w*|bring\w*\s+up|talk\w*|get\w*\s+into|go\w*\s+into|delv\w*\s+into|touch\w*\s+(?:on|upon)|"
    r"cover\w*|focus\w*\s+on|tak\w*\s+into|explain\w*|describ\w*|address\w*|detail\w*|information|info\b|details?|"
    r"data|facts|anything|stuff|content|aspects?|specifics|reference|mention|talk|discussion|inquir\w*|"
    r"mak\w*\s+(?:any\s+)?(?:references?|mentions?))",
    re.IGNORECASE)
TOPIC = re.compile(r"(?:any(?:thing)?\s+|the\s+)?(?:(?:information|details?|data|mention|reference)\s+)?"
                    r"(?:about|on|regarding|concerning|related\s+to|relating\s+to|relevant\s+to|connected\s+to|"
                    r"involving|including|pertaining\s+to|mentioning|associated\s+with)\b", re.IGNORECASE)
REQUEST_VERB = re.compile(r"(?:mention\w*|includ\w*|involv\w*|discuss\w*|concern\w*|relat\w*|cover\w*|refer\w*|"
                           r"focus\w*|deal\w*|talk\w*|address\w*|touch\w*|contain\w*\s+(?:any\s+)?information)\b",
                           re.IGNORECASE)
_HEDGE_AFTER = re.compile(r"(?:exclusively|necessarily|limited|only|always|entirely|least|just|much|all|quite|yet|so|"
                          r"too|very|sure|certain|necessary|both|merely|solely|simply|completely|fully|really|"
                          r"particularly|even|every|everything|enough|altogether|whether)\b", re.IGNORECASE)
_RHETORICAL = re.compile(r"\b(?:it|this|that)\s+(?:is|was|'s|seems|appears)\s+not\s+(?:likely|clear|known|possible|"
                         r"certain|true|proven|surprising|obvious|necessary|unlikely|impossible|easy)\b"
                         r"|\b(?:is|was|are|were|does|did|do|can|could|would)n't\s+(?:it|this|that|there|they)\b"
                         r"|\b(?:is|are|does|do|did|can|could|would)\s+(?:it|this|that|there|they)\s+not\b",
                         re.IGNORECASE)
_TITLE_QUESTION = re.compile(r"\b(?:who\s+(?:sings?|sang|sung|wrote|writes|recorded|said|says|performed|"
                             r"performs|made|directed|played|plays|starred|stars)|song|songs|lyrics?|album|single|"
                             r"titled|title|movie|film|book|novel|poem|quote|quotation|meaning|released?|"
                             r"come\s+out|came\s+out|tour|episode|show|series|anime|musical)\b", re.IGNORECASE)
# nouns that open a request ("Articles about …") but also a description ("Documents by X were not specified.")
_NOUN_OPEN = set("information info article articles paper papers document documents report reports material "
                 "literature publication publications studies reference references".split())
PERSON = set("i you we he she it they i'm you're we're they're he's she's it's i've you've we've they've i'll "
              "you'll we'll they'll i'd you'd we'd they'd ive im youre".split())
_STATEMENT_VERBS = AUX_SET | set("has have had shows show showed demonstrates demonstrate causes cause leads lead "
                                  "increases increase reduces reduce affects affect improves improve".split())
_WORD = re.compile(r"[\w'’-]+")


@dataclass(frozen=True)
class Intent:
    """Whether a cue fires (``fire``) and why (``reason``, shown by ``--explain``); ``score``: the intent model's
    probability that the cue asks to exclude (None: decided by a rule alone)."""

    fire: bool
    reason: str
    score: float | None = None


def words_before(text: str, start: int, n: int = 4) -> list[str]:
    """Up to ``n`` lower-cased words before ``start`` in the same clause (a comma, ``;`` or sentence end stops)."""
    head = re.split(r"[,;:?!.()\[\]\"“”]\s", text[:start] + " ")[-1] if start else ""
    return [w.lower().replace("’", "'") for w in _WORD.findall(head)][-n:]


def text_after(text: str, end: int) -> str:
    return text[end:].lstrip()


def sentence_span(text: str, start: int) -> tuple[int, int]:
    """Span of the sentence around ``start`` (split at ``?``, ``!``, ``;`` and a period before a space that ends a
    sentence: not an initial or an abbreviation, as the parser splits, "John W. Geary")."""
    begin = max(text.rfind(ch, 0, start) for ch in "?!;")
    for m in re.finditer(r"\.\s+(?=[A-Z\"“])", text[:start]):
        if sentence_end(text, m.start()):
            begin = max(begin, m.start())
    stops = [i for i in (text.find(ch, start) for ch in "?!;") if i >= 0]
    after = next((m for m in re.finditer(r"\.\s+[A-Z\"“]", text[start:]) if sentence_end(text, start + m.start())),
                 None)
    if after:
        stops.append(start + after.start())
    end = min(stops) + 1 if stops else len(text)
    return begin + 1, end


def sentence_kind(text: str, start: int) -> str:
    """``question``, ``request`` (imperative or "I'm looking for …", "Articles about …"), ``fragment`` (no verb:
    "string instruments but not guitars") or ``statement`` (a claim or description) of the sentence at ``start``."""
    begin, end = sentence_span(text, start)
    sentence = text[begin:end].strip()
    words = [w.lower().replace("’", "'") for w in _WORD.findall(sentence)]
    if not words:
        return "fragment"
    lead = words[0]
    if sentence.rstrip(" .").endswith(("?", "？")) or lead in _QUESTION_OPEN:
        return "question"
    if lead in _NOUN_OPEN and sentence.endswith(".") and any(
            w in COPULA and words[i - 1] not in RELATIVE for i, w in enumerate(words) if i):
        return "statement"  # "Documents by the four were not specified." describes; "Documents about X." asks
    if _REQUEST_OPEN.match(sentence) or lead in ("besides", "apart", "aside", "excluding", "except", "other",
                                                  "without", "ignoring", "in"):
        return "request"
    # a finite verb outside a relative clause ("… that are not European" is still a noun phrase)
    finite = any(w in _STATEMENT_VERBS and (i == 0 or words[i - 1] not in RELATIVE) for i, w in enumerate(words))
    if sentence.rstrip().endswith(".") or finite:
        return "statement"
    return "fragment"


def _asker_is_subject(before: list[str]) -> bool:
    """Whether the words before a "do not …" make it the asker's instruction (sentence start, please, I, we,
    a connective, a relative pronoun) rather than a third party's property ("they do not address …")."""
    if not before:
        return True
    last = before[-1]
    if last in ("do", "does", "did", "please", "kindly") and len(before) >= 2:
        last = before[-2]
    return last in {"please", "kindly", "i", "we", "you", "but", "and", "so", "also", "just", "then", "that",
                    "which", "who", "do", "did", "does", "i'd", "we'd", "i'm", "rather", "still", "yet", "while",
                    "let's", "lets", "us"}


# rejections that say the cue is no negation of content at all (hedges, idioms, numbering, the symbol NO, a purpose
# clause) or is decided with another cue ('nor' after 'neither'): facts about words, final; the intent model weighs
# every other decision
_LEXICAL = ("hedge", "idiom", "numbering", "the chemical symbol", "'beside'", "purpose clause", "pair")


def lexical_veto(rule: Intent) -> bool:
    """Whether a rule rejected the cue as a hedge, idiom, numbering, chemical symbol, purpose clause or the second
    half of a pair (final)."""
    return not rule.fire and rule.reason.startswith(_LEXICAL)


def rule_decision(text: str, start: int, end: int, label: str, kind: str) -> Intent:
    """The phrasing rules' verdict on one cue (issue 36); :func:`~lsr_lucene.compose.intent_model.decide` weighs it
    with the cue's context."""
    cue = text[start:end].lower().replace("’", "'")
    before = words_before(text, start)
    after = text_after(text, end)
    sk = sentence_kind(text, start)
    prev = before[-1] if before else ""
    if kind == "and":
        if label == "and also" and sk in ("statement",):
            return Intent(False, "'and also' joins two statements of a description, not two required topics")
        return Intent(True, f"conjunction ({sk})")
    if label == "not only":
        return Intent(False, "idiom 'not only … but also': addition, not exclusion")
    if cue == "nor" and re.search(r"\bneither\b", text[sentence_span(text, start)[0]:start], re.IGNORECASE):
        return Intent(False, "pair: 'nor' continues the 'neither' before it, which decides for both")
    if label == "but not":
        if _HEDGE_AFTER.match(after):
            return Intent(False, f"hedge '{cue} {after.split()[0]}': qualifies, does not exclude")
        if cue.endswith("or not") and (not re.match(r"\w", after) or "whether" in before):
            return Intent(False, "idiom 'whether … or not'")
        if re.match(r"(?:includ\w*|mention\w*|involv\w*|discuss\w*|consider\w*|referr?\w*|any\s+information|"
                    r"(?:any|the)\s+(?:details|mention))\b", after, re.IGNORECASE):
            return Intent(True, f"exclusion: '{cue} {after.split()[0]}' asks to leave something out")
        if sk == "statement":
            return Intent(False, "contrast inside a statement of fact (part of the claim, no request to exclude)")
        return Intent(True, f"exclusion: '{cue}' in a {sk}")
    if label == "that are not":
        return _relative(text, start, end, cue, after, sk)
    if label in ("with the exception of", "except", "excluding", "other than", "besides", "apart from",
                 "aside from", "not interested in"):
        return _explicit(label, cue, before, after, sk, text, start)
    if label == "in addition to":
        opening = sentence_span(text, start)[0] >= start - 1 or not text[sentence_span(text, start)[0]:start].strip()
        if opening and sk in ("question", "request"):
            return Intent(True, "exclusion: 'In addition to X, <question>' asks for the others")
        if re.search(r"\b(?:other|others|else|another|more|further|additional)\b", text[slice(*sentence_span(text, start))],
                     re.IGNORECASE) and sk in ("question", "request"):
            return Intent(True, "exclusion: 'in addition to X, what other …' asks for the others")
        return Intent(False, "'in addition to' adds, it does not exclude (no 'other'/'else' asked for)")
    if label in ("rather than", "unlike", "unrelated to", "not to mention"):
        if sk not in ("question", "request", "fragment"):
            return Intent(False, f"'{cue}' inside a statement of fact (part of the claim)")
        if label == "rather than" and prev and not text[:start].rstrip().endswith(","):
            return Intent(False, f"'{cue}' compares or substitutes ('used {cue} …'), it does not exclude")
        return Intent(True, f"exclusion: '{cue}' in a {sk}")
    if label == "leaving out":
        return _leaving_out(cue, before, after, sk, text, start)
    if label == "don't mention":
        return _dont_mention(cue, before, after, sk, text, start)
    if label == "without":
        if _REQUEST_OBJ.match(after):
            return Intent(True, "exclusion: 'without' + what not to mention")
        if re.search(r"\bwith\s+or\s*$", text[:start], re.IGNORECASE):
            return Intent(False, "idiom 'with or without'")
        if sk != "statement":
            return Intent(True, f"exclusion: 'without' in a {sk}")
        return Intent(False, "'without' inside a statement of fact (part of the claim), not a request to exclude")
    return _generic(text, start, end, cue, before, after, sk)


def _explicit(label: str, cue: str, before: list[str], after: str, sk: str, text: str, start: int) -> Intent:
    """Explicit exclusion phrases: fire except in their idiomatic uses."""
    prev = before[-1] if before else ""
    if label == "other than" and (prev in ("none", "no") or re.match(r"that\b", after, re.IGNORECASE)):
        return Intent(False, f"idiom '{prev} other than' / 'other than that'")
    mid_sentence = bool(text[sentence_span(text, start)[0]:start].strip())
    if label in ("apart from", "aside from") and ((re.match(r"(?:being|having)\b", after, re.IGNORECASE) and mid_sentence)
                                                  or prev in ("far", "set", "stand", "stands", "stood", "tell", "sets")):
        return Intent(False, f"'{cue}' in its additive or spatial sense, not an exclusion")
    if label == "besides" and cue == "beside" and before:
        return Intent(False, "'beside' (next to), not 'besides'")
    if label == "excluding" and (prev in COPULA | {"be", "been", "being", "mutually"} or cue.endswith("es")) \
            and sk == "statement":
        return Intent(False, f"'{cue}' states a fact (passive or third person), not a request")
    if label == "except" and re.match(r"(?:that|when|where|if|as)\b", after, re.IGNORECASE):
        return Intent(False, f"'{cue} {after.split()[0]}' qualifies a clause, not an exclusion of a topic")
    subject = before[-2] if prev in COPULA and len(before) >= 2 else prev
    if label == "not interested in" and subject not in ("i", "we", "you", "i'm", "we're", "") and \
            not cue.startswith(("am", "'m", "i ", "we ", "i'm", "we're")):
        return Intent(False, "someone else's lack of interest (a statement), not the asker's request")
    return Intent(True, f"exclusion phrase '{cue}'")


def _relative(text: str, start: int, end: int, cue: str, after: str, sk: str) -> Intent:
    """"… that are not X": identity or topic exclusion fires; a negated property of a noun does not."""
    if sk == "statement":
        return Intent(False, f"'{cue}' describes a noun inside a statement (part of the claim)")
    aux = cue.split()[1] if len(cue.split()) > 1 else ""
    if _HEDGE_AFTER.match(after):
        return Intent(False, f"hedge '{cue} {after.split()[0]}'")
    if aux in COPULA or REQUEST_VERB.match(after) or TOPIC.match(after):
        return Intent(True, f"exclusion: '{cue}' names what the answers must not be or be about")
    return Intent(False, f"'{cue}' + verb narrows a noun by a property (what it does not do), not a topic to exclude")


def _leaving_out(cue: str, before: list[str], after: str, sk: str, text: str, start: int) -> Intent:
    """"leaving out", "omit", "ignore", "avoid", "skip", "disregard", "refrain from" …"""
    prev = before[-1] if before else ""
    if prev == "to" and not re.match(r"(?:please|kindly)", " ".join(before[-3:-1])):
        return Intent(False, f"purpose clause 'to {cue}', not a request to exclude")
    if re.search(r"(?:ed|en)$", cue.split()[0]) and prev in AUX_SET | {"be", "being", "been", "get", "got"}:
        return Intent(False, f"passive '{prev} {cue}': a statement, not a request")
    if sk == "statement" and not _REQUEST_OBJ.match(after):
        return Intent(False, f"'{cue}' inside a statement of fact")
    if _REQUEST_OBJ.match(after) or not before or prev in ("please", "kindly", "but", "and", "while", "also", "i",
                                                           "we", "just", "then", "by", "you", "while"):
        return Intent(True, f"exclusion: '{cue}' asks to leave something out")
    if text[:start].rstrip().endswith(",") and cue.endswith("ing"):
        return Intent(True, f"exclusion: ', {cue} X' appended to a {sk}")
    return Intent(False, f"'{cue}' describes an action in the text, not a request to leave something out")


def _dont_mention(cue: str, before: list[str], after: str, sk: str, text: str, start: int) -> Intent:
    """"(please) don't mention / include / want to hear about …"; "I don't need / want X" said after the question
    (its own sentence) leaves X out."""
    words = cue.split()
    verb = words[-1]
    if words and words[-1] == "to":
        verb = words[-2]
    if re.match(r"(?:want|need|care)", verb):
        follows_question = text[:sentence_span(text, start)[0]].rstrip().endswith(("?", "？"))
        if follows_question and before and set(before) <= {"i", "we", "but", "and", "also", "just", "really"} \
                and before[-1] in ("i", "we", "really", "just"):
            return Intent(True, f"exclusion: '{cue} …' after the question says what to leave out")
        if not re.match(r"(?:to\s+)?(?:hear|know|read|see|learn|get|find|be\s+told|have)?\s*(?:\w+\s+)?"
                        r"(?:about|of|information|details|anything|any|stuff|mention|results?|articles?|documents?)\b",
                        after, re.IGNORECASE) and not re.match(r"(?:anything|any|information|details|to\s+hear)\b",
                                                               after, re.IGNORECASE):
            return Intent(False, f"'{cue} {' '.join(after.split()[:2])}' is part of the text (a lyric, a wish), "
                                 "not a topic to exclude")
    if re.match(r"by\b", after, re.IGNORECASE):
        return Intent(False, f"passive '{cue} by …': a statement, not a request")
    if sk in ("question", "request") and (TOPIC.match(after) or re.match(r"(?:any|anything)\b", after, re.IGNORECASE)
                                         or "allowed" in cue):
        return Intent(True, f"exclusion: '{cue}' + the topic to leave out, in a {sk}")
    if not _asker_is_subject(before):
        return Intent(False, f"'{cue}' says what a third party does not do (a statement), not what the asker "
                             "wants left out")
    if sk == "statement" and before and before[-1] not in ("please", "kindly", "but", "and", "i", "we"):
        return Intent(False, f"'{cue}' inside a statement of fact")
    return Intent(True, f"exclusion: request '{cue}'")


def _generic(text: str, start: int, end: int, cue: str, before: list[str], after: str, sk: str) -> Intent:
    """General negation (not, no, n't, never, nor, neither): fires only in an exclusion frame."""
    prev = before[-1] if before else ""
    raw = text[start:end]
    if cue == "no" and re.match(r"\.\s*\d|\s*\d", text[end:end + 3]):
        return Intent(False, "numbering ('no. N'), not a negation")
    if raw == "NO" or (cue == "no" and re.match(r"[-\s]?(?:synthase|donor|production|release|levels?|signal\w*)\b",
                                                 after, re.IGNORECASE) and raw != "no"):
        return Intent(False, "the chemical symbol NO (nitric oxide), not a negation")
    if cue == "no" and re.match(r"(?:longer|matter|doubt|one|less|more)\b", after, re.IGNORECASE):
        return Intent(False, f"idiom 'no {after.split()[0]}'")
    if cue == "not" and _HEDGE_AFTER.match(after):
        return Intent(False, f"hedge 'not {after.split()[0]}': qualifies, does not exclude")
    if cue == "not" and prev == "whether":
        return Intent(False, "idiom 'whether not'")
    if cue == "not" and re.match(r"[,;:.?!)]|$", after):
        return Intent(False, f"idiom: elliptical '{prev} not' (nothing negated follows in its clause)")
    if re.search(r"\bwith\s+or\s*$", text[:start], re.IGNORECASE) or (cue == "not" and prev == "or"):
        return Intent(False, "idiom 'with or without' / 'or not'")
    if sk != "statement" and (cue in ("not", "cannot") or cue.endswith("n't")) and any(w in CONTRAST for w in before):
        j = max(i for i, w in enumerate(before) if w in CONTRAST)
        between = before[j + 1:]
        if len(between) <= 3 and not any(w in PERSON for w in between) and not _HEDGE_AFTER.match(after):
            return Intent(True, f"exclusion: contrastive '{before[j]} … {cue}' in a {sk}")
    if _RHETORICAL.search(text[max(0, start - 20):end + 20]):
        return Intent(False, "rhetorical negation ('it is not likely that …'), part of the question")
    appended = cue == "not" and text[:start].rstrip().endswith(",") and bool(re.match(
        r"(?:the|a|an|his|her|its|their|any)\b", after))  # "…the film The Fog, not the orchestrators …": no title
    if sk != "statement" and _TITLE_QUESTION.search(text[slice(*sentence_span(text, start))]) and not appended and \
            (prev in PERSON or prev in AUX_SET or not before or re.match(r"\w+n't", cue) or cue in ("never", "no")):
        return Intent(False, "negation inside a title, lyric or quotation (a name to match, not to exclude)")
    if prev in PERSON or (len(before) >= 2 and before[-2] in PERSON and prev in AUX_SET):
        if re.match(r"interested\b", after, re.IGNORECASE):
            return Intent(True, "exclusion: the asker is not interested in it")
        return Intent(False, "first/second-person clause (a quotation, a title or the asker's situation), "
                             "not a topic to exclude")
    if re.search(r"\bthere\s+(?:is|are|was|were|be|'s)\s*$", text[:start], re.IGNORECASE) or \
            prev in ("has", "have", "had", "shows", "show", "showed", "demonstrates", "demonstrate", "found", "find",
                     "with", "having", "contains", "contain", "exerts", "exert", "produces", "requires", "makes"):
        return Intent(False, f"negation narrows what is stated ('{prev} {cue} …'), part of the claim or question")
    if sk == "statement":
        return Intent(False, "negated statement of fact: the negation is part of the claim")
    if cue in ("neither", "nor"):
        if cue == "neither" and prev in COPULA | {"that", "which", "who", "but"}:
            return Intent(True, "exclusion: 'neither X nor Y' names what the answers must not be")
        if cue == "neither" and sk in ("question", "request") and (
                prev in ("want", "wants", "wanted", "need", "needs", "like") or text[:start].rstrip().endswith(",")):
            return Intent(True, "exclusion: 'neither X nor Y' set off in a question or wanted by the asker")
        return Intent(False, f"'{cue}' joins negated parts of the question, not a request to exclude")
    if cue in ("not", "n't") or re.match(r"\w+n't$", cue) or cue == "cannot":
        return _generic_not(text, start, end, cue, before, after, sk)
    return Intent(False, f"'{cue}' belongs to the question (no exclusion frame such as 'but not', 'that are not', "
                         "'not about')")


def _generic_not(text: str, start: int, end: int, cue: str, before: list[str], after: str, sk: str) -> Intent:
    """"not" / "…n't" in a question, request or fragment: contrastive, relative or topic frames fire."""
    prev = before[-1] if before else ""
    aux_before = cue.endswith("n't") or prev in AUX_SET
    # "… that isn't spitting", "… which are not X" (contrastive "but … isn't" is decided in :func:`_generic`)
    if cue.endswith("n't"):
        rel, copula = prev, cue in ("isn't", "aren't", "wasn't", "weren't")
    else:
        rel, copula = (before[-2] if len(before) >= 2 else ""), prev in COPULA
    if rel in RELATIVE and aux_before:
        if copula or REQUEST_VERB.match(after) or TOPIC.match(after):
            return Intent(True, f"exclusion: relative '{rel} … {cue}' names what the answers must not be")
        return Intent(False, f"relative '{rel} … {cue}' + verb narrows a noun by a property, not a topic to exclude")
    # "…, not any information about X", "not related to X"
    if cue == "not" and not aux_before and TOPIC.match(after):
        return Intent(True, "exclusion: 'not' before a topic ('not about …', 'not any information on …')")
    if cue == "not" and not aux_before and text[:start].rstrip().endswith(",") and sk in ("question", "request"):
        return Intent(True, f"exclusion: ', not X' appended to a {sk}")
    if aux_before:
        return Intent(False, "negated predicate of the question (what is asked about), not a request to exclude")
    return Intent(False, f"'{cue}' narrows a noun or belongs to the question, not a request to exclude")
