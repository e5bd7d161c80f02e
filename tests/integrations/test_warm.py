"""The warm worker: the hook's own answer, faster, and never trusted beyond what it proves.

Every call here is a real hook process (``python -m statewise.integrations.hook_entry``) fed a
client's JSON, in a real git repository, with a worker of its own started the way a user's is
(by the first call that needs the guard) in a runtime directory of the test's own."""

from __future__ import annotations

import itertools
import json
import os
import re
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from statewise.contract import builtin_contract
from statewise.integrations import warm
from statewise.records import Provenance, RecordDraft
from statewise.sandbox import make_git_sandbox
from statewise.store.sqlite import SQLiteStore

DEV = Provenance(source="developer", authority="developer", actor="dev")


@pytest.fixture
def world(tmp_path):
    sandbox = make_git_sandbox(tmp_path / "sb")
    runtime = Path(os.environ["STATEWISE_RUNTIME_DIR"]).parent / f"t{os.getpid()}-{time.monotonic_ns()}"
    env = {**os.environ, "STATEWISE_CACHE_DIR": str(tmp_path / "cache"), "STATEWISE_RUNTIME_DIR": str(runtime)}
    env.pop("STATEWISE_STORE", None)
    yield sandbox, runtime, env
    status = _status(runtime)
    if status:
        try:
            os.kill(status["pid"], signal.SIGTERM)
        except ProcessLookupError:
            pass


def _store(path: Path, *protected: str, scope: str) -> str:
    store = SQLiteStore(str(path), key_schema=builtin_contract())
    try:
        if protected:
            store.put(RecordDraft(key="fs.protected_paths", value=list(protected), scope=scope, provenance=DEV,
                                  observed_at=datetime.now(UTC) - timedelta(days=1)))
    finally:
        store.close()
    return str(path)


_STORES = itertools.count()


def _fresh(tmp_path: Path, sandbox, *protected: str) -> str:
    """A new store holding only ``protected`` (each call's answer depends on the store it
    finds: a first check records what it verified, so equal answers need equal stores)."""
    return _store(tmp_path / f"store-{next(_STORES)}.db", *protected, scope=f"repo:{sandbox.repo_identity}")


def _same(answer: tuple[int, str, str]) -> tuple[int, str, str]:
    """An answer with its record ids blanked: equal stores make equal records under new ids."""
    code, stdout, stderr = answer
    return code, re.sub(r"rec_[0-9A-Z]{26}", "rec_*", stdout), stderr


def _write(sandbox, name: str) -> str:
    return json.dumps({"session_id": "s", "cwd": str(sandbox.work), "hook_event_name": "PreToolUse",
                       "tool_name": "Write", "tool_use_id": "t",
                       "tool_input": {"file_path": str(sandbox.work / name), "content": "x = 1\n"}})


def _hook(payload: str, env: dict[str, str], *arguments: str) -> tuple[int, str, str]:
    done = subprocess.run([sys.executable, "-m", "statewise.integrations.hook_entry", "claude-code", "pre",
                           *arguments], input=payload, capture_output=True, text=True, env=env, timeout=60)
    return done.returncode, done.stdout.strip(), done.stderr.strip()


def _status(runtime: Path) -> dict | None:
    for path in runtime.glob("*.json") if runtime.is_dir() else ():
        try:
            return json.loads(path.read_text())
        except (OSError, ValueError):
            return None
    return None


def _wait_for_worker(runtime: Path, *, other_than: int | None = None) -> dict:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        status = _status(runtime)
        if status and status["pid"] != other_than and list(runtime.glob("*.sock")):
            return status
        time.sleep(0.05)
    raise AssertionError(f"no worker came up in {runtime}")


