"""Segmentation: sentence splitting, greedy packing into <= N-token segments, ids, limits and edge cases."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lsr_lucene.errors import InputError
from lsr_lucene.longdocs.segment import (Segmenter, parse_segment_id, segment_id, split_sentences, write_segments)


def words(texts):
    """Token counter for tests: one token per whitespace word."""
    return [len(t.split()) for t in texts]


def seg(max_tokens=5, max_segments=None, long_sentences="own"):
    return Segmenter(count_tokens=words, max_tokens=max_tokens, max_segments=max_segments,
                     long_sentences=long_sentences)


def test_split_sentences_rules():
    text = ("The appeal was heard by B.P. Jeevan Reddy J. in 1995. It was dismissed! Was it right? "
            "See s. 151 of the Code, i.e. the inherent powers. Rs. 800 was paid.\n\nNew paragraph without stop\n"
            "continues here")
    assert split_sentences(text) == [
        "The appeal was heard by B.P. Jeevan Reddy J. in 1995.",
        "It was dismissed!",
        "Was it right?",
        "See s. 151 of the Code, i.e. the inherent powers.",
        "Rs. 800 was paid.",
        "New paragraph without stop continues here",
    ]


def test_split_sentences_empty_and_whitespace():
    assert split_sentences("") == []
    assert split_sentences("  \n\n \t ") == []
    assert split_sentences("one. two. three") == ["one. two. three"]  # no capital after the stop: one sentence


def test_greedy_packing_and_ids():
    text = "aa bb. Cc dd ee. Ff gg hh ii. Jj."
    segments = seg(max_tokens=5).segment("doc1", text)
    assert [s.text for s in segments] == ["aa bb. Cc dd ee.", "Ff gg hh ii. Jj."]
    assert [s.tokens for s in segments] == [5, 5]
    assert [s.id for s in segments] == ["doc1@@0", "doc1@@1"]
    assert [parse_segment_id(s.id) for s in segments] == [("doc1", 0), ("doc1", 1)]


def test_segment_id_round_trip_and_plain_ids():
    assert parse_segment_id(segment_id("a@@b", 12)) == ("a@@b", 12)
    assert parse_segment_id("plain") == ("plain", 0)
    assert parse_segment_id("x@@notanumber") == ("x@@notanumber", 0)


def test_long_sentence_becomes_its_own_segment():
    text = "aa bb. Cc D E F G H I J K Ll. Mm nn."
    segments = seg(max_tokens=5).segment("d", text)
    assert [s.tokens for s in segments] == [2, 10, 2]
    assert segments[1].text == "Cc D E F G H I J K Ll."


def test_long_sentence_split_mode():
    text = "aa bb. Cc D E F G H I J K Ll. Mm nn."
    segments = seg(max_tokens=5, long_sentences="split").segment("d", text)
    assert all(s.tokens <= 5 for s in segments)
    assert " ".join(s.text for s in segments) == text


def test_max_segments_limits_documents_longer_than_any_limit():
    text = " ".join(f"S{i} xx yy zz." for i in range(1000))  # 4000 tokens
    segments = seg(max_tokens=8, max_segments=3).segment("d", text)
    assert len(segments) == 3
    assert [s.index for s in segments] == [0, 1, 2]
    assert all(s.tokens == 8 for s in segments)
    assert len(seg(max_tokens=8).segment("d", text)) == 500


def test_empty_documents_and_no_empty_segments():
    assert seg().segment("d", "") == []
    assert seg().segment("d", "   \n\n  ") == []
    # sentences that count zero tokens (nothing the model would see) never make an empty segment
    zero = Segmenter(count_tokens=lambda ts: [0 if t == "\u200b" else len(t.split()) for t in ts], max_tokens=5)
    assert zero.segment("d", "\u200b") == []
    assert all(s.text.strip() and s.tokens > 0 for s in zero.segment("d", "A b.\n\n\u200b\n\nC d."))


def test_bad_limits_are_input_errors():
    with pytest.raises(InputError):
        seg(max_tokens=0)
    with pytest.raises(InputError):
        seg(max_segments=0)
    with pytest.raises(InputError):
        seg(long_sentences="drop")


sentence = st.lists(st.sampled_from(["a", "bb", "c1", "dd"]), min_size=1, max_size=12).map(
    lambda ws: "X " + " ".join(ws) + ".")


@settings(max_examples=60, deadline=None)
@given(st.lists(sentence, min_size=0, max_size=30), st.integers(min_value=1, max_value=20))
def test_packing_properties(sentences, max_tokens):
    text = " ".join(sentences)
    segments = seg(max_tokens=max_tokens).segment("d", text)
    expected = split_sentences(text)
    # nothing lost, order kept
    assert " ".join(s.text for s in segments) == " ".join(expected)
    counts = {s: len(s.split()) for s in expected}
    for i, s in enumerate(segments):
        assert s.tokens == len(s.text.split()) > 0
        assert s.id == f"d@@{i}"
        # over the limit only as a single over-long sentence
        if s.tokens > max_tokens:
            assert s.text in counts and counts[s.text] == s.tokens
    # greedy: the next segment's first sentence would not have fitted
    for a, b in zip(segments, segments[1:]):
        first = next(x for x in expected if b.text.startswith(x))
        assert a.tokens + counts[first] > max_tokens or a.tokens >= max_tokens


def test_wordpiece_counts_add_up():
    from transformers import AutoTokenizer

    from lsr_lucene.encode.models import resolve

    tokenizer = AutoTokenizer.from_pretrained(resolve("splade-tiny"))
    segmenter = Segmenter(tokenizer, max_tokens=40)
    text = ("The petitioners, served as Medical officers (AMC), retired prior to 1.1.1996. "
            "Ministry circular dated 2.11.1987 clarified that NPA will be treated as 'pay'. ") * 6
    segments = segmenter.segment("q", text)
    assert len(segments) > 1
    for s in segments:
        assert len(tokenizer(s.text, add_special_tokens=False)["input_ids"]) == s.tokens
        assert s.tokens <= 40


def test_write_segments(tmp_path):
    from lsr_lucene.io.corpus import Doc

    docs = [Doc("a", "One two. Three four five. Six."), Doc("empty", "  "), Doc("b", "Alpha beta.")]
    out = tmp_path / "segments.jsonl"
    counts = write_segments(docs, seg(max_tokens=4), out)
    rows = [json.loads(line) for line in out.open()]
    assert [r["id"] for r in rows] == ["a@@0", "a@@1", "b@@0"]
    assert counts["documents"] == 3 and counts["empty_documents"] == 1 and counts["segments"] == 3
    with pytest.raises(InputError):
        write_segments(docs, seg(), out)  # exists, no overwrite
    with pytest.raises(InputError):
        write_segments([Doc("x@@1", "text")], seg(), tmp_path / "other.jsonl")
