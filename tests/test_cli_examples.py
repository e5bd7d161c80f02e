"""Every user command's help ends with examples, and the examples work.

Each example is parsed by the real command line (options and arguments exist, values have the
right type), and a sample is run in a real git repository with a real bare remote."""

from __future__ import annotations

import json
import shlex
import subprocess
import warnings

import click
import pytest
from click.testing import CliRunner

from statewise.cli import main
from statewise.cli.examples import EXAMPLES

#: Not run by the sample: minutes of benchmark, a server waiting on stdin, a PostgreSQL server,
#: a pipe, and the one that needs a repair to undo (`record revert`, run on a repair below).
NOT_RUN = ("statewise bench", "statewise mcp", "postgresql://", " | ", "statewise record revert",
           "statewise demo", "statewise install codex --user", "statewise config approve")


def _paths(group: click.Group, prefix: str = "") -> dict[str, click.Command]:
    found: dict[str, click.Command] = {}
    for name, command in group.commands.items():
        if command.hidden:
            continue
        path = f"{prefix} {name}".strip()
        found[path] = command
        if isinstance(command, click.Group):
            found.update(_paths(command, path))
    return found


def _commands(path: str) -> list[str]:
    """The example command lines of ``path``, continuation lines joined, comments dropped."""
    joined: list[str] = []
    for line in EXAMPLES[path]:
        if line.startswith("#"):
            continue
        if line.startswith(" ") and joined:
            joined[-1] = joined[-1].removesuffix("\\").rstrip() + " " + line.strip()
        else:
            joined.append(line)
    return joined


def _argv(line: str, record_id: str = "rec_example") -> list[str]:
    words = shlex.split(line.split(" | ")[0].replace("RECORD_ID", record_id))
    assert words[0] == "statewise", line
    return words[1:]


def test_every_user_command_and_only_those_have_examples():
    paths = {"", *_paths(main)}
    assert sorted(paths - set(EXAMPLES)) == []
    assert sorted(set(EXAMPLES) - paths) == []
    for path in paths:
        commands = _commands(path)
        assert commands, path
        for line in commands:
            words = [w for w in _argv(line) if not w.startswith("-")]
            assert " ".join(words).startswith(path) or path in " ".join(words), (path, line)


def test_every_command_help_shows_its_examples_within_80_columns():
    runner = CliRunner()
    for path in ["", *_paths(main)]:
        result = runner.invoke(main, [*path.split(), "--help"], terminal_width=80)
        assert result.exit_code == 0, path
        section = result.output.split("\nExamples:\n", 1)[1]
        assert all(f"$ {line}" in section for line in EXAMPLES[path] if line.startswith("statewise")), path
        assert max(len(line) for line in result.output.splitlines()) <= 80, path


def _resolve(argv: list[str]) -> None:
    """Parse ``argv`` as ``statewise`` would, down to the command, without running it."""
    ctx = main.make_context("statewise", list(argv), resilient_parsing=False)
    command: click.Command = main
    while isinstance(command, click.Group):
        with warnings.catch_warnings():  # click 8.2 deprecated protected_args; 9 folds it into args
            warnings.simplefilter("ignore", DeprecationWarning)
            remaining = [*ctx.protected_args, *ctx.args]
        if not remaining:
            break
        name, sub, rest = command.resolve_command(ctx, remaining)
        assert sub is not None, argv
        ctx = sub.make_context(name, rest, parent=ctx)
        command = sub


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A git repository with a bare origin and a commit on main, HOME and caches inside tmp."""
    home = tmp_path / "home"
    home.mkdir()
    for name in ("HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.setenv(name, str(home))
    for name in ("STATEWISE_STORE", "STATEWISE_CONTRACT", "STATEWISE_BENCH_CASES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("STATEWISE_USER", "alice")
    origin, work = tmp_path / "origin.git", tmp_path / "app"
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q", "--bare", "-b", "main", str(origin)], check=True)
    subprocess.run([*git, "init", "-q", "-b", "main", str(work)], check=True)
    (work / "README.md").write_text("app\n")
    (work / "CLAUDE.md").write_text("# Notes\n\n- Run the tests with `pytest -q`.\n")
    (work / "action.json").write_text(json.dumps({"tool": "shell", "operation": "test.run",
                                                  "args": {"command": "pytest -q"}}))
    (work / "contracts").mkdir()
    (work / "contracts" / "team.yaml").write_text("name: team\nversion: 1\nextends: coding\n")
    for args in (["add", "-A"], ["commit", "-qm", "init"], ["remote", "add", "origin", str(origin)],
                 ["push", "-q", "-u", "origin", "main"]):
        subprocess.run([*git, *args], cwd=work, check=True)
    monkeypatch.chdir(work)
    return work


def test_every_example_parses(repo):
    for path in EXAMPLES:
        for line in _commands(path):
            _resolve(_argv(line))


def test_a_sample_of_the_examples_runs(repo):
    runner = CliRunner()

    def run(line: str, record_id: str = "rec_example") -> click.testing.Result:
        return runner.invoke(main, _argv(line, record_id), catch_exceptions=False)

    #: Exit statuses each command documents besides 0 (guard 3: stop; doctor 1: a problem found).
    allowed = {"statewise guard": {0, 3}, "statewise doctor": {0, 1}, "statewise memory check": {0, 1}}
    order = ["", "init", "record add", "record", "record get", "record list", "record history", "record export",
             "record import", "keys", "verify", "store check", "store", "contract check", "contract",
             "memory import", "memory check", "memory context", "memory", "guard", "install", "doctor",
             "uninstall"]
    assert sorted(set(order) - set(EXAMPLES)) == []
    ran = 0
    for path in order:
        for line in _commands(path):
            if any(skip in line for skip in NOT_RUN):
                continue
            result = run(line)
            codes = next((codes for prefix, codes in allowed.items() if line.startswith(prefix)), {0})
            assert result.exit_code in codes, (line, result.output)
            assert "internal error" not in result.output, line
            ran += 1
    assert ran >= 35
    # The id-taking examples, on real ids: a record's lineage, then a repair's revert and a retraction.
    added = json.loads(run("statewise record get user.allow_force_push --scope user:alice --json").output)
    for path in ("record lineage",):
        for line in _commands(path):
            assert run(line, added["id"]).exit_code == 0, line
    stale = run("statewise record add git.default_branch master --replace")  # origin's HEAD says main
    assert stale.exit_code == 0, stale.output
    assert "at git.default_branch's level, repo)" in stale.output  # the level's word, not its rank
    scope = json.loads(run("statewise record list --key git.default_branch --json").output)["records"][0]["scope"]
    repaired = runner.invoke(main, ["verify", "git.default_branch", "--scope", scope, "--write", "--json"])
    assert repaired.exit_code == 0, repaired.output
    new_id = json.loads(repaired.output)["repair"]["new_record_id"]
    (revert,) = _commands("record revert")
    assert run(revert, new_id).exit_code == 0, revert
    (retract,) = _commands("record retract")
    assert run(retract, added["id"]).exit_code == 0, retract
