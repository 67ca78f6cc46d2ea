"""Build the set-difference exclusion benchmark (issue 65 item 4) from the shared judged collections.

For a topic with enough relevant documents, an excluded word or two-word phrase B that part of its relevant documents
contain is chosen by a fixed rule (below, written before any run), and the topic is asked for without B in several
phrasings (the parser's natural-language cues and the explicit syntax). Judged by set difference: the topic's
relevant documents that do not contain B ("contains" as the strict filter judges it: Lucene's EnglishAnalyzer terms,
a phrase at consecutive positions; :mod:`scripts.negation.text_match`). A few rows instead exclude one relevant
document by a description of it (its title), as ExcluIR phrases an exclusion; there the described document is what
is excluded. One topic in three (sha1 of "collection/qid") is held out, fixed here before any tuning.

Usage: python -m scripts.negation.setdiff_queries --data ../shared/data --output runs/negation/setdiff_queries.jsonl
"""
from __future__ import annotations

import argparse
import hashlib
import json
import math
import re
from collections import Counter
from pathlib import Path

from lsr_lucene.eval.trec import read_qrels
from lsr_lucene.io.corpus import doc_contents
from lsr_lucene.io.topics import read_topics
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS as STOP

COLLECTIONS = ("cranfield", "cisi", "cacm", "med", "npl")
MIN_RELEVANT = 10  # a topic needs this many relevant documents (gain > 0)
MAX_TOPIC_WORDS = 40  # longer topics (CISI's paragraphs) are no search request
TOPICS_PER_COLLECTION = 20  # the first by sha1 order of "collection/qid"
SHARE = (0.2, 0.5)  # B is in this share of the topic's relevant documents (a word; a phrase from 0.15)
PHRASE_SHARE = (0.15, 0.5)
MIN_CONTAINING, MIN_LEFT = 3, 5  # relevant documents with B, and without it
MIN_DF = 20  # B names a subject of the collection: at least this many documents contain it (a phrase: 10)
MAX_DF_SHARE = 0.2  # ... and not a generic word of the collection
DESCRIPTION_EVERY = 3  # one topic in this many also gets description rows (collections with titles), chosen by
# sha1 of "collection/qid/description": independent of the held-out rule (sha1 of "collection/qid" mod 3 = 0), so
# description rows are held out like every other row of a held-out topic
PHRASINGS = {
    "but-not": "{t} but not {b}",
    "excluding": "{t}, excluding {b}",
    "without": "{t} without {b}",
    "minus": "{t} -{q}",
    "NOT": "{t} NOT {q}",
}
DESCRIPTION_PHRASINGS = {
    "excluding-details": "{t}, excluding any details about {b}",
    "but-not-information": "{t}, but not information on {b}",
}
_WORD = re.compile(r"[A-Za-z]+")


def digest(key: str) -> int:
    return int(hashlib.sha1(key.encode()).hexdigest(), 16)


def heldout(collection: str, qid: str) -> bool:
    """One topic in three is held out (all its rows), fixed before any run."""
    return digest(f"{collection}/{qid}") % 3 == 0


def described_topic(collection: str, qid: str) -> bool:
    """One topic in DESCRIPTION_EVERY also gets description rows: by its own hash, so that held-out topics get them
    too (the held-out rule stays :func:`heldout`, the same for every row of a topic)."""
    return digest(f"{collection}/{qid}/description") % DESCRIPTION_EVERY == 0


def clean_topic(text: str) -> str:
    """The topic as a request: brackets and quotes out (they are syntax), Cranfield's "-dash" a spaced dash, no
    trailing punctuation."""
    text = re.sub(r"(^|\s)-dash(\s|$)", " - ", text)
    text = re.sub(r"[()\[\]\"“”?]+(?=\w)", " ", text)
    text = re.sub(r"[()\[\]\"“”]", " ", text)
    text = re.sub(r"\s+", " ", text).strip()
    return re.sub(r"[\s.?!;:,]+$", "", text)


class Analysed:
    """Every document's analysed terms and, per term, its most frequent surface word (for B's text)."""

    def __init__(self, corpus: Path):
        from scripts.negation.text_match import analysed_positions, analysed_terms

        self.docs: dict[str, list[str]] = {}
        self.titles: dict[str, str] = {}
        self.words: dict[str, str] = {}  # surface word -> its analysed term ("" for a stop word)
        self.surface: dict[str, Counter] = {}
        with open(corpus) as f:
            for line in f:
                doc = json.loads(line)
                text = doc_contents(doc.get("title") or "", doc.get("text") or "")
                self.titles[str(doc["id"])] = (doc.get("title") or "").strip()
                words = [w.lower() for w in _WORD.findall(text)]
                for w in set(words) - self.words.keys():
                    terms = analysed_terms(w)
                    self.words[w] = terms[0] if len(terms) == 1 else ""
                self.docs[str(doc["id"])] = list(analysed_positions(text))  # "" where a stop word left a gap
                for w in words:
                    if self.words[w]:
                        self.surface.setdefault(self.words[w], Counter())[w] += 1
        self.df = Counter(t for terms in self.docs.values() for t in set(terms) if t)
        self.bigram_df = Counter(b for terms in self.docs.values() for b in set(zip(terms, terms[1:])) if all(b))

    def word_of(self, term: str) -> str:
        return min(self.surface[term].items(), key=lambda kv: (-kv[1], kv[0]))[0]


