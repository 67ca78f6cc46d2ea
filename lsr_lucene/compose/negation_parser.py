"""Deterministic cue parser: natural-language negated / exclusionary / conjunctive queries -> composition trees.

"books about monarchs that are not European" -> NOT(A="books about monarchs", B="European");
"Besides Jed York, are there any famous relatives of Edward J. DeBartolo Jr.?" ->
NOT(A="are there any famous relatives of Edward J. DeBartolo Jr.?", B="Jed York");
"documentaries about education that are also about disability" -> AND(A, B).

Rules (no model, no network; regular expressions over the text, linear in its length):

1. Cues: exclusion phrases (``besides``, ``apart from``, ``aside from``, ``other than``, ``except (for)``,
   ``excluding``/``exclude``, ``with the exception of``, ``in addition to``, ``rather than``, ``unlike``,
   ``leaving out``/``leaving aside``/``setting aside``, ``not including``, ``not counting``, ``without (mentioning …)``,
   ``with no mention of``, ``with nothing about``, ``mentioning neither … nor``, ``but not``, ``that are not``,
   ``(please) do not / don't (mention|include|…)``, ``not interested in``, ``I'm not after / looking for / asking
   about`` and ``I don't need / want`` in a sentence after the question, ``refrain from``, ``avoiding``,
   ``ignoring``, ``not only … but also``), general negation (``not``, ``no``, ``never``, ``…n't``,
   ``cannot``) and conjunction (``that are also``, ``which are also``, ``and also``). Cues inside quotes
   are ignored (titles such as "They Shoot Horses, Don't They?"). Split verbs are joined first ("leaving X out (of
   it)", "setting X aside", "with X left out" -> "leaving out X", "setting aside X").
2. Each candidate is judged by :func:`lsr_lucene.compose.intent_model.decide` (exclusion intent or ordinary negation:
   statements of fact, hedges, idioms, numbering, titles …); a rejected candidate is reported with its reason
   and skipped. The left-most cue that fires wins (at one position, the longest). If it opens the sentence
   ("Besides X, …", "Please exclude X."), B runs to the first comma outside quotes and brackets (else to the
   sentence end) and A is the rest. Otherwise B runs from the cue to the next boundary: a comma, ``;``, ``?``, ``!``, a
   sentence-ending period, a later exclusion cue that would fire, or a new question clause (", and what …"; a
   comma before "or Z" continues a list); A is the text before the cue plus the text after B.
3. B loses leading filler words ("any information about", "mentioning anything related to", "the");
   A loses dangling connectives and auxiliaries at its ends ("but", "while", "please", "does", "is"); a verb
   at its end stays as the main verb ("what operations does ESPN Inc. have?") unless the cut negation took it
   ("… symptoms but are [not X]").
   A cue whose A or B ends up empty is skipped (the next cue is tried); a query without a usable cue
   stays one atomic text.
4. A is parsed again (more cues give nested trees: ``not(not(A, B1), B2)``); B's excluded items ("Y or Z",
   "neither Y nor Z", "Y and Z", "X, Y and Z"; not an "and" inside a name or after "between") become ``or(Y, Z)``,
   each without "general"; B is not parsed for cues. For ``and`` cues both sides are parsed.

:func:`explain_parse` returns the tree with every decision (:class:`ParseReport`: fired and rejected
:class:`CueDecision` s and their reasons); ``--explain`` prints :meth:`ParseReport.lines`.
"""
from __future__ import annotations

import re
from collections import Counter
from typing import Iterable

from lsr_lucene.compose.intent_model import decide
from lsr_lucene.compose.parse_report import Cue, CueDecision, Parse, ParseReport  # noqa: F401 (re-exported)
from lsr_lucene.compose.query_text import normalise, sentence_end  # noqa: F401 (normalise re-exported)
from lsr_lucene.compose.tree import Node, Tree, format_tree

# ---------------------------------------------------------------------------------------------- cues
_VERBS = (r"mention\w*|includ\w*|involv\w*|discuss\w*|consider\w*|referenc\w*|refer\w*|bring\w*\s+up|talk\w*"
          r"|get\w*\s+into|go\w*\s+into|touch\w*\s+on|cover\w*|want|need|care|allowed\s+to\s+mention"
          r"|mak\w*\s+any\s+references?")
