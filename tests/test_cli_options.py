"""Every verb's options: one spelling for the shared ones (old names and Pyserini's names as aliases), a shown
default for every option that has one, numeric values checked before any work with one wording, quiet
libraries by default, and a quiet exit when the reader of stdout goes away."""
from __future__ import annotations

import argparse
import importlib
import subprocess
import sys

import pytest

from lsr_lucene import cli_options as opt
from lsr_lucene.cli import SUBCOMMANDS, run_main
from lsr_lucene.errors import InputError
from lsr_lucene.longdocs.cli import COMMANDS as LONGDOCS_COMMANDS

# canonical spelling -> the other spellings that must be aliases of it (never an option of their own)
SHARED = {"--index": set(), "--topics": set(), "--output": {"--output-dir"}, "--hits": {"--k"},
          "--threads": set(), "--encoder": {"--model"}, "--overwrite": set(), "--run-tag": {"--runtag"},
          "--input": {"--encoded"}}


class _Captured(Exception):
    pass


def verb_parsers(monkeypatch) -> dict[str, argparse.ArgumentParser]:
    """Every verb's parser (sub-commands' parsers included), caught when its ``main`` parses the arguments."""
    caught: list[argparse.ArgumentParser] = []

    def capture(self, args=None, namespace=None):
        caught.append(self)
        raise _Captured

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", capture)
    calls = [(verb, [], module) for verb, (module, _) in SUBCOMMANDS.items() if verb != "longdocs"]
    calls += [(f"longdocs {c}", [c], "lsr_lucene.longdocs.cli") for c in LONGDOCS_COMMANDS]
    parsers: dict[str, argparse.ArgumentParser] = {}
    for name, argv, module in calls:
        caught.clear()
        with pytest.raises(_Captured):
            importlib.import_module(module).main(argv)
        parser = caught[0]
        parsers[name] = parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                parsers.update({f"{name} {sub}": p for sub, p in action.choices.items()})
    return parsers


def test_every_verb_is_walked_and_built_with_the_shared_parser(monkeypatch):
    parsers = verb_parsers(monkeypatch)
    assert {"search", "encode", "longdocs search", "dense encode", "distributed search", "fuse"} <= set(parsers)
    plain = [name for name, p in parsers.items() if not isinstance(p, opt.Parser)]
    assert not plain, f"verbs not built with lsr_lucene.cli_options.Parser: {plain}"


def test_shared_options_have_one_spelling_across_verbs(monkeypatch):
    wrong = []
    for name, parser in verb_parsers(monkeypatch).items():
        for action in parser._actions:
            strings = set(action.option_strings)
            for canonical, aliases in SHARED.items():
                if strings & ({canonical} | aliases) and action.option_strings[0] != canonical:
                    wrong.append(f"{name}: {'/'.join(action.option_strings)} (expected {canonical} first)")
                if canonical in strings and strings - {canonical} - aliases:
                    wrong.append(f"{name}: {'/'.join(action.option_strings)} (other spellings of {canonical})")
            if "--encoder" in strings and strings != {"--encoder", "--model"}:
                wrong.append(f"{name}: {'/'.join(action.option_strings)} without the --model alias")
            if "--overwrite" in strings and not isinstance(action, argparse._StoreTrueAction):
                wrong.append(f"{name}: --overwrite takes a value")
    assert not wrong, "\n".join(wrong)


def test_numeric_options_are_checked_and_defaults_shown(monkeypatch):
    unchecked, hidden, wording = [], [], []
    for name, parser in verb_parsers(monkeypatch).items():
        formatter = parser._get_formatter()
        for action in parser._actions:
            if action.type in (int, float):
                unchecked.append(f"{name} {action.option_strings[0]}")
            if isinstance(action.type, opt.Checked):
                with pytest.raises(InputError) as exc:
                    action.type("not-a-number")
                if str(exc.value) != f"{action.option_strings[0]} must be {action.type.kind.wording}, got not-a-number":
                    wording.append(str(exc.value))
            # a switch (--no-x, store_false) shows none: "(default: True)" beside --no-x reads backwards
            if action.option_strings and action.default not in (None, False, argparse.SUPPRESS, [], (), "") \
                    and not opt.is_switch(action):
                if "default" not in formatter._format_action(action):
                    hidden.append(f"{name} {action.option_strings[0]} (default {action.default!r})")
    assert not unchecked, "numeric options without a check: " + ", ".join(unchecked)
    assert not wording, wording
    assert not hidden, "--help hides these defaults: " + ", ".join(hidden)


@pytest.mark.parametrize("verb", ["search", "bm25", "compose", "fuse", "dense search", "longdocs search",
                                  "distributed search"])
