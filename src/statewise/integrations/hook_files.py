"""The hook's shared files and tables, read by the front door and written by the slow path.

:mod:`statewise.integrations.hook_entry` (the front door, stdlib only) and
:mod:`statewise.integrations.hooks` (the slow path) meet here: the events and shell tools of
each client, the cache folder, the observation index (which finished commands could reveal a
fact) and the session note (what SessionStart said, while nothing it depends on changed). Like
the front door, this module imports only the standard library, and little of it at import time:
it sits below every other module of the package, so none of them imports the front door.
"""

from __future__ import annotations

import posix  # built in: the post-tool path reads files and the environment without importing os
import sys
import time

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs the fast path
if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "AGENT_TOOLS",
    "BUILTIN_PART_FOLDERS",
    "EVENTS",
    "READ_TOOLS",
    "SECRET_HINTS",
    "SESSION_NOTE_SECONDS",
    "SHELL_TOOLS",
    "builtin_contract_path",
    "cache_dir",
    "contract_digest",
    "could_observe",
    "environ",
    "exists",
    "loads",
    "parent_folder",
    "private_directory",
    "read_text",
    "realpath",
    "records_state",
    "required_literals",
    "runtime_directory",
    "session_note",
    "sha256_hex",
    "write_observation_index",
    "write_session_note",
]

#: Events as each client names them -> the hook's event ("pre", "post", "session", "prompt", "stop").
EVENTS = {
    "PreToolUse": "pre", "BeforeTool": "pre",
    "PostToolUse": "post", "PostToolUseFailure": "post", "AfterTool": "post",
    "SessionStart": "session",
    "UserPromptSubmit": "prompt", "BeforeAgent": "prompt",  # before the model plans a turn
    "Stop": "stop", "AfterAgent": "stop",  # as the agent ends its turn
}

#: The tools that run shell commands, per agent (AGENT_TOOLS below adds the other tools).
SHELL_TOOLS = {
    "claude-code": frozenset({"Bash"}),
    "codex": frozenset({"Bash", "exec_command"}),  # Codex 0.171 sends exec_command calls as Bash
    "gemini": frozenset({"run_shell_command"}),
}

#: The tools that read files, per agent: hooked only so that a read of a secret is asked
#: (statewise.protection); the front door passes every other read at once. Codex reads with its
#: shell.
READ_TOOLS = {
    "claude-code": frozenset({"Read"}),
    "codex": frozenset[str](),
    "gemini": frozenset({"read_file"}),  # Gemini CLI 0.61 offers no read_many_files (tests/e2e)
}

#: Which tool names carry shell commands, which edit files, which read them, and which type into
#: a terminal session opened earlier, per agent (the names the real clients send; see
#: docs/integrations.md).
AGENT_TOOLS: dict[str, dict[str, frozenset[str]]] = {
    "claude-code": {"shell": SHELL_TOOLS["claude-code"],
                    "file": frozenset({"Write", "Edit", "NotebookEdit"}), "read": READ_TOOLS["claude-code"],
                    "session_input": frozenset()},
    "codex": {"shell": SHELL_TOOLS["codex"], "file": frozenset({"apply_patch"}), "read": READ_TOOLS["codex"],
              "session_input": frozenset({"write_stdin"})},
    "gemini": {"shell": SHELL_TOOLS["gemini"], "file": frozenset({"write_file", "replace"}),
               "read": READ_TOOLS["gemini"], "session_input": frozenset()},
}

#: Pieces of text that may name a secret (:mod:`statewise.protection`, whose tables a test keeps
#: this covering): a read-only command or a read holding one goes to the full check, which asks
#: before a secret is read. Names a contract's ``secrets:`` section adds are not seen here.
SECRET_HINTS = (".env", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", ".pem", ".key", ".p12", ".pfx", "pypirc",
                "netrc", "npmrc", "credentials", ".aws", "gcloud", ".azure", ".kube", ".docker", ".ssh")


# --- reading JSON without importing json ---------------------------------------------------

#: What JSON calls whitespace (json.decoder.WHITESPACE).
_JSON_WHITESPACE = " \t\n\r"


