"""The warm worker: the guard's imports paid once per user and code version, not once per call.

A hook call that the front door (:mod:`statewise.integrations.hook_entry`) cannot settle needs
the guard, whose imports (pydantic above all) cost about twenty bare interpreter starts; the
check itself costs a fraction of that. So the first such call (or a session's start, through
:func:`prepare`) starts a worker process in the background: it imports the guard once, listens
on a Unix socket, and for every later call forks a child that adopts the calling hook's
environment, working directory and umask and runs
:func:`~statewise.integrations.hooks.run_hook` exactly as the hook process would. Each call
still runs in a fresh process (the fork), so nothing one call does is seen by the next.

It changes how fast a decision comes, never what it is:

- the hook asks the worker only when its socket is in a directory of its own user with no
  access for anyone else, and the worker answers only a peer of its own user
  (``SO_PEERCRED``);
- the socket's name is a hash of the interpreter, the StateWise source files (their names,
  sizes and modification times) and the site-packages directory, so code that changed (an
  upgrade, an edit in a development checkout, a package installed) is never served by a worker
  that loaded the old code: the hook finds no worker under the new name and starts one;
- whatever goes wrong with the worker (none running, a stale socket, a refused or broken
  connection, an answer that is not one) makes the hook run the check itself, in its own
  process, as without a worker; the hook's deadline and its checks of the answer apply to both;
- a child that outlives the caller's deadline is ended by its own alarm.

A hook that finds no socket but a worker starting (its lock held: started by the session's
start, or by another hook a moment ago) waits for it, up to a quarter of its deadline and at
most ``STATEWISE_WARM_WAIT`` seconds (default 3), rather than importing the guard a second
time; a worker that dies meanwhile ends the wait at once, one that does not come up in time
ends it at the bound, and either way the hook checks the call itself. With no worker alive,
the hook takes the worker's lock, imports the guard, forks the worker from there
(:func:`fork_worker`: it starts with the guard imported, not in a second interpreter) and
checks the call itself (no slower than waiting for it) with the same answer.

``STATEWISE_NO_WARM=1`` turns it off. The worker outlives the session that started it: it
exits after ``STATEWISE_WARM_IDLE`` seconds (default 8 hours, a working day) without a call, so
that the next session's first guarded call finds it warm rather than importing the guard (about
twenty interpreter starts, which no wait can hide); and it exits within a minute once the code
it serves changed (its stamp, recomputed while idle), so a worker of old code never lingers.
Its directory is ``$STATEWISE_RUNTIME_DIR``, else ``$XDG_RUNTIME_DIR/statewise``, else
``/tmp/statewise-<uid>``; the guard denies the agent any write or delete there
(:mod:`statewise.integrations.protect`), as in the cache.

The client half (:func:`ask`) runs in the hook's front door, so it imports only built-in
modules.
"""

from __future__ import annotations

import sys  # the client half imports only built-in modules: it runs in the front door

# Below the guard's self-protection, which denies the agent any write in that folder.
from statewise.integrations.hook_files import private_directory, runtime_directory

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs the front door
if TYPE_CHECKING:
    from _socket import socket

__all__ = ["IDLE_SECONDS", "WAIT_SECONDS", "ask", "code_stamp", "fork_worker", "prepare", "private_directory",
           "running_workers", "runtime_directory", "serve", "socket_path", "status_path"]

#: Seconds the worker waits for a call before it exits: a working day, so that a session that
#: starts after an earlier one ended finds it (an idle worker costs memory, about 50 MB
#: resident, and a wake-up every few seconds; docs/integrations.md, "The warm worker").
IDLE_SECONDS = 8 * 3600
#: How often an idle worker recomputes the stamp of the code it serves, and exits when it changed.
_STAMP_CHECK_SECONDS = 60.0
#: The first frame of every request; a worker of another protocol version refuses it.
_PROTOCOL = b"statewise-warm-1"
#: Requests larger than this are refused (a tool's output is rarely near it; the hook then
#: checks the call itself).
_MAX_MESSAGE = 64 * 1024 * 1024
#: How often an idle worker checks that its socket is still there.
_POLL_SECONDS = 5.0
#: The longest a hook waits for a worker that is starting (see :func:`_wait_bound`).
WAIT_SECONDS = 3.0
#: How often a hook waiting for a starting worker tries its socket.
_POLL_START_SECONDS = 0.004
#: The stamp this process serves, once it is a worker.
_serving: list[str] = []
#: The worker lock this hook process took when it found no worker alive (directory, stamp, its
#: descriptor): the worker is then forked from this process once it has imported the guard for
#: its own check (:func:`fork_worker`), instead of a second interpreter importing it all again
#: beside that check.
_claimed: list[tuple[str, str, int]] = []