def test_hits_zero_is_one_error_line_before_any_work(verb, capsys, tmp_path):
    name, *sub = verb.split()
    module = importlib.import_module(SUBCOMMANDS[name][0])
    out = tmp_path / "run.txt"
    assert run_main(module.main, [*sub, "--output", str(out), "--hits", "0"]) == 2
    assert capsys.readouterr().err.splitlines() == ["error: --hits must be a positive integer, got 0"]
    assert not out.exists()


def test_validators_ranges():
    check = opt.Checked
    assert check(opt.POSITIVE_INT, "--n")("3") == 3
    assert check(opt.NON_NEGATIVE_INT, "--n")("0") == 0
    assert check(opt.SHARE, "--s")("0.5") == 0.5
    for kind, bad in ((opt.POSITIVE_INT, "0"), (opt.POSITIVE_INT, "1.5"), (opt.NON_NEGATIVE_INT, "-1"),
                      (opt.POSITIVE_NUMBER, "0"), (opt.SHARE, "1.5"), (opt.NUMBER, "nan"), (opt.NUMBER, "inf")):
        with pytest.raises(InputError, match=rf"^--x must be {kind.wording}, got {bad}$"):
            check(kind, "--x")(bad)


def test_old_and_pyserini_spellings_are_aliases(monkeypatch):
    parsers = verb_parsers(monkeypatch)
    monkeypatch.undo()
    args = parsers["encode"].parse_args(["--corpus", "c", "--output", "o", "--model", "m"])
    assert args.model == "m" and args.max_length == 256  # the README's figures use 256 tokens
    args = parsers["search"].parse_args(["--index", "i", "--topics", "t", "--output", "o", "--runtag", "x"])
    assert args.run_tag == "x" and args.threads == opt.DEFAULT_THREADS
    args = parsers["fuse"].parse_args(["--k", "7", "--rrf.k", "20", "--runtag", "f"])
    assert (args.hits, args.rrf_k, args.run_tag) == (7, 20.0, "f")
    assert parsers["demo"].parse_args(["--output-dir", "d"]).output == "d"
    assert parsers["longdocs index"].parse_args(["--encoded", "e", "--index", "i"]).encoded == "e"


def test_verbose_flag_and_quiet_libraries(monkeypatch):
    from transformers.utils import logging as hf_logging

    from lsr_lucene import verbosity

    for name in ("LSR_VERBOSE", *verbosity._QUIET_ENV):  # restored by monkeypatch afterwards
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(verbosity, "_state", {"verbose": False})
    verbosity.quiet_libraries()
    assert not hf_logging.is_progress_bar_enabled() and hf_logging.get_verbosity() == hf_logging.ERROR
    opt.Parser().parse_args(["-v"])
    assert verbosity.is_verbose() and hf_logging.is_progress_bar_enabled()
    verbosity.set_verbose(False)
    assert not hf_logging.is_progress_bar_enabled()


def test_verbose_holds_for_one_command(monkeypatch):
    """A command's -v (or lsr-lucene -v <command>) ends with it: the next command in the same process, and the
    processes it starts (LSR_VERBOSE), are quiet again."""
    import os

    from lsr_lucene import verbosity
    from lsr_lucene.cli import main, run_main

    monkeypatch.delenv("LSR_VERBOSE", raising=False)
    monkeypatch.setattr(verbosity, "_state", {"verbose": False})
    seen = []

    def command(argv):
        opt.Parser().parse_args(argv)
        seen.append((verbosity.is_verbose(), os.environ.get("LSR_VERBOSE")))
        return 0

    assert run_main(command, ["-v"]) == 0 and run_main(command, []) == 0
    assert seen == [(True, "1"), (False, None)] and not verbosity.is_verbose()
    assert main(["-v", "parse-negation", "tea without caffeine"]) == 0
    assert not verbosity.is_verbose() and "LSR_VERBOSE" not in os.environ


def test_progress_bars_only_on_a_terminal(tmp_path):
    """Off a terminal, no bar (no carriage returns): log lines every few seconds (issue 38), none for quick work."""
    from lsr_lucene.progress import LogProgress, progress_bar

    with open(tmp_path / "log", "w") as log:
        bar = progress_bar(range(3), file=log, desc="x")
        assert isinstance(bar, LogProgress) and list(bar) == [0, 1, 2]
    assert (tmp_path / "log").read_text() == ""


