"""Every documented command on the demo collection runs as written (issue 51).

The fenced blocks of README.md and docs/*.md tagged ```` ```bash demo ```` or ```` ```python demo ```` run in a fresh
work directory (nothing copied from ../shared: the demo data ships in ``lsr_lucene/data/demo``, reached there as
from the repository root): first every shell block, in README.md then docs/*.md order (README's first block is
``lsr-lucene demo``), each as one ``bash -e`` script, then every Python block, each in its own namespace in one
process. Afterwards every ``work/demo/...`` and ``lsr_lucene/data/demo/...`` path the pages name anywhere (any
block, any sentence) must exist, so a wrong path fails even in a block that is not run.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # runs every tagged block of the docs (-m 'not slow' skips it)

REPO = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^```([\w-]+)[ \t]*([^\n]*)\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
DEMO_PATH = re.compile(r"(?<![\w/.-])((?:work/demo|lsr_lucene/data/demo)(?:/[\w.@+-]+)*)")
# Paths the pages name that no `demo` block writes, each with what does write it.
WRITTEN_ELSEWHERE: dict[str, str] = {}
RUN_TIMEOUT_S = 600


@dataclass
class Fence:
    """One fenced block: where it starts (``file:line``), its language, its tags after the language, its code."""

    where: str
    lang: str
    tags: list[str]
    code: str


def doc_pages(root: Path = REPO) -> list[Path]:
    """README.md, then docs/*.md in name order: the order their demo blocks run in."""
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def fences(page: Path, root: Path = REPO) -> list[Fence]:
    """The fenced blocks of one Markdown page."""
    text = page.read_text(encoding="utf-8")
    name = page.relative_to(root).as_posix() if page.is_relative_to(root) else page.name
    return [Fence(f"{name}:{text.count(chr(10), 0, m.start()) + 1}", m.group(1), m.group(2).split(), m.group(3))
            for m in FENCE.finditer(text)]


def demo_fences(pages: list[Path], root: Path = REPO) -> tuple[list[Fence], list[Fence]]:
    """The shell and Python blocks tagged ``demo``, in page order."""
    tagged = [f for page in pages for f in fences(page, root) if "demo" in f.tags]
    shell = [f for f in tagged if f.lang in ("bash", "sh", "shell", "console")]
    python = [f for f in tagged if f.lang == "python"]
    unknown = [f.where for f in tagged if f not in shell and f not in python]
    assert not unknown, f"demo blocks in a language this test cannot run: {unknown}"
    return shell, python


def named_paths(pages: list[Path], root: Path = REPO) -> dict[str, str]:
    """Every demo path the pages name -> where it is first named (``file:line``)."""
    found: dict[str, str] = {}
    for page in pages:
        name = page.relative_to(root).as_posix() if page.is_relative_to(root) else page.name
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            for match in DEMO_PATH.finditer(line):
                found.setdefault(match.group(1).rstrip("."), f"{name}:{number}")
    return found


def missing_paths(pages: list[Path], workdir: Path, root: Path = REPO) -> list[str]:
    """The named demo paths that do not exist under ``workdir``, each with where it is named."""
    return [f"{where}: {path}" for path, where in named_paths(pages, root).items()
            if path not in WRITTEN_ELSEWHERE and not (workdir / path).exists()]


def fresh_workdir(path: Path) -> Path:
    """An empty directory that sees the package (and its demo data) where the repository root has it."""
    path.mkdir(parents=True, exist_ok=True)
    (path / "lsr_lucene").symlink_to(REPO / "lsr_lucene", target_is_directory=True)
    return path


def environment() -> dict[str, str]:
    """This interpreter's scripts (``lsr-lucene``, ``python``) first on PATH, this checkout's package importable."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["PYTHONPATH"] = os.pathsep.join(p for p in [str(REPO), env.get("PYTHONPATH", "")] if p)
    return env


def _check(result: subprocess.CompletedProcess, what: str) -> str:
    output = (result.stdout or "") + (result.stderr or "")
    if result.returncode != 0:
        raise AssertionError(f"{what} failed (exit {result.returncode}):\n{output[-4000:]}")
    return output


def run_shell(fence: Fence, workdir: Path, env: dict[str, str]) -> str:
    """Run one shell block as a ``bash -e -o pipefail`` script in ``workdir``; its output, or AssertionError."""
    result = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", fence.code], cwd=workdir, env=env,
                            capture_output=True, text=True, timeout=RUN_TIMEOUT_S, check=False)
    return _check(result, f"the shell block at {fence.where}")


DRIVER = """\
import json, sys, traceback
for block in json.load(open(sys.argv[1], encoding="utf-8")):
    print("=== " + block["where"], flush=True)
    try:
        exec(compile(block["code"], block["where"], "exec"), {"__name__": "__main__"})
    except BaseException:
        traceback.print_exc()
        sys.exit("the Python block at " + block["where"] + " failed")
"""


def run_python(blocks: list[Fence], workdir: Path, env: dict[str, str]) -> str:
    """Run Python blocks one after another in one process (each in a fresh namespace); output, or AssertionError."""
    spec = workdir.resolve().parent / f"{workdir.name}-python-blocks.json"
    spec.write_text(json.dumps([{"where": b.where, "code": b.code} for b in blocks]), encoding="utf-8")
    result = subprocess.run([sys.executable, "-c", DRIVER, str(spec)], cwd=workdir, env=env, capture_output=True,
                            text=True, timeout=RUN_TIMEOUT_S, check=False)
    return _check(result, "the Python blocks " + ", ".join(b.where for b in blocks))


# ------------------------------------------------------------------------------- the extractor and runner alone
BAD_PAGE = """# A page with a wrong path

```bash demo
mkdir -p work/demo/index-splade-tiny
test -d work/demo/index
```

```python demo
open("work/demo/index/lsr_lucene.json")
```

```python
from lsr_lucene.compose import ComposeSearcher
ComposeSearcher("work/demo/index")    # not run, but the path is checked
```
"""


def test_a_wrong_path_in_a_page_fails(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(BAD_PAGE)
    shell, python = demo_fences([page], tmp_path)
    assert [f.where for f in shell] == ["page.md:3"] and [f.where for f in python] == ["page.md:8"]
    assert len(fences(page, tmp_path)) == 3
    workdir, env = fresh_workdir(tmp_path / "work-root"), environment()
    with pytest.raises(AssertionError, match="shell block at page.md:3 failed"):
        run_shell(shell[0], workdir, env)
    with pytest.raises(AssertionError, match=r"(?s)page.md:8.*FileNotFoundError"):
        run_python(python, workdir, env)
    assert missing_paths([page], workdir, tmp_path) == ["page.md:5: work/demo/index",
                                                        "page.md:9: work/demo/index/lsr_lucene.json"]
    (workdir / "work/demo/index").mkdir()
    (workdir / "work/demo/index/lsr_lucene.json").write_text("{}")
    assert missing_paths([page], workdir, tmp_path) == []
    run_shell(shell[0], workdir, env)
    run_python(python, workdir, env)


def test_paths_are_read_as_written():
    page = "see `work/demo/index-splade-tiny/dense`, work/demo/q.jsonl. and lsr_lucene/data/demo/qrels.txt, not x/work/demo"
    assert [m.group(1).rstrip(".") for m in DEMO_PATH.finditer(page)] == [
        "work/demo/index-splade-tiny/dense", "work/demo/q.jsonl", "lsr_lucene/data/demo/qrels.txt"]


# ------------------------------------------------------------------------------------------ the real pages
def test_every_demo_command_in_the_docs_runs(tmp_path):
    pages = doc_pages()
    shell, python = demo_fences(pages)
    assert shell and "lsr-lucene demo" in shell[0].code, "README.md's first demo block should run lsr-lucene demo"
    assert python, "README.md's quick start should have a Python demo block"
    workdir, env = fresh_workdir(tmp_path / "fresh"), environment()
    for fence in shell:
        run_shell(fence, workdir, env)
    run_python(python, workdir, env)
    missing = missing_paths(pages, workdir)
    assert not missing, "paths the docs name that the demo commands did not write:\n" + "\n".join(missing)


def test_a_block_on_the_demo_index_runs_or_says_what_it_needs():
    """A block that uses the demo's files is run (tagged ``demo``) or tagged with what it needs first
    (``needs-server``: a server started in another terminal; ``needs-jdk21``: a full JDK 21+), issue 67."""
    untagged = [f.where for page in doc_pages() for f in fences(page)
                if f.lang in ("bash", "sh", "shell", "console", "python") and "work/demo" in f.code
                and "demo" not in f.tags and not any(tag.startswith("needs-") for tag in f.tags)]
    assert not untagged, "blocks on the demo index neither run nor saying what they need: " + ", ".join(untagged)
