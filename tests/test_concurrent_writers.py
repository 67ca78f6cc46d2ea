"""Two `lsr-lucene index` runs racing for one output, and one killed with SIGKILL: nothing is lost or half-made."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

INDEX = [sys.executable, "-m", "lsr_lucene.index"]


def _vectors(folder: Path, ids: list[str]) -> Path:
    folder.mkdir(parents=True)
    with open(folder / "part-00000.jsonl", "w", encoding="utf-8") as out:
        for i, doc_id in enumerate(ids):
            out.write(json.dumps({"id": doc_id, "contents": "", "vector": {"alpha": 10 + i, "beta": 3}}) + "\n")
    return folder


def _indexed_docs(index: Path) -> int:
    return json.loads((index / "lsr_lucene.json").read_text())["documents"]


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def test_two_indexers_on_one_output_one_wins_the_other_fails_clearly(tmp_path):
    small = _vectors(tmp_path / "small", ["a", "b"])
    large = _vectors(tmp_path / "large", ["c", "d", "e"])
    out = tmp_path / "out" / "x"
    runs = [subprocess.Popen([*INDEX, "--input", str(v), "--index", str(out), "--threads", "1"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for v in (small, large)]
    results = [(r.wait(timeout=300), r.stderr.read()) for r in runs]
    codes = sorted(code for code, _ in results)
    assert codes == [0, 2], results
    winner = [i for i, (code, _) in enumerate(results) if code == 0][0]
    loser_err = [line for line in results[1 - winner][1].splitlines() if line.startswith("error:")]
    assert len(loser_err) == 1 and str(out) in loser_err[0], results[1 - winner][1]
    assert ("being written by process" in loser_err[0] or "already exists" in loser_err[0]
            or "created by another process" in loser_err[0])
    assert _indexed_docs(out) == (2, 3)[winner]  # the winner's index, whole
    assert _leftovers(out.parent) == [] or all(".conflict-" in n for n in _leftovers(out.parent))


def test_index_killed_mid_write_leaves_no_output_and_the_rerun_cleans_up(tmp_path):
    vectors = _vectors(tmp_path / "vectors", [f"d{i}" for i in range(50)])
    out = tmp_path / "x"
    run = subprocess.Popen([*INDEX, "--input", str(vectors), "--index", str(out), "--threads", "1"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while not list(tmp_path.glob(".x.tmp-*")) and time.time() < deadline and run.poll() is None:
        time.sleep(0.05)
    run.send_signal(signal.SIGKILL)
    run.wait()
    assert not out.exists()  # killed as soon as its temporary appeared: long before the index is done
    assert list(tmp_path.glob(".x.tmp-*"))  # what SIGKILL leaves: the hidden temporary, and its lock
    rerun = subprocess.run([*INDEX, "--input", str(vectors), "--index", str(out), "--threads", "1"],
                           capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    assert _indexed_docs(out) == 50
    assert [line for line in rerun.stderr.splitlines() if "stale temporary" in line]
    assert _leftovers(tmp_path) == []
