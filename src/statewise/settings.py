"""Project settings: ``.statewise/config.toml``, and how a flag, the environment, that file and
the default combine.

Precedence, for every setting: **flag > environment > config.toml > default**. The file lives
in the project's ``.statewise/`` folder (the git root's; outside git, the nearest directory
above holding ``.statewise/``) and is read with :mod:`tomllib`::

    # .statewise/config.toml
    contract = "contracts/team.yaml"      # relative paths are relative to the project root
    store = ".statewise/store.db"         # or a postgresql:// URL
    on-pass = "defer"                     # the hook, when every check passes: defer or allow
    memory-write-back = "ask"             # memory check --apply: never, ask or auto

An unknown key or a value of the wrong kind is an error naming the file and the key, never a
guess. :func:`hook_settings` is what the agent hooks call to pick up the same file.
"""

# No `from __future__ import annotations`: the named tuples below get real types, because
# types given as text are compiled when the class is made, and a process's first compile()
# sets up Python's AST types, about a quarter of `python -c pass` (docs/performance-cli.md).
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Literal, NamedTuple

from statewise.errors import InputError
from statewise.limits import MAX_SETTINGS_BYTES, read_capped

__all__ = [
    "CONFIG_DIR",
    "CONFIG_FILE",
    "ENVIRONMENT",
    "WEAKENING",
    "ProjectConfig",
    "Setting",
    "Settings",
    "StoreNotFoundError",
    "approvals_path",
    "approve_config",
    "config_approved",
    "hook_settings",
    "missing_store_error",
    "project_root",
    "read_config",
    "resolve_settings",
    "suggest",
]

CONFIG_DIR = ".statewise"
CONFIG_FILE = "config.toml"

#: The environment variable of each setting that has one.
ENVIRONMENT = {"store": "STATEWISE_STORE", "contract": "STATEWISE_CONTRACT", "on_pass": "STATEWISE_ON_PASS",
               "memory_write_back": "STATEWISE_MEMORY_WRITE_BACK"}

#: The built-in value of each setting (None: the store's own default location, the built-in contract).
DEFAULTS: dict[str, str | None] = {"store": None, "contract": None, "on_pass": "defer", "memory_write_back": "ask"}

_CHOICES = {"on_pass": ("defer", "allow"), "memory_write_back": ("never", "ask", "auto")}


class StoreNotFoundError(InputError):
    """A command that only reads was pointed at a store that does not exist."""


class ProjectConfig(NamedTuple):
    """The contents of ``.statewise/config.toml`` (every key optional).

    This module's records are named tuples, immutable as frozen dataclasses and a fraction of
    their cost to define: every command resolves its settings (docs/performance-cli.md)."""

    contract: str | None = None
    store: str | None = None
    on_pass: Literal["defer", "allow"] | None = None
    memory_write_back: Literal["never", "ask", "auto"] | None = None


#: The file's spelling of each ProjectConfig field.
_FILE_NAMES = {"contract": "contract", "store": "store", "on-pass": "on_pass", "memory-write-back": "memory_write_back"}


def _plain_config(document: dict[str, object]) -> ProjectConfig | None:
    """The config when every setting is a known name with a string value among its choices
    (what the checking model accepts, and all a valid file holds); else None, and the
    model checks it (for its message). The model imports pydantic, which would cost every
    command in a project with settings many times its start-up."""
    values: dict[str, str] = {}
    for name, value in document.items():
        field = _FILE_NAMES.get(name)
        if field is None or type(value) is not str or value not in _CHOICES.get(field, (value,)):
            return None
        values[field] = value
    return ProjectConfig(**values)  # type: ignore[arg-type]


def _checked_config(document: dict[str, object], path: Path) -> ProjectConfig:
    """The config as the pydantic model validates it: the refusal of a malformed file."""
    from pydantic import BaseModel, ConfigDict, Field, ValidationError

    class ConfigFile(BaseModel):
        model_config = ConfigDict(frozen=True, extra="forbid")

        contract: str | None = None
        store: str | None = None
        on_pass: Literal["defer", "allow"] | None = Field(default=None, alias="on-pass")
        memory_write_back: Literal["never", "ask", "auto"] | None = Field(default=None, alias="memory-write-back")

    try:
        checked = ConfigFile.model_validate(document)
    except ValidationError as error:
        first = error.errors()[0]
        field = ".".join(str(part) for part in first["loc"])
        if first["type"] == "extra_forbidden":
            known = ["contract", "store", "on-pass", "memory-write-back"]
            hint = suggest(field, known)
            raise InputError(f"{path}: unknown setting {field!r}" + (f" (did you mean {hint!r}?)" if hint else "")
                             + f"; settings are {', '.join(known)}") from None
        raise InputError(f"{path}: {field}: {first['msg']}") from None
    return ProjectConfig(checked.contract, checked.store, checked.on_pass, checked.memory_write_back)