def _gone(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


def _decision(stdout: str) -> str:
    return json.loads(stdout)["hookSpecificOutput"]["permissionDecision"] if stdout != "{}" else "pass"


def test_the_worker_gives_the_answer_the_hook_would_give_itself(world, tmp_path):
    sandbox, runtime, env = world
    protected, other = _write(sandbox, "app.py"), _write(sandbox, "other.py")
    alone = {**env, "STATEWISE_NO_WARM": "1"}
    expected = [_same(_hook(protected, alone, "--store", _fresh(tmp_path, sandbox, "app.py"))),
                _same(_hook(other, alone, "--store", _fresh(tmp_path, sandbox, "app.py")))]
    assert not runtime.exists()  # turned off: no worker was started
    assert _decision(expected[0][1]) in ("deny", "ask") and expected[1] == (0, "{}", "")

    # Checked here; a worker starts for the next calls.
    assert _same(_hook(protected, env, "--store", _fresh(tmp_path, sandbox, "app.py"))) == expected[0]
    first = _wait_for_worker(runtime)
    assert first["served"] == 0
    assert [_same(_hook(protected, env, "--store", _fresh(tmp_path, sandbox, "app.py"))),
            _same(_hook(other, env, "--store", _fresh(tmp_path, sandbox, "app.py")))] == expected
    assert _status(runtime) == {**first, "served": 2}
    assert oct(runtime.stat().st_mode & 0o777) == "0o700"
    assert [oct(path.stat().st_mode & 0o777) for path in runtime.glob("*.sock")] == ["0o600"]


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="reads the worker's descriptors in /proc")
def test_a_hook_that_finds_no_worker_forks_one_from_its_own_imports_holding_nothing_of_the_client(world, tmp_path):
    sandbox, runtime, env = world
    payload = _write(sandbox, "app.py")
    started = time.monotonic()
    # capture_output: run() returns only once every copy of the hook's stdout and stderr is
    # closed, so a worker that kept one would hold it up to the timeout.
    answer = _hook(payload, env, "--store", _fresh(tmp_path, sandbox, "app.py"))
    assert _decision(answer[1]) in ("deny", "ask")
    assert time.monotonic() - started < 55
    status = _wait_for_worker(runtime)
    command = Path(f"/proc/{status['pid']}/cmdline").read_bytes().split(b"\0")
    assert b"statewise.integrations.hook_entry" in command  # the hook's process, forked: no second interpreter
    held = sorted(os.readlink(entry) for entry in Path(f"/proc/{status['pid']}/fd").iterdir())
    lock = str(runtime / f"{status['stamp']}.lock")
    assert [name for name in held if not name.startswith("socket:")] == ["/dev/null"] * 3 + [lock]
    assert len(held) == 5  # and its listening socket
    assert os.getsid(status["pid"]) == status["pid"]  # its own session, out of the client's reach
    assert _same(_hook(payload, env, "--store", _fresh(tmp_path, sandbox, "app.py"))) == _same(answer)
    assert _status(runtime) == {**status, "served": 1}


def test_each_call_runs_in_the_calling_hooks_environment(world, tmp_path):
    sandbox, runtime, env = world
    scope = f"repo:{sandbox.repo_identity}"
    guarded = _store(tmp_path / "guarded.db", "app.py", scope=scope)
    empty = _store(tmp_path / "empty.db", scope=scope)
    payload = _write(sandbox, "app.py")
    _hook(payload, {**env, "STATEWISE_STORE": empty})
    _wait_for_worker(runtime)
    # The store comes from the calling hook's environment: one worker, two answers.
    answers = [_hook(payload, {**env, "STATEWISE_STORE": store}) for store in (guarded, empty, guarded)]
    assert [_decision(stdout) for _, stdout, _ in answers] in (["deny", "pass", "deny"], ["ask", "pass", "ask"])
    assert _status(runtime)["served"] == 3