_DONT = (r"(?:do\s+not|don'?t|does\s+not|doesn'?t|did\s+not|didn'?t|cannot|can'?t|could\s+not|couldn'?t"
         r"|should\s+not|shouldn'?t|will\s+not|won'?t|would\s+not|wouldn'?t|must\s+not|not)")

# (label, kind, regex); kind: "not" = exclusion/negation, "and" = conjunction; "generic" negations never end B
_CUES: list[tuple[str, str, str]] = [
    ("that are also", "and", r"(?:that|which|who)\s+(?:are|is)\s+also"),
    ("and also", "and", r"and\s+also"),
    ("not only", "not", r"not\s+only"),
    ("with the exception of", "not", r"with\s+the\s+exception\s+of"),
    ("except", "not", r"except(?:\s+for)?"),
    ("excluding", "not", r"ex+clu+d+(?:e|es|ed|ing)|exclusive\s+of|(?:not|without)\s+counting"),
    ("other than", "not", r"other\s+than"),
    ("rather than", "not", r"rather\s+than|instead\s+of"),
    ("besides", "not", r"besides|beside"),
    ("apart from", "not", r"apart\s+from"),
    ("aside from", "not", r"aside\s+from"),
    ("in addition to", "not", r"in\s+addition\s+to"),
    ("unlike", "not", r"unlike"),
    ("leaving out", "not", r"leav\w*\s+(?:out|aside)|omitt?\w*|skipp?\w*|disregard\w*|ignor\w*|avoid\w*"
                           r"|refrain\w*\s+from|steer\w*\s+clear\s+of|(?:set|put|lay|lai)\w*\s+aside"),
    ("unrelated to", "not", r"unrelated\s+to"),
    ("not to mention", "not", r"not\s+to\s+mention"),
    ("not interested in", "not", r"(?:(?:i|we)\s+(?:am|are)\s+|(?:i'm|we're)\s+|am\s+|'m\s+)?not\s+interested\s+in"
                                             r"(?:\s+hearing\s+about)?"
                                             r"|(?:(?:i|we)\s+(?:am|are)|i'm|we're)\s+not\s+(?:after|looking\s+for"
                                             r"|asking\s+(?:about|for)|seeking|searching\s+for)"),
    ("don't mention", "not", rf"(?:please\s+)?{_DONT}\s+(?:\w+\s+)?(?:to\s+)?(?:{_VERBS})"),
    ("without", "not", r"without|with\s+(?:no|nothing)(?:\s+(?:mentions?|discussion|details?|information|info|coverage"
                       r"|references?|word|talk))?\s+(?:of|about|on|regarding|concerning)"
                       r"|(?:mention\w*|includ\w*|cover\w*|discuss\w*)(?=\s+neither\b)"),
    ("but not", "not", r"but\s+not|and\s+not|or\s+not"),
    ("that are not", "not", r"(?:that|which|who)\s+(?:are|is|were|was|do|does|did)\s+not"),
    ("no", "generic", r"no|none\s+of|nor|neither"),
    ("never", "generic", r"never"),
    ("n't", "generic", r"\w+n't|\w+n’t|cannot"),
    ("not", "generic", r"not"),
]
_CUE_RE = re.compile("|".join(f"(?P<c{i}>\\b(?:{rx})\\b)" for i, (_, _, rx) in enumerate(_CUES)), re.IGNORECASE)