def test_broken_pipe_exits_quietly(tmp_path):
    topics = tmp_path / "topics.tsv"
    topics.write_text("".join(f"{i}\ttea without caffeine number {i}\n" for i in range(20000)))
    reader = subprocess.Popen([sys.executable, "-m", "lsr_lucene.compose.parse_negation", "--topics", str(topics)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    reader.stdout.readline()
    reader.stdout.close()  # as `| head -1` does
    err = reader.stderr.read().decode()
    assert reader.wait(timeout=120) == 0 and "Traceback" not in err and "BrokenPipe" not in err, err


def test_hub_names_fail_at_once_offline_naming_what_works(monkeypatch):
    """Offline, a Hub id that is not cached fails before any download attempt (no retries), in one line that says
    what was tried, which names load here, and that all-minilm-l6-v2 is a dense model."""
    import transformers

    from lsr_lucene.encode import models
    from lsr_lucene.errors import SetupError

    if models.in_hub_cache("naver/splade-v3"):
        pytest.skip("naver/splade-v3 is in this machine's Hugging Face cache")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")

    def never(*args, **kwargs):
        raise AssertionError("went to the Hugging Face Hub")

    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", never)
    with pytest.raises(SetupError) as exc:
        models.load("splade-v3")
    message = str(exc.value)
    assert "\n" not in message and "'naver/splade-v3'" in message, message
    assert "available offline here: splade-tiny" in message and "all-minilm-l6-v2 is a dense model" in message
    with pytest.raises(SetupError, match=r"^all-minilm-l6-v2 is a dense model: use it with `lsr-lucene dense`"):
        models.load("all-minilm-l6-v2")


def test_reorder_takes_the_index_verbs_form(monkeypatch):
    parsers = verb_parsers(monkeypatch)
    monkeypatch.undo()
    args = parsers["reorder"].parse_args(["--input", "a", "--index", "b"])
    assert (args.input, args.index, args.output) == ("a", "b", None)


@pytest.mark.parametrize("verb", ["encode", "dense encode", "dense search", "train"])
@pytest.mark.parametrize("device, expect", [("gpu", r"--device must be a torch device such as cpu, cuda or cuda:0, "
                                                    r"got 'gpu'"),
                                            ("cuda:99", r"--device cuda:99: (no CUDA GPU is available here|this "
                                                        r"machine has \d+ CUDA GPU)")])
def test_a_device_this_machine_lacks_is_one_error_line_before_any_work(verb, device, expect, capsys, tmp_path):
    name, *sub = verb.split()
    module = importlib.import_module(SUBCOMMANDS[name][0])
    out = tmp_path / "out"
    assert run_main(module.main, [*sub, "--output", str(out), "--device", device]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and __import__("re").fullmatch(f"error: {expect}.*", err[0]), err
    assert not out.exists() and list(tmp_path.iterdir()) == []


def test_device_names_this_machine_has_pass():
    assert opt.device_name("cpu") == "cpu"
    assert opt.device_name(" cpu ") == "cpu"


def test_serve_port_beyond_65535_is_refused(capsys):
    from lsr_lucene.serve.cli import main

    assert run_main(main, ["--index", "nowhere", "--port", "70000"]) == 2
    assert capsys.readouterr().err.splitlines() == ["error: --port must be a port number from 0 to 65535, got 70000"]


def test_retired_top_postings_options_are_one_line_naming_the_heap_factor(capsys):
    """--approximate, --query-cut and --top-postings (the retired top-postings mode, issue 66) fail as they are read,
    on every verb that took them, with what to use instead; --help no longer lists them."""
    from lsr_lucene.distributed.cli import main as distributed_main
    from lsr_lucene.index.cli import main as index_main
    from lsr_lucene.search.cli import main as search_main
    from lsr_lucene.serve.cli import main as serve_main

    search = ["--index", "nowhere", "--query", "x", "--output", "run"]
    cases = [(search_main, search, "--approximate", "10"), (search_main, search, "--query-cut", "3"),
             (distributed_main, ["search", "--index", "nowhere", "--query-vectors", "q", "--output", "run"],
              "--approximate", "5"),
             (serve_main, ["--index", "nowhere"], "--query-cut", "2"),
             (index_main, ["--input", "nowhere", "--index", "out"], "--top-postings", "100"),
             (distributed_main, ["index", "--input", "nowhere", "--index", "out"], "--top-postings", "100")]
    for main, argv, option, value in cases:
        assert run_main(main, [*argv, option, value]) == 2
        assert capsys.readouterr().err.splitlines() == [
            f"error: {option} is retired with the top-postings approximate mode; search exactly (the default), or "
            "approximately with the heap factor: --heap-factor H (heap_factor=H) below 1"], (main, option)
    with pytest.raises(SystemExit):
        run_main(search_main, ["--help"])
    shown = capsys.readouterr().out
    assert "--heap-factor" in shown and "--approximate" not in shown and "--query-cut" not in shown


def test_help_shows_no_empty_default(monkeypatch):
    parsers = verb_parsers(monkeypatch)
    for name, parser in parsers.items():
        assert "(default: )" not in " ".join(parser.format_help().split()), name


def python_m_modules(verb: str) -> list[str]:
    """The modules ``python -m`` runs as ``lsr-lucene <verb>``: the verb's module where it runs as a script, and
    the package whose ``__main__`` runs it (``python -m lsr_lucene.encode``; Pyserini's way; docs/pipeline.md)."""
    import importlib.util
    from pathlib import Path

    module = SUBCOMMANDS[verb][0]
    found = [module] if '__name__ == "__main__"' in Path(importlib.util.find_spec(module).origin).read_text() else []
    package = module.rpartition(".")[0]
    main = Path(importlib.util.find_spec(package).origin).with_name("__main__.py")
    if main.is_file() and f"from {module} import main" in main.read_text():
        found.append(package)
    return found


def test_every_verb_runs_with_python_m():
    assert [verb for verb in SUBCOMMANDS if not python_m_modules(verb)] == []


@pytest.mark.filterwarnings("ignore:.*found in sys.modules:RuntimeWarning")  # runpy of a module imported before
@pytest.mark.parametrize("verb,module", [(v, m) for v in SUBCOMMANDS for m in python_m_modules(v)])
def test_every_verb_is_also_python_m_of_its_module(verb, module, monkeypatch, capsys):
    """``python -m <the verb's module>`` (and ``python -m lsr_lucene.<stage>``) runs the same command as
    ``lsr-lucene <verb>``."""
    import runpy

    monkeypatch.setattr(sys, "argv", [module, "--help"])
    with pytest.raises(SystemExit) as stop:
        runpy.run_module(module, run_name="__main__", alter_sys=False)
    assert stop.value.code in (0, None)
    assert f"lsr-lucene {verb}" in capsys.readouterr().out


def test_a_verb_that_left_the_package_says_where_it_runs_now(capsys):
    from lsr_lucene.cli import main

    assert main(["bench", "--collection", "x"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "error: the benchmarks left the package: run them from a checkout of the repository, "
        "python -m scripts.bench ... (docs/benchmarks.md)"]


@pytest.mark.parametrize("name", ["a/b", "", "my index", "..", "a?b"])
def test_serve_name_must_be_one_url_segment(name, capsys):
    """--name a/b served at /v1/a/b/..., a path no route of the REST shape matches."""
    from lsr_lucene.serve.cli import main

    assert run_main(main, ["--index", "nowhere", "--name", name]) == 2
    assert capsys.readouterr().err.startswith("error: --name must be one URL path segment")


def test_bench_skip_names_only_known_parts(tmp_path, capsys):
    """--skip pyseri (misspelt) ran and timed Pyserini anyway."""
    from scripts.bench.cli import main

    assert run_main(main, ["--collection", str(tmp_path), "--skip", "ours,pyseri"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "error: --skip: unknown part(s) pyseri (parts: encode,bf16,ours,pyserini,scipy,seismic)"]


# ---- issue 51: no abbreviations, suggestions for a misspelled verb, help that says what the verb does -----------

def test_no_verb_takes_an_abbreviated_option(monkeypatch):
    """``--heap 0.9`` is an error, never ``--heap-factor 0.9`` (allow_abbrev=False on every parser)."""
    parsers = verb_parsers(monkeypatch)
    monkeypatch.undo()
    assert [name for name, p in parsers.items() if p.allow_abbrev] == []
    with pytest.raises(SystemExit):
        parsers["search"].parse_args(["--index", "i", "--query", "q", "--heap", "0.9"])


def test_a_misspelled_verb_gets_a_suggestion(capsys):
    from lsr_lucene.cli import main

    assert main(["serch"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown command 'serch'; did you mean 'search'" in err
    assert main(["zzzz"]) == 2 and "commands: encode, index" in capsys.readouterr().err


def test_compose_help_names_the_run_tag_it_writes(monkeypatch):
    parsers = verb_parsers(monkeypatch)
    monkeypatch.undo()
    text = parsers["compose"].format_help()
    assert "compose-fusion-gated" in " ".join(text.split()) and "(default: lsr_lucene)" not in text


def test_demo_dtype_choices_and_help_agree(monkeypatch):
    """Where --dtype offers int8 its help describes it, and where it does not, the help does not name it."""
    parsers = verb_parsers(monkeypatch)
    monkeypatch.undo()
    for name, parser in parsers.items():
        dtype = next((a for a in parser._actions if "--dtype" in a.option_strings), None)
        if dtype is not None:
            assert ("int8" in dtype.choices) == ("int8" in dtype.help), name
    assert "int8" in next(a for a in parsers["demo"]._actions if "--dtype" in a.option_strings).choices


def test_demo_refuses_an_existing_folder(tmp_path, capsys):
    from lsr_lucene.cli import main

    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "results.md").write_text("kept\n")
    assert main(["demo", "--output-dir", str(tmp_path / "demo")]) == 2
    assert "already exists; pass --overwrite" in capsys.readouterr().err
    assert (tmp_path / "demo" / "results.md").read_text() == "kept\n"