def test_calls_made_at_once_each_get_their_own_answer(world, tmp_path):
    # Claude Code runs the hooks of parallel tool calls at once: one worker, a fork each.
    sandbox, runtime, env = world
    _hook(_write(sandbox, "other.py"), env, "--store", _fresh(tmp_path, sandbox, "app.py"))
    _wait_for_worker(runtime)
    calls = [(name, _fresh(tmp_path, sandbox, "app.py")) for name in ["app.py", "other.py"] * 4]
    processes = [subprocess.Popen([sys.executable, "-m", "statewise.integrations.hook_entry", "claude-code", "pre",
                                   "--store", store], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, env=env) for _, store in calls]
    for process, (name, _) in zip(processes, calls, strict=True):
        process.stdin.write(_write(sandbox, name))
        process.stdin.close()
    decisions = [_decision(process.stdout.read().strip()) for process in processes]
    assert [process.wait(timeout=60) for process in processes] == [0] * 8
    assert decisions[1::2] == ["pass"] * 4 and set(decisions[0::2]) <= {"deny", "ask"}
    assert _status(runtime)["served"] == 8  # the first call, which started the worker, was checked here


def test_a_worker_for_other_code_is_never_asked(tmp_path):
    root = tmp_path / "site"
    (root / "statewise" / "__pycache__").mkdir(parents=True)
    module = root / "statewise" / "module.py"
    module.write_text("x = 1\n")
    first = warm.code_stamp(str(root))
    assert warm.code_stamp(str(root)) == first
    (root / "statewise" / "__pycache__" / "module.cpython-311.pyc").write_bytes(b"cache")
    assert warm.code_stamp(str(root)) == first  # bytecode written by a run is not a code change
    info = module.stat()
    os.utime(module, ns=(info.st_atime_ns, info.st_mtime_ns + 1_000_000))
    edited = warm.code_stamp(str(root))
    assert edited != first  # an edit in a development checkout
    (root / "statewise" / "new.py").write_text("")
    assert warm.code_stamp(str(root)) not in (first, edited)  # a module added by an upgrade
    assert warm.socket_path("/run/x", first) != warm.socket_path("/run/x", edited)


def test_a_runtime_directory_others_can_enter_is_never_used(world, tmp_path):
    sandbox, runtime, env = world
    runtime.mkdir(mode=0o755)
    runtime.chmod(0o755)
    store = _store(tmp_path / "store.db", "app.py", scope=f"repo:{sandbox.repo_identity}")
    for _ in range(2):
        code, stdout, _ = _hook(_write(sandbox, "app.py"), env, "--store", store)
        assert code == 0 and _decision(stdout) in ("deny", "ask")
    time.sleep(1)
    assert list(runtime.iterdir()) == []  # no worker, no socket


def test_a_dead_workers_socket_is_checked_here_and_a_new_worker_takes_over(world, tmp_path):
    sandbox, runtime, env = world
    payload = _write(sandbox, "app.py")
    expected = _same(_hook(payload, {**env, "STATEWISE_NO_WARM": "1"}, "--store", _fresh(tmp_path, sandbox, "app.py")))
    _hook(payload, env, "--store", _fresh(tmp_path, sandbox, "app.py"))
    first = _wait_for_worker(runtime)
    os.kill(first["pid"], signal.SIGKILL)
    assert _gone(first["pid"], 10)
    assert list(runtime.glob("*.sock"))  # left behind: connecting to it is refused
    assert _same(_hook(payload, env, "--store", _fresh(tmp_path, sandbox, "app.py"))) == expected
    second = _wait_for_worker(runtime, other_than=first["pid"])
    assert _same(_hook(payload, env, "--store", _fresh(tmp_path, sandbox, "app.py"))) == expected
    assert _status(runtime) == {**second, "served": 1}


@pytest.mark.parametrize("reply", [b"", b"\x00\x00\x00\x05oops", b"\x00\x00\x00\x00",
                                   warm._frames([b"{}", b"", b"0"])])  # the last: a well-formed pass
