"""What the guard protects without any record: itself, and secrets (issue 25).

The contract's path invariants protect what a developer listed (``fs.protected_paths``); a list
can be absent, and the agent could once write the very files that decide what is checked. What
is here holds whatever the store and the settings say:

- **StateWise and the hooks that run it** (:data:`SELF_PROTECTED`): the project's and the user's
  StateWise settings, the store (SQLite with its ``-wal``, ``-shm`` and ``-journal`` files), the
  installed wrapper, the clients' settings files that hold its hooks, git's hooks
  (``.git/hooks/``, any ``core.hooksPath``) and the git config files that can point elsewhere.
  Writes, deletes and moves by the agent are denied, whatever tool does them; reading them is
  fine.
- **Secrets** (:data:`SECRET_NAMES`, :data:`SECRET_HOME_FILES`): ``.env`` files, private keys and
  cloud credential files. By default writes and deletes are denied and reads asked; a contract's
  ``secrets:`` section changes the effects (:class:`SecretRules`).

This module is data and pure path logic (standard library only): the hook gathers where things
are for the call (:class:`Places`) and asks :func:`check_path` about each path an action writes,
deletes or reads. Every finding names the target and why it is protected.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

__all__ = [
    "AGENT_MARKERS",
    "CHANGING_COMMANDS",
    "SECRET_HOME_FILES",
    "SECRET_NAMES",
    "SELF_PROTECTED",
    "Finding",
    "Places",
    "ProtectedFile",
    "SecretRules",
    "Use",
    "agent_running",
    "check_path",
    "is_secret_name",
    "self_targets",
]

Effect = Literal["allow", "ask", "deny"]
Use = Literal["write", "delete", "read"]


@dataclass(frozen=True, slots=True)
class ProtectedFile:
    """One protected target: a path relative to an anchor (``repo``: the repository's top;
    ``home``: the user's home; ``git``: the repository's git directory; ``config``: the user's
    configuration directory, ``$XDG_CONFIG_HOME`` or ``~/.config``), a glob over that path, and
    why it is protected. A target ending in ``/`` is a directory and everything in it."""

    anchor: Literal["repo", "home", "git", "config"]
    path: str
    why: str


_SETTINGS_WHY = "holds StateWise's hook for {client}: without it, {client}'s tool calls run unchecked"
_STATEWISE_WHY = ("StateWise's {what}: the agent the guard checks must not change what checks it "
                  "(the developer changes it outside the agent)")

#: What StateWise needs to keep guarding, and the files that can switch it off or route around it.
SELF_PROTECTED: tuple[ProtectedFile, ...] = (
    ProtectedFile("repo", ".statewise/config.toml", _STATEWISE_WHY.format(what="project settings")),
    ProtectedFile("repo", ".statewise/store.db*", _STATEWISE_WHY.format(what="store (the developer's records)")),
    ProtectedFile("repo", ".statewise/bin/", _STATEWISE_WHY.format(what="hook wrapper, which the clients run")),
    ProtectedFile("repo", ".statewise/protected", _STATEWISE_WHY.format(what="list of the project's protected paths")),
    ProtectedFile("repo", ".claude/settings.json", _SETTINGS_WHY.format(client="Claude Code")),
    ProtectedFile("repo", ".claude/settings.local.json", _SETTINGS_WHY.format(client="Claude Code")),
    ProtectedFile("repo", ".codex/hooks.json", _SETTINGS_WHY.format(client="Codex")),
    ProtectedFile("repo", ".codex/config.toml", _SETTINGS_WHY.format(client="Codex")),
    ProtectedFile("repo", ".gemini/settings.json", _SETTINGS_WHY.format(client="Gemini CLI")),
    ProtectedFile("git", "hooks/", "git runs the scripts in it on checkout, commit, merge and push, "
                                   "where StateWise never sees them"),
    ProtectedFile("git", "config", "git's repository settings can run commands (core.hooksPath, aliases, "
                                   "core.fsmonitor) or send pushes elsewhere (remote URLs)"),
    ProtectedFile("git", "config.worktree", "git's worktree settings can run commands (core.hooksPath)"),
    ProtectedFile("home", ".statewise/", _STATEWISE_WHY.format(what="user settings and user-level hook wrapper")),
    ProtectedFile("config", "statewise/", _STATEWISE_WHY.format(what="user settings")),
    ProtectedFile("home", ".claude/settings.json", _SETTINGS_WHY.format(client="Claude Code")),
    ProtectedFile("home", ".claude/settings.local.json", _SETTINGS_WHY.format(client="Claude Code")),
    ProtectedFile("home", ".codex/hooks.json", _SETTINGS_WHY.format(client="Codex")),
    ProtectedFile("home", ".codex/config.toml", _SETTINGS_WHY.format(client="Codex")),
    ProtectedFile("home", ".gemini/settings.json", _SETTINGS_WHY.format(client="Gemini CLI")),
    ProtectedFile("home", ".gitconfig", "git's user settings can run commands (core.hooksPath, aliases)"),
    ProtectedFile("config", "git/config", "git's user settings can run commands (core.hooksPath, aliases)"),
)

#: File names that are secrets wherever they are (globs on the name). ``.env.example``,
#: ``.env.sample`` and ``.env.template`` (and ``.env.<x>.example``) are exempt: they are the
#: committed templates without values, which agents are expected to read and keep in step.
SECRET_NAMES: tuple[str, ...] = (
    ".env", ".env.*", "*.env",
    "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_ecdsa_sk", "id_ed25519_sk",
    "*.pem", "*.key", "*.p12", "*.pfx",
    ".pypirc", ".netrc", ".git-credentials",
)
#: Names that look like secrets but are templates or public halves.
SECRET_EXEMPT: tuple[str, ...] = ("*.example", "*.sample", "*.template", "*.pub")

#: Credential files in the user's home (paths relative to it; a trailing ``/``: the directory).
#: ``~/.npmrc`` is here; a project's ``.npmrc`` is a secret only when it holds a token
#: (:func:`_npmrc_holds_token`), since most only name a registry.
SECRET_HOME_FILES: tuple[str, ...] = (
    ".aws/credentials", ".aws/config", ".config/gcloud/", ".azure/", ".kube/config", ".docker/config.json",
    ".npmrc", ".ssh/",
)
_SECRET_HOME_KEEP = (".ssh/known_hosts", ".ssh/*.pub", ".ssh/authorized_keys")

_SECRET_WHY = ("a secret ({what}): writing or deleting it loses credentials no commit can restore, and "
               "reading it shows them to the model")


@dataclass(frozen=True, slots=True)
class SecretRules:
    """What happens to each use of a secret (from the contract's ``secrets:`` section), and the
    names a project adds or exempts."""

    read: Effect = "ask"
    write: Effect = "deny"
    delete: Effect = "deny"
    names: tuple[str, ...] = ()
    exempt: tuple[str, ...] = ()

    def effect(self, use: Use) -> Effect:
        """The effect of ``use`` on a secret."""
        return {"read": self.read, "write": self.write, "delete": self.delete}[use]


@dataclass(frozen=True, slots=True)
class Places:
    """Where the protected targets are for one call: the repository's top, its git directories
    (its own and the common one of a linked worktree), ``core.hooksPath``'s target, the user's
    home and configuration directory, and StateWise files the settings in effect name (a store
    or contract outside ``.statewise/``)."""

    home: Path
    config_home: Path
    repo_root: Path | None = None
    git_dirs: tuple[Path, ...] = ()
    hooks_path: Path | None = None
    extra: tuple[tuple[Path, str], ...] = ()
    secrets: SecretRules = field(default_factory=SecretRules)


@dataclass(frozen=True, slots=True)
class Finding:
    """A use of a protected target: what, why, and the effect (ask or deny)."""

    path: Path
    target: Path
    why: str
    effect: Effect
    use: Use
    secret: bool
    said: str = ""  # the whole sentence, for a finding that is not about one file
    verb: str = ""  # what the call does to it, when not plainly its use ("stashes away")

    def reason(self) -> str:
        """The sentence the agent (and the developer, in a question) reads."""
        if self.said:
            return self.said
        verb = self.verb or {"write": "writes", "delete": "deletes", "read": "reads"}[self.use]
        where = str(self.path) if self.path == self.target else f"{self.path} (it holds {self.target})"
        return f"this call {verb} {where}, which is {self.why}" if self.secret else \
            f"this call {verb} {where}, which StateWise protects: it {self.why}" if self.why.startswith("holds") \
            else f"this call {verb} {where}, which StateWise protects: {self.why}"


#: What each client sets in its tool subprocesses' environment (Claude Code: CLAUDECODE=1 since
#: 0.2.47, anthropics/claude-code#531; Codex: CODEX_THREAD_ID in every shell it spawns, and
#: CODEX_SANDBOX when sandboxed; Gemini CLI: GEMINI_CLI=1 in its shell tool). A StateWise command
#: run with one of them set is run by the agent.
AGENT_MARKERS: tuple[tuple[str, str], ...] = (
    ("CLAUDECODE", "Claude Code"), ("CODEX_THREAD_ID", "Codex"), ("CODEX_SANDBOX", "Codex"),
    ("GEMINI_CLI", "Gemini CLI"),
)


def agent_running(environ: Mapping[str, str]) -> str | None:
    """The client whose agent runs this process (from :data:`AGENT_MARKERS`), else None."""
    for variable, client in AGENT_MARKERS:
        if environ.get(variable):
            return client
    return None


#: StateWise commands that change records, settings or the installation: asked when the agent
#: runs them (the hook), and a record the agent writes carries its authority (the CLI).
CHANGING_COMMANDS: dict[str, str] = {
    "record add": "adds or replaces a record (the developer's protected paths, branches, settings)",
    "record retract": "withdraws a record",
    "record revert": "undoes a repair, restoring the value it replaced",
    "record import": "imports records, with the provenance the file claims",
    "memory import": "imports records from the memory files",
    "install": "rewrites the hooks in a client's settings",
    "uninstall": "removes StateWise's hooks, after which tool calls run unchecked",
    "init": "creates or migrates the store",
    "config approve": "approves the project's settings file, weakening settings included",
}


def _clean(path: Path) -> Path:
    """``path`` absolute, with ``..`` folded and symlinks resolved as far as they exist."""
    try:
        return Path(os.path.realpath(path))
    except (OSError, ValueError):
        return Path(os.path.normpath(path))


def _within(path: Path, directory: Path) -> bool:
    return path == directory or directory in path.parents


def is_secret_name(name: str, rules: SecretRules | None = None) -> bool:
    """Whether a file called ``name`` is a secret wherever it is."""
    rules = rules or SecretRules()
    if any(fnmatch.fnmatchcase(name, pattern) for pattern in (*SECRET_EXEMPT, *rules.exempt)):
        return False
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in (*SECRET_NAMES, *rules.names))


def _npmrc_holds_token(path: Path) -> bool:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read(65536)
    except OSError:
        return False
    return any(marker in text for marker in ("_authToken", "_auth=", "_auth =", "_password"))


def self_targets(places: Places) -> Iterable[tuple[Path, bool, str]]:
    """Each self-protected target as (absolute path or glob, is a directory, why)."""
    anchors = {"home": places.home, "config": places.config_home, "repo": places.repo_root}
    for item in SELF_PROTECTED:
        directory = item.path.endswith("/")
        relative = item.path.rstrip("/")
        if item.anchor == "git":
            for git_dir in places.git_dirs:
                yield git_dir / relative, directory, item.why
            continue
        base = anchors[item.anchor]
        if base is not None:
            yield base / relative, directory, item.why
    if places.hooks_path is not None:
        yield places.hooks_path, True, ("git's hooks directory (core.hooksPath): git runs the scripts in it "
                                        "where StateWise never sees them")
    for path, why in places.extra:
        yield path, False, why


def _matches(path: Path, target: Path, directory: bool, use: Use) -> Path | None:
    """The protected file ``path`` reaches through ``target`` (a path or glob): ``path`` itself
    when it is the target or inside it; the target when ``path`` is a directory holding it and
    the use deletes (a delete of ``.statewise/`` deletes the store)."""
    if any(ch in str(target) for ch in "*?["):
        if fnmatch.fnmatchcase(str(path), str(target)):
            return path
        if use == "delete" and fnmatch.fnmatchcase(str(target), f"{path}/*"):
            return target
        return None
    if path == target or (directory and target in path.parents):
        return path
    if use == "delete" and path in target.parents:
        return target
    return None


def check_path(path: str | Path, use: Use, places: Places) -> Finding | None:
    """Whether using ``path`` (absolute) touches a protected target, and with what effect.

    Self-protection comes first and is denied for writes and deletes whatever the contract says
    (reads pass); then secrets, by name anywhere, and by place in the home directory, with the
    effects of ``places.secrets``. None: nothing protected here says anything."""
    clean = _clean(Path(path))
    if use != "read":
        for target, directory, why in self_targets(places):
            for candidate in dict.fromkeys((Path(os.path.normpath(target)), _clean(target))):
                reached = _matches(clean, candidate, directory, use)
                if reached is not None:
                    return Finding(clean, reached, why, "deny", use, secret=False)
        nested = _nested_wrapper_place(clean, places)
        if nested is not None:
            return Finding(clean, nested, _NESTED_WRAPPER_WHY, "deny", use, secret=False)
    return _secret(clean, use, places)


_NESTED_WRAPPER_WHY = _STATEWISE_WHY.format(
    what="hook wrapper place: the installed hook command looks for .statewise/bin/statewise-hook from "
         "the folder a session starts in upwards, so one written in a subfolder would run instead of "
         "the real one")


def _nested_wrapper_place(path: Path, places: Places) -> Path | None:
    """The ``.statewise`` folder at any depth of the repository that ``path`` is, or whose
    ``bin/`` holds ``path``: the installed command finds the nearest wrapper walking up from
    the session's folder (Codex's ``$PWD``, a project folder below the top), so a planted
    ``sub/.statewise/bin/statewise-hook`` would be run instead of the real one."""
    if places.repo_root is None:
        return None
    root = _clean(places.repo_root)
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        return None
    for index, part in enumerate(parts):
        if part == ".statewise" and parts[index + 1:index + 2] in ((), ("bin",)):
            return root.joinpath(*parts[:index + 1])
    return None


def _holds_home_secret(path: Path, places: Places) -> bool:
    home = _clean(places.home)
    return any(_within(home / relative.rstrip("/"), path) for relative in SECRET_HOME_FILES)


def _secret(path: Path, use: Use, places: Places) -> Finding | None:
    rules = places.secrets
    effect = rules.effect(use)
    if effect == "allow":
        return None
    if use != "read" and not os.path.lexists(path) and not (use == "delete" and _holds_home_secret(path, places)):
        return None  # a new file (cp .env.example .env) overwrites no credentials; deleting nothing loses none
    if is_secret_name(path.name, rules):
        return Finding(path, path, _SECRET_WHY.format(what=f"a {path.name} file"), effect, use, secret=True)
    if path.name == ".npmrc" and _npmrc_holds_token(path):
        return Finding(path, path, _SECRET_WHY.format(what="an .npmrc holding a registry token"), effect, use,
                       secret=True)
    home = _clean(places.home)
    for relative in SECRET_HOME_FILES:
        target = home / relative.rstrip("/")
        inside = _within(path, target) if relative.endswith("/") else path == target
        if inside and not any(fnmatch.fnmatchcase(str(path), str(home / keep)) for keep in _SECRET_HOME_KEEP):
            return Finding(path, path, _SECRET_WHY.format(what=f"~/{relative.rstrip('/')}"), effect, use,
                           secret=True)
        if use == "delete" and _within(target, path) and target.exists():
            return Finding(path, target, _SECRET_WHY.format(what=f"~/{relative.rstrip('/')}"), effect, use,
                           secret=True)
    return None