def _package_root() -> str:
    """The directory holding the ``statewise`` package this process runs."""
    import os

    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))


def code_stamp(package_root: str | None = None) -> str:
    """A hash of what a worker's code depends on: the interpreter, every file of the
    ``statewise`` package under ``package_root`` (name, size, modification time; bytecode caches
    left out) and the modification time of the interpreter's site-packages directory, which
    changes when a package is installed or removed."""
    import os

    root = package_root or _package_root()
    parts = [sys.executable, sys.version, root]
    pending = [os.path.join(root, "statewise")]
    while pending:
        directory = pending.pop()
        try:
            entries = sorted(os.scandir(directory), key=lambda entry: entry.name)
        except OSError:
            parts.append(f"{directory}:unreadable")
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if entry.name != "__pycache__":
                    pending.append(entry.path)
                continue
            try:
                info = entry.stat()
            except OSError:
                parts.append(f"{entry.path}:gone")
                continue
            parts.append(f"{entry.path}:{info.st_size}:{info.st_mtime_ns}")
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    for site_packages in (os.path.join(_prefix(), "lib", version, "site-packages"),
                          os.path.join(sys.base_prefix, "lib", version, "site-packages")):
        try:
            parts.append(f"{site_packages}:{os.stat(site_packages).st_mtime_ns}")
        except OSError:
            parts.append(f"{site_packages}:absent")
    from statewise.integrations.hook_files import sha256_hex

    return sha256_hex("\0".join(parts).encode("utf-8", "surrogateescape"))[:32]


def _prefix() -> str:
    """The environment this interpreter runs in, the same whether ``site`` ran or not: a hook
    (``python -I -S``) has not run it when it computes the stamp, and until it runs, a virtual
    environment's ``sys.prefix`` is still the base interpreter's (Python 3.11 sets it in
    ``site``). So the virtual environment is found as ``site`` finds it, by the ``pyvenv.cfg``
    beside the program or one folder up; otherwise a worker started by ``statewise install`` (a
    plain interpreter) would serve a stamp no hook asks for, and a worker (which runs ``site``)
    would find its code changed when it did not."""
    import os

    folder = os.path.dirname(os.path.abspath(sys.executable))
    if any(os.path.isfile(os.path.join(candidate, "pyvenv.cfg")) for candidate in (folder, os.path.dirname(folder))):
        return os.path.dirname(folder)  # what site.venv() sets sys.prefix to
    return sys.prefix


def socket_path(directory: str, stamp: str) -> str:
    """The socket of the worker for code ``stamp`` in ``directory``."""
    return f"{directory}/{stamp}.sock"


# --- the wire: length-prefixed frames, no JSON (the client half must not import json) --------


def _frames(items: list[bytes]) -> bytes:
    body = b"".join(len(item).to_bytes(4, "big") + item for item in items)
    return len(body).to_bytes(4, "big") + body


def _parse_frames(body: bytes) -> list[bytes]:
    items, offset = [], 0
    while offset < len(body):
        if offset + 4 > len(body):
            raise ValueError("a frame's length is cut off")
        size = int.from_bytes(body[offset:offset + 4], "big")
        offset += 4
        if offset + size > len(body):
            raise ValueError("a frame is cut off")
        items.append(body[offset:offset + size])
        offset += size
    return items