# words dropped from the start of B: the cue's own filler ("any information about", "mentioning the")
B_FILLER = set("""
please kindly also even just any anything all whatsoever specific specifically particular particularly especially
mention mentions mentioning mentioned include includes including included involve involving involves discuss
discussing consider considering reference references referencing refer referring bring bringing up talk talking
get getting go going into focus focusing on touch touching cover covering address addressing use using want need
care tell telling list listing provide providing give giving add adding describe describing take taking account
accounting for allowed make making to information info detail details data content contents aspect aspects
connection connections relation relations association associations related relating relevant relate relates
pertaining regarding concerning about of from in with the a an that those these which is are was were be being
hear hearing know knowing more stuff things thing mentions references involvement involvements reference
concern concerns
""".split())
_B_KEEP_LAST = re.compile(r"^[\"'“”‘’«»]+|[\"'“”‘’«»]+$")
# words dropped from the start of A (dangling connectives) and from its end (connectives, auxiliaries)
_A_LEAD = set("but while and or so yet though although however please kindly also just let's lets note".split())
_A_TAIL = _A_LEAD | set("""
specifically particularly especially only solely mainly focusing that which who whom whose is are was were be been
being do does did has have had can could would will shall should may might must with without the a an any some
i i'm
""".split())
# verbs that can end a clause as its main verb ("what operations does ESPN Inc. have?", "who the actors are"): at
# A's end they are dropped only when the cut negation took them ("… but are [not X]"), see _negated_aux
_A_MAIN_VERB = set("be been being is are was were do does did has have had".split())
_NEGATED_AUX = re.compile(r"\b(?:%s)\s+(?:(?:specifically|particularly|especially|only|solely|mainly|also|just|"
                          r"certainly|definitely|really)\s+)*$" % "|".join(sorted(_A_MAIN_VERB)), re.IGNORECASE)
# words that open a new clause after a comma (a comma before them ends B)
_CLAUSE_START = set("""
what which who whom whose how where when why whether can could would will shall should may might must is are was were
do does did has have had please and but or while so yet i i'm we you he she they it tell list name give provide
describe explain share thank thanks also as especially particularly focusing including excluding without except
besides apart aside other rather not let's let
""".split())
_QUOTE_PAIRS = {'"': '"', "“": "”", "«": "»", "(": ")", "[": "]"}
_NEW_CLAUSE = re.compile(r"\s+(?:[Aa]nd|[Bb]ut)\s+(?=(?:what|which|who|whom|whose|how|where|when|why|can|could|would|"
                         r"please|tell|list|give|provide|describe|explain|is|are|was|were|did|does|do)\b)")


def _protected(text: str) -> list[bool]:
    """Per character: inside quotes or brackets (cues and boundaries there are ignored)."""
    inside = [False] * len(text)
    stack: list[str] = []
    for i, ch in enumerate(text):
        if stack and ch == stack[-1]:
            inside[i] = True
            stack.pop()
            continue
        if ch in _QUOTE_PAIRS and not (ch == '"' and stack and stack[-1] == '"'):
            # a straight quote opens only if another one closes it later
            if ch == '"' and text.find('"', i + 1) < 0:
                continue
            if ch in "“«([" and text.find(_QUOTE_PAIRS[ch], i + 1) < 0:
                continue
            stack.append(_QUOTE_PAIRS[ch])
            inside[i] = True
            continue
        inside[i] = bool(stack)
    for i, ch in enumerate(text):  # American punctuation: a comma just inside a closing quote ends a clause
        if ch == "," and 0 < i + 1 < len(text) and text[i + 1] in "\"”»" and inside[i + 1] and \
                (i + 2 >= len(text) or not text[i + 2].isalnum()):
            inside[i] = False
    return inside


_WORD_START = re.compile(r"\b\w")


def _cue_matches(text: str, protected: list[bool]) -> list[tuple[int, int, int]]:
    """(start, end, cue index) of every cue outside quotes, left to right (longest at equal start).

    Cues are tried only at word starts (not at every character): the parser stays well under a
    millisecond per query.
    """
    found = []
    free = 0
    for word in _WORD_START.finditer(text):
        pos = word.start()
        if pos < free or protected[pos]:
            continue
        m = _CUE_RE.match(text, pos)
        if m:
            found.append((m.start(), m.end(), int(str(m.lastgroup)[1:])))
            free = m.end()
    return found


_WORDS_AFTER = re.compile(r"\s*([\w']+)(?:\s+([\w']+))?")  # the one or two words after a comma


def _word_after(text: str, i: int) -> str:
    """The word right after the comma at ``i``, lower case ("" when none)."""
    m = _WORDS_AFTER.match(text, i + 1)
    return m.group(1).lower() if m else ""