class _ScannerContext:
    """The settings :func:`json.loads` gives the C scanner (``json.decoder.JSONDecoder()``)."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}.__getitem__


_scanner: list[object] = []


def loads(text: str) -> object:
    """``json.loads(text)``, with the same result and the same failures (a ``ValueError``), but
    through the C scanner that :mod:`json` itself uses, without importing :mod:`json` (which
    imports ``re``, ``enum`` and more: several milliseconds of the fast path's budget). A test
    checks the two agree on generated input."""
    if not _scanner:
        try:
            from _json import make_scanner
        except ImportError:  # an interpreter without the C accelerator
            import json

            return json.loads(text)
        _scanner.append(make_scanner(_ScannerContext()))  # type: ignore[arg-type]
    scan = _scanner[0]
    start = len(text) - len(text.lstrip(_JSON_WHITESPACE))
    try:
        value, end = scan(text, start)  # type: ignore[operator]
    except StopIteration as stop:
        raise ValueError(f"Expecting value: char {stop.value}") from None
    if text[end:].strip(_JSON_WHITESPACE):
        raise ValueError(f"Extra data: char {end}")
    return value


def read_text(path: str) -> str:
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def sha256_hex(data: bytes) -> str:
    try:
        # The built-in implementation: importing hashlib loads OpenSSL, a few ms of the fast path.
        from _sha256 import sha256  # type: ignore[import-not-found]
    except ImportError:
        try:
            from _sha2 import sha256  # type: ignore[import-not-found]  # Python 3.12+
        except ImportError:
            from hashlib import sha256
    return str(sha256(data).hexdigest())


# --- the observation index: which finished commands could reveal a fact ---------------------


def environ(name: str) -> str | None:
    """``os.environ.get(name)``, without importing :mod:`os` (about a fifth of an interpreter's
    start) while nothing has: until then ``os.environ`` would be made from the same
    ``posix.environ``, decoded the same way."""
    imported = sys.modules.get("os")
    if imported is not None:
        return imported.environ.get(name)  # type: ignore[no-any-return]
    value = posix.environ.get(name.encode(sys.getfilesystemencoding(), "surrogateescape"))
    return None if value is None else value.decode(sys.getfilesystemencoding(), "surrogateescape")


def exists(path: str) -> bool:
    """``os.path.exists(path)``, without importing :mod:`os`."""
    try:
        posix.stat(path)
    except (OSError, ValueError):
        return False
    return True


def _join(directory: str, name: str) -> str:
    """``os.path.join(directory, name)``."""
    if name.startswith("/"):
        return name
    return directory + name if not directory or directory.endswith("/") else f"{directory}/{name}"


def parent_folder(path: str) -> str:
    """``os.path.dirname`` of an absolute, normalized path (the root is its own parent)."""
    return path[:path.rindex("/")] or "/"


def realpath(path: str) -> str:
    """``os.path.realpath(path)`` for an absolute ``path``, without importing :mod:`os`: each
    component is looked at with ``lstat`` and a symbolic link replaced by what it points to
    (posixpath's own algorithm; a loop or a missing component stays as written). A test
    checks it against ``os.path.realpath`` on links, loops and ``..``."""
    if not path.startswith("/"):
        import os

        return os.path.realpath(path)
    found, resolved = _join_real("/", path[1:], {})
    if resolved:
        return found
    # A loop: the rest is kept as written, and then normalized as os.path.abspath does.
    parts: list[str] = []
    for part in found.split("/"):
        if part == "..":
            if parts:
                parts.pop()
        elif part not in ("", "."):
            parts.append(part)
    return "/" + "/".join(parts)


def _join_real(path: str, rest: str, seen: dict[str, str | None]) -> tuple[str, bool]:
    if rest.startswith("/"):
        rest, path = rest[1:], "/"
    while rest:
        name, _, rest = rest.partition("/")
        if not name or name == ".":
            continue
        if name == "..":
            if path != "/":
                path = parent_folder(path)
            continue
        new = _join(path, name)
        try:
            is_link = posix.lstat(new).st_mode & 0o170000 == 0o120000
        except (OSError, ValueError):
            is_link = False
        if not is_link:
            path = new
            continue
        if new in seen:
            known = seen[new]
            if known is not None:
                path = known
                continue
            return _join(new, rest) if rest else new, False  # a loop
        seen[new] = None
        path, ok = _join_real(path, posix.readlink(new), seen)
        if not ok:
            return _join(path, rest) if rest else path, False
        seen[new] = path
    return path, True


def _cache_root() -> str:
    explicit = environ("STATEWISE_CACHE_DIR")
    if explicit:
        return explicit
    base = environ("XDG_CACHE_HOME")
    if not base:
        home = environ("HOME")
        if home is None:  # the password database: rare enough to import os for
            import os

            home = os.path.expanduser("~")
        base = _join(home.rstrip("/") or "/", ".cache")  # os.path.expanduser("~") with $HOME set
    return _join(base, "statewise")


def cache_dir() -> Path:
    """Where StateWise keeps derived, disposable files (``$STATEWISE_CACHE_DIR``, else XDG)."""
    from pathlib import Path

    return Path(_cache_root())


def _builtin_contract_file() -> str:
    return _join(parent_folder(parent_folder(realpath(__file__))), "contracts/coding.yaml")


def builtin_contract_path() -> Path:
    """The built-in contract's file."""
    from pathlib import Path

    return Path(_builtin_contract_file())


#: The contract files' state -> their digest (:func:`contract_digest`), in the cache folder.
DIGEST_MEMO = "contract-digests.json"
#: How many contracts the memo remembers (one per installed StateWise and ``--contract`` file).
_DIGEST_MEMO_ENTRIES = 16
#: A file changed less than this long before it was read is not remembered by its state: a
#: second write within the file system's timestamp granularity could leave the same state.
_RACY_NS = 2_000_000_000


#: The built-in contract's part folders, beside its file, as the loader merges them
#: (statewise.contract.loading.BUILTIN_PARTS["coding"], which a test keeps this equal to): a copy,
#: because importing anything here costs every finished command (importing statewise.contracts
#: for the table cost the post-tool call 0.3 million instructions, docs/contracts.md).
BUILTIN_PART_FOLDERS = ("coding", "catalogue")


def _contract_files(contract_path: str | None) -> list[tuple[str | None, str]]:
    """The files the digest is made of, each with the name its content is framed by (None: the
    contract's own file): the built-in contract's part files (its sections and its command
    catalogue: :data:`BUILTIN_PART_FOLDERS`) belong to it too, each framed by its path
    under the contracts folder (``coding/10-state.yaml``)."""
    if contract_path:
        return [(None, contract_path)]
    main = _builtin_contract_file()
    files: list[tuple[str | None, str]] = [(None, main)]
    for folder in BUILTIN_PART_FOLDERS:
        directory = _join(parent_folder(main), folder)
        try:
            names = sorted(name for name in posix.listdir(directory) if name.endswith(".yaml"))
        except (FileNotFoundError, NotADirectoryError):
            names = []
        files += ((f"{folder}/{name}", _join(directory, name)) for name in names)
    return files


def contract_digest(contract_path: str | None) -> str | None:
    """The content hash that keys the observation index, or None if the file cannot be read.

    Hashing the built-in contract (about 140 KB) took most of a finished command's check, so the
    digest is remembered in :data:`DIGEST_MEMO` with each file's state (device, inode, size,
    modification and change times in nanoseconds, and the part folders' listings through the
    files named): a file written since, replaced or touched has another state (its change time cannot
    be set back), and then the files are read and hashed again."""
    try:
        files = _contract_files(contract_path)
        state: list[list[str | int]] = []
        changed = 0  # the latest change time, in nanoseconds
        for _, path in files:
            info = posix.stat(path)
            state.append([path, info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns])
            changed = max(changed, info.st_ctime_ns)
    except (OSError, ValueError):
        return None
    key, memo, memo_path = files[0][1], None, ""
    if not environ("STATEWISE_NO_CACHE"):
        memo_path = _join(_cache_root(), DIGEST_MEMO)
        try:
            found = loads(read_text(memo_path))
        except (OSError, ValueError, RecursionError):
            found = None
        memo = found if isinstance(found, dict) else {}
        entry = memo.get(key)
        if isinstance(entry, dict) and entry.get("files") == state and isinstance(entry.get("digest"), str):
            return str(entry["digest"])
    data = b""
    try:
        for name, path in files:
            with open(path, "rb") as handle:
                content = handle.read()
            data += content if name is None else b"\0" + name.encode() + b"\0" + content
    except OSError:
        return None
    digest = sha256_hex(data)
    if memo is not None and changed < time.time_ns() - _RACY_NS:
        memo.pop(key, None)
        kept = list(memo.items())[-(_DIGEST_MEMO_ENTRIES - 1):]
        _write_json(memo_path, {**dict(kept), key: {"files": state, "digest": digest}})
    return digest


def _index_path(digest: str) -> str:
    return _join(_cache_root(), f"observation-index-{digest[:32]}.json")


def required_literals(pattern: str) -> list[str]:
    """Substrings that every match of the regular expression ``pattern`` contains, read from its
    parse tree: the runs of plain characters outside any optional or alternative part. Empty
    when nothing can be proven (case-insensitive matching, a pattern that does not compile).

    The front door checks these with ``in`` and compiles a pattern only when all of them occur,
    so a finished ``git status`` costs no ``re`` import."""
    import re
    from re import _constants as constants  # type: ignore[attr-defined]
    from re import _parser as parser  # type: ignore[attr-defined]

    try:
        tree = parser.parse(pattern)
    except (re.error, RecursionError, OverflowError, ValueError):
        return []
    if tree.state.flags & constants.SRE_FLAG_IGNORECASE:
        return []
    found: list[str] = []

    def walk(items: object) -> None:
        run: list[str] = []
        for op, argument in items:  # type: ignore[attr-defined]
            if op is constants.LITERAL:
                run.append(chr(argument))
                continue
            if run:
                found.append("".join(run))
                run = []
            if op is constants.SUBPATTERN:
                _group, add_flags, _del_flags, body = argument
                if not add_flags & constants.SRE_FLAG_IGNORECASE:
                    walk(body)
            elif op in (constants.MAX_REPEAT, constants.MIN_REPEAT):
                low, _high, body = argument
                if low >= 1:
                    walk(body)
            # Anything else (alternatives, sets, anchors, look-arounds, optional parts) proves nothing.
        if run:
            found.append("".join(run))

    walk(tree)
    return found


def write_observation_index(digest: str, command_patterns: list[str]) -> None:
    """Remember the contract's observation command patterns (best effort, written atomically),
    each with the literals every match contains (:func:`required_literals`)."""
    import os

    if os.environ.get("STATEWISE_NO_CACHE"):
        return
    _write_json(_index_path(digest), {"digest": digest, "command_patterns": command_patterns,
                                      "needs": [required_literals(pattern) for pattern in command_patterns]})


def _write_json(path: str, data: object) -> None:
    """Write a cache file atomically, best effort: a cache that cannot be written costs time only."""
    import json

    _write_text(path, json.dumps(data))


def _write_text(path: str, text: str) -> None:
    """Write ``text`` to ``path`` atomically (a reader sees the old file or the new one), best
    effort: a cache that cannot be written costs time only."""
    import os

    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        temporary = f"{path}.{os.getpid()}.tmp"
        with open(temporary, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(temporary, path)
    except OSError:
        pass


def could_observe(command: str, digest: str | None) -> bool:
    """False only when the cached index proves no observation rule matches ``command``."""
    if digest is None or environ("STATEWISE_NO_CACHE"):
        return True
    try:
        index = loads(read_text(_index_path(digest)))
        if not isinstance(index, dict) or index.get("digest") != digest:
            return True
        patterns, needs = index["command_patterns"], index.get("needs")
        text = command.strip()
        if isinstance(needs, list) and len(needs) == len(patterns):
            patterns = [pattern for pattern, literals in zip(patterns, needs, strict=True)
                        if all(literal in text for literal in literals)]
        if not patterns:
            return False
        import re

        return any(re.search(pattern, text) for pattern in patterns)
    except Exception:  # noqa: BLE001 - an unreadable index proves nothing: let the full path decide
        return True


# --- the session note: what SessionStart said, while nothing it depends on changed ----------

#: How long a note may be reused at most when it does not say itself how long it holds: the
#: prompt event's quiet note (statewise.integrations.prompt.remember_quiet_prompt), whose
#: answer reflects the live workspace it was checked against, which can change without touching
#: a watched file. A SessionStart note holds until what it was made from changes instead.
SESSION_NOTE_SECONDS = 600

#: The names a folder's listing is watched for (:func:`write_session_note`'s ``listed``): the
#: memory files the clients load and the folders that hold their rules. Any Markdown file counts
#: too, so a rules or topic file added beside one is seen.
_MEMORY_NAMES = frozenset({"CLAUDE.md", "CLAUDE.local.md", "AGENTS.md", "AGENTS.override.md", "GEMINI.md",
                           ".cursorrules", ".claude", ".cursor", "rules", "memory"})


def _stat(path: str) -> list[int] | None:
    import os

    try:
        info = os.stat(path)
    except OSError:
        return None
    return [info.st_mtime_ns, info.st_size]


def _listing(folder: str) -> list[str] | None:
    """The names in ``folder`` that are or may hold a memory file, sorted; None when it cannot
    be listed."""
    import os

    try:
        names = os.listdir(folder)
    except OSError:
        return None
    return sorted(name for name in names if name in _MEMORY_NAMES or name.endswith((".md", ".mdc")))


def _sqlite_uri(path: str) -> str:
    """A read-only SQLite URI for ``path`` (``urllib`` would cost the fast path its import)."""
    escaped = "".join(f"%{ord(c):02X}" if c in "%?#" else c for c in path)
    return f"file:{escaped}?mode=ro"


def records_state(location: str, scopes: list[str] | tuple[str, ...]) -> list[int] | None:
    """What tells whether the records in force in ``scopes`` changed, in the SQLite store at
    ``location``: their number, the newest row and the sum of their versions. Records are
    append-only and every status change or confirmation raises a version, so any change to
    that set changes one of the three (a record enters only as a new row; one that leaves
    lowers the count for good). None when the store cannot be read (a locked or missing file,
    a store of another format): the caller then checks anew."""
    try:
        from _sqlite3 import connect  # the C module: importing sqlite3 costs the fast path datetime
    except ImportError:
        from sqlite3 import connect
    try:
        connection = connect(_sqlite_uri(location), uri=True, timeout=0.2)
    except Exception:  # noqa: BLE001 - unreadable: nothing is proven
        return None
    try:
        marks = ", ".join("?" * len(scopes))
        row = connection.execute(
            "SELECT count(*), coalesce(max(seq), 0), coalesce(sum(version), 0) FROM sw_records "
            f"WHERE status = 'active' AND scope IN ({marks})", tuple(scopes)).fetchone()
        return [int(value) for value in row]
    except Exception:  # noqa: BLE001 - as above
        return None
    finally:
        connection.close()


def _session_note_path(workspace: str, agent: str) -> str:
    """One note per client and workspace: the answer names the client, and watches its settings."""
    import os

    key = sha256_hex(f"{agent}\0{workspace}".encode())[:32]
    return os.path.join(_cache_root(), "session-notes", f"{key}.json")


def _content(path: str) -> str | None:
    try:
        with open(path, "rb") as handle:
            return sha256_hex(handle.read())
    except OSError:
        return None


def write_session_note(workspace: str, agent: str, watched: list[str], stdout: str, digest: str | None,
                       by_content: list[str] | tuple[str, ...] = (), *, listed: list[str] | tuple[str, ...] = (),
                       records: tuple[str, list[str]] | None = None, valid_until: float | None = None,
                       max_age: float | None = SESSION_NOTE_SECONDS) -> None:
    """Remember ``agent``'s answer with the state of everything it depends on: ``watched``
    files by modification time and size; ``by_content``, the client's settings files, by their
    content's hash (Gemini CLI rewrites its user settings file unchanged as every session
    starts); ``listed`` folders by the names in them that may be memory files
    (:func:`_listing`); ``records``, a SQLite store's location and the scopes whose records in
    force the answer read (:func:`records_state`). It is reused until one of them changes,
    until ``valid_until`` (seconds since the epoch: when a record it read goes stale), and for
    at most ``max_age`` seconds (None: no limit). Best effort, written atomically."""
    import os

    if os.environ.get("STATEWISE_NO_CACHE"):
        return
    note: dict[str, object] = {
        "workspace": workspace, "digest": digest, "created": time.time(), "stdout": stdout,
        "watched": {name: _stat(name) for name in sorted(set(watched))},
        "contents": {name: _content(name) for name in sorted(set(by_content))},
        "listed": {name: _listing(name) for name in sorted(set(listed))},
        "valid_until": valid_until, "max_age": max_age}
    if records is not None:
        location, scopes = records
        files = _store_files(location)
        state = records_state(location, scopes)
        if state is None:
            return  # a note whose records cannot be read again would never be reused
        note["records"] = {"location": location, "scopes": list(scopes), "state": state, "files": files}
    _write_json(_session_note_path(workspace, agent), note)


def _store_files(location: str) -> list[list[int] | None]:
    """The state of a SQLite store's files (the database and its write-ahead log): unchanged,
    no transaction was written since, so no record changed. An empty log holds no transaction
    and counts as none (a read-only reader leaves one behind): a write grows it, and the
    checkpoint that empties it writes the database."""
    log = _stat(f"{location}-wal")
    return [_stat(location), log if log is not None and log[1] > 0 else None]


def _records_unchanged(note_path: str, records: dict[str, object]) -> bool:
    """Whether the records in force in the note's scopes are as the note found them. The store's
    files are looked at first; only when something was written since is the store read
    (:func:`records_state`), and a read that finds the records as they were is remembered
    beside the note with the files' state, so the next session start looks at the files only."""
    location, scopes, state = records["location"], records["scopes"], records["state"]
    if not isinstance(location, str) or not isinstance(scopes, list):
        return False
    files = _store_files(location)
    if files == records.get("files"):
        return True
    seen = f"{note_path}.seen"
    mark = repr([state, files])  # the records' state, and the files in which it was found
    try:
        if read_text(seen) == mark:
            return True
    except OSError:
        pass
    if records_state(location, scopes) != state:
        return False
    _write_text(seen, mark)  # best effort: unwritten, the next session start reads the store again
    return True


def session_note(workspace: str, agent: str, contract_path: str | None) -> str | None:
    """The remembered answer, if nothing it depends on changed (:func:`write_session_note`)."""
    import os

    if os.environ.get("STATEWISE_NO_CACHE"):
        return None
    try:
        note = loads(read_text(_session_note_path(workspace, agent)))
        if not isinstance(note, dict):
            return None
        if note.get("workspace") != workspace or note.get("digest") != contract_digest(contract_path):
            return None
        now = time.time()
        max_age = note.get("max_age", SESSION_NOTE_SECONDS)
        if max_age is not None and not 0 <= now - float(note["created"]) <= float(max_age):
            return None
        valid_until = note.get("valid_until")
        if valid_until is not None and now >= float(valid_until):
            return None
        if any(_stat(name) != state for name, state in note["watched"].items()):
            return None
        if any(_listing(name) != names for name, names in note.get("listed", {}).items()):
            return None
        if any(_content(name) != digest for name, digest in note.get("contents", {}).items()):
            return None
        records = note.get("records")
        if records is not None and not _records_unchanged(_session_note_path(workspace, agent), records):
            return None
        stdout = note["stdout"]
        return stdout if isinstance(stdout, str) else None
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return None


def runtime_directory() -> str:
    """Where the warm worker's socket, lock and status live (:mod:`statewise.integrations.warm`):
    ``$STATEWISE_RUNTIME_DIR``, else ``$XDG_RUNTIME_DIR/statewise`` (when that folder is private),
    else ``/tmp/statewise-<uid>``. Here, below both, because the guard's self-protection
    (:mod:`statewise.integrations.protect`) protects it too."""
    import os

    explicit = os.environ.get("STATEWISE_RUNTIME_DIR")
    if explicit:
        return explicit
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and private_directory(runtime):
        return os.path.join(runtime, "statewise")
    return f"/tmp/statewise-{os.getuid()}"


def private_directory(directory: str) -> bool:
    """A real directory (not a link) of this user that no one else may enter or list."""
    import os

    try:
        info = os.lstat(directory)
    except OSError:
        return False
    return (info.st_mode & 0o170000) == 0o040000 and info.st_uid == os.getuid() and info.st_mode & 0o077 == 0
