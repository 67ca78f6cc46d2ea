"""Package layout rules: no import cycle between lsr_lucene's modules, and no module over 600 lines.

The import graph is read with ``ast`` (imports inside functions count too: a lazy import
is still a dependency), so a cycle fails here before it can fail at run time.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "lsr_lucene"
MAX_LINES = 600


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    """The longest known module that ``name`` starts with (``a.b.c`` where only ``a.b`` is a module)."""
    while name:
        if name in known:
            return name
        name = name.rpartition(".")[0]
    return None


def imports_of(module: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The package modules that ``module`` imports, at top level or inside functions."""
    is_package = path.name == "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    # a package's lazy re-export of its own submodule (an import inside a function of __init__, e.g. __getattr__)
    # is no dependency: importing the package does not run it, and the submodule imports the package first anyway
    lazy = {id(n) for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
            for n in ast.walk(f)} if is_package else set()
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")[: len(module.split(".")) - node.level + (1 if is_package else 0)]
                base = ".".join(anchor + ([base] if base else []))
            # "from pkg import mod" imports the module pkg.mod when it is one, else a name of pkg
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        else:
            continue
        for target in targets:
            resolved = _resolve(target, known)
            if resolved and id(node) in lazy and resolved.startswith(module + "."):
                continue
            if resolved and resolved != module:
                found.add(resolved)
    return found


def import_graph() -> dict[str, set[str]]:
    known = modules()
    graph = {name: imports_of(name, path, known) for name, path in known.items()}
    # importing a.b.c runs a/__init__ and a/b/__init__ first: those are dependencies too
    for name in list(graph):
        parts = name.split(".")
        graph[name] |= {".".join(parts[:i]) for i in range(2, len(parts)) if ".".join(parts[:i]) in graph} - {name}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a list of modules (first == last), or None."""
    state: dict[str, int] = {}  # 1 = on the current path, 2 = finished
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


def test_no_import_cycle():
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_no_module_over_the_line_limit():
    long = {name: n for name, path in modules().items()
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines (split them): " + ", ".join(
        f"{name} ({n})" for name, n in sorted(long.items()))


def is_command_module(path: Path) -> bool:
    """A command module parses argv: cli.py, cli_*.py (what several commands share), __main__.py, or a module
    that defines or imports ``main``."""
    if path.name in ("cli.py", "__main__.py") or path.name.startswith("cli_"):
        return True
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return any(isinstance(n, ast.FunctionDef) and n.name == "main" for n in tree.body) or any(
        isinstance(n, ast.ImportFrom) and any(a.name == "main" for a in n.names) for n in tree.body)


def argv_uses(path: Path) -> list[str]:
    """Lines where a module exits the process, reads sys.argv or builds an ArgumentParser."""
    uses = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "sys" \
                and node.attr in ("exit", "argv"):
            uses.append(f"{node.lineno} sys.{node.attr}")
        elif isinstance(node, ast.Attribute) and node.attr == "ArgumentParser":
            uses.append(f"{node.lineno} ArgumentParser")
    return uses


def test_library_modules_never_exit_or_parse_argv():
    """CLI code lives apart: a library module neither parses argv nor exits."""
    offenders = [f"{name}:{use}" for name, path in modules().items() if not is_command_module(path)
                 for use in argv_uses(path)]
    assert not offenders, "library modules that parse argv or exit: " + ", ".join(offenders)


def test_library_modules_do_not_import_command_modules():
    """Library code never depends on a command module (commands are leaves: only other commands import them)."""
    known = modules()
    commands = {name for name, path in known.items() if is_command_module(path)}
    graph = import_graph()
    offenders = [f"{name} imports {dep}" for name in sorted(set(known) - commands)
                 for dep in sorted(graph[name] & commands)]
    assert not offenders, "library modules importing command modules: " + ", ".join(offenders)


# --- the checker itself must be able to fail -------------------------------------------------------

def test_cycle_finder_names_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_graph_reads_relative_lazy_and_from_imports(tmp_path, monkeypatch):
    pkg = tmp_path / "lsr_lucene"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "a.py").write_text("def f():\n    from . import b\n")
    (pkg / "sub" / "b.py").write_text("from lsr_lucene.sub.a import f\n")
    monkeypatch.setattr(__import__(__name__), "PACKAGE", pkg)
    graph = import_graph()
    assert "lsr_lucene.sub.b" in graph["lsr_lucene.sub.a"]
    assert "lsr_lucene.sub.a" in graph["lsr_lucene.sub.b"]
    assert find_cycle(graph) is not None


def test_lazy_reexport_by_a_package_is_no_cycle_but_a_top_level_one_is(tmp_path, monkeypatch):
    pkg = tmp_path / "lsr_lucene"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("def __getattr__(name):\n    from lsr_lucene.sub.a import A\n    return A\n")
    (pkg / "sub" / "a.py").write_text("from lsr_lucene.sub import b\nA = 1\n")
    (pkg / "sub" / "b.py").write_text("")
    monkeypatch.setattr(__import__(__name__), "PACKAGE", pkg)
    assert find_cycle(import_graph()) is None
    (pkg / "sub" / "__init__.py").write_text("from lsr_lucene.sub.a import A\n")
    assert find_cycle(import_graph()) is not None


STAGES = ["io", "jvm", "encode", "index", "search", "compose", "longdocs", "train", "eval", "dense", "fuse",
          "distributed", "serve", "demo", "mcp"]


@pytest.mark.parametrize("stage", STAGES)
def test_stage_subpackages_exist(stage):
    assert (PACKAGE / stage / "__init__.py").is_file()


def test_the_package_holds_the_stages_only():
    """Research and benchmarks live in scripts/<study>/ (issue 66): no other subpackage, none of the old ones."""
    subpackages = {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    assert subpackages == set(STAGES), f"subpackages not in the stage list: {sorted(subpackages - set(STAGES))}"


# --- layering: eval measures runs and sits low; the package never imports the studies in scripts/ ------------------

EVAL_MAY_NOT_IMPORT = ("compose", "encode", "index", "search", "longdocs", "dense", "distributed")


def stage_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def layering_offenders(graph: dict[str, set[str]]) -> list[str]:
    """Imports that break the layering: eval importing a pipeline stage."""
    return [f"{name} imports {dep}" for name, deps in sorted(graph.items()) for dep in sorted(deps)
            if stage_of(name) == "eval" and stage_of(dep) in EVAL_MAY_NOT_IMPORT]


def test_eval_holds_metrics_only():
    offenders = layering_offenders(import_graph())
    assert not offenders, "layering broken: " + ", ".join(offenders)


def test_layering_check_can_fail():
    graph = {"lsr_lucene.eval.trec": {"lsr_lucene.search.impact", "lsr_lucene.io.runs"},
             "lsr_lucene.fuse.fit": {"lsr_lucene.eval.trec"}}
    assert layering_offenders(graph) == ["lsr_lucene.eval.trec imports lsr_lucene.search.impact"]


def imports_scripts(path: Path) -> list[str]:
    """Lines where a module imports the studies beside the package (``scripts``, ``scripts.<study>...``)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
        found += [f"{node.lineno} {n}" for n in names if n == "scripts" or n.startswith("scripts.")]
    return found