def _receive(connection: object) -> list[bytes]:
    """One message from ``connection`` (a socket), its frames; ValueError when it is not one."""
    def exactly(count: int) -> bytes:
        data = b""
        while len(data) < count:
            chunk = connection.recv(min(count - len(data), 1 << 20))  # type: ignore[attr-defined]
            if not chunk:
                raise ValueError("the connection ended inside a message")
            data += chunk
        return data

    size = int.from_bytes(exactly(4), "big")
    if size > _MAX_MESSAGE:
        raise ValueError(f"a message of {size} bytes is larger than {_MAX_MESSAGE}")
    return _parse_frames(exactly(size))


# --- the client half, in the hook's front door -------------------------------------------------


def ask(agent: str, event: str, raw: str, options: dict[str, str | None], deadline_at: float) -> \
        tuple[str, str, int] | None:
    """The hook's answer (stdout, stderr, exit status) from the warm worker, or None when there
    is none to be had (off, not running, not this code, broken): the caller then checks the call
    itself. Starts a worker for the next calls when none answers. Never raises."""
    try:
        return _ask(agent, event, raw, options, deadline_at)
    except Exception:  # noqa: BLE001 - the worker is an optimisation: any failure means "check it here"
        return None


def _ask(agent: str, event: str, raw: str, options: dict[str, str | None], deadline_at: float) -> \
        tuple[str, str, int] | None:
    import os
    import time

    if os.environ.get("STATEWISE_NO_WARM"):
        return None
    directory = runtime_directory()
    root = _package_root()
    stamp = code_stamp(root)
    remaining = deadline_at - time.monotonic()
    if remaining <= 0.05:
        return None
    import _socket

    connection = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        connection.settimeout(remaining)
        if not private_directory(directory):
            if not os.path.lexists(directory):
                _claim_for_fork(directory, stamp)
            return None  # a directory someone else could write to is never trusted
        try:
            connection.connect(socket_path(directory, stamp))
        except OSError:
            connection.close()
            waited = _await_worker(directory, stamp, root, deadline_at)
            if waited is None:
                return None
            connection = waited
            remaining = deadline_at - time.monotonic()
            connection.settimeout(max(0.05, remaining))
        if not _peer_is_worker(connection, directory, stamp):
            return None  # not shown to be the worker: nothing is sent to it (the environment included)
        environment = [f"{name}={value}".encode("utf-8", "surrogateescape") for name, value in os.environ.items()]
        umask = os.umask(0o022)
        os.umask(umask)
        fields = [_PROTOCOL, stamp.encode(), agent.encode(), event.encode(),
                  *[(options.get(name) or "").encode("utf-8", "surrogateescape")
                    for name in ("store", "contract", "on-pass")],
                  repr(remaining).encode(), os.getcwd().encode("utf-8", "surrogateescape"), str(umask).encode(),
                  raw.encode("utf-8", "surrogateescape"), *environment]
        connection.sendall(_frames(fields))
        answer = _receive(connection)
    except (OSError, ValueError):
        return None
    finally:
        connection.close()
    if len(answer) != 3 or not answer[2].lstrip(b"-").isdigit():
        return None
    return answer[0].decode("utf-8", "replace"), answer[1].decode("utf-8", "replace"), int(answer[2])


def _peer_is_worker(connection: socket, directory: str, stamp: str) -> bool:
    """Whether the process listening on ``connection``'s other end is shown to be the worker for
    ``stamp``: the kernel's ``SO_PEERCRED`` names the process that listens (and its user, this
    one's), ``/proc/<pid>/exe`` is this interpreter, that process holds ``<stamp>.lock`` open and
    the lock is held. A process the agent started to listen there (a ``python -c`` binding the
    socket while no worker ran) fails it unless it also took the worker's lock, and the hook
    then checks the call itself. False where it cannot be shown (no ``SO_PEERCRED``, no
    ``/proc``): the hook checks the call itself. Same-user processes can still impersonate one
    another (docs/integrations.md, "The warm worker"): this is the second layer, beside the
    guard denying the agent any program that names the worker's folder."""
    import _socket
    import os

    try:
        credentials = connection.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12)
        pid = int.from_bytes(credentials[0:4], sys.byteorder)
        if pid <= 0 or int.from_bytes(credentials[4:8], sys.byteorder) != os.getuid():
            return False
        if os.readlink(f"/proc/{pid}/exe") != os.path.realpath(sys.executable):
            return False
        lock = os.path.realpath(os.path.join(directory, f"{stamp}.lock"))
        descriptors = f"/proc/{pid}/fd"
        for name in os.listdir(descriptors):
            try:
                if os.readlink(f"{descriptors}/{name}") == lock:
                    return _worker_alive(directory, stamp)
            except OSError:
                continue  # closed meanwhile
    except (AttributeError, OSError):
        return False
    return False


