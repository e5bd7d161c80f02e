"""Every input file has a size cap, checked before it is read: a case file, a memory file, a
contract and the hook's JSON on stdin over the cap are refused within a second, naming the file,
its size and the cap (statewise.limits)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from statewise.bench.case import CaseError, load_case
from statewise.errors import InputTooLargeError
from statewise.integrations.hooks import run_hook
from statewise.integrations.install import install_hooks, wrapper_path
from statewise.limits import (
    MAX_ACTION_BYTES,
    MAX_CASE_BYTES,
    MAX_CONTRACT_BYTES,
    MAX_HOOK_INPUT_BYTES,
    MAX_MEMORY_FILE_BYTES,
    MAX_SETTINGS_BYTES,
    read_capped,
)
from statewise.settings import read_config

TWENTY_MB = 20 * 1024 * 1024


def _sparse(path: Path, size: int, head: bytes = b"") -> Path:
    """A file of ``size`` bytes made at once (a hole after ``head``): reading it is what a cap avoids."""
    with open(path, "wb") as handle:
        handle.write(head)
        handle.truncate(size)
    return path


def test_the_caps_sit_far_above_every_real_input_in_the_repository():
    # The argument of docs/cli.md ("Input size limits"), checked on the inputs this repository holds.
    root = Path(__file__).resolve().parents[1]
    cases = [p for p in (root / "benchmarks" / "cases").rglob("*") if p.suffix in (".yaml", ".json")]
    assert cases and max(p.stat().st_size for p in cases) * 10 < MAX_CASE_BYTES
    contracts = list((root / "src" / "statewise" / "contracts").rglob("*.yaml"))
    assert max(p.stat().st_size for p in contracts) * 5 < MAX_CONTRACT_BYTES
    memory = [root / "AGENTS.md", *root.glob("CLAUDE.md")]
    assert max(p.stat().st_size for p in memory) * 100 < MAX_MEMORY_FILE_BYTES


def test_read_capped_refuses_a_large_file_by_its_size_without_reading_it(tmp_path):
    path = _sparse(tmp_path / "big.bin", TWENTY_MB)
    with pytest.raises(InputTooLargeError) as caught:
        read_capped(path, 1024, "a test input")
    assert caught.value.size == TWENTY_MB and caught.value.limit == 1024
    assert str(caught.value) == f"{path} is 20,971,520 bytes, over the limit of 1,024 bytes for a test input; " \
                                "it was not read"
    (tmp_path / "small.bin").write_bytes(b"x" * 1024)
    assert read_capped(tmp_path / "small.bin", 1024, "a test input") == b"x" * 1024


def test_read_capped_stops_a_stream_one_byte_past_the_cap(tmp_path):
    # A FIFO has no size to look at: it is read up to one byte past the cap, never further.
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    feeder = subprocess.Popen(["/bin/sh", "-c", f"head -c 20000 /dev/zero > {fifo}"])
    with pytest.raises(InputTooLargeError) as caught:
        read_capped(fifo, 4096, "a stream")
    feeder.wait(timeout=10)  # it ends on the closed pipe
    assert caught.value.size == 4097 and caught.value.source == str(fifo)


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_a_20_mb_case_file_is_refused_within_a_second_naming_file_size_and_limit(tmp_path, suffix):
    head = b"id: huge\ndescription: '" if suffix == ".yaml" else b'{"id": "huge", "description": "'
    path = tmp_path / f"huge{suffix}"
    with open(path, "wb") as handle:  # real bytes, not a hole: a parser given it would take minutes
        handle.write(head + b"x" * TWENTY_MB)
    started = time.monotonic()
    with pytest.raises(CaseError) as caught:
        load_case(path)
    assert time.monotonic() - started < 1.0
    size = path.stat().st_size
    assert str(caught.value) == f"{path}: {size:,} bytes, over the limit of {MAX_CASE_BYTES:,} bytes for a case file"


def test_a_memory_file_over_the_cap_stops_memory_import_before_anything_is_written(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    memory = root / "AGENTS.md"
    with open(memory, "wb") as handle:
        handle.write(b"This project uses Python 3.8.\n" + b"Be kind to reviewers. " * (MAX_MEMORY_FILE_BYTES // 20))
    store = tmp_path / "store.db"
    env = {**os.environ, "HOME": str(tmp_path / "home"), "STATEWISE_STORE": str(store)}
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "statewise", "memory", "import", "--cwd", str(root)],
                          capture_output=True, text=True, env=env, cwd=root, timeout=120)
    size = memory.stat().st_size
    assert done.returncode != 0, done.stdout
    assert (f"{memory} is {size:,} bytes, over the limit of {MAX_MEMORY_FILE_BYTES:,} bytes for a memory file"
            in " ".join(done.stderr.split()))
    assert time.monotonic() - started < 30  # the interpreter's start; the refusal itself is in the test above
    if store.exists():  # the store may be created on open; it holds nothing from the file
        from statewise.store.sqlite import SQLiteStore

        opened = SQLiteStore(str(store))
        try:
            assert list(opened.records()) == []
        finally:
            opened.close()


def test_hook_input_over_the_cap_is_refused_by_the_library_too():
    raw = json.dumps({"cwd": "/", "tool_name": "Bash", "tool_input": {"command": "x" * MAX_HOOK_INPUT_BYTES}})
    outcome = run_hook("claude-code", raw)
    assert outcome.exit_code in (0, 2)
    assert "over the limit of 8,388,608 bytes for the JSON a client sends a hook" in outcome.stdout + outcome.stderr
    assert '"deny"' in outcome.stdout or outcome.exit_code == 2


@pytest.mark.parametrize("agent", ["claude-code", "codex", "gemini"])
def test_a_20_mb_hook_input_through_the_installed_wrapper_is_blocked_within_a_second(tmp_path, agent):
    root = tmp_path / "project"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    install_hooks(agent, project=root)
    payload = json.dumps({"cwd": str(root), "hook_event_name": "PreToolUse", "tool_name": "Bash",
                          "tool_input": {"command": "echo " + "x" * TWENTY_MB}}).encode()
    env = {**os.environ, "STATEWISE_NO_WARM": "1", "HOME": str(tmp_path / "home")}
    floor = subprocess.run([sys.executable, "-I", "-S", "-c", "pass"], timeout=60)  # warm the page cache
    assert floor.returncode == 0
    started = time.monotonic()
    done = subprocess.run([str(wrapper_path(project=root)), agent, "pre"], input=payload, capture_output=True,
                          cwd=root, env=env, timeout=60)
    elapsed = time.monotonic() - started
    reason = done.stderr.decode()
    assert done.returncode == 2, (done.stdout, reason)
    assert reason.strip() == (f"StateWise blocked this call: the hook's JSON on stdin is {len(payload):,} bytes, over "
                              f"the limit of {MAX_HOOK_INPUT_BYTES:,} bytes for the JSON a client sends a hook; it "
                              "was not parsed")
    assert elapsed < 1.0, f"{elapsed:.2f} s (load {os.getloadavg()[0]:.1f})"


def test_project_settings_over_the_cap_are_refused_unread_naming_the_file(tmp_path):
    settings = tmp_path / ".statewise" / "config.toml"
    settings.parent.mkdir()
    _sparse(settings, TWENTY_MB, b'on-pass = "defer"\n')
    started = time.monotonic()
    with pytest.raises(InputTooLargeError) as caught:
        read_config(tmp_path)
    assert time.monotonic() - started < 1.0
    assert str(caught.value) == (f"{settings} is {TWENTY_MB:,} bytes, over the limit of {MAX_SETTINGS_BYTES:,} "
                                 "bytes for project settings; it was not read")
    # A real settings file is far below the cap and still read.
    settings.write_text('on-pass = "defer"\n', encoding="utf-8")
    assert read_config(tmp_path)[1] == settings


@pytest.mark.parametrize("from_stdin", [False, True])
def test_guard_refuses_an_action_over_the_cap_naming_it(tmp_path, from_stdin):
    action = _sparse(tmp_path / "action.json", MAX_ACTION_BYTES + 10, b'{"tool": "git", "operation": "push"}')
    argv = [sys.executable, "-m", "statewise", "--store", str(tmp_path / "store.db"), "guard", "--task", "push", "--action",
            "-" if from_stdin else str(action)]
    with open(action, "rb") as stdin:
        done = subprocess.run(argv, stdin=stdin, capture_output=True, text=True, cwd=tmp_path, timeout=120,
                              env={**os.environ, "HOME": str(tmp_path)})
    assert done.returncode == 2, (done.stdout, done.stderr)
    said = " ".join(done.stderr.split())
    assert f"over the limit of {MAX_ACTION_BYTES:,} bytes for action" in said, said
    assert ("<stdin>" if from_stdin else str(action)) in said
