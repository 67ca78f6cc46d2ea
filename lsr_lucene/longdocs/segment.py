"""Split long documents into sentences and pack them greedily into segments of at most N model tokens.

Follows Nguyen et al. (SIGIR'23, paper 001, section 4.2): sentences are added to the current segment
while it stays within ``max_tokens`` WordPiece tokens (special tokens not counted); a sentence longer
than ``max_tokens`` becomes a segment of its own (the encoder then truncates it at its max length,
unless ``long_sentences="split"`` cuts it into ``max_tokens`` pieces). Segment ids are ``docid@@k``
with k = 0, 1, ... in document order. Empty documents give no segment; ``max_segments`` stops early.

Token counts add up exactly: BERT's pre-tokeniser splits on whitespace and punctuation, so the
WordPiece tokens of sentences joined by a space are the concatenation of each sentence's tokens.
"""
from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

from lsr_lucene.errors import InputError

SEPARATOR = "@@"
DEFAULT_MAX_TOKENS = 400
SEGMENT_MAX_LENGTH = 512  # longdocs encode's truncation: above DEFAULT_MAX_TOKENS plus special tokens, so none is cut
LONG_SENTENCE_MODES = ("own", "split")

# Words that end with a period without ending a sentence (lower-cased, without the period).
ABBREVIATIONS = frozenset("""
mr mrs ms dr prof sr jr st mt no nos vs v etc viz cf al ie eg e.g i.e fig figs vol vols ed eds pp p
rs art arts sec secs s ss cl o ord r rr ltd co corp inc bros govt dept jan feb mar apr jun jul aug sep sept
oct nov dec hon'ble hon ld lt col gen capt sh smt shri kum u.s u.k a.i.r air sc scc scr para paras cr crl
""".split())

_BLANK_LINES = re.compile(r"\n[ \t\r\f\v]*\n\s*")
_CANDIDATE = re.compile(r"[.!?]+[\"')\]]*\s+")
_STARTS_SENTENCE = re.compile(r"[\"'(\[]?[A-Z0-9]")
_LAST_WORD = re.compile(r"(\S+)$")


@dataclass(frozen=True)
class Segment:
    """One segment of a document: id ``docid@@k``, its text and its WordPiece token count."""

    id: str
    doc_id: str
    index: int
    text: str
    tokens: int


def segment_id(doc_id: str, index: int) -> str:
    """The id of segment ``index`` (0-based) of ``doc_id``: ``docid@@index``."""
    return f"{doc_id}{SEPARATOR}{index}"


def parse_segment_id(seg_id: str) -> tuple[str, int]:
    """(document id, 0-based segment number) of ``docid@@k``; a plain id is segment 0 of itself."""
    doc_id, sep, index = seg_id.rpartition(SEPARATOR)
    if not sep or not index.isdigit():
        return seg_id, 0
    return doc_id, int(index)


def within_first(seg_id: str, limit: int | None) -> bool:
    """Whether a segment is among its document's first ``limit`` segments (every segment when None)."""
    return limit is None or parse_segment_id(seg_id)[1] < limit


