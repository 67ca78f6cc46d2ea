"""Long-document test collections: JSONL with long text, FIRE 2017 (queries from the text around its citation
markers), and ir_datasets ids (MS MARCO Document, Robust04 descriptions)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from lsr_lucene.errors import InputError

CITATION = "[?CITATION?]"
QUERY_MODES = ("citations", "head", "both")
IRDS_COLLECTIONS = {  # name -> (ir_datasets id, query field)
    "msmarco-document": ("msmarco-document/dev", "text"),
    "robust04": ("disks45/nocr/trec-robust-2004", "description"),
}


@dataclass
class Collection:
    """A long-document test collection: corpus spec, queries as one or more passages, qrels."""

    name: str
    corpus: str
    queries: dict[str, list[str]]
    qrels: dict[str, dict[str, int]]
    qrels_path: str | None = None
    note: str = ""

    def bm25_topics(self) -> dict[str, str]:
        """One text per query for Anserini (the passages joined)."""
        return {qid: " ".join(passages) for qid, passages in self.queries.items()}


def citation_contexts(text: str, words: int = 40) -> list[str]:
    """The ``words`` words before and after each [?CITATION?] marker (markers removed), one passage each."""
    tokens = text.replace(CITATION, f" {CITATION} ").split()
    out = []
    for i, token in enumerate(tokens):
        if token == CITATION:
            window = [t for t in tokens[max(0, i - words):i + words + 1] if t != CITATION]
            if window:
                out.append(" ".join(window))
    return out


def head_passage(text: str, tokenizer, tokens: int = 512) -> str:
    """The longest run of leading whole words (markers removed) that fits in ``tokens`` WordPiece tokens."""
    words = " ".join(text.replace(CITATION, " ").split()).split()[:tokens]  # a word is at least one token
    joined = " ".join(words)
    try:
        enc = tokenizer(joined, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
    except (NotImplementedError, TypeError, ValueError):  # slow tokenizers have no offsets
        enc = None
    if enc is not None and "offset_mapping" in enc:
        if len(enc["input_ids"]) <= tokens:
            return joined
        cut = enc["offset_mapping"][tokens][0]  # start of the first token that does not fit
        # keep whole words only: drop the word the cut falls into
        return joined[:cut].rsplit(" ", 1)[0] if not joined[cut - 1:cut].isspace() else joined[:cut].rstrip()

    def fits(n: int) -> bool:
        return len(tokenizer(" ".join(words[:n]), add_special_tokens=False, verbose=False)["input_ids"]) <= tokens

    lo, hi = 0, len(words)
    while lo < hi:  # binary search for the largest n that fits
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    return " ".join(words[:lo])


def load_fire2017(folder: str | Path, query_mode: str = "citations", context_words: int = 40,
                  head_tokens: int = 512, tokenizer=None) -> Collection:
    """FIRE 2017 precedent retrieval: queries are whole current cases; we use the text around each
    [?CITATION?] (``citations``: 2×``context_words`` words per marker, one passage each), the first
    ``head_tokens`` model tokens (``head``), or both. Queries without a marker fall back to the head."""
    from lsr_lucene.eval.trec import read_qrels
    from lsr_lucene.io.output import open_jsonl

    folder = Path(folder)
    if query_mode not in QUERY_MODES:
        raise InputError(f"query mode must be one of {', '.join(QUERY_MODES)}, got {query_mode!r}")
    for name in ("corpus.jsonl", "queries.jsonl", "qrels.txt"):
        if not (folder / name).is_file():
            raise InputError(f"{folder / name}: missing (FIRE 2017 folder needs corpus.jsonl, queries.jsonl, qrels.txt)")
    queries, fallback = {}, 0
    for line_no, obj in open_jsonl(folder / "queries.jsonl"):
        qid, text = obj.get("id"), obj.get("text")
        if not isinstance(qid, str) or not isinstance(text, str):
            raise InputError(f"{folder / 'queries.jsonl'}:{line_no}: expected {{\"id\", \"text\"}} strings")
        passages = citation_contexts(text, context_words) if query_mode in ("citations", "both") else []
        if query_mode in ("head", "both") or not passages:
            if not passages and query_mode == "citations":
                fallback += 1
            if tokenizer is None:  # loaded on first need: "citations" mode may never need it
                from transformers import AutoTokenizer

                from lsr_lucene.encode.models import resolve

                tokenizer = AutoTokenizer.from_pretrained(resolve("splade-tiny"))
            passages = passages + [head_passage(text, tokenizer, head_tokens)]
        queries[qid] = [p for p in passages if p.strip()]
    note = {"citations": f"{2 * context_words}-word windows around each [?CITATION?], one query passage each",
            "head": f"first {head_tokens} WordPiece tokens of the query case",
            "both": f"{2 * context_words}-word citation windows plus the first {head_tokens} tokens"}[query_mode]
    if fallback:
        note += f"; {fallback} queries without a marker use the first {head_tokens} tokens"
    return Collection("fire2017", str(folder / "corpus.jsonl"), queries, read_qrels(folder / "qrels.txt"),
                      str(folder / "qrels.txt"), note)


def load_jsonl_collection(corpus: str, topics: str, qrels: str, name: str | None = None) -> Collection:
    """Any collection of long documents: corpus JSONL (long "text"), topics (TSV/JSONL/TREC), TREC qrels."""
    from lsr_lucene.eval.trec import read_qrels
    from lsr_lucene.io.topics import read_topics

    return Collection(name or Path(corpus).stem, corpus, {q: [t] for q, t in read_topics(topics).items()},
                      read_qrels(qrels), qrels, "topics as given")


def load_irds_collection(name: str, field_name: str | None = None) -> Collection:
    """MS MARCO Document (dev) or Robust04 (description field) through ir_datasets, when its data is available."""
    from lsr_lucene.io.corpus import irds_iter, load_irds

    if name not in IRDS_COLLECTIONS:
        raise InputError(f"unknown collection {name!r} (known: fire2017, {', '.join(IRDS_COLLECTIONS)}, or a folder)")
    dataset_id, default_field = IRDS_COLLECTIONS[name]
    field_name = field_name or default_field
    dataset = load_irds(dataset_id, "queries")
    queries = {}
    for query in irds_iter(dataset_id, dataset.queries_iter()):
        text = getattr(query, field_name, None)
        if not isinstance(text, str):
            raise InputError(f"irds:{dataset_id}: queries have no {field_name!r} field")
        queries[str(query.query_id)] = [text.strip()]
    qrels: dict[str, dict[str, int]] = {}
    for qrel in irds_iter(dataset_id, dataset.qrels_iter()):
        qrels.setdefault(str(qrel.query_id), {})[str(qrel.doc_id)] = int(qrel.relevance)
    return Collection(name, f"irds:{dataset_id}", queries, qrels, None, f"ir_datasets {dataset_id}, field {field_name}")


def load_collection(spec: str, query_mode: str = "citations", data_root: str | Path | None = None,
                    topics: str | None = None, qrels: str | None = None, field_name: str | None = None) -> Collection:
    """``fire2017`` (or a FIRE-shaped folder), ``msmarco-document``, ``robust04``, or a corpus JSONL with
    --topics/--qrels."""
    root = Path(data_root) if data_root else Path(__file__).resolve().parents[3] / "shared" / "data"
    if spec == "fire2017":
        return load_fire2017(root / "fire2017", query_mode)
    if spec in IRDS_COLLECTIONS:
        return load_irds_collection(spec, field_name)
    path = Path(spec)
    if path.is_dir() and (path / "queries.jsonl").is_file() and (path / "qrels.txt").is_file() and not topics:
        return load_fire2017(path, query_mode)
    if topics and qrels:
        return load_jsonl_collection(spec, topics, qrels)
    raise InputError(f"{spec}: not a known collection; give fire2017, msmarco-document, robust04, a FIRE-style "
                     "folder, or a corpus JSONL with --topics and --qrels")
