"""Start-up of the command line: what each command imports, never how long it takes.

``statewise --help`` is answered by the front door (statewise.__main__) without click; every
other command's ``--help`` imports click and nothing heavy; a command imports what it uses.
The speed itself is measured by benchmarks/cli_startup.py (docs/performance-cli.md).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest

from statewise import __main__ as front
from statewise.cli import main
from statewise.cli.main_help import record_list_options, render

#: Modules none of the help pages may import: each costs more than the interpreter's start-up.
HEAVY = ("pydantic", "rich", "statewise.store", "statewise.records", "statewise.contract", "statewise.settings",
         "statewise.pipeline", "statewise.integrations", "statewise.bench", "statewise.memory", "yaml", "mcp")


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STATEWISE_")}
    env.pop("COLUMNS", None)
    return {**env, **extra}


def _run(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=120, cwd=cwd,
                          env=_env(**env), stdin=subprocess.DEVNULL)


def _by_click(argv: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    code = f"from statewise.cli import main; main({argv!r}, prog_name='statewise')"
    return _run(["-c", code], cwd, **env)


@pytest.fixture(autouse=True)
def _wide_terminal(monkeypatch):
    # The kept text is click's 80-column rendering; a developer's narrower $COLUMNS would make the
    # front door step aside (rightly) and these tests read it as stale.
    monkeypatch.setenv("COLUMNS", "80")


def _imported(stderr: str) -> set[str]:
    # `python -X importtime` names every module the process imported, one per line.
    return {line.rsplit("|", 1)[1].strip() for line in stderr.splitlines() if line.startswith("import time:")}


def _heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))


def test_the_kept_help_is_current():
    kept = (Path(front.__file__).parent / front.HELP_FILE).read_text(encoding="utf-8")
    header, _, text = kept.partition("\n")
    ours, theirs = header.removeprefix("checksum ").split(" ")
    now_ours, now_theirs = str(front.help_checksum()).split(" ")
    message = "cli/main_help.txt is stale: run `python -m statewise.cli.main_help`"
    assert ours == now_ours, message
    if theirs == now_theirs:
        assert text == render(), message
        assert front._fast_answer(["--help"], "statewise") == text
    else:
        # Another click release than the one the help was written with (a fresh install takes
        # the newest): the front door must step aside and let click render, never answer stale.
        assert front._fast_answer(["--help"], "statewise") is None


def test_help_and_version_answered_without_click_say_what_click_says(tmp_path):
    for flag in ("--help", "-h", "-V", "--version"):
        fast = _run(["-X", "importtime", "-m", "statewise", flag], tmp_path, COLUMNS="120")
        slow = _by_click([flag], tmp_path, COLUMNS="120")
        assert fast.returncode == slow.returncode == 0, fast.stderr
        assert fast.stdout == slow.stdout
        imported = _imported(fast.stderr)
        assert "click" not in imported and not _heavy(imported), flag
    # What the listing promises still holds on the fast path: the internal hook is not listed,
    # and no summary is cut with click's "...".
    listing = _run(["-m", "statewise", "--help"], tmp_path, COLUMNS="120").stdout
    commands = listing.split("\nCommands:\n", 1)[1].split("\n\n", 1)[0]
    assert "  hook " not in commands and "..." not in commands.replace("GEMINI.md, ...)", "")


def test_a_narrow_terminal_gets_clicks_own_wrapping(tmp_path):
    fast = _run(["-m", "statewise", "--help"], tmp_path, COLUMNS="60")
    assert fast.returncode == 0
    assert fast.stdout == _by_click(["--help"], tmp_path, COLUMNS="60").stdout
    assert max(len(line) for line in fast.stdout.splitlines()) <= 60


def test_a_stale_or_missing_help_file_steps_aside(tmp_path):
    kept = (Path(front.__file__).parent / front.HELP_FILE).read_text(encoding="utf-8")
    stale = tmp_path / "main_help.txt"
    stale.write_text("checksum 00000000\n" + kept.partition("\n")[2], encoding="utf-8")
    assert front._fast_answer(["--help"], "statewise", help_file=str(stale)) is None
    assert front._fast_answer(["--help"], "statewise", help_file=str(tmp_path / "absent.txt")) is None
    current = tmp_path / "current.txt"
    current.write_text(kept, encoding="utf-8")
    assert front._fast_answer(["--help"], "statewise", help_file=str(current)) == kept.partition("\n")[2]
    # Anything but exactly one help or version flag for `statewise` goes to click.
    assert front._fast_answer(["record", "--help"], "statewise", help_file=str(current)) is None
    assert front._fast_answer(["--help"], "sw", help_file=str(current)) is None


def _commands(group: click.Group, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = []
    for name, command in sorted(group.commands.items()):
        found.append((*path, name))
        if isinstance(command, click.Group):
            found += _commands(command, (*path, name))
    return found


def test_no_help_page_imports_pydantic_rich_or_the_store(tmp_path):
    # One process shows every page: a page that imports something heavy leaves it in
    # sys.modules, and the first page to do so is named.
    code = ("import json, sys\nfrom statewise.cli import main\nfirst = {}\n"
            f"for path in {_commands(main)!r}:\n"
            "    try:\n        main([*path, '--help'], prog_name='statewise')\n"
            "    except SystemExit:\n        pass\n"
            "    for name in list(sys.modules):\n        first.setdefault(name, ' '.join(path))\n"
            "sys.stderr.write(json.dumps(first))\n")
    done = _run(["-c", code], tmp_path)
    assert done.returncode == 0, done.stderr
    first = json.loads(done.stderr)
    heavy = {name: first[name] for name in _heavy(set(first))}
    assert heavy == {}, f"imported by these commands' --help: {heavy}"


def test_the_kept_record_list_options_are_current_and_what_the_front_door_expects():
    kept = (Path(front.__file__).parent / front.OPTIONS_FILE).read_text(encoding="utf-8")
    header, _, text = kept.partition("\n")
    assert header.removeprefix("checksum ").split(" ")[0] == str(front.help_checksum()).split(" ")[0], (
        "cli/record_list_options.txt is stale: run `python -m statewise.cli.main_help`")
    assert text == record_list_options(), "run `python -m statewise.cli.main_help`"
    # A changed `record list` (a new option, another kind) makes the front door step aside until
    # it is taught the change: here it fails first.
    lines = text.splitlines()
    assert lines[0] == front.LIST_SETTINGS
    assert [tuple(line.split(" ")[:2]) for line in lines[1:]] == list(front.LIST_DECLARES)


def test_the_front_door_reads_only_what_it_reads_as_click_does(tmp_path):
    read = front.list_arguments
    assert read([]) == {}
    assert read(["--task", "user:a", "--text=main"]) == {"task": "user:a", "text": "main"}
    assert read(["--text="]) == {"text": ""}
    assert read(["--project", str(tmp_path)]) == {"cwd": str(tmp_path)}
    for words in (["--json"], ["--key", "git.default_branch"], ["--cwd", str(tmp_path)], ["--help"], ["-h"],
                  ["--task"], ["--task", "-x"], ["--task", "a", "--task", "b"], ["--tas", "a"], ["extra"],
                  ["--"], ["--project", str(tmp_path / "absent")], ["--project", ""], ["--json=1"]):
        assert read(words) is None, words
    (tmp_path / "file").write_text("")
    assert read(["--project", str(tmp_path / "file")]) is None
    kept = (Path(front.__file__).parent / front.OPTIONS_FILE).read_text(encoding="utf-8")
    stale = tmp_path / "options.txt"
    stale.write_text("checksum 00000000 00000000\n" + kept.partition("\n")[2], encoding="utf-8")
    assert read([], options_file=str(stale)) is None
    changed = tmp_path / "changed.txt"
    changed.write_text(kept.replace("text text --text", "text text --text\ntext limit --limit"), encoding="utf-8")
    assert read([], options_file=str(changed)) is None
    assert read([], options_file=str(tmp_path / "absent.txt")) is None


def _listing_project(root: Path) -> Path:
    """A git repository whose store holds records the view shows as applying and as held back,
    observed months ago (their ages do not move between two runs)."""
    work = root / "work"
    subprocess.run(["git", "init", "-q", "-b", "main", str(work)], check=True)
    (work / "sub").mkdir()
    assert _by_click(["init"], work).returncode == 0
    for args in (["git.default_branch", "main", "--scope", "global"],
                 ["project.test_command", "pytest -q", "--scope", "global", "--ttl", "60"],
                 ["runtime.python_version", "3.11", "--scope", "global"],
                 ["runtime.python_version", "3.12", "--scope", "user:someone-else"]):
        done = _by_click(["record", "add", *args, "--observed-at", "2026-01-01T00:00:00+00:00"], work)
        assert done.returncode == 0, done.stderr
    return work


def test_record_list_answered_by_the_front_door_prints_what_click_prints(tmp_path, monkeypatch):
    work = _listing_project(tmp_path)
    monkeypatch.chdir(work)  # where the front door's reading of `--project sub` is checked below
    elsewhere = tmp_path / "no-store"
    elsewhere.mkdir()
    cases = [[], ["--text", "python"], ["--text="], ["--task", "user:someone-else"], ["--task=global"],
             ["--task", "user:a,user:b"], ["--task", "repo:"], ["--project", "sub"], ["--project", str(elsewhere)],
             # what the front door leaves to click, for the same answer either way
             ["--json"], ["--key", "runtime.python_version"], ["--key", "runtime.pyton_version"],
             ["--project", "absent"], ["--task"], ["--bogus"], ["--task", "a", "--task", "b"], ["--help"]]
    for words in cases:
        fast = _run(["-X", "importtime", "-m", "statewise", "record", "list", *words], work)
        slow = _by_click(["record", "list", *words], work)
        assert (fast.returncode, fast.stdout) == (slow.returncode, slow.stdout), words
        fast_errors = [line for line in fast.stderr.splitlines() if not line.startswith("import time:")]
        assert fast_errors == slow.stderr.splitlines(), words
        if front.list_arguments(words) is not None:  # answered by the front door: no click, nor models
            imported = _imported(fast.stderr)
            # An error line is printed by rich (which imports dataclasses); an answer by neither.
            unused = ("click", "pydantic", "importlib.metadata", "statewise.cli",
                      *(("rich", "dataclasses") if fast.returncode == 0 else ()))
            assert [m for m in unused if m in imported] == [], words
    listing = _run(["-m", "statewise", "record", "list"], work).stdout
    assert "runtime.python_version = 3.11" in listing and "\nHeld back\n" in listing and "(stale (past TTL))" in listing
    # A stdout that cannot encode a value: rich's own error (with its hint), either way.
    assert _by_click(["record", "add", "git.default_branch", "développement", "--scope", "global", "--replace"],
                     work).returncode == 0
    fast = _run(["-m", "statewise", "record", "list"], work, PYTHONIOENCODING="ascii")
    slow = _by_click(["record", "list"], work, PYTHONIOENCODING="ascii")
    assert (fast.returncode, fast.stdout, fast.stderr) == (slow.returncode, slow.stdout, slow.stderr)
    assert "PYTHONIOENCODING" in fast.stderr


def test_record_list_imports_the_store_and_nothing_of_the_guard_or_the_models(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    assert _by_click(["init"], tmp_path).returncode == 0
    (tmp_path / ".statewise" / "config.toml").write_text('on-pass = "defer"\nmemory-write-back = "ask"\n')
    assert _by_click(["record", "add", "git.default_branch", "main", "--scope", "global"], tmp_path).returncode == 0
    done = _run(["-X", "importtime", "-c", "from statewise.cli import main; main(['record', 'list'], "
                 "prog_name='statewise')"], tmp_path)
    assert done.returncode == 0, done.stderr
    imported = _imported(done.stderr)
    assert "statewise.store.sql" in imported and "statewise.render" in imported
    # Rows, not models: the view, the settings and the store open without pydantic, and a
    # read never loads the contract (statewise.store.rows, docs/performance-cli.md).
    unused = ("statewise.pipeline", "statewise.planners", "statewise.verifiers", "statewise.integrations",
              "statewise.bench", "statewise.memory", "statewise.commands", "mcp", "httpx", "yaml", "pydantic",
              "statewise.records", "statewise.contract")
    assert [m for m in imported if m.split(".")[0] in unused or m.rsplit(".", 1)[0] in unused
            or any(m.startswith(u + ".") for u in unused)] == []


def test_record_adds_written_out_choices_are_the_enums():
    # Written out in statewise.cli so that its import does not bring pydantic (statewise.records).
    from statewise.cli import AUTHORITIES, SOURCE_KINDS
    from statewise.records import Authority, SourceKind

    assert SOURCE_KINDS == tuple(kind.value for kind in SourceKind)
    assert AUTHORITIES == tuple(authority.value for authority in Authority)


def test_mcp_without_the_extra_names_it_even_when_its_dependencies_are_absent_too(tmp_path):
    # An installation without `statewise[mcp]` lacks the SDK and what it brings (anyio, ...):
    # the command names the extra, not the first of those the server happens to import.
    absent = ("mcp", "mcp_types", "anyio", "starlette", "httpx", "httpx2", "uvicorn", "sse_starlette")
    code = (f"import sys\nfor name in {absent!r}:\n    sys.modules[name] = None\n"
            "from statewise.cli import main\nmain(['mcp'], prog_name='statewise')\n")
    done = _run(["-c", code], tmp_path)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        "error: statewise mcp needs mcp, which is not installed; install it with: pip install 'statewise[mcp]'"]


# Counts the compile() calls made by anything but the import system (which compiles a module
# whose bytecode is not cached), then answers `statewise record list` as the console script does.
_COUNT_COMPILES = """
import builtins, sys
_compile = builtins.compile
callers = []
def counting_compile(*args, **kwargs):
    callers.append(sys._getframe(1).f_code.co_filename)
    return _compile(*args, **kwargs)
builtins.compile = counting_compile
sys.argv = ["statewise", "record", "list"]
from statewise.__main__ import main
try:
    main()
finally:
    print("compiled by:", sorted({c for c in callers if "importlib" not in c}), file=sys.stderr)
"""


def test_record_list_compiles_no_annotation(tmp_path):
    # The first compile() of a process sets up Python's AST types, about a quarter of `python -c
    # pass` in instructions: a named tuple or a TypeVar whose types are text compiles them at
    # definition, so those on this path are written with real types (docs/performance-cli.md).
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    assert _by_click(["init"], tmp_path).returncode == 0
    assert _by_click(["record", "add", "git.default_branch", "main", "--scope", "global"], tmp_path).returncode == 0
    done = _run(["-c", _COUNT_COMPILES], tmp_path)
    assert "git.default_branch = main" in done.stdout, done.stderr
    assert done.stderr.splitlines()[-1] == "compiled by: []"