def _clause_comma(text: str, i: int) -> bool:
    """Whether the comma at ``i`` is followed by a word that opens a new clause."""
    m = _WORDS_AFTER.match(text, i + 1)
    if not m or m.group(1).lower() not in _CLAUSE_START:
        return False
    if m.group(1).lower() in _LIST_JOINERS:  # ", or Z" ends a list; ", and what …" opens a clause
        return bool(m.group(2)) and m.group(2).lower() in _CLAUSE_START - _LIST_JOINERS
    return True


_LIST_JOINERS = {"and", "or", "but", "nor"}
# the verb of a main clause after a relative clause ("sights that are neither X nor Y | are open at night")
_CLAUSE_VERB = re.compile(r"\s(?:are|is|was|were|do|does|did|have|has|had|can|could|will|would|should|may|might)\b",
                          re.IGNORECASE)


def _number_comma(text: str, i: int) -> bool:
    return 0 < i < len(text) - 1 and text[i - 1].isdigit() and text[i + 1].isdigit()


def _boundary(text: str, start: int, protected: list[bool], commas: str = "clause") -> int:
    """Index of the first clause boundary at or after ``start`` (len(text) when none).

    ``commas``: "any" (every comma ends the clause), "clause" (only a comma opening a new clause),
    "none".
    """
    for i in range(start, len(text)):
        if protected[i]:
            continue
        ch = text[i]
        if ch in "?!;":
            return i
        if ch == ":" and not (i + 1 < len(text) and text[i + 1].isdigit()):
            return i
        if ch == "," and not _number_comma(text, i):
            if commas == "any" or (commas == "clause" and _clause_comma(text, i)):
                return i
        if ch == "." and sentence_end(text, i):
            return i
    return len(text)


def _prefix_end(text: str, start: int, protected: list[bool]) -> int:
    """End of a sentence-opening cue clause: the last comma before the sentence end that opens a new
    clause ("Apart from X, who was born here, what else …"; not one before "and/or/but …", which coordinates a second
    question with A's), else the first comma, else the sentence end."""
    end = _boundary(text, start, protected, commas="none")
    commas = [i for i in range(start, end) if text[i] == "," and not protected[i] and not _number_comma(text, i)]
    clause = [i for i in commas if _clause_comma(text, i)]
    opening = [i for i in clause if _word_after(text, i) not in _LIST_JOINERS]
    if opening:
        return opening[-1]
    if clause:
        return clause[-1]
    if commas:
        return commas[0]
    return end


def _at_sentence_start(text: str, start: int) -> bool:
    """Whether only transparent words (please, but, note:) separate ``start`` from a sentence start."""
    before = text[:start]
    cut = max(before.rfind(ch) for ch in "?!;")
    period = [m.end() for m in re.finditer(r"\.\s", before) if sentence_end(before, m.start())]
    if period:
        cut = max(cut, period[-1] - 1)
    head = before[cut + 1:].strip().lower()
    head = re.sub(r"^(note|also|ps|p\.s\.)\s*:?\s*", "", head)
    return all(w in {"please", "but", "and", "also", "kindly", "so", "now", "then", "however", ","} for w in
               re.findall(r"[\w']+|,", head))


_B_LIGHT = set("please any the a an".split())
# dropped from the start of each of B's alternatives too: a qualifier that marks a sub-aspect of A's topic ("… but
# not A or general B symptoms" excludes "B symptoms"); possessives stay ("his death": the death of A's entity)
_PART_LIGHT = _B_LIGHT | set("general generic".split())


def _strip_b(b: str, light: bool = False) -> str:
    """Drop filler words at the start of B (only articles for general negations) and quotes around it."""
    filler = _B_LIGHT if light else B_FILLER
    return _strip_words(b, filler)


def _strip_words(b: str, filler: set[str]) -> str:
    """Drop ``filler`` words at the start of B, a dangling joiner at its end and quotes around it."""
    words = b.split()
    while words and re.sub(r"[^\w']", "", words[0].lower()) in filler and words[0][:1] not in "\"“«":
        words.pop(0)  # a word that opens a quote begins a title ('"The Jungle Book"'): it stays
    while words and words[-1].lower().strip(",;") in _LIST_JOINERS | {"yet", "while"}:
        words.pop()  # "… or" left before a later cue
    out = " ".join(words).strip(" ,.;:")
    out = _B_KEEP_LAST.sub("", out).strip()
    if out.lower().endswith(("'s information", "'s details", " information", " details")):
        out = re.sub(r"(?:'s)?\s*(?:information|details)$", "", out, flags=re.IGNORECASE).strip()
    return out


