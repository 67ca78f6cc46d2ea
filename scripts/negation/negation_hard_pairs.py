"""Hard generated exclusion pairs (issue 49): requests shaped like the held-out misses, from passages of one topic.

The generated pairs of issue 49 (runs/negation/estimate.md, retired) were too easy (the wanted passage's own title
in the request). Here the wanted and the excluded passages share the request's topic, so plain search cannot tell
them apart; only the excluded items can:

- ``boolq-siblings``: the BoolQuestions corpus stores each question's two passages side by side (ids 2k, 2k+1, one
  topic); pairs of dev questions are skipped. Topic: the NQ title, else the rarest phrase both passages share;
- ``excluir-links``: ExcluIR passages P that name passage Q's title: a request about Q excluding P's title (and a
  second such P's title when there is one: two excluded passages); passages of ExcluIR dev pairs are skipped;
- ``wiki-article``: passages of one Wikipedia article (wiki2015, the first articles with 3-8 passages): a request for
  one passage's aspect of the article, excluding aspects that only its sibling passages have (one excluded passage
  per excluded item).

Two harder sources (issue 49: the held-out misses exclude items that overlap the wanted passage or are paraphrased),
drawn after the three above with the same generator, so those rows stay as they were:

- ``boolq-overlap``: the ``boolq-siblings`` pairs, but each excluded item is a word BOTH passages contain, said more
  often by the excluded one (:func:`shared_aspects`): B's search finds the wanted passage too;
- ``excluir-category``: the ``excluir-links`` pairs, but each excluded passage is named by its category from its first
  sentence ("X is an American actress ..." -> "american actress", :func:`category`) instead of its title: a
  paraphrase that many other passages also fit.

Aspects are runs of one or two content words (rarest in the source corpus first) of one passage whose words the
other passage lacks. A row is ``{id, query, pos_id, neg_ids, source, family, phrasing}``; it counts right (RR) only
when the wanted passage scores above every excluded one. Template families (several phrasings each) are the
grouping unit of the nested folds (:mod:`scripts.negation.negation_nested`), so paraphrases never straddle a
fold. Generation is seeded (``SEED``); nothing here reads a test query.
"""
from __future__ import annotations

import json
import lzma
import math
import random
import re
from collections import Counter, defaultdict
from pathlib import Path
from typing import Callable, Iterable, Iterator, Mapping, Sequence


SEED = 49  # the generator's seed (families and phrasings per row, which sibling is wanted)

# family -> phrasings; {t} topic, {a} wanted aspect, {x} {y} excluded items. "single" excludes one item.
FAMILIES: dict[str, tuple[str, ...]] = {
    "excluding-two": (
        "What is known about {t} {a}, excluding information on {x} and {y}?",
        "Tell me about {a} in {t}, excluding any details on {x} and {y}.",
        "I want information on {t} and {a}; please leave out anything about {x} and {y}.",
    ),
    "but-not-general": (
        "Tell me about {t} {a} but not {x} or general {y} details.",
        "What about {a} for {t}, but not {x} or general {y} information?",
    ),
    "neither-nor-inside": (
        "Which facts about {t} {a}, neither {x} nor {y}, are most notable?",
        "What does {t} say about {a}, but neither {x} nor {y}?",
    ),
    "relative-clause": (
        "What can you tell me about {t} {a} that does not involve {x} or {y}?",
        "Which details of {t}, which do not concern {x} or {y}, cover {a}?",
    ),
    "single-aspect": (
        "What about {t} {a}, apart from {x}?",
        "Describe {t} and {a} without discussing {x}.",
    ),
}
SINGLE = {"single-aspect"}

_STOP = frozenset("""a about above after again against all also am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further had has have having he her
here hers him his how i if in into is it its itself just me more most my no nor not now of off on once only or other
our out over own same she should so some such than that the their them then there these they this those through to
too under until up very was we were what when where which while who whom why will with would you your also many
may might must one two three first second new used use known called including include includes well since however
within without often several like per us eg ie etc""".split())
_SEGMENT = re.compile(r"[^A-Za-z\s'-]+")  # punctuation and digits end a run of words
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*[A-Za-z]")



def title_base(title: str) -> str:
    """A title without its parenthetical qualifier ("St. Joseph's College (New York)" -> "St. Joseph's College")."""
    return re.sub(r"\s*\([^)]*\)\s*$", "", title).strip()