class Setting(NamedTuple):
    """One resolved setting and where it came from (``flag``, ``$NAME``, the file, ``default``)."""

    value: str | None
    source: str


class Settings(NamedTuple):
    """Every setting resolved for one project."""

    root: Path
    config_path: Path | None
    store: Setting
    contract: Setting
    on_pass: Setting
    memory_write_back: Setting
    #: Why a setting of the project file was not used (a weakening one the developer has not
    #: approved, :func:`hook_settings`); shown in the session note and by doctor.
    warnings: tuple[str, ...] = ()

    def describe(self) -> list[str]:
        """One line per setting, ``name = value (source)``, for ``-v``."""
        lines = [f"project: {self.root}" + (f" (settings from {self.config_path})" if self.config_path else "")]
        for name in ("store", "contract", "on_pass", "memory_write_back"):
            setting: Setting = getattr(self, name)
            shown = setting.value if setting.value is not None else "(built-in)"
            lines.append(f"{name.replace('_', '-')}: {shown} ({setting.source})")
        return lines


def project_root(start: str | Path | None = None) -> Path:
    """The project holding ``start``: the git worktree's root; outside git, the nearest
    directory above holding ``.statewise/``; else ``start`` itself."""
    from statewise.workspace import find_repository_root

    base = Path(start or os.getcwd())
    top = find_repository_root(base)
    if top is not None:
        return top
    resolved = base.resolve()
    for directory in (resolved, *resolved.parents):
        if (directory / CONFIG_DIR).is_dir():
            return directory
    return resolved


def read_config(root: str | Path) -> tuple[ProjectConfig, Path | None]:
    """The project's config.toml and its path; an empty config (and None) when there is none."""
    path = Path(root) / CONFIG_DIR / CONFIG_FILE
    try:
        text = read_capped(path, MAX_SETTINGS_BYTES, "project settings").decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(f"{path}: not UTF-8 text ({error.reason} at byte {error.start})") from None
    except FileNotFoundError:
        return ProjectConfig(), None
    except OSError as error:
        raise InputError(f"{path}: cannot read the project settings: {error.strerror or error}") from None
    import tomllib  # only a project with a config.toml pays its import (its patterns: 44M instructions)

    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise InputError(f"{path}: not TOML: {error}") from None
    return _plain_config(document) or _checked_config(document, path), path


def suggest(word: str, candidates: list[str] | tuple[str, ...]) -> str | None:
    """The candidate closest to ``word`` (difflib), or None when nothing is close."""
    import difflib  # only a misspelt setting needs it

    found = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return found[0] if found else None


def _is_url(location: str) -> bool:
    scheme, sep, _ = location.partition("://")
    return bool(sep) and scheme.isidentifier()


def _relative_to(root: Path, value: str | None, *, url_ok: bool) -> str | None:
    if value is None or (url_ok and _is_url(value)):
        return value
    path = Path(value).expanduser()
    return str(path if path.is_absolute() else root / path)


def resolve_settings(project: str | Path | None = None, *, store: str | None = None, contract: str | None = None,
                     on_pass: str | None = None, memory_write_back: str | None = None,
                     environ: Mapping[str, str] | None = None, ignore_file: tuple[str, ...] = ()) -> Settings:
    """Resolve every setting for the project holding ``project`` (default: here).

    The keyword arguments are the flags (None: not given). Empty environment variables count
    as unset. A value from config.toml that is a relative path is taken from the project root.
    """
    env = os.environ if environ is None else environ
    root = project_root(project)
    config, config_path = read_config(root)
    flags = {"store": store, "contract": contract, "on_pass": on_pass, "memory_write_back": memory_write_back}
    from_file = {"store": _relative_to(root, config.store, url_ok=True),
                 "contract": _relative_to(root, config.contract, url_ok=False),
                 "on_pass": config.on_pass, "memory_write_back": config.memory_write_back}
    resolved: dict[str, Setting] = {}
    for name in ignore_file:
        from_file[name] = None
    for name, flag in flags.items():
        variable = ENVIRONMENT[name]
        if flag is not None:
            setting = Setting(flag, "flag")
        elif env.get(variable):
            setting = Setting(env[variable], f"${variable}")
        elif from_file[name] is not None:
            setting = Setting(from_file[name], str(config_path))
        else:
            setting = Setting(DEFAULTS[name], "default")
        choices = _CHOICES.get(name)
        if choices and setting.value not in choices:
            raise InputError(f"{name.replace('_', '-')} from {setting.source} must be one of "
                             f"{', '.join(choices)}, not {setting.value!r}")
        resolved[name] = setting
    return Settings(root=root, config_path=config_path, store=resolved["store"], contract=resolved["contract"],
                    on_pass=resolved["on_pass"], memory_write_back=resolved["memory_write_back"])