def _negated_aux(text: str, start: int) -> bool:
    """Whether the cue at ``start`` negates the auxiliary right before it ("… but are not X", "are neither"): cutting
    the cue leaves that auxiliary dangling at A's end; any other verb there is a main verb that A keeps."""
    return bool(re.match(r"(?:not|never|neither|nor|no|none)\b(?!\s+to\s+mention)", text[start:], re.IGNORECASE)
                and _NEGATED_AUX.search(text[:start]))


def _strip_a(a: str, keep_verb: bool = False) -> str:
    """Drop dangling connectives/auxiliaries at both ends of A (and before its punctuation); tidy punctuation.

    ``keep_verb``: A's last word, when it is a verb that can be a main verb (have, do, be, is, …), stays ("what
    broadcasting operations does ESPN Inc. have?"); the caller passes False where the cut negation took it.
    """
    a = re.sub(r"\s+([,?.!;:])", r"\1", a)
    a = re.sub(r"(?<=\w)\.\.(?=\s|$)", ".", a)  # "… planning. ." after the cue's sentence went
    lead = "|".join(sorted(_A_LEAD, key=len, reverse=True))
    a = re.sub(rf"(?:,\s*)?\b(?:{lead})\s*(?=[,?.!;:]|$)", "", a, flags=re.IGNORECASE)  # "…, while?" -> "…?"
    a = re.sub(r"([,;:])\s*(?=[,;:?.!])", "", a)
    a = re.sub(r"^[\s,;:.?!]+", "", a)
    words = a.split()

    def core(w: str) -> str:
        return re.sub(r"[^\w']", "", w.lower())

    while words and (core(words[0]) in _A_LEAD or not core(words[0])):
        words.pop(0)
    tail = ""
    end = re.search(r"[?.!]+$", words[-1]) if words else None
    if end:
        tail = end.group(0)
        words[-1] = words[-1][: -len(tail)]
        if not words[-1]:
            words.pop()
    while len(words) > 1 and (core(words[-1]) in _A_TAIL or not core(words[-1])):
        if keep_verb and core(words[-1]) in _A_MAIN_VERB:
            break
        words.pop()
    text = " ".join(words).strip(" ,;:")
    if not text:
        return ""
    # a question mark stays A's end when the follow-up sentence went ("Tom Hanks? I'm not interested in X." -> not
    # "Tom Hanks?.")
    return re.sub(r"([?!])[?!.]*$", r"\1", text + ("" if re.search(r"[?.!]$", text) else tail))


def _has_content(text: str) -> bool:
    return bool(re.search(r"\w", text))