def weight(n: int, df: int, docs: int) -> float:
    """How much B is a subject of the relevant set: relevant documents containing it times its idf."""
    return n * math.log(docs / df)


def choose_word(an: Analysed, topic_terms: set[str], relevant: list[str]) -> str | None:
    """B as one word (no stop word): in SHARE of the relevant documents, not a topic term, a subject of the
    collection; the largest :func:`weight` (then the term)."""
    counts = Counter(t for d in relevant for t in set(an.docs.get(d, ())) if t)
    best = None
    for term, n in counts.items():
        word = an.word_of(term) if term in an.surface else ""
        if len(word) < 4 or word in STOP or term in topic_terms or not SHARE[0] <= n / len(relevant) <= SHARE[1]:
            continue
        if n < MIN_CONTAINING or len(relevant) - n < MIN_LEFT:
            continue
        if not MIN_DF <= an.df[term] <= MAX_DF_SHARE * len(an.docs):
            continue
        key = (-weight(n, an.df[term], len(an.docs)), term)
        if best is None or key < best[0]:
            best = (key, word)
    return best[1] if best else None


def choose_phrase(an: Analysed, topic_terms: set[str], relevant: list[str]) -> str | None:
    """B as two adjacent words, neither a topic term nor a stop word, under the word rule's bounds (PHRASE_SHARE,
    df from 10)."""
    counts = Counter(b for d in relevant for b in set(zip(an.docs.get(d, ()), an.docs.get(d, ())[1:])) if all(b))
    best = None
    for (t1, t2), n in counts.items():
        if t1 == t2 or {t1, t2} & topic_terms or t1 not in an.surface or t2 not in an.surface:
            continue
        w1, w2 = an.word_of(t1), an.word_of(t2)
        if min(len(w1), len(w2)) < 3 or {w1, w2} & STOP or not PHRASE_SHARE[0] <= n / len(relevant) <= PHRASE_SHARE[1]:
            continue
        if n < MIN_CONTAINING or len(relevant) - n < MIN_LEFT:
            continue
        if not MIN_DF // 2 <= an.bigram_df[(t1, t2)] <= MAX_DF_SHARE * len(an.docs):
            continue
        key = (-weight(n, an.bigram_df[(t1, t2)], len(an.docs)), t1, t2)
        if best is None or key < best[0]:
            best = (key, f"{w1} {w2}")
    return best[1] if best else None


def choose_description(an: Analysed, qrels: dict[str, int]) -> tuple[str, str] | None:
    """(docid, title) of the relevant document of highest gain (then smallest docid) whose title has 4-15 words."""
    for doc in sorted((d for d, g in qrels.items() if g > 0), key=lambda d: (-qrels[d], int(d) if d.isdigit() else 0, d)):
        title = clean_topic(an.titles.get(doc, ""))
        if 4 <= len(title.split()) <= 15:
            return doc, title
    return None


def build(data: Path) -> list[dict]:
    from scripts.negation.text_match import analysed_terms

    rows: list[dict] = []
    for collection in COLLECTIONS:
        folder = data / collection
        qrels, topics = read_qrels(folder / "qrels.txt"), read_topics(folder / "topics.tsv")
        an = Analysed(folder / "corpus.jsonl")
        eligible = [q for q, d in qrels.items() if q in topics and sum(g > 0 for g in d.values()) >= MIN_RELEVANT
                    and len(topics[q].split()) <= MAX_TOPIC_WORDS]
        eligible.sort(key=lambda q: digest(f"{collection}/{q}"))
        for qid in eligible[:TOPICS_PER_COLLECTION]:
            topic = clean_topic(topics[qid])
            relevant = sorted(d for d, g in qrels[qid].items() if g > 0)
            terms = set(analysed_terms(topic))
            base = {"collection": collection, "qid": qid, "topic": topic, "heldout": heldout(collection, qid)}
            for kind, b in (("word", choose_word(an, terms, relevant)), ("phrase", choose_phrase(an, terms, relevant))):
                if b is None:
                    continue
                quoted = f'"{b}"' if " " in b else b
                for name, form in PHRASINGS.items():
                    rows.append({**base, "id": f"{collection}/{qid}/{kind}/{name}", "kind": kind, "phrasing": name,
                                 "b": b, "query": form.format(t=topic, b=b, q=quoted)})
            described = choose_description(an, qrels[qid]) if described_topic(collection, qid) else None
            if described:
                for name, form in DESCRIPTION_PHRASINGS.items():
                    rows.append({**base, "id": f"{collection}/{qid}/description/{name}", "kind": "description",
                                 "phrasing": name, "b": described[1], "excluded_doc": described[0],
                                 "query": form.format(t=topic, b=described[1])})
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--output", default="runs/negation/setdiff_queries.jsonl")
    args = parser.parse_args(argv)
    rows = build(Path(args.data))
    tmp = Path(args.output + ".tmp")
    with open(tmp, "w") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    tmp.replace(args.output)
    kinds = Counter((r["collection"], r["kind"]) for r in rows)
    print(f"wrote {len(rows)} rows to {args.output}: {dict(sorted(kinds.items()))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
