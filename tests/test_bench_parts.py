"""The first N passages of an encoding as whole part files (bench/parts.py, what the real, distributed, capacity and
soak benchmarks index): finished or still being written, chosen on a part's boundary, linked (not copied) with a
metadata.json, relinked for another count."""
from __future__ import annotations

import json

import pytest

from scripts.bench.parts import encoding, first_parts, link_parts
from lsr_lucene.errors import InputError


def _write_parts(folder, sizes):
    folder.mkdir(parents=True)
    for i, size in enumerate(sizes):
        (folder / f"part-{i:05d}.jsonl").write_text("".join(f'{{"id": "d{i}-{j}"}}\n' for j in range(size)))
    return [f"part-{i:05d}.jsonl" for i in range(len(sizes))]


def _metadata(folder):
    return json.loads((folder / "metadata.json").read_text())


def test_a_finished_encoding_gives_whole_parts_and_relinks_for_another_count(tmp_path):
    vectors = tmp_path / "v"
    _write_parts(vectors, [3, 3, 2])
    (vectors / "metadata.json").write_text(json.dumps({"scale": 50}))
    parts = first_parts(vectors, 6)
    assert [p.name for p in parts.files] == ["part-00000.jsonl", "part-00001.jsonl"] and parts.documents == 6
    assert first_parts(vectors).documents == 8 and encoding(vectors).finished
    with pytest.raises(InputError, match=r"v: 5 passages do not end on a part's boundary \(the first parts hold 3, "
                                         r"then 6\)"):
        first_parts(vectors, 5)
    with pytest.raises(InputError, match="v: 9 passages asked for, 8 encoded in whole part files so far"):
        first_parts(vectors, 9)
    links = link_parts(parts, tmp_path / "c")
    assert _metadata(links) == {"scale": 50, "documents": 6, "files": ["part-00000.jsonl", "part-00001.jsonl"],
                                "shards": 2, "source_vectors": str(vectors.resolve())}
    (links / "stray.jsonl").write_text("{}\n")
    link_parts(first_parts(vectors, 3), links)  # relinked for another count
    assert sorted(p.name for p in links.iterdir()) == ["metadata.json", "part-00000.jsonl"]
    assert (links / "part-00000.jsonl").resolve() == (vectors / "part-00000.jsonl").resolve()
    assert (links / "part-00000.jsonl").is_symlink() and _metadata(links)["documents"] == 3
    assert encoding(links).documents == 3  # a linked folder reads as a finished encoding of its own


def test_an_encoding_being_written_gives_its_recorded_whole_parts(tmp_path):
    vectors = tmp_path / "vectors"
    partial = tmp_path / ".vectors.partial"
    names = _write_parts(partial, [2, 2, 2])
    (partial / "part-00003.jsonl.tmp").write_text('{"id": "half"}\n')  # the shard being written: never read
    state = {"settings": {"dtype": "int8", "scale": 100},
             "shards": [{"file": name, "documents": 2} for name in names[:2]]}  # the third not recorded yet
    (partial / "progress.state").write_text(json.dumps(state))
    for given in (vectors, partial):  # the final name, or the .partial folder itself
        found = encoding(given)
        assert not found.finished and found.documents == 4 and found.settings == state["settings"]
        parts = first_parts(given, 4)
        assert parts.files == [partial / "part-00000.jsonl", partial / "part-00001.jsonl"]
        with pytest.raises(InputError, match="6 passages asked for, 4 encoded in whole part files so far"):
            first_parts(given, 6)
    links = link_parts(first_parts(vectors, 4), tmp_path / "links")
    assert sorted(p.name for p in links.iterdir()) == ["metadata.json", "part-00000.jsonl", "part-00001.jsonl"]
    assert {k: v for k, v in _metadata(links).items() if k != "source_vectors"} == {
        "dtype": "int8", "scale": 100, "documents": 4, "files": names[:2], "shards": 2}


def test_no_encoding_yet(tmp_path):
    assert encoding(tmp_path / "vectors").files == [] and not encoding(tmp_path / "vectors").finished
    with pytest.raises(InputError, match=r"vectors: no part-\*\.jsonl files"):
        first_parts(tmp_path / "vectors", 2)