def test_a_socket_that_answers_nonsense_is_not_trusted(world, tmp_path, reply):
    # Something listening under the worker's name that closes, cuts off, answers no decision or
    # answers a pass: this interpreter, but not holding the worker's lock, so the hook sends it
    # nothing (not the call, not its environment), checks the call itself and gives the right
    # answer.
    sandbox, runtime, env = world
    runtime.mkdir(mode=0o700)
    payload = _write(sandbox, "app.py")
    expected = _same(_hook(payload, {**env, "STATEWISE_NO_WARM": "1"}, "--store", _fresh(tmp_path, sandbox, "app.py")))
    store = _fresh(tmp_path, sandbox, "app.py")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(warm.socket_path(str(runtime), warm.code_stamp()))
    listener.listen(4)
    listener.settimeout(30)
    try:
        process = subprocess.Popen([sys.executable, "-m", "statewise.integrations.hook_entry", "claude-code", "pre",
                                    "--store", store], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True, env=env)
        process.stdin.write(payload)
        process.stdin.close()
        connection, _ = listener.accept()
        connection.settimeout(30)
        sent = connection.recv(1 << 16)
        try:
            connection.sendall(reply)
        except BrokenPipeError:
            pass  # the hook hung up at once
        connection.close()
        stdout, stderr = process.stdout.read(), process.stderr.read()
        code = process.wait(timeout=60)
    finally:
        listener.close()
    assert _same((code, stdout.strip(), stderr.strip())) == expected
    assert sent == b""


