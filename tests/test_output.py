"""Outputs appear only when complete; temporaries left by killed runs are removed by the next writer."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from lsr_lucene.errors import InputError, OutputError
from lsr_lucene.io.claims import TEMP_MARK, process_started, remove_stale_temporaries
from lsr_lucene.io.output import atomic_output

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
CLEANER = "import sys; from lsr_lucene.io.claims import remove_stale_temporaries as r; print(len(r(sys.argv[1])))"


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


def test_temporary_of_a_reused_pid_is_stale_and_a_live_writers_is_kept(tmp_path):
    """The start time in a temporary's name tells a reused pid (another process now) from its writer."""
    final = tmp_path / "run.txt"
    started = process_started(os.getpid())
    reused = tmp_path / f".run.txt{TEMP_MARK}{os.getppid()}.{int(process_started(os.getppid())) + 1}-abc"
    reused.write_text("partial")
    live = tmp_path / f".run.txt{TEMP_MARK}{os.getppid()}.{process_started(os.getppid())}-abc"
    live.write_text("in progress")
    assert started and remove_stale_temporaries(final) == [reused]
    assert live.exists() and not reused.exists()


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


HOLDER = """
import sys, time
from lsr_lucene.io.claims import claim_output
with claim_output(sys.argv[1]):
    print("held", flush=True)
    time.sleep(30)
"""


def test_second_writer_fails_at_once_while_the_first_holds_the_output(tmp_path):
    final = tmp_path / "run.txt"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(final)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(OutputError, match=f"{final} is being written by process {holder.pid}"):
            with atomic_output(final) as tmp:
                tmp.write_text("second")
        assert not final.exists() and _temporaries(final) == []
    finally:
        holder.kill()
        holder.wait()
    with atomic_output(final) as tmp:  # its holder was killed: the stale lock is taken over
        tmp.write_text("third")
    assert final.read_text() == "third" and not (tmp_path / ".run.txt.lock").exists()


@pytest.mark.parametrize("directory", [False, True])
def test_output_created_meanwhile_is_kept_and_ours_is_set_aside(tmp_path, directory):
    final = tmp_path / "out"
    with pytest.raises(OutputError, match="created by another process while this one ran") as raised:
        with atomic_output(final, directory=directory) as tmp:
            (tmp / "mine" if directory else tmp).write_text("mine")
            final.mkdir() if directory else None
            (final / "theirs" if directory else final).write_text("theirs")  # a writer that took no lock
    assert (final / "theirs" if directory else final).read_text() == "theirs"
    kept = tmp_path / f"out.conflict-{os.getpid()}"
    assert str(kept) in str(raised.value)
    assert (kept / "mine" if directory else kept).read_text() == "mine"


@pytest.mark.parametrize("directory", [False, True])
def test_overwrite_replaces_whole_output_and_leaves_nothing_aside(tmp_path, directory):
    final = tmp_path / "out"
    for content in ("old", "new"):
        with atomic_output(final, overwrite=True, directory=directory) as tmp:
            (tmp / content if directory else tmp).write_text(content)
    if directory:
        assert sorted(p.name for p in final.iterdir()) == ["new"]
    else:
        assert final.read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


RACER = """
import os, sys, time
from pathlib import Path
from lsr_lucene.errors import OutputError
from lsr_lucene.io.claims import claim_output
go = Path(sys.argv[2])
while not go.exists():
    time.sleep(0.005)
try:
    with claim_output(sys.argv[1]):
        print("won", flush=True)
        time.sleep(float(sys.argv[3]))
except OutputError as exc:
    print("lost", exc, flush=True)
"""


def _dead_identity() -> str:
    """A writer identity of a process that has exited (on this host)."""
    from lsr_lucene.io.claims import this_host

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return f"{int(dead.stdout)}@{this_host()}"