def title_index(docs: Iterable[Mapping]) -> tuple[dict[str, str], re.Pattern]:
    """Every base title of two or more words -> the first passage of ``docs`` with it, and a pattern matching any
    of them as whole words (longest first): how a passage is found to name another's title."""
    by_title: dict[str, str] = {}
    for doc in docs:
        base = title_base(str(doc.get("title") or ""))
        if " " in base and base not in by_title:
            by_title[base] = str(doc["id"])
    return by_title, re.compile(r"\b(" + "|".join(re.escape(t) for t in sorted(by_title, key=len, reverse=True))
                                + r")\b")


def titles_named(text: str, pid: str, own: str, by_title: Mapping[str, str], pattern: re.Pattern) -> list[str]:
    """The titles of :func:`title_index` that passage ``pid`` (titled ``own``) names in ``text``, in order, each
    once: not its own, none overlapping its own title; none for an untitled passage."""
    if not own:
        return []
    return [title for title in dict.fromkeys(m.group(1) for m in pattern.finditer(text))
            if by_title[title] != pid and title not in own and own not in title]

def content_runs(text: str) -> list[list[str]]:
    """Runs of consecutive lower-cased content words (3+ letters, no stop word), split at punctuation and digits."""
    runs: list[list[str]] = []
    for segment in _SEGMENT.split(text):
        run: list[str] = []
        for word in _WORD.findall(segment.lower()):
            if len(word) >= 3 and word not in _STOP:
                run.append(word)
            elif run:
                runs.append(run)
                run = []
        if run:
            runs.append(run)
    return runs


def words_of(text: str) -> set[str]:
    """The lower-cased words of ``text`` (stop words included)."""
    return set(_WORD.findall(text.lower()))


def phrases(text: str) -> list[tuple[str, ...]]:
    """Candidate aspects: every one- and two-word window of :func:`content_runs`, in text order, no repeats."""
    out: dict[tuple[str, ...], None] = {}
    for run in content_runs(text):
        for i, word in enumerate(run):
            out[(word,)] = None
            if i + 1 < len(run):
                out[(word, run[i + 1])] = None
    return list(out)


def idf_table(texts: Iterable[str]) -> dict[str, float]:
    """Word -> log(N / df) over ``texts`` (document frequency of lower-cased words)."""
    df: Counter = Counter()
    n = 0
    for text in texts:
        n += 1
        df.update(words_of(text))
    return {w: math.log(n / c) for w, c in df.items()}


def aspects(text: str, other: str, idf: Mapping[str, float], k: int = 2, avoid: Iterable[str] = ()) -> list[str]:
    """Up to ``k`` aspects of ``text`` that ``other`` lacks: phrases none of whose words occur in ``other`` (nor in
    ``avoid``), rarest (summed idf) first, no two sharing a word."""
    banned = words_of(other) | {w for t in avoid for w in words_of(t)}
    ranked = sorted((p for p in phrases(text) if not banned & set(p)),
                    key=lambda p: -sum(idf.get(w, 0.0) for w in p))
    out: list[str] = []
    used: set[str] = set()
    for phrase in ranked:
        if used & set(phrase):
            continue
        out.append(" ".join(phrase))
        used |= set(phrase)
        if len(out) == k:
            break
    return out


def shared_aspects(text: str, other: str, idf: Mapping[str, float], k: int = 2, avoid: Iterable[str] = ()) -> list[str]:
    """Up to ``k`` single words that both ``text`` and ``other`` contain (not in ``avoid``) but ``text`` says more
    often: rarest (idf times the surplus of mentions) first. Excluded items that overlap the wanted passage."""
    counts = Counter(w for run in content_runs(text) for w in run)
    others = Counter(w for run in content_runs(other) for w in run)
    banned = {w for t in avoid for w in words_of(t)}
    ranked = sorted((w for w in counts if others[w] and counts[w] > others[w] and w not in banned),
                    key=lambda w: (-(counts[w] - others[w]) * idf.get(w, 0.0), w))
    return ranked[:k]


_CATEGORY = re.compile(r"\b(?:is|was|are|were)\s+(?:an?|the)\s+([^.,;:()]+)")
_CATEGORY_END = re.compile(r"\b(?:who|which|that|known|from|in|of|for|and|born|best|based|by|with|to|on|at)\b")


