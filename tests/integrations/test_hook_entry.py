"""The hook's front door: the fast path says less than the normalizer, never more, and the
deadline answers for a check that cannot finish, before the client's timeout would let it run."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from statewise.commands import analyze_command
from statewise.integrations import hook_entry, hook_files
from statewise.integrations.hook_entry import fast_decision, quick_outcome
from statewise.integrations.hooks import AGENT_TOOLS

#: Commands the fast path settles. Each must also be read-only to the full normalizer.
FAST = [
    "ls", "ls -la", "ls -la src", "ls --color=auto ..", "cat README.md", "cat -n a.txt b.txt", "head -n 20 x.py",
    "head -5 x.py", "tail -n 3 log.txt", "wc -l src/app.py", "grep -rn TODO src", "grep -e foo -i x", "rg TODO",
    "rg -n --hidden foo src", "rg -g pattern foo", "pwd", "whoami", "echo hello", "which python3", "stat x",
    "du -sh .", "tree -L 2", "git status", "git status -sb", "git status --porcelain=v2", "git diff",
    "git diff --stat", "git diff --cached src/app.py", "git diff main..feature", "git log --oneline -n 5",
    "git log -20 --graph", "git show HEAD", "git show --stat HEAD~1", "git branch", "git branch -vv",
    "git branch --show-current", "git rev-parse --show-toplevel", "git rev-parse --abbrev-ref HEAD",
    "git remote -v", "git ls-files", "git describe --tags", "git blame -L 1,20 x.py", "python3 --version",
    "node --version", "npm -v", "uv --version", "cargo --version", "go version",
]

#: Commands the fast path must leave to the full path (effects, or not provable from the table).
NOT_FAST = [
    "git push origin main", "git push", "git branch newbranch", "git branch -D old", "git remote add x y",
    "git diff --output=out.txt", "git log --output=x", "git -C other status", "git -c core.pager=x log",
    "git grep -O'rm -f' SECRET", "git checkout -f", "git stash", "rm -rf data", "ls > out.txt", "ls; rm x",
    "cat x | sh", "echo $(rm x)", "echo `rm x`", "ls && rm x", "FOO=1 ls", "/bin/ls", "./ls", "ls *",
    "tail -f log", "sort -o x y", "file -C -m magic", "rg --pre sh foo", "grep -r --include=*.py x", "cat ~/x",
    "head -n", "ls\nrm x", "python3", "python3 -c 'print(1)'", "pytest", "npm test", "make", "",
]


@pytest.mark.parametrize("command", FAST)
def test_the_fast_path_only_settles_what_the_normalizer_also_finds_read_only(command, tmp_path):
    assert fast_decision(command)
    analysis = analyze_command(command, cwd=tmp_path, workspace=tmp_path)
    assert analysis.actions == (), f"{command!r} is guarded by the normalizer: {analysis.actions}"


@pytest.mark.parametrize("command", NOT_FAST)
def test_everything_else_goes_through_the_full_path(command):
    assert not fast_decision(command)


def test_the_shell_tool_names_agree_with_the_hook():
    assert {agent: tools["shell"] for agent, tools in AGENT_TOOLS.items()} == hook_entry.SHELL_TOOLS


def _pre(command: str, tool: str = "Bash") -> str:
    return json.dumps({"cwd": "/tmp", "hook_event_name": "PreToolUse", "tool_name": tool,
                       "tool_input": {"command": command}})


def test_quick_outcomes_before_a_tool_runs():
    assert quick_outcome("claude-code", "pre", _pre("git status"), None) == "{}"
    assert quick_outcome("claude-code", "pre", _pre("git push --force origin main"), None) is None
    assert quick_outcome("claude-code", "pre", _pre("x", tool="Write"), None) is None  # file edits are checked
    assert quick_outcome("gemini", "pre", _pre("ls", tool="run_shell_command"), None) == "{}"
    assert quick_outcome("claude-code", "pre", "{not json", None) is None  # the full path names the error


def test_finished_commands_are_skipped_only_when_the_cached_index_proves_nothing_matches(tmp_path, monkeypatch):
    monkeypatch.setenv("STATEWISE_CACHE_DIR", str(tmp_path))
    after = {"cwd": "/tmp", "hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_response": {"stdout": ""}}
    status = json.dumps({**after, "tool_input": {"command": "git status"}})
    push = json.dumps({**after, "tool_input": {"command": "git push origin main"}})
    assert quick_outcome("claude-code", "post", status, None) is None  # no index yet: the full path decides
    from statewise.integrations.hooks import run_hook

    run_hook("claude-code", status, event="post", store_location=str(tmp_path / "store.db"))
    assert quick_outcome("claude-code", "post", status, None) == "{}"
    assert quick_outcome("claude-code", "post", push, None) is None  # a refused push is evidence
    # An index for another contract text proves nothing about this one.
    other = tmp_path / "other.yaml"
    other.write_text("name: other\n")
    assert quick_outcome("claude-code", "post", status, str(other)) is None
    # A corrupt index is ignored, never trusted.
    for index in tmp_path.glob("observation-index-*.json"):
        index.write_text("{garbage")
    assert quick_outcome("claude-code", "post", status, None) is None


def _hook_process(arguments: list[str], payload: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "statewise.integrations.hook_entry", *arguments], input=payload,
                          capture_output=True, text=True, cwd=cwd, env=env, timeout=60)


def test_a_check_stuck_on_a_locked_store_is_blocked_at_the_deadline(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    store = tmp_path / "store.db"
    env = {**os.environ, "STATEWISE_CACHE_DIR": str(tmp_path / "cache")}
    subprocess.run([sys.executable, "-m", "statewise", "--store", str(store), "init"], env=env, cwd=repo,
                   capture_output=True, check=False)
    holder = sqlite3.connect(store, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another writer holds the store for longer than the deadline
    try:
        payload = json.dumps({"cwd": str(repo), "hook_event_name": "PreToolUse", "tool_name": "Bash",
                              "tool_input": {"command": "git push --force origin main"}})
        started = time.monotonic()
        done = _hook_process(["claude-code", "pre", "--deadline", "2", "--store", str(store)], payload, repo, env)
        elapsed = time.monotonic() - started
    finally:
        holder.close()
    assert done.returncode == 2 and done.stdout.strip() == ""
    assert "could not finish checking in time (2 s)" in done.stderr and done.stderr.count("\n") == 1
    assert elapsed < 8  # the store's own lock wait is 10 s: the deadline, not the lock, answered


def test_bad_arguments_name_the_usage():
    done = subprocess.run([sys.executable, "-m", "statewise.integrations.hook_entry"], capture_output=True, text=True,
                          input="{}", timeout=30)
    assert done.returncode != 0 and "usage:" in done.stderr


def _session_payload(work: Path) -> str:
    return json.dumps({"cwd": str(work), "hook_event_name": "SessionStart", "session_id": "s", "source": "startup"})


def _session_world(tmp_path: Path) -> tuple[Path, Path, str]:
    work = tmp_path / "work"
    work.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(work)], check=True)
    (work / "package.json").write_text('{"name": "app", "scripts": {"test": "echo ok"}}\n')
    (work / "AGENTS.md").write_text("# Testing\n\nRun the tests with `npm run test:unit`.\n")
    store = work / ".statewise" / "store.db"
    store.parent.mkdir()
    return work, store, _session_payload(work)


def _age_note(work: Path, agent: str, seconds: float) -> dict:
    """Make the note ``seconds`` older, as a later session start finds it (its own clock input)."""
    note_file = Path(hook_files._session_note_path(os.path.realpath(work), agent))
    note = json.loads(note_file.read_text())
    note["created"] -= seconds
    note_file.write_text(json.dumps(note))
    return note


def test_a_session_note_is_reused_until_what_it_was_made_from_changes(tmp_path):
    from statewise.integrations.hooks import run_hook

    work, store, payload = _session_world(tmp_path)
    assert quick_outcome("codex", "session", payload, None) is None  # nothing remembered yet
    first = run_hook("codex", payload, event="session", store_location=str(store))
    assert "test:unit" in first.stdout  # the wrong line, with its correction
    assert quick_outcome("codex", "session", payload, None) == first.stdout  # unchanged: reused

    (work / "AGENTS.md").write_text("# Testing\n\nRun the tests with `npm test`.\n")  # the memory file changed
    assert quick_outcome("codex", "session", payload, None) is None
    second = run_hook("codex", payload, event="session", store_location=str(store))
    assert quick_outcome("codex", "session", payload, None) == second.stdout

    # An hour later, after writes to the store outside the session's scopes, and a file added
    # beside the memory file that no client loads: nothing the note was made from changed.
    _age_note(work, "codex", 3600)
    from statewise.contract import builtin_contract
    from statewise.records import Provenance, RecordDraft
    from statewise.store.sqlite import SQLiteStore

    elsewhere = SQLiteStore(str(store), key_schema=builtin_contract())
    try:
        elsewhere.put(RecordDraft(key="project.test_command", value="make check", scope="workspace:/elsewhere",
                                  provenance=Provenance(source="developer", authority="developer", actor="dev")))
    finally:
        elsewhere.close()
    later = store.stat().st_mtime_ns + 3600 * 10**9
    os.utime(store, ns=(later, later))
    (work / "notes.txt").write_text("scratch\n")
    assert quick_outcome("codex", "session", payload, None) == second.stdout  # the store read: same records
    # Remembered: while the store's files stay as they are now, the next start does not read it
    # (a file of the same size and time that is no database would otherwise end the reuse).
    saved, info = store.read_bytes(), store.stat()
    store.write_bytes(b"x" * len(saved))
    os.utime(store, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert quick_outcome("codex", "session", payload, None) == second.stdout
    store.write_bytes(saved)
    os.utime(store, ns=(info.st_atime_ns, info.st_mtime_ns + 1))
    assert quick_outcome("codex", "session", payload, None) == second.stdout

    # A record in the session's scopes superseded: checked anew.
    from statewise.workspace import derive_task_scope

    in_scope = SQLiteStore(str(store), key_schema=builtin_contract())
    try:
        record = in_scope.retrieve(derive_task_scope(work), near_miss_limit=0).records[0]
        in_scope.put(RecordDraft(key=record.key, value="make test", scope=record.scope,
                                 provenance=Provenance(source="developer", authority="developer", actor="dev")),
                     replace=True)
    finally:
        in_scope.close()
    assert quick_outcome("codex", "session", payload, None) is None
    third = run_hook("codex", payload, event="session", store_location=str(store))
    assert quick_outcome("codex", "session", payload, None) == third.stdout

    (work / "CLAUDE.md").write_text("# Notes\n")  # a memory file added beside the others
    assert quick_outcome("codex", "session", payload, None) is None
    fourth = run_hook("codex", payload, event="session", store_location=str(store))
    assert quick_outcome("codex", "session", payload, None) == fourth.stdout

    note_file = Path(hook_files._session_note_path(os.path.realpath(work), "codex"))
    note_file.write_text("{garbage")
    assert quick_outcome("codex", "session", payload, None) is None


def test_a_session_note_without_a_store_ends_when_the_project_gets_one(tmp_path):
    from statewise.integrations.hooks import run_hook

    work, store, payload = _session_world(tmp_path)
    store.parent.rmdir()  # StateWise not set up here yet
    first = run_hook("codex", payload, event="session")
    assert quick_outcome("codex", "session", payload, None) == first.stdout
    store.parent.mkdir()  # a project install makes the folder
    assert quick_outcome("codex", "session", payload, None) is None


def test_a_session_note_ends_when_a_record_it_read_goes_stale(tmp_path):
    # A record with a TTL reads as fresh until its TTL runs out; the note holds until then.
    from datetime import UTC, datetime, timedelta

    from statewise.contract import builtin_contract
    from statewise.integrations.hooks import run_hook
    from statewise.records import Provenance, RecordDraft
    from statewise.store.sqlite import SQLiteStore
    from statewise.workspace import derive_task_scope

    work, store, payload = _session_world(tmp_path)
    observed = datetime.now(UTC) - timedelta(minutes=5)
    writer = SQLiteStore(str(store), key_schema=builtin_contract())
    try:
        scope = str(derive_task_scope(work).applicable_scopes()[0])
        writer.put(RecordDraft(key="fs.protected_paths", value=["app.py"], scope=scope, ttl_seconds=3600,
                               observed_at=observed,
                               provenance=Provenance(source="developer", authority="developer", actor="dev")))
    finally:
        writer.close()
    first = run_hook("codex", payload, event="session", store_location=str(store))
    note = _age_note(work, "codex", 0)
    assert note["valid_until"] == pytest.approx((observed + timedelta(hours=1)).timestamp(), abs=1)
    assert quick_outcome("codex", "session", payload, None) == first.stdout
    note["valid_until"] = time.time() - 1  # the clock past the record's TTL, through the note's own input
    Path(hook_files._session_note_path(os.path.realpath(work), "codex")).write_text(json.dumps(note))
    assert quick_outcome("codex", "session", payload, None) is None


def test_a_settings_file_rewritten_unchanged_keeps_the_session_note(tmp_path, monkeypatch):
    # Gemini CLI rewrites ~/.gemini/settings.json as every session starts, with the same bytes:
    # the note watches the clients' settings files by content, so it is still reused.
    from statewise.integrations.hooks import run_hook
    from statewise.integrations.install import install_hooks

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    work = tmp_path / "work"
    subprocess.run(["git", "init", "-q", "-b", "main", str(work)], check=True)
    install_hooks("gemini", project=work)
    user_settings = tmp_path / "home" / ".gemini" / "settings.json"
    user_settings.parent.mkdir(parents=True)
    user_settings.write_text('{"ui": {"theme": "Default"}}\n')
    payload = _session_payload(work)
    first = run_hook("gemini", payload, event="session", store_location=str(work / ".statewise" / "store.db"))
    assert quick_outcome("gemini", "session", payload, None) == first.stdout
    later = user_settings.stat().st_mtime_ns + 5_000_000_000
    user_settings.write_text('{"ui": {"theme": "Default"}}\n')
    os.utime(user_settings, ns=(later, later))
    assert quick_outcome("gemini", "session", payload, None) == first.stdout  # same bytes: reused
    user_settings.write_text('{"ui": {"theme": "Dark"}}\n')
    assert quick_outcome("gemini", "session", payload, None) is None  # new content: checked again
    project_settings = work / ".gemini" / "settings.json"
    run_hook("gemini", payload, event="session", store_location=str(work / ".statewise" / "store.db"))
    project_settings.write_text(project_settings.read_text().replace("gemini post", "true"))
    assert quick_outcome("gemini", "session", payload, None) is None  # StateWise's own hooks edited


# --- the fast path's own readers: the same answers as the standard library, fewer imports ------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=12)


def _same_as_json(text: str) -> None:
    try:
        expected: object = ("ok", repr(json.loads(text)))  # repr: nan == nan
    except ValueError:
        expected = "error"
    try:
        got: object = ("ok", repr(hook_files.loads(text)))
    except ValueError:
        got = "error"
    assert got == expected, text


@settings(max_examples=300, deadline=None)
@given(_JSON_VALUES, st.sampled_from(["", " ", "\n\t", "\r\n "]), st.sampled_from(["", " ", "x", "}", " 1", "\x0c"]))
def test_loads_reads_json_exactly_as_json_loads(value, space, suffix):
    _same_as_json(space + json.dumps(value) + space + suffix)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet='{}[]",:0123456789.eE+-tfnrulasNIy \t\n\\u\ufeff', max_size=30))
def test_loads_fails_where_json_loads_fails(text):
    _same_as_json(text)


def test_loads_edge_cases():
    for text in ["", " ", "\ufeff{}", "{}\x00", "NaN", "-Infinity", '{"a": 1, "a": 2}', '"\\ud800"', "1e400",
                 '{"a": "\x01"}', "[1,]", "{} {}", "\u00a0{}"]:
        _same_as_json(text)


PATTERNS = [
    r"\bgit\b.*\bpush\b", r"^(?:\S*/)?python(?:3(?:\.\d+)?)?\s+(?:-V|--version)\s*$", r"^npm\s+(?:run\s+)?[\w:.-]+",
    r"(?i)git push", r"(?i:push)x", r"a|b", r"(ab)+c", r"x{2,}y", r"[ab]cd", r"gi(t)? push", r"ab*c", "(unclosed",
]


def test_required_literals_are_read_from_the_pattern():
    assert hook_files.required_literals(r"\bgit\b.*\bpush\b") == ["git", "push"]
    assert hook_files.required_literals(r"(?i)git push") == []  # case-insensitive: nothing proven
    assert hook_files.required_literals(r"(?i:push)x") == ["x"]
    assert hook_files.required_literals("a|b") == [] and hook_files.required_literals("(unclosed") == []
    assert hook_files.required_literals(r"(ab)+c") == ["ab", "c"]
    assert hook_files.required_literals("ab*c") == ["a", "c"]


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(PATTERNS[:-1]), st.text(alphabet="abcdxyz gitpushnmrvoe-V3./\t", max_size=24))
def test_a_pattern_matches_only_where_all_its_literals_occur(pattern, text):
    import re

    if re.search(pattern, text):
        assert all(literal in text for literal in hook_files.required_literals(pattern))


def test_the_fast_path_imports_no_json_re_pathlib_or_hashlib(tmp_path):
    # As the installed wrapper runs it: -I -S, the package directory appended.
    src = str(Path(hook_entry.__file__).resolve().parent.parent.parent)
    cache = tmp_path / "cache"
    from statewise.integrations.hooks import run_hook

    after = json.dumps({"cwd": str(tmp_path), "hook_event_name": "PostToolUse", "tool_name": "Bash",
                        "tool_input": {"command": "git status"}, "tool_response": {"stdout": ""}})
    os.environ["STATEWISE_CACHE_DIR"] = str(cache)  # run_hook writes the observation index here
    try:
        run_hook("claude-code", after, event="post", store_location=str(tmp_path / "store.db"))
    finally:
        del os.environ["STATEWISE_CACHE_DIR"]
    code = (f"import sys; sys.path.append({src!r}); from statewise.integrations import hook_entry as h; "
            f"pre = h.quick_outcome('claude-code', 'pre', {_pre('git status -sb')!r}, None); "
            f"post = h.quick_outcome('claude-code', 'post', {after!r}, None); "
            "heavy = sorted(m for m in ('json', 're', 'pathlib', 'hashlib', 'threading', 'typing', 'enum') "
            "if m in sys.modules); print(pre, post, heavy)")
    done = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "STATEWISE_CACHE_DIR": str(cache)})
    assert done.stdout.split() == ["{}", "{}", "[]"], done.stderr


def test_a_pre_tool_call_on_the_fast_path_does_not_even_import_os():
    src = str(Path(hook_entry.__file__).resolve().parent.parent.parent)
    code = (f"import sys; sys.path.append({src!r}); from statewise.integrations import hook_entry as h; "
            f"print(h.quick_outcome('codex', 'pre', {_pre('git status')!r}, None), 'os' in sys.modules)")
    done = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["{}", "False"], done.stderr


def test_the_records_state_reads_only_the_records_in_force_in_the_scopes_named(tmp_path):
    from statewise.contract import builtin_contract
    from statewise.records import Provenance, RecordDraft
    from statewise.store.sqlite import SQLiteStore

    location = str(tmp_path / "odd?#%name.db")  # characters a SQLite URI must escape
    dev = Provenance(source="developer", authority="developer", actor="dev")
    store = SQLiteStore(location, key_schema=builtin_contract())
    try:
        first = store.put(RecordDraft(key="fs.protected_paths", value=["a"], scope="workspace:/w", provenance=dev))
        scopes = ["workspace:/w", "global"]
        before = hook_files.records_state(location, scopes)
        assert before == [1, 1, 1]
        store.put(RecordDraft(key="fs.protected_paths", value=["b"], scope="workspace:/other", provenance=dev))
        assert hook_files.records_state(location, scopes) == before  # another scope's record
        newer = store.put(RecordDraft(key="fs.protected_paths", value=["c"], scope="workspace:/w", provenance=dev),
                          replace=True)
        assert newer.supersedes == first.id
        superseded = hook_files.records_state(location, scopes)
        assert superseded != before and superseded[0] == 1  # one in force, a newer row
        store.retract(newer.id, reason="forget it", actor="dev")
        assert hook_files.records_state(location, scopes)[0] == 0  # none in force any more
    finally:
        store.close()
    assert hook_files.records_state(str(tmp_path / "missing.db"), ["global"]) is None
    (tmp_path / "garbage.db").write_bytes(b"not a database" * 100)
    assert hook_files.records_state(str(tmp_path / "garbage.db"), ["global"]) is None