def test_many_processes_racing_for_a_stale_lock_exactly_one_wins(tmp_path):
    """The kernel lock decides: of 12 processes released at once at a lock left by a dead writer, one wins."""
    final = tmp_path / "run.txt"
    lock = tmp_path / ".run.txt.lock"
    lock.write_text(_dead_identity() + "\n")  # what a SIGKILLed writer leaves (the kernel dropped its lock)
    go = tmp_path / "go"
    racers = [subprocess.Popen([sys.executable, "-c", RACER, str(final), str(go), "3"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True) for _ in range(12)]
    time.sleep(1.0)
    go.touch()
    results = [r.communicate(timeout=120) for r in racers]
    outs = [out.strip() for out, _ in results]
    assert sum(out == "won" for out in outs) == 1, outs
    assert all(out == "won" or (out.startswith("lost") and "is being written by process" in out) for out in outs)
    notices = [err for _, err in results if err.strip()]
    assert len(notices) == 1 and "removed the stale lock of process" in notices[0] and len(notices[0].splitlines()) == 1
    assert not lock.exists()


def test_a_stale_lock_alone_is_removed_with_a_one_line_notice(tmp_path, capsys):
    from lsr_lucene.io.claims import claim_output

    final = tmp_path / "run.txt"
    dead = _dead_identity()
    (tmp_path / ".run.txt.lock").write_text(dead + "\n")
    with atomic_output(final) as tmp:
        tmp.write_text("ok")
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"stale lock of process {dead.split('@')[0]}" in err[0] and str(final) in err[0]
    with claim_output(final):  # released normally: the next writer says nothing
        pass
    assert capsys.readouterr().err == "" and not (tmp_path / ".run.txt.lock").exists()


HOLDER_AS = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_CREAT | os.O_RDWR)
fcntl.flock(fd, fcntl.LOCK_EX)
os.write(fd, (sys.argv[2] + "\\n").encode())
print("held", flush=True)
time.sleep(30)
"""


def test_a_lock_and_temporaries_of_a_writer_on_another_host_are_respected(tmp_path):
    """A pid from another host means nothing here: its lock is not judged by it, its temporaries are kept."""
    final = tmp_path / "run.txt"
    dead_pid = _dead_identity().split("@")[0]
    theirs = tmp_path / f".run.txt{TEMP_MARK}{dead_pid}.12345@otherhost-abc"
    theirs.write_text("in progress")
    assert remove_stale_temporaries(final) == [] and theirs.exists()
    holder = subprocess.Popen([sys.executable, "-c", HOLDER_AS, str(tmp_path / ".run.txt.lock"),
                               f"{dead_pid}.12345@otherhost"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(OutputError, match=f"is being written by process {dead_pid} on host otherhost"):
            with atomic_output(final) as tmp:
                tmp.write_text("mine")
        assert not final.exists() and theirs.exists()
    finally:
        holder.kill()
        holder.wait()


def test_output_dash_is_refused_not_written_as_a_file_named_dash(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError, match=r"^output '-': writing to standard output is not supported"):
        with atomic_output("-"):
            pass
    assert list(tmp_path.iterdir()) == []


def test_a_directory_given_for_a_jsonl_file_is_one_error_line(tmp_path):
    from lsr_lucene.io.output import open_jsonl

    with pytest.raises(InputError, match=rf"^{tmp_path}: is a directory, expected a JSONL file$"):
        list(open_jsonl(tmp_path))


@pytest.mark.parametrize("directory", [False, True])
def test_overwrite_never_replaces_a_folder_by_a_file_or_a_file_by_a_folder(tmp_path, directory):
    """``search --output runs/ --overwrite`` removed the whole folder and left a run file in its place."""
    target = tmp_path / "out"
    if directory:
        target.write_text("keep me\n")
    else:
        target.mkdir()
        (target / "a.txt").write_text("keep me\n")
    found = "a file" if directory else "a folder"
    with pytest.raises(InputError, match=rf"^{target} is {found} and this command writes"):
        with atomic_output(target, overwrite=True, directory=directory):
            pass
    assert target.is_dir() != directory
    with atomic_output(tmp_path / "same", overwrite=True, directory=directory) as tmp:  # same kind: replaced
        (tmp / "x").write_text("new") if directory else tmp.write_text("new")


def test_fuse_overwrite_refuses_a_folder_before_fusing(tmp_path, capsys):
    from lsr_lucene.cli import main

    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "old.run").write_text("keep me\n")
    for name in ("a", "b"):
        (tmp_path / f"{name}.run").write_text("1 Q0 d1 1 2.0 t\n1 Q0 d2 2 1.0 t\n")
    assert main(["fuse", "--run", f"a={tmp_path / 'a.run'}", "--run", f"b={tmp_path / 'b.run'}", "--output",
                 str(tmp_path / "runs"), "--overwrite"]) == 2
    assert "is a folder and this command writes a file there" in capsys.readouterr().err
    assert (tmp_path / "runs" / "old.run").read_text() == "keep me\n"