def test_a_slow_check_in_the_worker_is_blocked_at_the_hooks_deadline(world, tmp_path):
    sandbox, runtime, env = world
    store = _store(tmp_path / "store.db", scope=f"repo:{sandbox.repo_identity}")
    push = json.dumps({"cwd": str(sandbox.work), "hook_event_name": "PreToolUse", "tool_name": "Bash",
                       "tool_input": {"command": "git push --force origin main"}})
    _hook(_write(sandbox, "other.py"), env, "--store", store)
    _wait_for_worker(runtime)
    holder = sqlite3.connect(store, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another writer holds the store for longer than the deadline
    try:
        started = time.monotonic()
        code, stdout, stderr = _hook(push, env, "--store", store, "--deadline", "2")
        elapsed = time.monotonic() - started
    finally:
        holder.close()
    assert (code, stdout) == (2, "") and "could not finish checking in time (2 s)" in stderr
    assert elapsed < 8
    assert _status(runtime)["served"] == 1


def test_the_worker_ends_when_idle_or_when_its_socket_is_gone(world, tmp_path):
    sandbox, runtime, env = world
    store = _store(tmp_path / "store.db", scope=f"repo:{sandbox.repo_identity}")
    _hook(_write(sandbox, "other.py"), {**env, "STATEWISE_WARM_IDLE": "1"}, "--store", store)
    idle = _wait_for_worker(runtime)
    assert _gone(idle["pid"], 15)
    assert list(runtime.iterdir()) == [next(runtime.glob("*.lock"))]  # socket and status removed

    _hook(_write(sandbox, "other.py"), env, "--store", store)
    busy = _wait_for_worker(runtime, other_than=idle["pid"])
    for path in runtime.iterdir():
        path.unlink()
    runtime.rmdir()
    assert _gone(busy["pid"], 15)



def test_a_worker_outlives_its_session_and_retires_when_its_code_changes(tmp_path):
    # A copy of the package, so that changing "the code" touches nothing another test runs.
    import shutil

    source = Path(warm.__file__).resolve().parents[2]
    shutil.copytree(source / "statewise", tmp_path / "code" / "statewise",
                    ignore=shutil.ignore_patterns("__pycache__"))
    runtime = Path(os.environ["STATEWISE_RUNTIME_DIR"]).parent / f"c{os.getpid()}-{time.monotonic_ns()}"
    env = {**os.environ, "STATEWISE_RUNTIME_DIR": str(runtime), "STATEWISE_WARM_STAMP_CHECK": "0.1"}
    env.pop("STATEWISE_WARM_IDLE", None)  # the default lifetime, as a user has it
    started = (f"import sys; sys.path.insert(0, {str(tmp_path / 'code')!r}); from statewise.integrations import warm; "
               "assert warm.IDLE_SECONDS >= 8 * 3600; warm.prepare()")
    subprocess.run([sys.executable, "-I", "-S", "-c", started], env=env, check=True, timeout=60)
    status = _wait_for_worker(runtime)
    socket_file = warm.socket_path(str(runtime), status["stamp"])
    time.sleep(warm._POLL_SECONDS * 2 + 1)  # idle, its code looked at more than once: it stays
    assert os.path.exists(socket_file) and _status(runtime) == status
    (tmp_path / "code" / "statewise" / "integrations" / "added.py").write_text("x = 1\n")  # an edit, an upgrade
    deadline = time.monotonic() + warm._POLL_SECONDS * 4
    while os.path.exists(socket_file) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not os.path.exists(socket_file)  # it left: no hook reaches it any more
    assert _gone(status["pid"], 10)


def test_a_session_start_readies_a_worker():
    runtime = Path(os.environ["STATEWISE_RUNTIME_DIR"]).parent / f"s{os.getpid()}"
    env = {**os.environ, "STATEWISE_RUNTIME_DIR": str(runtime)}
    done = subprocess.run([sys.executable, "-m", "statewise.integrations.hook_entry", "claude-code", "session"],
                          input=json.dumps({"hook_event_name": "SessionStart", "cwd": "/nonexistent-dir"}),
                          capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0
    status = _wait_for_worker(runtime)
    # The session start's own check (no note yet) waited for the worker it started, unless the
    # worker took longer than the wait's bound on a loaded machine.
    assert status["served"] <= 1
    assert [worker["pid"] for worker in warm.running_workers(str(runtime))] == [status["pid"]]
    os.kill(status["pid"], signal.SIGTERM)
    assert _gone(status["pid"], 10)
    assert warm.running_workers(str(runtime)) == []  # its status file is left; its process is not


# --- a hook that finds a worker starting waits for it, and never takes its absence for a pass ---


def _hold_lock(runtime: Path) -> int:
    """Take the worker lock as a starting worker holds it (statewise.integrations.warm._start)."""
    import fcntl

    runtime.mkdir(mode=0o700, exist_ok=True)
    lock = os.open(runtime / f"{warm.code_stamp()}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return lock


def _run_hook(payload: str, env: dict[str, str], *arguments: str) -> subprocess.Popen:
    process = subprocess.Popen([sys.executable, "-m", "statewise.integrations.hook_entry", "claude-code", "pre",
                                *arguments], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env=env)
    process.stdin.write(payload)
    process.stdin.close()
    return process


def _answer(process: subprocess.Popen) -> tuple[int, str, str]:
    stdout, stderr = process.stdout.read(), process.stderr.read()
    return process.wait(timeout=120), stdout.strip(), stderr.strip()


def test_a_call_waits_for_a_starting_worker_and_is_answered_by_it(world, tmp_path):
    sandbox, runtime, env = world
    payload = _write(sandbox, "app.py")
    expected = _same(_hook(payload, {**env, "STATEWISE_NO_WARM": "1"}, "--store", _fresh(tmp_path, sandbox, "app.py")))
    assert _decision(expected[1]) in ("deny", "ask")
    lock = _hold_lock(runtime)  # a worker is starting: its lock is held, it does not listen yet
    env = {**env, "STATEWISE_WARM_WAIT": "60"}  # the bound, out of a loaded machine's way
    process = _run_hook(payload, env, "--store", _fresh(tmp_path, sandbox, "app.py"), "--deadline", "300")
    time.sleep(1)
    assert process.poll() is None  # waiting, not checking the call itself
    # The worker comes up with the lock it was started with, as _start hands it over.
    code = (f"from statewise.integrations.warm import serve; serve({str(runtime)!r}, {warm.code_stamp()!r}, "
            f"lock={lock})")
    subprocess.Popen([sys.executable, "-c", code], pass_fds=[lock], env=env, stdin=subprocess.DEVNULL,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    os.close(lock)
    assert _same(_answer(process)) == expected
    assert _wait_for_worker(runtime)["served"] == 1  # the waiting call was answered by the worker


def test_a_starting_worker_that_dies_ends_the_wait_and_the_call_is_checked_here(world, tmp_path):
    sandbox, runtime, env = world
    payload = _write(sandbox, "app.py")
    expected = _same(_hook(payload, {**env, "STATEWISE_NO_WARM": "1"}, "--store", _fresh(tmp_path, sandbox, "app.py")))
    lock = _hold_lock(runtime)
    # A starter that holds the lock, then dies before it listens.
    starter = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(2)"], pass_fds=[lock])
    os.close(lock)
    started = time.monotonic()
    process = _run_hook(payload, {**env, "STATEWISE_WARM_WAIT": "60"}, "--store", _fresh(tmp_path, sandbox, "app.py"),
                        "--deadline", "300")
    answer = _same(_answer(process))
    assert starter.wait(timeout=30) == 0
    assert answer == expected  # checked here: the same deny, never a pass
    assert time.monotonic() - started < 60  # the death ended the wait, not its bound


def test_a_starting_worker_that_hangs_is_waited_for_only_up_to_the_bound(world, tmp_path):
    sandbox, runtime, env = world
    payload = _write(sandbox, "app.py")
    expected = _same(_hook(payload, {**env, "STATEWISE_NO_WARM": "1"}, "--store", _fresh(tmp_path, sandbox, "app.py")))
    lock = _hold_lock(runtime)  # held by this test for the whole call: a worker stuck in its imports
    try:
        started = time.monotonic()
        answer = _same(_answer(_run_hook(payload, {**env, "STATEWISE_WARM_WAIT": "1.5"}, "--store",
                                         _fresh(tmp_path, sandbox, "app.py"))))
        elapsed = time.monotonic() - started
    finally:
        os.close(lock)
    assert answer == expected  # checked here after the bound: the same deny, never a pass
    assert elapsed >= 1.5
    assert not list(runtime.glob("*.sock"))  # and no second worker was started beside the stuck one


def test_the_wait_for_a_starting_worker_stays_well_inside_the_deadline():
    assert warm._wait_bound(20.0) == warm.WAIT_SECONDS <= 5.0
    assert warm._wait_bound(2.0) == 0.5  # a short deadline: a quarter of it
    assert warm._wait_bound(-1.0) == 0.0


def test_install_readies_a_worker_for_the_first_session(tmp_path):
    runtime = Path(os.environ["STATEWISE_RUNTIME_DIR"]).parent / f"i{os.getpid()}"
    env = {**os.environ, "STATEWISE_RUNTIME_DIR": str(runtime), "HOME": str(tmp_path / "home")}
    work = tmp_path / "work"
    subprocess.run(["git", "init", "-q", "-b", "main", str(work)], check=True)
    subprocess.run([sys.executable, "-m", "statewise", "install", "claude-code", "--executable", "/bin/true"],
                   cwd=work, env=env, check=True, capture_output=True)
    assert not runtime.exists()  # another program's wrapper: no worker of StateWise's
    subprocess.run([sys.executable, "-m", "statewise", "install", "claude-code"], cwd=work, env=env, check=True,
                   capture_output=True)
    status = _wait_for_worker(runtime)
    assert status["served"] == 0
    # The session's first guarded call, through the wrapper install wrote (``python -I -S``,
    # where install ran a plain interpreter): the worker install started answers it.
    payload = json.dumps({"session_id": "s", "cwd": str(work), "hook_event_name": "PreToolUse", "tool_name": "Write",
                          "tool_use_id": "t", "tool_input": {"file_path": str(work / "app.py"), "content": "x = 1\n"}})
    subprocess.run([str(work / ".statewise" / "bin" / "statewise-hook"), "claude-code", "pre"], input=payload,
                   cwd=work, env={**env, "STATEWISE_CACHE_DIR": str(tmp_path / "cache")}, capture_output=True,
                   text=True, timeout=60)
    assert _wait_for_worker(runtime) == {**status, "served": 1}
    os.kill(status["pid"], signal.SIGTERM)
    assert _gone(status["pid"], 10)