def _await_worker(directory: str, stamp: str, root: str, deadline_at: float) -> socket | None:
    """A connection to the worker for ``stamp`` once it listens, when one is starting (started
    by the session's start, or by another hook a moment ago); None when none is, after
    claiming its lock, so that this process forks one for the next calls once it has imported
    the guard (:func:`fork_worker`), or when it does not come up within :func:`_wait_bound`
    (it died, or hangs in its imports): the caller then checks the call itself, inside the
    same deadline. With no worker starting, the caller checking the call itself is no slower
    than waiting for a worker, which imports and builds more than one check needs
    (docs/performance-hook.md, "A session's start")."""
    import _socket
    import time

    if _claim_for_fork(directory, stamp):
        return None
    until = time.monotonic() + _wait_bound(deadline_at - time.monotonic())
    path = socket_path(directory, stamp)
    while True:
        connection = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        try:
            connection.connect(path)
            return connection
        except OSError:
            connection.close()
        if time.monotonic() >= until or not _worker_alive(directory, stamp):
            return None
        time.sleep(_POLL_START_SECONDS)


def _wait_bound(remaining: float) -> float:
    """How long a hook waits for a starting worker: a quarter of what is left of its deadline,
    at most ``$STATEWISE_WARM_WAIT`` seconds (default :data:`WAIT_SECONDS`), so that checking
    the call itself still fits after a worker that never came up (and, far inside the
    client's timeout, the wrapper's own alarm)."""
    import os

    try:
        longest = float(os.environ.get("STATEWISE_WARM_WAIT") or WAIT_SECONDS)
    except ValueError:
        longest = WAIT_SECONDS
    return max(0.0, min(longest, remaining / 4))