def _is_abbreviation(before: str) -> bool:
    match = _LAST_WORD.search(before)
    if not match:
        return False
    word = match.group(1).lstrip("\"'([").rstrip(".").lower()
    if not word:
        return False
    if len(word) == 1 and word.isalpha():  # an initial: "B.P. Jeevan Reddy"
        return True
    return word in ABBREVIATIONS or ("." in word and all(len(part) <= 2 for part in word.split(".")))


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text`` (rule based): blank lines always break; '.', '!' or '?' followed by space and an
    upper-case letter, digit or opening bracket breaks unless the word before is an abbreviation or an initial."""
    sentences: list[str] = []
    for block in _BLANK_LINES.split(text or ""):
        start = 0
        for match in _CANDIDATE.finditer(block):
            end = match.end()
            if end >= len(block) or not _STARTS_SENTENCE.match(block, end):
                continue
            if match.group(0).startswith(".") and _is_abbreviation(block[start:match.start()]):
                continue
            sentence = " ".join(block[start:end].split())
            if sentence:
                sentences.append(sentence)
            start = end
        sentence = " ".join(block[start:].split())
        if sentence:
            sentences.append(sentence)
    return sentences


def wordpiece_counter(tokenizer) -> Callable[[Sequence[str]], list[int]]:
    """A batch token counter (no special tokens) for a Hugging Face tokenizer."""
    def count(texts: Sequence[str]) -> list[int]:
        if not texts:
            return []
        ids = tokenizer(list(texts), add_special_tokens=False, return_attention_mask=False,
                        return_token_type_ids=False, verbose=False)["input_ids"]
        return [len(x) for x in ids]
    return count


class Segmenter:
    """Greedy sentence packing into segments of at most ``max_tokens`` model tokens."""

    def __init__(self, tokenizer=None, max_tokens: int = DEFAULT_MAX_TOKENS, max_segments: int | None = None,
                 long_sentences: str = "own", count_tokens: Callable[[Sequence[str]], list[int]] | None = None,
                 batch: int = 64):
        if max_tokens < 1:
            raise InputError(f"--max-tokens must be at least 1, got {max_tokens}")
        if max_segments is not None and max_segments < 1:
            raise InputError(f"--max-segments must be at least 1, got {max_segments}")
        if long_sentences not in LONG_SENTENCE_MODES:
            raise InputError(f"long_sentences must be one of {', '.join(LONG_SENTENCE_MODES)}, got {long_sentences!r}")
        if count_tokens is None:
            if tokenizer is None:
                raise InputError("Segmenter needs a tokenizer or a count_tokens function")
            count_tokens = wordpiece_counter(tokenizer)
        self.tokenizer = tokenizer
        self.count_tokens = count_tokens
        self.max_tokens = int(max_tokens)
        self.max_segments = max_segments
        self.long_sentences = long_sentences
        self.batch = batch

    def _split_long(self, sentence: str) -> list[tuple[str, int]]:
        """Cut an over-long sentence into pieces of at most ``max_tokens`` tokens (on whole words)."""
        words = sentence.split()
        counts = self.count_tokens(words)
        pieces: list[tuple[str, int]] = []
        current: list[str] = []
        size = 0
        for word, n in zip(words, counts):
            if current and size + n > self.max_tokens:
                pieces.append((" ".join(current), size))
                current, size = [], 0
            current.append(word)
            size += n
        if current:
            pieces.append((" ".join(current), size))
        return pieces

    def _sentences_with_counts(self, text: str) -> Iterator[tuple[str, int]]:
        sentences = split_sentences(text)
        for start in range(0, len(sentences), self.batch):
            chunk = sentences[start:start + self.batch]
            for sentence, n in zip(chunk, self.count_tokens(chunk)):
                if n == 0:  # nothing the model would see (e.g. only control characters)
                    continue
                if n > self.max_tokens and self.long_sentences == "split":
                    yield from self._split_long(sentence)
                else:
                    yield sentence, n

    def segment(self, doc_id: str, text: str) -> list[Segment]:
        """Segments of one document, in order; [] for an empty document."""
        limit = self.max_segments
        segments: list[Segment] = []
        current: list[str] = []
        size = 0

        def flush() -> bool:
            nonlocal current, size
            if current:
                segments.append(Segment(segment_id(doc_id, len(segments)), doc_id, len(segments),
                                        " ".join(current), size))
            current, size = [], 0
            return limit is not None and len(segments) >= limit

        for sentence, n in self._sentences_with_counts(text):
            if current and size + n > self.max_tokens:
                if flush():
                    return segments
            current.append(sentence)
            size += n
            if size >= self.max_tokens:  # full, or one over-long sentence: close it now
                if flush():
                    return segments
        flush()
        return segments[:limit] if limit is not None else segments


def segment_corpus(docs: Iterable, segmenter: Segmenter) -> Iterator[Segment]:
    """Segments of every document (objects with ``id`` and ``contents``), in corpus order."""
    for doc in docs:
        yield from segmenter.segment(doc.id, doc.contents)


def write_segments(docs: Iterable, segmenter: Segmenter, output: str | Path, overwrite: bool = False,
                   total: int | None = None) -> dict:
    """Write segments as a JSONL corpus ``{"id": "docid@@k", "title": "", "text"}``; returns counts."""
    from lsr_lucene.progress import progress_bar

    from lsr_lucene.io.corpus import check_unique
    from lsr_lucene.io.output import atomic_output

    counts: dict[str, Any] = {"documents": 0, "empty_documents": 0, "segments": 0, "long_segments": 0,
              "max_tokens": segmenter.max_tokens, "max_segments": segmenter.max_segments,
              "long_sentences": segmenter.long_sentences}
    with atomic_output(output, overwrite=overwrite) as tmp, open(tmp, "w", encoding="utf-8") as out:
        for doc in progress_bar(check_unique(docs), total=total, desc="segmenting", unit=" docs", file=sys.stderr):
            if SEPARATOR in doc.id:
                raise InputError(f"{doc.origin or doc.id}: document id {doc.id!r} contains {SEPARATOR!r}, "
                                 "which marks segment ids")
            segments = segmenter.segment(doc.id, doc.contents)
            counts["documents"] += 1
            counts["empty_documents"] += not segments
            for seg in segments:
                counts["segments"] += 1
                counts["long_segments"] += seg.tokens > segmenter.max_tokens
                out.write(json.dumps({"id": seg.id, "title": "", "text": seg.text}, ensure_ascii=False) + "\n")
    return counts