def _split(text: str, start: int, end: int, label: str, kind: str, matches,
           protected: list[bool]) -> tuple[str, str]:
    """(A, B) texts for the cue text[start:end] (before clean-up)."""
    if kind == "and":
        return text[:start], text[end:]
    if _at_sentence_start(text, start) and label not in ("that are not", "but not"):
        stop = _prefix_end(text, end, protected)
        b = text[end:stop]
        rest = text[stop + 1:] if stop < len(text) and text[stop] == "," else text[stop:]
        return text[:start] + " " + rest, b
    stop = _boundary(text, end, protected, commas="clause")
    for s, e, index in matches:  # a later exclusion cue (one that would fire) also ends B
        if end < s < stop and _CUES[index][1] == "not" and decide(text, s, e, _CUES[index][0], "not").fire:
            trail = re.search(r",\s*$", text[end:s])  # "… besides X, leaving out Y?": the comma stays with A's cue
            stop = end + trail.start() if trail else s
            break
    clause = _NEW_CLAUSE.search(text, end, stop)
    if clause:
        stop = clause.start()
    joiner = re.search(r"(?:,?\s+(?:but|and|or|yet|while))+\s*$", text[end:stop], re.IGNORECASE)
    if joiner and stop < len(text) and text[stop] not in "?!.;,":
        stop = end + joiner.start()  # "… without X but do not include Y": A keeps "but do not include Y"
    if text[start:end].lower() == "neither":  # "…, neither X nor Y, are used for …": B ends at the comma after Y
        nor = re.compile(r"\bnor\b", re.IGNORECASE).search(text, end, stop)
        comma = next((i for i in range(nor.end(), stop) if text[i] == "," and not protected[i]
                      and not _number_comma(text, i)), None) if nor else None
        if nor and comma is None and stop < len(text) and text[stop] == ",":
            comma = stop
        relative = re.search(r"\s*\b(?:that|which|who)\s+(?:are|is|were|was)\s+$", text[:start], re.IGNORECASE)
        verb = _CLAUSE_VERB.search(text, nor.end(), stop) if nor and comma is None and relative else None
        if verb and relative:  # "Which sights that are neither X nor Y are open …?": the clause ends before its verb
            return text[:relative.start()] + text[verb.start():], text[end:verb.start()]
        if comma is not None:
            stop = comma
            if re.search(r",\s*$", text[:start]):  # set off by commas on both sides: A reads on across them
                return text[:text.rindex(",", 0, start)] + " " + text[stop + 1:], text[end:stop]
        head = re.sub(r"\b(?:(?:if|as|since|because)\s+)?(?:i|we)\s+(?:want|need|would\s+like)\s*$", "",
                      text[:start], flags=re.IGNORECASE)  # "… if I want neither X nor Y": the asker's wish goes
        return head + " " + text[stop:], text[end:stop]
    if label == "that are not":  # "Which novels that were not written by X are set in Y?": B ends before the verb
        verb = _CLAUSE_VERB.search(text, end, stop)
        if verb and _has_content(text[end:verb.start()]) and _has_content(text[verb.end():stop]):
            return re.sub(r",\s*$", " ", text[:start]) + text[verb.start():], text[end:verb.start()]
        aside = _relative_aside_end(text, start, end, stop, protected)
        if aside is not None:  # "Which details of X, which do not concern Y or Z, cover W?": A reads on after it
            return text[:text.rindex(",", 0, start)] + " " + text[aside + 1:], text[end:aside]
    aside = _aside_end(text, start, end, stop, protected)
    if aside is not None:  # "What symbols, excluding X, appear on …?": B is the aside, A reads on after it
        return text[:text.rindex(",", 0, start)] + " " + text[aside + 1:], text[end:aside]
    if (stop >= len(text) or text[stop] in "?!.") and len(_sentence_head(text, start).split()) <= 3:
        # "Who else besides Marco Pierre White had a role in …?": B is the named entity after the cue
        entity = _entity_end(text, end, stop)
        if entity is not None:
            stop = entity
    return text[:start] + " " + text[stop:], text[end:stop]


def _aside_end(text: str, start: int, end: int, stop: int, protected: list[bool]) -> int | None:
    """Closing comma of a cue clause set off by commas right after a short sentence head ("What symbols, excluding
    the Red Hand, appear on the Ulster flag?"), where the head alone is no question; None otherwise."""
    if not re.search(r",\s*$", text[:start]) or len(_sentence_head(text, start).replace(",", " ").split()) > 3:
        return None
    for i in range(end, stop):
        if text[i] == "," and not protected[i] and not _number_comma(text, i):
            rest = re.match(r"\s*([\w']+)", text[i + 1:])
            if rest and rest.group(1).lower() not in _LIST_JOINERS:
                return i
            return None
    return None


def _relative_aside_end(text: str, start: int, end: int, stop: int, protected: list[bool]) -> int | None:
    """Closing comma of a relative clause set off by commas ("…, which do not concern Y or Z, cover W?"): the first
    comma after the cue whose following words up to the clause's end list no further item (", Y or Z?" continues
    B's list); None when the cue has no comma before it or no such comma follows."""
    if not re.search(r",\s*$", text[:start]):
        return None
    for i in range(end, min(stop + 1, len(text))):  # the comma that ended B's clause closes it too
        if text[i] == "," and not protected[i] and not _number_comma(text, i):
            rest = text[i + 1:_boundary(text, i + 1, protected, commas="none")]
            if re.match(r"\s*(?:and|or|nor)\b", rest, re.IGNORECASE) or \
                    re.search(r"\b(?:and|or|nor)\b", rest.split(",")[0], re.IGNORECASE):
                return None
            return i if _has_content(rest) else None
    return None