def _worker_alive(directory: str, stamp: str) -> bool:
    """Whether a worker for ``stamp`` is alive (warming up or serving): its lock is held. The
    kernel lets go of a lock when its process ends, however it ends, so a dead worker (or a
    process id reused since) never reads as a live one. The probe holds the lock for an instant
    only, and only when no worker does."""
    import fcntl
    import os

    try:
        handle = os.open(os.path.join(directory, f"{stamp}.lock"), os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(handle)  # and with it the lock, when the probe took it
    return False


def prepare() -> None:
    """At a session's start: start a worker unless one for this code is alive, so that the
    session's first guarded call finds it warm, or waits for it instead of importing the guard
    itself. A lock tried on one file; never raises."""
    try:
        import os

        if os.environ.get("STATEWISE_NO_WARM"):
            return
        directory = runtime_directory()
        if os.path.lexists(directory) and not private_directory(directory):
            return
        root = _package_root()
        _start(directory, code_stamp(root), root)  # unless one is alive (its lock is held)
    except Exception:  # noqa: BLE001 - an optimisation: failing to start one changes nothing
        return


def _claim(directory: str, stamp: str) -> int | None:
    """The lock of the worker for ``stamp`` (a descriptor), taken here, unless a worker for it
    is alive (starting or serving) or ``directory`` is not private: None. From this moment a
    hook that finds no socket yet sees a worker starting (:func:`_worker_alive`) and waits for
    it, and no second worker is started. The kernel lets go of the lock when every process
    holding it has ended."""
    import fcntl
    import os

    try:
        os.mkdir(directory, 0o700)
    except FileExistsError:
        pass
    if not private_directory(directory):
        return None
    lock = os.open(os.path.join(directory, f"{stamp}.lock"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(lock)
        return None  # a worker for this code is alive: starting or serving
    return lock


def _claim_for_fork(directory: str, stamp: str) -> bool:
    """Claim the worker's lock for :func:`fork_worker`; True when this process now holds it."""
    lock = _claim(directory, stamp)
    if lock is None:
        return False
    _claimed.append((directory, stamp, lock))
    return True


def _start(directory: str, stamp: str, root: str) -> bool:
    """Start a worker for ``stamp`` in the background, detached from the hook and its client
    (its own session; standard streams on /dev/null, so the client never waits for it),
    unless one is alive already. True when one was started here.

    The worker's lock is taken here (:func:`_claim`), before the worker exists, and handed to
    it as descriptor 3."""
    import os

    lock = _claim(directory, stamp)
    if lock is None:
        return False
    try:
        code = (f"import sys; sys.path.append({root!r}); from statewise.integrations.warm import serve; "
                f"serve({directory!r}, {stamp!r}, lock=3)")
        null = os.devnull
        os.posix_spawn(sys.executable, [sys.executable, "-I", "-S", "-c", code], dict(os.environ),
                       file_actions=[(os.POSIX_SPAWN_OPEN, 0, null, os.O_RDONLY, 0),
                                     (os.POSIX_SPAWN_OPEN, 1, null, os.O_WRONLY, 0),
                                     (os.POSIX_SPAWN_OPEN, 2, null, os.O_WRONLY, 0),
                                     (os.POSIX_SPAWN_DUP2, lock, 3)],
                       setsid=True)
        # The hook process ends in milliseconds and the worker is then re-parented; until then
        # it is this process's child, which nothing here waits for.
        return True
    finally:
        os.close(lock)  # the worker's copy holds the lock from here on


def fork_worker() -> None:
    """In a hook process that found no worker alive and claimed its lock (:func:`ask`), once it
    has imported the guard for its own check: fork the worker from here, before the check, so
    that it starts with the guard imported, instead of a second interpreter importing it all
    again beside this check (on a machine of two cores, the two imports slowed each other).
    The child is detached as a spawned worker is (its own session, standard streams on
    /dev/null, every other descriptor closed but the lock, so the client never waits for it)
    and then runs :func:`serve` as one; the caller goes on to check its call. Never raises in
    the caller; a fork that fails lets go of the lock (and the next call starts a worker)."""
    if not _claimed:
        return
    import os
    import warnings

    directory, stamp, lock = _claimed.pop()
    try:
        with warnings.catch_warnings():
            # Python 3.12+ warns of a fork with other threads alive (here the main one, waiting for
            # this one): only this thread lives on in the child, and it takes no lock they hold.
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
    except OSError:
        os.close(lock)
        return
    if pid:
        os.close(lock)  # the child's copy holds it from here on
        return
    try:  # the child: only the thread that forked lives on in it
        os.setsid()
        null = os.open(os.devnull, os.O_RDWR)
        for descriptor in (0, 1, 2):
            os.dup2(null, descriptor)
        if lock != 3:
            os.dup2(lock, 3)  # and with it whatever descriptor 3 was (a copy of the client's pipe)
        serve(directory, stamp, lock=3, site_loaded=True)  # closes every descriptor above 3
    finally:
        os._exit(0)


# --- the worker ---------------------------------------------------------------------------------


def serve(directory: str, stamp: str, idle_seconds: float | None = None, *, lock: int | None = None,
          site_loaded: bool = False) -> None:
    """Run the worker for code ``stamp``: warm up, then fork a child per call until idle.
    ``lock``: the descriptor of this stamp's lock, taken by the process that started this one
    (:func:`_start`, :func:`fork_worker`); without it the lock is taken here. ``site_loaded``:
    ``site.main()`` ran in this process already (a worker forked from a hook). Returns at once
    when another worker holds the lock or ``directory`` is not private."""
    import gc
    import os
    import socket
    import time

    os.chdir("/")  # never keep a project's (or a test's temporary) directory busy
    # Nor a pipe of the client that started the hook, inherited by accident.
    os.closerange(3 if lock is None else lock + 1, 1 << 16)
    try:
        os.mkdir(directory, 0o700)
    except FileExistsError:
        pass
    if not private_directory(directory):
        return
    if lock is None:
        lock = _take_lock(os.path.join(directory, f"{stamp}.lock"))
        if lock is None:
            return  # another worker serves this code
    if idle_seconds is None:
        idle_seconds = _seconds_from_environment("STATEWISE_WARM_IDLE", IDLE_SECONDS)
    # How often an idle worker looks at its code (about a millisecond of CPU a look).
    stamp_check_seconds = _seconds_from_environment("STATEWISE_WARM_STAMP_CHECK", _STAMP_CHECK_SECONDS)
    gc.disable()
    if sys.flags.no_site and not site_loaded:
        import site

        site.main()
    _warm_up()
    _serving.append(stamp)
    gc.freeze()  # shared with every child, copy-on-write, and out of every collection's reach
    path = socket_path(directory, stamp)
    try:
        os.unlink(path)  # a socket no worker listens on (the lock says none does)
    except FileNotFoundError:
        pass
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    os.chmod(path, 0o600)
    ours = _identity(path)
    listener.listen(64)
    # Woken every few seconds: the worker also ends when its socket is gone (its directory
    # removed, say by a test session cleaning up), since no hook could reach it any more.
    listener.settimeout(min(idle_seconds, _POLL_SECONDS))
    children: set[int] = set()
    last_call = stamp_checked = time.monotonic()
    served = 0
    _write_status(directory, stamp, served)
    try:
        while True:
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                _reap(children)
                if _identity(path) != ours:
                    return
                if not children and time.monotonic() - last_call >= idle_seconds:
                    return
                if time.monotonic() - stamp_checked >= stamp_check_seconds:
                    stamp_checked = time.monotonic()
                    if _current_stamp() != stamp:
                        return  # its code changed: hooks ask a worker of the new code, started anew
                continue
            last_call = time.monotonic()
            pid = os.fork()
            if pid == 0:
                listener.close()
                os.close(lock)  # the lock says a worker lives: a child outliving it must not hold it
                code = 0
                try:
                    _serve_one(connection)
                except BaseException:  # noqa: BLE001 - the caller sees a broken connection and checks itself
                    code = 1
                finally:
                    os._exit(code)
            children.add(pid)
            connection.close()
            served += 1
            _write_status(directory, stamp, served)
            _reap(children)
    finally:
        # Only our own socket: a worker in a directory made anew under the same name has its own.
        if _identity(path) == ours:
            for name in (path, status_path(directory, stamp)):
                try:
                    os.unlink(name)
                except OSError:
                    pass
        listener.close()


def _seconds_from_environment(name: str, default: float) -> float:
    """Seconds from the environment variable ``name`` (``STATEWISE_WARM_IDLE``, and
    ``STATEWISE_WARM_STAMP_CHECK`` for tests), ``default`` when unset or not a number."""
    import os

    try:
        return float(os.environ.get(name) or default)
    except ValueError:
        return default


def _current_stamp() -> str | None:
    """The stamp of the code on disk now, for the package this worker loaded; None when it
    cannot be computed (which a worker takes as changed)."""
    try:
        return code_stamp(_package_root())
    except Exception:  # noqa: BLE001 - a worker that cannot see its code retires
        return None


def _take_lock(path: str) -> int | None:
    """The worker lock at ``path``, held from here to the process's end, for a worker started
    without one (:func:`_start` hands it over); None when another worker holds it. A hook's
    probe (:func:`_worker_alive`) holds it for an instant, so a refusal is tried again a few
    times before it counts."""
    import fcntl
    import os
    import time

    lock = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    for _ in range(10):
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return lock
        except OSError:
            time.sleep(0.002)
    os.close(lock)
    return None


def _warm_up() -> None:
    """Import what a check imports, and build what it builds once per process (the built-in
    contract, the shell grammar, the CEL engine, the store's migrations), before the first call:
    each child then starts where a hook process would be after its first check."""
    import importlib
    import pkgutil
    import sqlite3  # noqa: F401 - imported to be shared by the children
    import tomllib  # noqa: F401

    import regex  # noqa: F401

    import statewise.settings  # noqa: F401
    import statewise.store.sqlite  # noqa: F401
    import statewise.verifiers
    from statewise import expressions
    from statewise.commands import analyzer, words  # noqa: F401
    from statewise.contract import builtin_contract
    from statewise.integrations import hooks  # noqa: F401
    from statewise.store.migrations import migrations_for

    for module in pkgutil.iter_modules(statewise.verifiers.__path__, "statewise.verifiers."):
        importlib.import_module(module.name)
    builtin_contract()
    words._parser()
    expressions._engine()
    migrations_for("sqlite")


def status_path(directory: str, stamp: str) -> str:
    """The worker's status file: its process id, when it started, how many calls it took."""
    return f"{directory}/{stamp}.json"


def _write_status(directory: str, stamp: str, served: int) -> None:
    import json
    import os

    status = {"pid": os.getpid(), "stamp": stamp, "served": served}
    temporary = f"{status_path(directory, stamp)}.{os.getpid()}"
    try:
        with open(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w", encoding="utf-8") as handle:
            json.dump(status, handle)
        os.replace(temporary, status_path(directory, stamp))
    except OSError:
        pass  # the status is for people and tests; serving does not depend on it


def running_workers(directory: str | None = None) -> list[dict[str, object]]:
    """The status of every worker alive in ``directory`` (default: :func:`runtime_directory`),
    for ``statewise doctor``: a status file whose process is alive and whose socket is there."""
    import json
    import os

    directory = directory or runtime_directory()
    workers: list[dict[str, object]] = []
    try:
        names = sorted(name for name in os.listdir(directory) if name.endswith(".json"))
    except OSError:
        return workers
    for name in names:
        try:
            with open(os.path.join(directory, name), encoding="utf-8") as handle:
                status = json.load(handle)
            os.kill(int(status["pid"]), 0)
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if _identity(socket_path(directory, str(status.get("stamp")))) is not None:
            workers.append(status)
    return workers


def _identity(path: str) -> tuple[int, int] | None:
    """The device and inode of the socket at ``path``, None when there is none."""
    import os
    import stat

    try:
        info = os.lstat(path)
    except OSError:
        return None
    return (info.st_dev, info.st_ino) if stat.S_ISSOCK(info.st_mode) else None


def _reap(children: set[int]) -> None:
    import os

    for pid in list(children):
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            done = pid
        if done:
            children.discard(pid)


def _serve_one(connection: object) -> None:
    """In a forked child: read one call, become the calling hook (environment, directory,
    umask), check the call, answer, and return."""
    import gc
    import os
    import signal
    import socket
    import struct

    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    connection.settimeout(10)  # type: ignore[attr-defined]
    credentials = connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,  # type: ignore[attr-defined]
                                        struct.calcsize("3i"))
    _, uid, _ = struct.unpack("3i", credentials)
    if uid != os.getuid():
        return
    fields = _receive(connection)
    if len(fields) < 11 or fields[0] != _PROTOCOL or fields[1].decode() not in _serving:
        return
    decoded = [field.decode("utf-8", "surrogateescape") for field in fields[1:10]]
    _stamp, agent, event, store, contract, on_pass, remaining, cwd, umask = decoded
    # Ended by the kernel once the caller has stopped waiting (its deadline, plus a margin).
    signal.alarm(max(1, int(float(remaining)) + 2))
    environment = dict(item.decode("utf-8", "surrogateescape").partition("=")[::2] for item in fields[11:])
    os.environ.clear()
    os.environ.update(environment)
    # What the standard library read from the worker's environment once and kept: the
    # temporary folder (tempfile caches it on first use) and the local time zone.
    import tempfile
    import time

    tempfile.tempdir = None
    time.tzset()
    os.chdir(cwd)
    os.umask(int(umask))
    gc.enable()
    from statewise.integrations.hooks import run_hook

    outcome = run_hook(agent, fields[10].decode("utf-8", "surrogateescape"), event=event,
                       store_location=store or None, contract_path=contract or None, on_pass=on_pass or None)
    connection.sendall(_frames([outcome.stdout.encode("utf-8", "surrogateescape"),  # type: ignore[attr-defined]
                                outcome.stderr.encode("utf-8", "surrogateescape"),
                                str(outcome.exit_code).encode()]))
