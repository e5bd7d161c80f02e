"""The compiled contract cache: a validated document pickled under the user's cache directory."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import pickle
import sys
from pathlib import Path

from statewise.contract.invariants import TEXT_ANALYSIS, analysis
from statewise.contract.spec import ContractDocument
from statewise.limits import MAX_CONTRACT_BYTES

# Parsing and validating the built-in contract costs a hook process hundreds of milliseconds
# on every call. A validated document is pickled under the user's cache directory, keyed by
# the SHA-256 of the contract text together with the StateWise, pydantic and Python versions
# and the hash of the code that validated and pickled it (code_files).
# An entry is used only when its header names that key and its payload's own SHA-256 checks
# out; anything else (missing, truncated, corrupt, another version, unreadable) is ignored
# and the text is parsed as if there were no cache. Entries are written atomically (a
# temporary file renamed into place) and only after the whole contract loaded.

_CACHE_MAGIC = b"statewise-contract-cache 2\n"
_CACHE_ENV_DIR = "STATEWISE_CACHE_DIR"
_CACHE_ENV_OFF = "STATEWISE_NO_CACHE"


def cache_directory() -> Path | None:
    """Where compiled contracts are cached, or None when caching is off.

    ``STATEWISE_NO_CACHE=1`` turns it off; ``STATEWISE_CACHE_DIR`` sets the directory;
    otherwise ``$XDG_CACHE_HOME/statewise`` or ``~/.cache/statewise``. Entries live in its
    ``contracts/`` subdirectory.
    """
    if os.environ.get(_CACHE_ENV_OFF, "").strip().lower() not in ("", "0", "false", "no"):
        return None
    explicit = os.environ.get(_CACHE_ENV_DIR)
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):
        return Path(xdg) / "statewise"
    try:
        return Path.home() / ".cache" / "statewise"
    except (RuntimeError, KeyError):
        return None


#: Modules outside this package whose code decides what a cached document holds: the enums it
#: pickles (values, records, scopes), the key-name checks its validators ran (records) and the
#: expression analysis stored beside it (expressions).
_DEPENDENCIES = ("expressions.py", "records.py", "scopes.py", "values.py")


def code_files() -> list[Path]:
    """The source files whose hash is part of every cache key: every module of this package
    (whatever its name, so a module added later is covered too) and :data:`_DEPENDENCIES`."""
    package = Path(__file__).parent
    return sorted(package.glob("*.py")) + [package.parent / name for name in _DEPENDENCIES]


@functools.cache
def _code_identity() -> str:
    """The hash of :func:`code_files`: a pickled document is only valid for the models that
    pickled it, and a development checkout changes them without changing ``__version__``."""
    digest = hashlib.sha256()
    try:
        for path in code_files():
            digest.update(f"{path.parent.name}/{path.name}".encode() + b"\0" + path.read_bytes() + b"\0")
    except OSError:
        return "unknown"
    return digest.hexdigest()


def cache_key(text: str) -> str:
    """The key of ``text``'s entry: the text with the cache format, StateWise's version and
    code, pydantic's version and the interpreter's."""
    import pydantic  # noqa: PLC0415

    from statewise import __version__  # noqa: PLC0415 - the package is imported already

    digest = hashlib.sha256()
    for part in (_CACHE_MAGIC.decode().strip(), __version__, _code_identity(), pydantic.VERSION, sys.version,
                 sys.implementation.cache_tag or ""):
        digest.update(part.encode() + b"\0")
    digest.update(text.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def _cache_path(key: str) -> Path | None:
    folder = cache_directory()
    return None if folder is None else folder / "contracts" / f"{key}.pickle"


def cache_read(key: str) -> ContractDocument | None:
    """The cached document for ``key``, or None (never an exception, never another document)."""
    path = _cache_path(key)
    if path is None:
        return None
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_CONTRACT_BYTES * 8)
        header_end = len(_CACHE_MAGIC) + 2 * 65
        if not data.startswith(_CACHE_MAGIC) or len(data) <= header_end:
            return None
        stored_key = data[len(_CACHE_MAGIC) : len(_CACHE_MAGIC) + 64].decode("ascii")
        payload_digest = data[len(_CACHE_MAGIC) + 65 : len(_CACHE_MAGIC) + 129].decode("ascii")
        payload = data[header_end:]
        if stored_key != key or hashlib.sha256(payload).hexdigest() != payload_digest:
            return None
        entry_key, document, analyses = pickle.loads(payload)  # noqa: S301 - our own file, digest checked
        if entry_key != key or type(document) is not ContractDocument or type(analyses) is not dict:
            return None
        for text, found in analyses.items():
            TEXT_ANALYSIS.setdefault(text, found)
        return document
    except Exception:  # noqa: BLE001 - any failure means: parse the text instead
        return None


def cache_write(key: str, document: ContractDocument) -> None:
    """Store ``document`` for ``key`` atomically; failures are ignored (the cache is optional)."""
    path = _cache_path(key)
    if path is None:
        return
    temporary = None
    try:
        analyses = {text: analysis(text) for text in expression_texts(document)}
        payload = pickle.dumps((key, document, analyses), protocol=pickle.HIGHEST_PROTOCOL)
        header = _CACHE_MAGIC + key.encode() + b"\n" + hashlib.sha256(payload).hexdigest().encode() + b"\n"
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        import tempfile  # noqa: PLC0415 - only a process that writes the cache needs it

        descriptor, temporary = tempfile.mkstemp(prefix=".tmp-", suffix=".pickle", dir=path.parent)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(header + payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
        temporary = None
    except Exception:  # noqa: BLE001 - a read-only or full disk only costs the next process time
        pass
    finally:
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)


def expression_texts(document: ContractDocument) -> frozenset[str]:
    """The CEL texts of ``document``'s invariants (their analysis is stored with the entry)."""
    return frozenset(text for inv in document.invariants for text in (inv.when, inv.check))