def category(text: str) -> str | None:
    """What the passage's first "X is a/an/the ..." says X is: the last two content words before the first
    qualifier ("is an American actress known for ..." -> "american actress"); None when there is no such phrase."""
    match = _CATEGORY.search(text)
    if not match:
        return None
    head = _CATEGORY_END.split(match.group(1), maxsplit=1)[0]
    runs = content_runs(head)
    return " ".join(runs[-1][-2:]) if runs else None


def shared_topic(first: str, second: str, idf: Mapping[str, float]) -> str | None:
    """The rarest phrase (summed idf) that both texts contain, preferring two words; None when they share none."""
    common: set[tuple[str, ...]] = set(phrases(first)) & set(phrases(second))
    if not common:
        return None
    best = max(sorted(common), key=lambda p: (len(p), sum(idf.get(w, 0.0) for w in p)))  # sorted: ties fixed
    return " ".join(best)


def _row(rng: random.Random, family: str, rid: str, source: str, slots: dict, pos: str, negs: Sequence[str]) -> dict:
    phrasing = rng.randrange(len(FAMILIES[family]))
    query = re.sub(r"\s+", " ", FAMILIES[family][phrasing].format(**slots))
    return {"id": rid, "query": query, "pos_id": pos, "neg_ids": list(dict.fromkeys(negs)), "source": source,
            "family": family, "phrasing": phrasing}


class _Families:
    """Families in a seeded shuffled cycle, so each source spreads over all of them evenly."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.queue: list[str] = []

    def next(self, two_items: bool) -> str:
        if not self.queue:
            self.queue = sorted(FAMILIES)
            self.rng.shuffle(self.queue)
        family = self.queue.pop()
        return family if two_items or family in SINGLE else "single-aspect"


def read_jsonl(path: str | Path) -> list[dict]:
    """Rows of a JSONL file (``.xz`` read as such)."""
    opener = lzma.open if str(path).endswith(".xz") else open
    with opener(path, "rt", encoding="utf-8") as handle:  # type: ignore[operator]
        return [json.loads(line) for line in handle if line.strip()]


Excluded = Callable[..., list[str]]  # (excluded text, wanted text, idf, k, avoid) -> excluded items


def boolq_siblings(corpus: Sequence[Mapping], skip_ids: set[str], rng: random.Random, limit: int,
                   excluded_items: Excluded = aspects, source: str = "boolq-siblings") -> list[dict]:
    """``boolq-siblings`` rows: one per passage pair (2k, 2k+1) outside ``skip_ids``; the wanted one drawn. With
    ``excluded_items=shared_aspects``: the ``boolq-overlap`` rows."""
    texts = {str(d["id"]): str(d.get("text") or "") for d in corpus}
    titles = {str(d["id"]): title_base(str(d.get("title") or "")) for d in corpus}
    idf = idf_table(texts.values())
    families, rows = _Families(rng), []
    for even in sorted((int(i) for i in texts if i.isdigit() and int(i) % 2 == 0)):
        ids = [str(even), str(even + 1)]
        if ids[1] not in texts or skip_ids & set(ids):
            continue
        pos, neg = ids if rng.random() < 0.5 else ids[::-1]
        topic = titles[pos] or shared_topic(texts[pos], texts[neg], idf)
        wanted = aspects(texts[pos], texts[neg], idf, 1, [topic or ""])
        excluded = excluded_items(texts[neg], texts[pos], idf, 2, [topic or ""])
        if not topic or not wanted or not excluded:
            continue
        family = families.next(len(excluded) > 1)
        slots = {"t": topic, "a": wanted[0], "x": excluded[0], "y": excluded[-1]}
        rid = "hard-boolq-" + ("" if source == "boolq-siblings" else "overlap-") + pos
        rows.append(_row(rng, family, rid, source, slots, pos, [neg]))
        if len(rows) >= limit:
            break
    return rows


def excluir_links(corpus: Sequence[Mapping], skip_ids: set[str], rng: random.Random, limit: int,
                  by_category: bool = False) -> list[dict]:
    """``excluir-links`` rows: a request about passage Q's title that excludes the titles of passages naming it;
    ``by_category``: the ``excluir-category`` rows, each excluded passage named by its :func:`category`."""
    docs = [d for d in corpus if str(d["id"]) not in skip_ids]
    texts = {str(d["id"]): str(d.get("text") or "") for d in corpus}
    idf = idf_table(texts.values())
    by_title, pattern = title_index(docs)
    naming: dict[str, list[str]] = defaultdict(list)  # Q -> passages P naming Q's title
    for doc in docs:
        pid = str(doc["id"])
        for title in titles_named(texts[pid], pid, title_base(str(doc.get("title") or "")), by_title, pattern):
            if pid not in naming[by_title[title]]:
                naming[by_title[title]].append(pid)
    titles = {str(d["id"]): title_base(str(d.get("title") or "")) for d in corpus}
    names = {p: category(texts[p]) for p in texts} if by_category else titles
    families, rows = _Families(rng), []
    for q in sorted(naming, key=int):
        ps = naming[q]
        topic = titles[q]
        wanted = aspects(texts[q], texts[ps[0]], idf, 1, [topic])
        first = names[ps[0]]
        if not wanted or not first or titles[ps[0]] in texts[q] or (by_category and first in topic.lower()):
            continue  # the wanted passage must not name what is excluded
        second = [n for n in (names[p] for p in ps[1:2] if titles[p] not in texts[q])
                  if n and not (by_category and n == first)]
        extra = second or aspects(texts[ps[0]], texts[q], idf, 1, [topic, titles[ps[0]], first])
        family = families.next(bool(extra))
        slots = {"t": topic, "a": wanted[0], "x": first, "y": (extra or [""])[0]}
        negs = ps[:2] if second and family not in SINGLE else ps[:1]
        rid, source = (f"hard-excluir-category-{q}", "excluir-category") if by_category else \
            (f"hard-excluir-{q}", "excluir-links")
        rows.append(_row(rng, family, rid, source, slots, q, negs))
        if len(rows) >= limit:
            break
    return rows


def wiki_articles(passages: Iterable[Mapping], articles: int = 200, low: int = 3, high: int = 8) -> list[dict]:
    """The passages of the first ``articles`` articles with ``low``..``high`` passages (ids ``<page>_<k>``), in
    order: a small corpus where every article's passages are siblings."""
    out: list[dict] = []
    current: list[dict] = []
    taken = 0
    for row in list(passages) + [{"id": "end_0"}]:
        page = str(row["id"]).rsplit("_", 1)[0]
        if current and page != str(current[0]["id"]).rsplit("_", 1)[0]:
            if low <= len(current) <= high:
                out.extend(current)
                taken += 1
                if taken >= articles:
                    break
            current = []
        current.append({"id": str(row["id"]), "title": str(row.get("title") or ""), "text": str(row.get("text") or "")})
    return out