def test_the_package_never_imports_scripts():
    """scripts/ sits above the package and leaves the wheel: an import of it would fail in an installed release."""
    offenders = [f"{name}:{use}" for name, path in modules().items() for use in imports_scripts(path)]
    assert not offenders, "package modules importing scripts: " + ", ".join(offenders)


def test_scripts_import_check_can_fail(tmp_path):
    (tmp_path / "m.py").write_text("import scripts.bench.scale\nfrom scripts.negation import excluir\n"
                                   "from lsr_lucene.io import runs\n")
    assert imports_scripts(tmp_path / "m.py") == ["1 scripts.bench.scale", "2 scripts.negation"]


# --- one way in: public names only across modules (issue 66) -------------------------------------------------------

MAX_TOP_LEVEL_MODULES = 9


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_uses(module: str, path: Path) -> list[str]:
    """Lines where ``module`` reads another package module's private (``_name``) names: ``from lsr_lucene.x import
    _y``, ``x._y`` on a package module imported as ``x``, or a ``SpecSearcher``'s ``_java`` outside its module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found, aliases = [], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level or base == "lsr_lucene" or base.startswith("lsr_lucene."):
                found += [f"{node.lineno} {'.' * node.level}{base}.{a.name}" for a in node.names if _private(a.name)]
                aliases |= {a.asname or a.name for a in node.names}
        elif isinstance(node, ast.Import):
            aliases |= {a.asname for a in node.names if a.asname and a.name.startswith("lsr_lucene.")}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases \
                and _private(node.attr):
            found.append(f"{node.lineno} {node.value.id}.{node.attr}")
    if module != "lsr_lucene.search.spec_searcher":
        found += [f"{node.lineno} ._java" for node in ast.walk(tree) if
                  (isinstance(node, ast.Attribute) and node.attr == "_java"
                   and not (isinstance(node.value, ast.Name) and node.value.id == "self"))
                  or (isinstance(node, ast.Constant) and node.value == "_java")]
    return found


def test_no_module_reads_another_modules_private_names():
    offenders = [f"{name}:{use}" for name, path in modules().items() for use in private_uses(name, path)]
    assert not offenders, "private names read across modules (make them public): " + ", ".join(offenders)


def test_private_name_check_can_fail(tmp_path):
    (tmp_path / "m.py").write_text("from lsr_lucene.compose.intent import _after, Intent\n"
                                   "from lsr_lucene.dense import search\nsearch._faiss()\nsearcher._java.close()\n"
                                   "self._java.close()\nfrom lsr_lucene.x import __version__\n")
    assert private_uses("lsr_lucene.m", tmp_path / "m.py") == [
        "1 lsr_lucene.compose.intent._after", "3 search._faiss", "4 ._java"]


def test_few_top_level_modules():
    """Each verb's command lives in the subpackage that owns it: the top level keeps the dispatcher and what every
    stage shares."""
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= MAX_TOP_LEVEL_MODULES, f"{len(top)} top-level modules: {', '.join(top)}"
