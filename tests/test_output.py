"""Outputs appear only when complete; temporaries left by killed runs are removed by the next writer."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from lsr_lucene.errors import InputError
from lsr_lucene.io.output import TEMP_MARK, atomic_output, remove_stale_temporaries

KILLED_WRITER = """
import os, signal, sys
from pathlib import Path
from lsr_lucene.io.output import atomic_output
with atomic_output(sys.argv[1], directory=True) as tmp:
    (Path(tmp) / "part-00000.jsonl").write_text("half")
    os.kill(os.getpid(), signal.SIGKILL)
"""
NEXT_WRITER = """
import sys
from pathlib import Path
from lsr_lucene.io.output import atomic_output
with atomic_output(sys.argv[1], directory=True) as tmp:
    (Path(tmp) / "done").write_text("ok")
"""
CLEANER = "import sys; from lsr_lucene.io.output import remove_stale_temporaries as r; print(len(r(sys.argv[1])))"


def _temporaries(final):
    return sorted(final.parent.glob(f".{final.name}{TEMP_MARK}*"))


def test_kill_9_leaves_no_output_and_the_next_run_removes_its_temporary(tmp_path):
    final = tmp_path / "index"
    result = subprocess.run([sys.executable, "-c", KILLED_WRITER, str(final)])
    assert result.returncode == -signal.SIGKILL
    assert not final.exists()
    left = _temporaries(final)
    assert len(left) == 1 and left[0].is_dir()
    nxt = subprocess.run([sys.executable, "-c", NEXT_WRITER, str(final)], capture_output=True, text=True)
    assert nxt.returncode == 0, nxt.stderr
    assert (final / "done").read_text() == "ok"
    assert _temporaries(final) == []
    err = nxt.stderr.strip().splitlines()
    assert len(err) == 1 and "removed 1 stale temporary" in err[0] and left[0].name in err[0]


def test_live_writers_temporary_is_kept(tmp_path):
    final = tmp_path / "run.txt"
    writer = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        time.sleep(0.2)
        live = tmp_path / f".run.txt{TEMP_MARK}{writer.pid}-abc"
        live.write_text("in progress")  # made by a writer that is still running
        check = subprocess.run([sys.executable, "-c", CLEANER, str(final)], capture_output=True, text=True)
        assert (check.stdout.strip(), check.stderr) == ("0", "")
        assert live.exists()
    finally:
        writer.kill()
        writer.wait()
    check = subprocess.run([sys.executable, "-c", CLEANER, str(final)], capture_output=True, text=True)
    assert check.stdout.strip() == "1" and not live.exists()  # its writer died: now it is stale


def test_temporary_of_a_dead_process_and_other_names_left_alone(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)
    final = tmp_path / "run.txt"
    stale = tmp_path / f".run.txt{TEMP_MARK}{pid}-xyz"
    stale.write_text("partial")
    os.utime(stale, (time.time() - 3600,) * 2)
    other_output = tmp_path / f".run.txt.bak{TEMP_MARK}{pid}-xyz"  # another output's temporary
    other_output.write_text("x")
    os.utime(other_output, (time.time() - 3600,) * 2)
    unrelated = tmp_path / ".run.txt.tmp-notapid"
    unrelated.write_text("x")
    assert remove_stale_temporaries(final) == [stale]
    assert not stale.exists() and other_output.exists() and unrelated.exists()


def test_existing_output_is_refused_and_untouched(tmp_path):
    final = tmp_path / "run.txt"
    final.write_text("mine")
    with pytest.raises(InputError, match="already exists"):
        with atomic_output(final) as tmp:
            tmp.write_text("theirs")
    assert final.read_text() == "mine"
    assert _temporaries(final) == []


def test_failed_body_removes_its_temporary(tmp_path):
    final = tmp_path / "out"
    with pytest.raises(RuntimeError):
        with atomic_output(final, directory=True):
            raise RuntimeError("boom")
    assert not final.exists() and _temporaries(final) == []