def iter_wiki(path: str | Path, rows: int) -> Iterator[dict]:
    """The first ``rows`` rows of wiki2015's ``passages.jsonl.xz`` (read without unpacking the file)."""
    with lzma.open(path, "rt", encoding="utf-8") as handle:
        for i, line in enumerate(handle):
            if i >= rows:
                break
            yield json.loads(line)


def wiki_siblings(corpus: Sequence[Mapping], rng: random.Random, limit: int) -> list[dict]:
    """``wiki-article`` rows: per article a drawn wanted passage; excluded items: aspects of up to two siblings that
    the wanted passage lacks (each sibling is an excluded passage)."""
    texts = {str(d["id"]): str(d.get("text") or "") for d in corpus}
    idf = idf_table(texts.values())
    pages: dict[str, list[Mapping]] = defaultdict(list)
    for doc in corpus:
        pages[str(doc["id"]).rsplit("_", 1)[0]].append(doc)
    families, rows = _Families(rng), []
    for docs in pages.values():
        order = [str(d["id"]) for d in docs]
        rng.shuffle(order)
        pos, siblings = order[0], order[1:3]
        topic = title_base(str(docs[0].get("title") or ""))
        wanted = aspects(texts[pos], " ".join(texts[s] for s in siblings), idf, 1, [topic])
        found = [(s, a) for s in siblings for a in aspects(texts[s], texts[pos], idf, 1, [topic])]
        if not topic or not wanted or not found:
            continue
        family = families.next(len(found) > 1)
        items = found[:1] if family in SINGLE else found[:2]
        slots = {"t": topic, "a": wanted[0], "x": items[0][1], "y": items[-1][1]}
        rows.append(_row(rng, family, f"hard-wiki-{pos}", "wiki-article", slots, pos, [s for s, _ in items]))
        if len(rows) >= limit:
            break
    return rows