#: Settings of a project file that weaken the guard, and the value that does: `on-pass = "allow"`
#: skips the client's own permission prompt, another `store` holds other records (an empty one
#: holds no protection). The hook honours them from a project file only while its content is the
#: one the developer approved (:func:`approve_config`), issue 25.
WEAKENING = {"on_pass": "allow", "store": "*"}


def approvals_path() -> Path:
    """Where the developer's approvals of project settings files are kept: in the user's
    ``~/.statewise/``, which the hook never lets the agent write (statewise.protection)."""
    return Path(os.environ.get("HOME") or Path.home()) / CONFIG_DIR / "approved-settings.json"


def _content_hash(path: Path) -> str | None:
    import hashlib

    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _approvals() -> dict[str, str]:
    import json

    try:
        data = json.loads(approvals_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def approve_config(path: str | Path) -> str:
    """Record the developer's approval of the settings file at ``path`` as it is now (its
    content's hash); returns the hash. A later change un-approves it."""
    import json

    resolved = Path(path).resolve()
    digest = _content_hash(resolved)
    if digest is None:
        raise InputError(f"{resolved}: cannot read the settings file to approve")
    approvals = _approvals()
    approvals[str(resolved)] = digest
    target = approvals_path()
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(target.name + f".{os.getpid()}.tmp")
    temporary.write_text(json.dumps(approvals, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    temporary.replace(target)
    return digest


def config_approved(path: str | Path) -> bool:
    """Whether the settings file at ``path`` is, byte for byte, the one the developer approved."""
    resolved = Path(path).resolve()
    digest = _content_hash(resolved)
    return digest is not None and _approvals().get(str(resolved)) == digest


def hook_settings(workspace: str | Path, *, store: str | None = None, contract: str | None = None,
                  on_pass: str | None = None) -> Settings:
    """The settings an agent hook uses for a call in ``workspace``: the wrapper's own flags
    first, then the environment, then the project's config.toml, then the defaults.

    ``statewise.integrations.hooks.run_hook`` calls this with the ``--store``, ``--contract``
    and ``--on-pass`` the wrapper was given (None for those it was not), so a project's
    ``config.toml`` reaches the hook without reinstalling it. Raises InputError for a
    malformed config.toml, which the hook turns into a deny (fail closed).

    A weakening setting (:data:`WEAKENING`) taken from the project file is honoured only while
    the file is the one the developer approved (``statewise config approve``); otherwise the
    setting falls back to the environment or the default, and ``warnings`` says so. The file
    can change without the hook seeing it (a checkout, a clone of someone else's project).
    """
    settings = resolve_settings(workspace, store=store, contract=contract, on_pass=on_pass)
    path = settings.config_path
    if path is None:
        return settings
    weakened = [name for name, value in WEAKENING.items()
                if getattr(settings, name).source == str(path) and value in ("*", getattr(settings, name).value)]
    if not weakened or config_approved(path):
        return settings
    fallback = resolve_settings(workspace, store=store, contract=contract, on_pass=on_pass,
                                ignore_file=tuple(weakened))
    names = ", ".join(f"{name.replace('_', '-')} = {getattr(settings, name).value}" for name in weakened)
    warning = (f"StateWise ignores {names} in {path}: a setting that weakens the guard is used only from a "
               f"settings file the developer approved (run `statewise config approve` outside the agent); "
               f"this one is new or changed since.")
    return fallback._replace(warnings=(warning,))


def missing_store_error(location: str, source: str) -> StoreNotFoundError:
    """The error for a store file that does not exist, with a did-you-mean when a similar
    store file (or folder holding one) is nearby."""
    path = Path(location)
    hint: Path | None = None
    parent = path.parent
    try:
        if parent.is_dir():
            names = [p.name for p in parent.iterdir() if p.is_file()]
            close = suggest(path.name, names)
            if close:
                hint = parent / close
        elif parent.parent.is_dir():
            folders = [p.name for p in parent.parent.iterdir() if p.is_dir() and (p / path.name).is_file()]
            close = suggest(parent.name, folders)
            if close:
                hint = parent.parent / close / path.name
    except OSError:
        hint = None
    given = "" if source in ("flag", "default") else f" (from {source})"
    message = f"no store at {location}{given}"
    if hint is not None:
        message += f"; did you mean --store {hint}?"
    else:
        message += "; create one with `statewise init`" + (", or pass --store" if source == "default" else "")
    return StoreNotFoundError(message)
