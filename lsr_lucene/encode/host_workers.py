"""The host's share of GPU document encoding, done in worker processes: tokenising and formatting JSON lines.

A GPU encodes splade-tiny five times faster than one Python process can tokenise texts and build their JSON lines
(issue 41): threads share the GIL, so ``lsr_lucene.encode.pipeline`` hands these two jobs to processes that import
neither torch nor the model. Tokenising uses the fast tokenizer's Rust core (rebuilt from its JSON, so the ids are
``FastTokenizer.ids``'); a line is the JSON text ``json.dumps`` gives ``io.vectors.window_lines``' object, byte for
byte, built from each vocabulary term's key encoded once (a third faster than a dict per document and ``json.dumps``).
``impact_dicts`` is shared with the one-process path (``encode.device``).
"""
from __future__ import annotations

import itertools
import json
import os
import signal
from typing import Sequence

import numpy as np

_STATE: dict = {}  # per worker process: the tokenizer core and the vocabulary (``init``)


def impact_dicts(vocab: Sequence[str], counts: Sequence[int], terms: Sequence[int], values: Sequence[int],
                 negative: Sequence[bool] | None, finite: Sequence[bool]) -> list[dict[str, int] | None]:
    """Per row, {term: impact} from the flattened nonzero (term id, impact) pairs of a batch in row-major order
    (``neg_<term>`` where ``negative``; None for a row whose weights were not all finite)."""
    out: list[dict[str, int] | None] = []
    start = 0
    for row, count in enumerate(counts):
        end = start + count
        if not finite[row]:
            out.append(None)
        elif negative is None:
            out.append({vocab[t]: v for t, v in zip(terms[start:end], values[start:end])})
        else:
            out.append({(f"neg_{vocab[t]}" if neg else vocab[t]): v
                        for t, v, neg in zip(terms[start:end], values[start:end], negative[start:end])})
        start = end
    return out


def encode_fast(core, texts: list[str]) -> list:
    """``core.encode_batch`` without character offsets where the tokenizers library has it (the same ids, a fifth
    faster)."""
    encode = getattr(core, "encode_batch_fast", core.encode_batch)
    return encode(texts, add_special_tokens=True)


def json_keys(vocab: Sequence[str]) -> tuple[list[str], list[str]] | None:
    """Per term id, its JSON key and separator (``"term": ``) and its ``neg_`` form; None where a vocabulary term
    already reads ``neg_<another term>`` (a dict would merge the two keys: lines then go through ``json.dumps``)."""
    terms = set(vocab)
    if any(term.startswith("neg_") and term[4:] in terms for term in vocab):
        return None
    dumps = json.dumps
    return ([dumps(t, ensure_ascii=False) + ": " for t in vocab],
            [dumps(f"neg_{t}", ensure_ascii=False) + ": " for t in vocab])


def init(tokenizer_json: str, max_length: int, vocab: list[str]) -> None:
    """Worker start: the tokenizer core (no padding, truncation at ``max_length``, one thread) and the vocabulary."""
    os.environ["TOKENIZERS_PARALLELISM"] = "false"  # the workers are the parallelism
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the main process's to handle (it keeps complete shards)
    from tokenizers import Tokenizer

    core = Tokenizer.from_str(tokenizer_json)
    core.no_padding()
    core.enable_truncation(int(max_length))
    _STATE.update(core=core, vocab=vocab, keys=json_keys(vocab))


def tokenize(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Token ids of ``texts`` with special tokens: (lengths int32, all ids concatenated int32)."""
    ids = [e.ids for e in encode_fast(_STATE["core"], texts)]
    lengths = np.fromiter(map(len, ids), dtype=np.int32, count=len(ids))
    flat = np.fromiter(itertools.chain.from_iterable(ids), dtype=np.int32, count=int(lengths.sum()))
    return lengths, flat


def format_lines(doc_ids: list[str], texts: list[str], counts: np.ndarray, terms: np.ndarray, values: np.ndarray,
                 negative: np.ndarray | None, finite: np.ndarray) -> tuple[list[bytes | None], list[int]]:
    """Per document: its JsonVectorCollection line as UTF-8 bytes (None when a weight was not finite), and its
    postings. Bytes: the main process neither decodes them from the pipe nor encodes them into the shard."""
    keys = _STATE["keys"]
    if keys is None:
        return _format_with_dicts(doc_ids, texts, counts, terms, values, negative, finite)
    positive, negated = keys
    dumps = json.dumps
    terms, values, finite = terms.tolist(), values.tolist(), finite.tolist()
    signs = None if negative is None else negative.tolist()
    lines: list[bytes | None] = []
    postings: list[int] = []
    start = 0
    for row, (doc_id, text, count) in enumerate(zip(doc_ids, texts, counts.tolist())):
        end = start + count
        if not finite[row]:
            lines.append(None)
            postings.append(0)
        else:
            pairs = zip(terms[start:end], values[start:end])
            if signs is None:
                vector = ", ".join([positive[t] + str(v) for t, v in pairs])
            else:
                vector = ", ".join([(negated if neg else positive)[t] + str(v)
                                    for (t, v), neg in zip(pairs, signs[start:end])])
            lines.append(f'{{"id": {dumps(doc_id, ensure_ascii=False)}, "contents": {dumps(text, ensure_ascii=False)}, '
                         f'"vector": {{{vector}}}}}\n'.encode("utf-8"))
            postings.append(count)
        start = end
    return lines, postings


def _format_with_dicts(doc_ids, texts, counts, terms, values, negative, finite) -> tuple[list[bytes | None], list[int]]:
    """``format_lines`` through a dict per document and ``json.dumps``, as ``io.vectors.window_lines``."""
    vectors = impact_dicts(_STATE["vocab"], counts.tolist(), terms.tolist(), values.tolist(),
                           None if negative is None else negative.tolist(), finite.tolist())
    dumps = json.dumps
    lines = [None if vector is None else
             (dumps({"id": doc_id, "contents": text, "vector": vector}, ensure_ascii=False) + "\n").encode("utf-8")
             for doc_id, text, vector in zip(doc_ids, texts, vectors)]
    return lines, [0 if vector is None else len(vector) for vector in vectors]
