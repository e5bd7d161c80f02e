"""The command line follows the conventions of gh, uv and llm (issue 14, item 2), driven as
real subprocesses of ``python -m statewise`` in real git repositories."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCOPE = "repo:github.com/acme/app@main"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STATEWISE_") or k == "STATEWISE_CACHE_DIR"}
    env.update(extra)
    return env


def sw(*args: str, cwd: Path, env: dict[str, str] | None = None, input: str | None = None):
    """Run ``python -m statewise ARGS`` with stdout and stderr piped (not a terminal)."""
    return subprocess.run([sys.executable, "-m", "statewise", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env=env or _env(), input=input)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True, timeout=30)
    return path


# --- 1. an existing store is required unless the command creates one ----------------------


def test_a_read_from_elsewhere_creates_no_store_and_says_to_init(repo, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    listed = sw("record", "list", "--project", str(repo), cwd=elsewhere)
    assert listed.returncode == 2
    assert listed.stderr.startswith("error: no store at ") and "statewise init" in listed.stderr
    assert not (elsewhere / ".statewise").exists() and not (repo / ".statewise").exists()
    # once the project has a store, the same call reads that project's store (not ./.statewise/)
    assert sw("init", "--project", str(repo), cwd=elsewhere).returncode == 0
    listed = sw("record", "list", "--project", str(repo), "--json", cwd=elsewhere)
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout)["records"] == []
    assert not (elsewhere / ".statewise").exists() and (repo / ".statewise" / "store.db").is_file()


def test_a_mistyped_store_is_an_error_with_a_did_you_mean(repo):
    assert sw("init", cwd=repo).returncode == 0
    for args in (["--store", ".statewise/stor.db", "record", "list"],
                 ["--store", ".statewse/store.db", "record", "history", "git.clean_tree", "--scope", "global"]):
        done = sw(*args, cwd=repo)
        assert done.returncode == 2, done.stderr
        assert "did you mean --store" in done.stderr and "store.db?" in done.stderr
        assert "Traceback" not in done.stderr
    assert sorted(p.name for p in (repo / ".statewise").iterdir()) == [".gitignore", "store.db"]
    assert not (repo / ".statewse").exists()
    env = _env(STATEWISE_STORE=str(repo / ".statewise" / "stor.db"))
    done = sw("record", "list", cwd=repo, env=env)
    assert done.returncode == 2 and "(from $STATEWISE_STORE)" in done.stderr


def test_record_add_creates_the_store_as_documented(repo):
    added = sw("record", "add", "repository.protected", "false", "--scope", SCOPE, cwd=repo)
    assert added.returncode == 0, added.stderr
    assert (repo / ".statewise" / "store.db").is_file()


# --- 2. .statewise/ is gitignored at init ------------------------------------------------


def test_init_keeps_the_store_out_of_git_without_touching_the_users_gitignore(repo):
    (repo / ".gitignore").write_text("node_modules/\n")
    done = sw("init", "--json", cwd=repo)
    assert done.returncode == 0, done.stderr
    info = json.loads(done.stdout)
    assert info["gitignore"] == str(repo / ".statewise" / ".gitignore")
    assert (repo / ".gitignore").read_text() == "node_modules/\n"
    (repo / ".statewise" / "config.toml").write_text('on-pass = "defer"\n')
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=repo, capture_output=True,
                            text=True, timeout=30, check=True).stdout.splitlines()
    # the store is ignored; the settings file (shareable) and the ignore file itself are not
    assert sorted(status) == ["?? .gitignore", "?? .statewise/.gitignore", "?? .statewise/config.toml"]


# --- 3. project settings in .statewise/config.toml ---------------------------------------


TEAM_CONTRACT = ("extends: coding\nname: team\nversion: 1\nstate:\n  team.deploy_window:\n"
                 "    type: string\n    scope: repo\n    authority: developer\n")


def test_config_toml_gives_the_contract_and_store_with_flag_over_env_over_file(repo, tmp_path):
    (repo / "contracts").mkdir()
    (repo / "contracts" / "team.yaml").write_text(TEAM_CONTRACT)
    (repo / ".statewise").mkdir()
    (repo / ".statewise" / "config.toml").write_text('contract = "contracts/team.yaml"\nstore = "team.db"\n')
    added = sw("record", "add", "team.deploy_window", "weekdays", "--scope", SCOPE, "--json", cwd=repo)
    assert added.returncode == 0, added.stderr
    assert (repo / "team.db").is_file() and not (repo / ".statewise" / "store.db").exists()
    # the same records read back from a subdirectory, with the contract from the file
    sub = repo / "src"
    sub.mkdir()
    got = sw("-v", "record", "get", "team.deploy_window", "--scope", SCOPE, "--json", cwd=sub)
    assert got.returncode == 0, got.stderr
    assert json.loads(got.stdout)["value"] == "weekdays"
    assert f"store: {repo / 'team.db'} ({repo / '.statewise' / 'config.toml'})" in got.stderr
    # the environment beats the file, the flag beats the environment
    env_store = tmp_path / "env.db"
    env = _env(STATEWISE_STORE=str(env_store))
    assert sw("init", cwd=repo, env=env).returncode == 0 and env_store.is_file()
    shown = sw("-v", "--store", str(repo / "team.db"), "record", "list", "--json", cwd=repo, env=env)
    assert shown.returncode == 0 and f"store: {repo / 'team.db'} (flag)" in shown.stderr
    shown = sw("-v", "record", "list", "--json", cwd=repo, env=env)
    assert f"store: {env_store} ($STATEWISE_STORE)" in shown.stderr
    assert json.loads(shown.stdout)["records"] == []


def test_a_bad_config_toml_is_one_line_naming_the_file_and_key(repo):
    (repo / ".statewise").mkdir()
    config = repo / ".statewise" / "config.toml"
    config.write_text('on_pass = "allow"\n')
    done = sw("keys", cwd=repo)
    assert done.returncode == 2
    assert done.stderr.strip() == (f"error: {config}: unknown setting 'on_pass' (did you mean 'on-pass'?); "
                                   "settings are contract, store, on-pass, memory-write-back")
    config.write_text('on-pass = "always"\n')
    done = sw("keys", cwd=repo)
    assert done.returncode == 2 and "on-pass" in done.stderr and "Traceback" not in done.stderr
    config.write_text("store = \n")
    done = sw("keys", cwd=repo)
    assert done.returncode == 2 and "not TOML" in done.stderr


def test_hook_settings_reads_the_projects_config_in_the_documented_order(repo, tmp_path, monkeypatch):
    from statewise.settings import approve_config, hook_settings

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (repo / ".statewise").mkdir()
    (repo / ".statewise" / "config.toml").write_text('on-pass = "allow"\ncontract = "c.yaml"\n')
    approve_config(repo / ".statewise" / "config.toml")  # on-pass = allow weakens: the developer approved it
    settings = hook_settings(repo)
    assert (settings.on_pass.value, settings.contract.value) == ("allow", str(repo / "c.yaml"))
    assert hook_settings(repo, on_pass="defer").on_pass.source == "flag"
    assert settings.memory_write_back.value == "ask" and settings.memory_write_back.source == "default"


# --- 4. statewise keys, and did-you-mean for keys ------------------------------------------


def test_keys_lists_types_scopes_and_authorities(repo):
    done = sw("keys", "--json", cwd=repo)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    by_key = {row["key"]: row for row in data["keys"]}
    assert by_key["repository.protected"]["type"] == "bool"
    assert by_key["runtime.python_version"]["scope"] == "workspace"
    assert by_key["python.package_version"]["qualified"] is True
    assert {row["authority"] for row in data["keys"]} <= {"machine", "developer", "agent", "user", "policy"}
    text = sw("keys", "runtime.python", cwd=repo)
    assert text.returncode == 0
    assert any(line.startswith("runtime.python_version ") and " version " in line and " workspace " in line
               for line in text.stdout.splitlines())
    typo = sw("keys", "pyhton", cwd=repo)
    assert typo.returncode == 2 and typo.stderr.strip() == "error: no key contains 'pyhton'; did you mean python?"


def _in_a_terminal(*args: str, cwd: Path, columns: int) -> str:
    """What ``python -m statewise ARGS`` prints to a real terminal (a pty) ``columns`` wide."""
    import pty

    leader, follower = pty.openpty()
    env = {**_env(), "COLUMNS": str(columns), "LINES": "50"}
    with subprocess.Popen([sys.executable, "-m", "statewise", *args], cwd=cwd, env=env, stdout=follower,
                          stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL) as process:
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the pty's far end closed: the program ended
                break
            if not chunk:
                break
            chunks.append(chunk)
        process.wait(timeout=120)
    os.close(leader)
    return b"".join(chunks).decode().replace("\r\n", "\n")


def test_keys_fit_an_80_column_terminal_and_stay_one_line_each_when_piped(repo):
    declared = json.loads(sw("keys", "--json", cwd=repo).stdout)["keys"]
    shown = _in_a_terminal("keys", cwd=repo, columns=80)
    lines = shown.splitlines()
    assert lines and max(len(line) for line in lines) <= 80, [line for line in lines if len(line) > 80]
    heads = [line.split()[0] for line in lines if not line.startswith(" ")]
    assert heads == [row["key"] + ("[QUALIFIER]" if row["qualified"] else "") for row in declared]
    # A wide terminal and a pipe keep one line per key, the verifier at its end.
    for printed in (_in_a_terminal("keys", cwd=repo, columns=250), sw("keys", cwd=repo).stdout):
        rows = printed.splitlines()
        assert len(rows) == len(declared)
        assert all(row.split()[-1] == (key["verifier"] or "-") for row, key in zip(rows, declared, strict=True))


def test_a_mistyped_key_gets_a_suggestion_everywhere(repo):
    assert sw("init", cwd=repo).returncode == 0
    for args in (["record", "add", "python.version", "3.12", "--scope", "global"],
                 ["record", "get", "runtime.pyhton_version", "--scope", "global"],
                 ["record", "history", "runtime.python_versoin", "--scope", "global"],
                 ["verify", "runtime.python_verison"]):
        done = sw(*args, cwd=repo)
        assert done.returncode == 2, (args, done.stderr)
        assert "did you mean runtime.python_version?" in done.stderr, (args, done.stderr)
        assert "statewise keys" in done.stderr


# --- 5. messages in the user's words ---------------------------------------------------------


def test_messages_show_values_and_flags_as_the_user_writes_them(repo):
    added = sw("record", "add", "repository.protected", "False", "--scope", SCOPE, cwd=repo)
    # the stored value, spelled as the contract's type spells it, not as Python does
    assert added.returncode == 0 and "repository.protected = false in" in added.stdout, added.stderr
    again = sw("record", "add", "repository.protected", "true", "--scope", SCOPE, cwd=repo)
    assert again.returncode == 1
    assert "add --replace to supersede it" in again.stderr and "pass replace" not in again.stderr
    replaced = json.loads(sw("record", "add", "repository.protected", "true", "--scope", SCOPE, "--replace", "--json",
                             cwd=repo).stdout)
    reverted = sw("record", "revert", replaced["id"], "--reason", "wrong", cwd=repo)
    assert reverted.returncode == 0 and "restored repository.protected = false as" in reverted.stdout
    assert "False" not in reverted.stdout


# --- 6. one name for the project directory flag ---------------------------------------------


def test_project_is_the_flag_and_cwd_and_workspace_still_work_hidden(repo, tmp_path):
    assert sw("init", cwd=repo).returncode == 0
    elsewhere = tmp_path
    new = sw("record", "list", "--project", str(repo), "--json", cwd=elsewhere)
    old = sw("record", "list", "--cwd", str(repo), "--json", cwd=elsewhere)
    assert new.returncode == old.returncode == 0, old.stderr
    assert json.loads(new.stdout)["task"] == json.loads(old.stdout)["task"]
    assert "deprecated" not in old.stderr + new.stderr  # piped: scripts see the same output as before
    # at a terminal the old name says it is deprecated
    main_fd, terminal = os.openpty()
    try:
        at_tty = subprocess.run([sys.executable, "-m", "statewise", "record", "list", "--cwd", str(repo), "--json"],
                                cwd=elsewhere, stdout=subprocess.PIPE, stderr=terminal, text=True, timeout=120,
                                env=_env())
        os.close(terminal)
        said = b""
        while True:
            try:
                chunk = os.read(main_fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            said += chunk
    finally:
        os.close(main_fd)
    assert at_tty.returncode == 0 and b"warning: --cwd is deprecated; use --project" in said
    both = sw("record", "list", "--project", str(repo), "--cwd", str(repo), cwd=elsewhere)
    assert both.returncode == 2 and "not both" in both.stderr
    for command in (["record", "list"], ["guard"], ["verify"], ["mcp"], ["memory", "check"], ["init"]):
        shown = sw(*command, "--help", cwd=repo)
        assert "--project" in shown.stdout, command
        assert "--cwd" not in shown.stdout and "--workspace" not in shown.stdout, command


# --- 7. --json on every read command; bench --output ----------------------------------------


def test_every_read_command_prints_json_to_stdout(repo):
    added = json.loads(sw("record", "add", "project.test_command", "pytest", "--scope", "global", "--json",
                          cwd=repo).stdout)
    reads = [["init"], ["keys"], ["record", "get", "project.test_command", "--scope", "global"],
             ["record", "list"], ["record", "history", "project.test_command", "--scope", "global"],
             ["record", "lineage", added["id"]], ["verify", "git.clean_tree"], ["store", "check"]]
    for args in reads:
        done = sw(*args, "--json", cwd=repo)
        assert done.returncode in (0, 1), (args, done.stderr)
        assert isinstance(json.loads(done.stdout), (dict, list)), args


def test_bench_output_is_the_path_taking_twin_of_json(tmp_path):
    from tests.bench.conftest import minimal_case, write_case

    write_case(tmp_path / "cases" / "primary", minimal_case())
    out = tmp_path / "out.json"
    done = sw("bench", "--cases", str(tmp_path / "cases"), "--conditions", "corrupted", "--jobs", "1",
              "--output", str(out), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    data = json.loads(out.read_text())
    assert data["episodes"] and data["conditions"] == ["corrupted"]
    assert f"results: {out}" in done.stderr
    # the progress bar is on stderr: stdout holds the tables only
    assert "2/2" in done.stderr and "2/2" not in done.stdout and "StateWise bench" in done.stdout
    legacy = tmp_path / "legacy.json"
    done = sw("-q", "bench", "--cases", str(tmp_path / "cases"), "--conditions", "corrupted", "--jobs", "1",
              "--json", str(legacy), cwd=tmp_path)
    assert done.returncode == 0 and json.loads(legacy.read_text())["episodes"]
    assert done.stderr == ""
    clash = sw("bench", "--output", "a.json", "--json", "b.json", cwd=tmp_path)
    assert clash.returncode == 2 and "give one of them" in clash.stderr


# --- 8. plain unwrapped output when piped ---------------------------------------------------


def test_piped_output_is_never_hard_wrapped(repo):
    long_scope = "repo:github.com/acme/" + "a-very-long-repository-name-" * 4 + "app@main"
    added = sw("record", "add", "project.test_command", "pytest -x --maxfail=1 -k 'not slow and not network'",
               "--scope", long_scope, cwd=repo, env=_env(COLUMNS="40"))
    assert added.returncode == 0, added.stderr
    lines = added.stdout.splitlines()
    assert len(lines) == 1 and lines[0].startswith("stored rec_") and lines[0].endswith(long_scope)
    assert "\x1b[" not in added.stdout
    history = sw("record", "history", "project.test_command", "--scope", long_scope, cwd=repo, env=_env(COLUMNS="40"))
    record_lines = [line for line in history.stdout.splitlines() if "rec_" in line]
    assert len(record_lines) == 1 and long_scope in record_lines[0]


def test_shell_completion_is_generated_by_the_documented_variable(tmp_path):
    done = subprocess.run([sys.executable, "-c", "from statewise.cli import main; main(prog_name='statewise')"],
                          env=_env(_STATEWISE_COMPLETE="bash_source"), capture_output=True, text=True, timeout=60,
                          cwd=tmp_path)
    assert done.returncode == 0 and "_STATEWISE_COMPLETE=bash_complete" in done.stdout


def test_version_and_quiet_flags(tmp_path):
    from statewise import __version__

    done = sw("-V", cwd=tmp_path)
    assert done.returncode == 0 and __version__ in done.stdout


# --- 9. demo writes nothing into the current directory unless asked ---------------------------


def test_store_demo_writes_nothing_here(tmp_path):
    done = sw("demo", "store", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert list(tmp_path.iterdir()) == []


def test_statewise_mcp_without_the_mcp_extra_names_the_install_command(tmp_path):
    # The SDK is the `mcp` extra: an installation without it gets one line saying what to install,
    # not a traceback. The interpreter is told the SDK is absent the way Python itself says it
    # (a None entry in sys.modules makes `import mcp` raise ModuleNotFoundError for "mcp").
    code = ("import sys; sys.modules['mcp'] = None; sys.modules['mcp_types'] = None; "
            "from statewise.cli import main; main(['mcp'], prog_name='statewise')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          stdin=subprocess.DEVNULL)
    assert done.returncode != 0
    assert "pip install 'statewise[mcp]'" in done.stderr
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_the_core_installation_does_not_depend_on_the_mcp_sdk():
    import tomllib

    project = tomllib.loads((Path(__file__).resolve().parent.parent / "pyproject.toml").read_text())["project"]
    assert not any(dependency.startswith("mcp") for dependency in project["dependencies"])
    assert any(dependency.startswith("mcp") for dependency in project["optional-dependencies"]["mcp"])
    assert "mcp" in project["optional-dependencies"]["all"][0]


def test_an_error_naming_a_qualified_key_keeps_its_brackets(tmp_path):
    # Error lines are printed as text: a qualified key's [qualifier] is not taken for markup.
    from click.testing import CliRunner

    from statewise.cli import main

    result = CliRunner().invoke(main, ["--store", str(tmp_path / "s.db"), "record", "add",
                                       "nosuch.key[abc]", "1", "--scope", "global"])
    assert result.exit_code == 2
    assert "key 'nosuch.key[abc]'" in result.output


def test_help_listings_show_each_first_sentence_whole_and_hide_the_internal_hook():
    from click.testing import CliRunner

    from statewise.cli import main

    for group in ([], ["record"], ["memory"], ["store"], ["contract"]):
        result = CliRunner().invoke(main, [*group, "--help"], terminal_width=80)
        assert result.exit_code == 0
        listing = result.output.split("Commands:", 1)[1]
        assert "..." not in listing.replace("GEMINI.md, ...", "")  # the memory group's own words
        assert all(len(line) <= 80 for line in listing.splitlines())
    top = CliRunner().invoke(main, ["--help"], terminal_width=80).output
    assert "\n  hook " not in top  # run by the installed wrapper, not by a developer
    assert CliRunner().invoke(main, ["hook", "--help"]).exit_code == 0  # still there for the wrapper


def test_record_add_without_scope_takes_the_folders_scope_at_the_keys_level(tmp_path):
    # As `record list` derives the task from the folder, `record add` derives the record's scope:
    # the current folder's scope at the level the contract declares for the key.
    repo = tmp_path / "app"
    repo.mkdir()
    for argv in (["git", "init", "-q", "-b", "main"], ["git", "remote", "add", "origin", "https://github.com/acme/app.git"]):
        subprocess.run(argv, cwd=repo, check=True)
    store = str(tmp_path / "s.db")
    statewise = [sys.executable, "-m", "statewise", "--store", store]
    added = subprocess.run([*statewise, "record", "add", "repository.protected", "true", "--json"], cwd=repo,
                           capture_output=True, text=True, timeout=120)
    assert added.returncode == 0, added.stderr
    assert json.loads(added.stdout)["scope"] == "repo:github.com/acme/app@main"
    assert "derived from" in added.stderr

    elsewhere = tmp_path / "not-a-checkout"
    elsewhere.mkdir()
    refused = subprocess.run([*statewise, "record", "add", "repository.protected", "true"], cwd=elsewhere,
                             capture_output=True, text=True, timeout=120)
    assert refused.returncode == 2
    assert "--scope" in refused.stderr and "Traceback" not in refused.stderr


# --- usage errors read like every other error ----------------------------------------------


@pytest.mark.parametrize(("args", "message", "usage"), [
    (["record", "add", "--scope"], "error: Option '--scope' requires an argument.",
     "usage: statewise record add [OPTIONS] KEY VALUE (more: statewise record add --help)"),
    (["record", "get"], "error: Missing argument 'KEY'.",
     "usage: statewise record get [OPTIONS] KEY (more: statewise record get --help)"),
    (["record", "list", "--bogus"], "error: No such option '--bogus'.",
     "usage: statewise record list [OPTIONS] (more: statewise record list --help)"),
    (["bogus"], "error: No such command 'bogus'.",
     "usage: statewise [OPTIONS] COMMAND [ARGS]... (more: statewise --help)"),
    (["--store"], "error: Option '--store' requires an argument.",
     "usage: statewise [OPTIONS] COMMAND [ARGS]... (more: statewise --help)"),
])
def test_a_usage_error_is_one_error_line_and_the_usage(repo, args, message, usage):
    done = sw(*args, cwd=repo)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [message, usage]