_CONNECT = set("of de the and & von van la le du da di del der den y".split())


def _sentence_head(text: str, start: int) -> str:
    """Text of the current sentence before ``start``."""
    before = text[:start]
    cut = max(before.rfind(ch) for ch in "?!;")
    ends = [i for i, ch in enumerate(before) if ch == "." and sentence_end(before, i)]  # not "George H. W. Bush"
    return before[max([cut, *ends]) + 1:]


def _entity_end(text: str, start: int, stop: int) -> int | None:
    """End of the run of capitalised words (a name) that opens text[start:stop], after filler words."""
    tokens = [(m.start(), m.end(), m.group(0)) for m in re.finditer(r"\S+", text[start:stop])]
    i = 0
    while i < len(tokens) and re.sub(r"[^\w']", "", tokens[i][2].lower()) in B_FILLER and not tokens[i][2][:1].isupper():
        i += 1
    last = None
    while i < len(tokens):
        word = tokens[i][2]
        if word[:1].isupper() or word[:1].isdigit() or word[:1] in "\"“'":
            last = tokens[i][1]
        elif word.lower() in _CONNECT and i + 1 < len(tokens) and tokens[i + 1][2][:1].isupper():
            pass
        else:
            break
        i += 1
    if last is None or last >= stop - start:
        return None
    return start + last


def explain_parse(text: str, max_cues: int = 8) -> ParseReport:
    """Parse a query and report every cue decision (deterministic, no model)."""
    norm = normalise(text)
    report = ParseReport(text, norm)
    report.tree = _parse(norm, report, max_cues)
    return report


def parse(text: str, max_cues: int = 8) -> ParseReport:
    """Parse a query into a composition tree (``.tree``) with the cue rules above; see :func:`explain_parse`."""
    return explain_parse(text, max_cues)


def _reject(report: ParseReport, decision: CueDecision) -> None:
    """Record a rejected candidate once (A is parsed again after a split, so a candidate can be met twice, its
    intent score read in a shorter text: the first decision is kept)."""
    if not any(r.cue == decision.cue and r.text == decision.text and r.start == decision.start
               for r in report.rejected):
        report.rejected.append(decision)


# what separates excluded items in B: "Y or Z", "neither Y nor Z", "Y and Z", "X, Y and Z" (issue 49: "excluding
# information on X and Y" excludes both; a comma between digits or before a non-space is no separator)
_ALTERNATIVE = re.compile(r",?\s+(?:nor|or|and(?:\s+also)?|as\s+well\s+as)\s+|,\s+(?!(?:and|or|nor)\b)",
                          re.IGNORECASE)


def alternatives(b: str, light: bool = True) -> Tree:
    """B as a union when it lists excluded items: "Y or Z" / "neither Y nor Z" / "Y and Z" / "X, Y and Z" ->
    or(Y, Z) (left-nested), each item without the cue's filler ("information on", "any"; ``light``: only articles
    and "general"); a split inside quotes or brackets, or one that leaves an item without a word, keeps B
    atomic."""
    b = re.sub(r"^(?:either|neither|both)\s+", "", b, flags=re.IGNORECASE)
    if light and re.match(r"(?:any\s+)?(?:information|info|details?|data|anything|mention\w*|about|regarding|"
                          r"concerning|related\s+to|relating\s+to|pertaining\s+to)\b", b, re.IGNORECASE):
        light = False  # "…, not any information related to X": a topic frame, its filler goes as for explicit cues
    filler = _PART_LIGHT if light else B_FILLER | _PART_LIGHT
    if not SPLIT_ALTERNATIVES:
        return _stripped(b, filler)
    protected = _protected(b)
    cuts = [m for m in _ALTERNATIVE.finditer(b) if not protected[m.start() + 1]]
    cuts = [m for m in cuts if re.fullmatch(r",?\s+(?:or|nor)\s+", m.group(0), re.IGNORECASE) or _list_cut(b, m)]
    if cuts and not re.search(r"\b(?:and|or|nor|as well as)\s+$", cuts[-1].group(0), re.IGNORECASE):
        cuts = [m for m in cuts if m.group(0).strip() != ","]  # "Landover, Maryland": a list ends with and/or
    if not cuts:
        return _stripped(b, filler)
    parts, last = [], 0
    for m in cuts:
        parts.append(b[last:m.start()])
        last = m.end()
    parts.append(b[last:])
    parts = [_strip_words(part, filler) for part in parts]
    if not all(_has_content(part) for part in parts):
        return b
    tree: Tree = parts[0]
    for part in parts[1:]:
        tree = Node("or", tree, part)
    return tree


def _list_cut(b: str, m: re.Match) -> bool:
    """Whether an "and" or a comma in B separates excluded items: not inside a title with one quote left open
    ('"Only Fools and Horses'), not between two capitalised words ("Law and Justice", "Money and How"), not after
    "between" ("the difference between X and Y")."""
    if sum(b.count(q) for q in "\"“”") % 2:
        return False
    before, after = b[:m.start()].split(), b[m.end():].split()
    if before and after and before[-1][:1].isupper() and after[0][:1].isupper() and "and" in m.group(0).lower():
        return False
    return not re.search(r"\bbetween\b", b[:m.start()], re.IGNORECASE)


def _stripped(b: str, filler: set[str]) -> str:
    """B without ``filler`` at its start, unless that leaves no word (then B as it was)."""
    out = _strip_words(b, filler)
    return out if _has_content(out) else b


# whether B's alternatives ("Y or Z", "neither Y nor Z") become an or node (else B is one text)
SPLIT_ALTERNATIVES = True


def _parse(text: str, report: ParseReport, budget: int) -> Tree:
    if budget <= 0:
        return text
    protected = _protected(text)
    matches = _cue_matches(text, protected)
    for start, end, index in matches:
        label, kind, _ = _CUES[index]
        intent = decide(text, start, end, label, kind)
        if not intent.fire:
            _reject(report, CueDecision(label, text[start:end], start, intent.reason))
            continue
        raw_a, raw_b = _split(text, start, end, label, kind, matches, protected)
        keep_verb = not _negated_aux(text, start)
        if kind == "and":
            a, b = _strip_a(raw_a, keep_verb), _strip_a(raw_b, keep_verb=True)
        else:
            a, b = _strip_a(raw_a, keep_verb), _strip_b(raw_b, light=kind == "generic")
        if not _has_content(a) or not _has_content(b):
            side = "A" if not _has_content(a) else "B"
            _reject(report, CueDecision(label, text[start:end], start, f"{intent.reason}, but nothing is left on "
                                                                       f"the {side} side"))
            continue
        op = "and" if kind == "and" else "not"
        report.fired.append(CueDecision(label, text[start:end], start, intent.reason, op, a, b))
        if kind == "and":
            return Node("and", _parse(a, report, budget - 1), _parse(b, report, budget - 1))
        return Node("not", _parse(a, report, budget - 1), alternatives(b, light=kind == "generic"))
    return text


def explain(result: ParseReport) -> str:
    """Human-readable account of a parse: the query, every cue decision (:meth:`ParseReport.decisions`), the tree."""
    lines = [f"query: {result.text}"] + ["  " + line for line in result.decisions()]
    if result.composed:
        lines.append(format_tree(result.tree, "  "))
    return "\n".join(lines)


def coverage(texts: Iterable[str]) -> dict:
    """Share of texts the parser composes, and how often each cue label was used (first cue per text)."""
    total = parsed = 0
    by_cue: Counter = Counter()
    by_op: Counter = Counter()
    for text in texts:
        total += 1
        result = parse(text)
        if result.composed:
            parsed += 1
            by_cue[result.cues[0].label] += 1
            by_op[getattr(result.tree, "op", None)] += 1  # composed: a Node
    return {"queries": total, "parsed": parsed, "coverage": parsed / total if total else 0.0,
            "by_cue": dict(by_cue.most_common()), "by_op": dict(by_op)}
