"""Branch protection as the remote enforces it.

Two sources, chosen from the remote's URL:

* **A local path or ``file://`` remote** is read directly. A branch is protected when it
  matches (``fnmatch`` glob, ``*`` also crosses ``/``) a value of the multi-valued git config
  ``statewise.protectedBranch`` of the remote repository *and* the remote has an executable
  ``hooks/pre-receive`` or ``hooks/update`` (honouring ``core.hooksPath``) that reads that
  config, i.e. the shipped hook (``statewise/verifiers/hooks/pre-receive``) or one like it.
  Configuration that no hook enforces protects nothing, and the detail says so. The
  remote's ``receive.denyNonFastForwards`` and ``receive.denyDeletes`` are reported in the
  detail. :func:`install_branch_protection` sets all of this up on a repository.
* **An https or ssh remote on a hosting service** is asked through the GitHub-compatible REST
  API: ``GET {api_url}/repos/{owner}/{repo}/branches/{branch}/protection``. 200 means
  protected; 404 "Branch not protected" (or "Branch not found") means not protected; a bare
  404, 401 or 403 (which GitHub also answers when the token may not read protection
  settings) falls back to ``GET .../branches/{branch}`` and its ``protected`` field; anything
  else is UNAVAILABLE. ``api_url`` comes from the binding's args, else
  ``STATEWISE_GITHUB_API_URL``, else ``https://api.github.com`` for github.com remotes
  (other hosts need one of the first two). ``GITHUB_TOKEN`` is sent when set.
"""

from __future__ import annotations

import fnmatch
import importlib.resources
import ipaddress
import json
import os
import re
import stat
import subprocess
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from statewise.scopes import normalize_repo_identity
from statewise.verifiers.base import (
    Deadline,
    Observation,
    VerifierArgumentError,
    VerifierRequest,
    run_command,
)
from statewise.verifiers.git import GitAdapter, check_branch_name, check_remote_name

__all__ = [
    "BranchProtection",
    "HOOK_MARKER",
    "LocalProtection",
    "ProtectedBranches",
    "hook_source",
    "install_branch_protection",
    "is_local_url",
    "local_path_of",
    "read_local_protection",
]

CONFIG_KEY = "statewise.protectedBranch"
HOOK_MARKER = "statewise-branch-protection"
_HOOK_NAMES = ("pre-receive", "update")
DEFAULT_GITHUB_API = "https://api.github.com"
_GITHUB_HOSTS = frozenset({"github.com", "www.github.com", "ssh.github.com"})
_MAX_BODY = 2 * 1024 * 1024
_MAX_PAGES = 10

_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*)://")


# --- remote URLs ---------------------------------------------------------------------------


def is_local_url(url: str) -> bool:
    """True for a remote on this machine: a path or a ``file://`` URL (git's own rules)."""
    url = url.strip()
    if url.lower().startswith("file://"):
        return True
    if _SCHEME.match(url):
        return False
    # scp-like syntax (host:path) has a colon before the first slash.
    colon, slash = url.find(":"), url.find("/")
    return not (colon > 0 and (slash == -1 or colon < slash))


def local_path_of(url: str, base: Path) -> Path:
    """The filesystem path of a local remote URL; relative paths are relative to ``base``."""
    url = url.strip()
    if url.lower().startswith("file://"):
        parsed = urllib.parse.urlparse(url)
        return Path(urllib.parse.unquote(parsed.path))
    path = Path(os.path.expanduser(url))
    return path if path.is_absolute() else base / path


def _git_dir_of(path: Path) -> Path | None:
    """The git directory of a repository at ``path`` (bare, or with a ``.git``), as git finds it."""
    for candidate in (path, Path(str(path) + ".git")):
        dot_git = candidate / ".git"
        if dot_git.is_dir():
            return dot_git
        if dot_git.is_file():
            try:
                text = dot_git.read_text(encoding="utf-8", errors="replace")
            except OSError:
                return None
            if text.startswith("gitdir:"):
                target = Path(text[len("gitdir:") :].strip())
                return target if target.is_absolute() else candidate / target
        if (candidate / "HEAD").is_file() and (candidate / "objects").is_dir() and (candidate / "refs").is_dir():
            return candidate
    return None


# --- local protection ------------------------------------------------------------------------


def _config_bool(value: str | None) -> bool | None:
    if value is None:
        return None
    lowered = value.strip().lower()
    if lowered in ("true", "yes", "on", "1"):
        return True
    if lowered in ("false", "no", "off", "0", ""):
        return False
    return None


@dataclass(frozen=True)
class LocalProtection:
    """What a local remote repository enforces."""

    git_dir: Path
    patterns: tuple[str, ...]
    hook: Path | None  # the executable hook that enforces statewise.protectedBranch, if any
    hook_note: str  # why no hook enforces it, when hook is None
    deny_non_fast_forwards: bool | None
    deny_deletes: bool | None
    reference: str = ""
    hooks_checked: tuple[str, ...] = field(default=())

    @property
    def enforced(self) -> bool:
        return self.hook is not None

    def enforced_patterns(self) -> list[str]:
        return list(self.patterns) if self.enforced else []

    def matching(self, branch: str) -> list[str]:
        return [pattern for pattern in self.patterns if fnmatch.fnmatchcase(branch, pattern)]

    def settings(self) -> str:
        def show(value: bool | None) -> str:
            return "unset" if value is None else str(value).lower()

        return (
            f"receive.denyNonFastForwards={show(self.deny_non_fast_forwards)}, "
            f"receive.denyDeletes={show(self.deny_deletes)}"
        )

    def enforcement(self) -> str:
        if self.hook is not None:
            return f"enforced by {self.hook}"
        return self.hook_note


def read_local_protection(
    remote_path: Path, *, env: Mapping[str, str], deadline: Deadline
) -> LocalProtection | Observation:
    """Read the protection a repository at ``remote_path`` enforces, or UNAVAILABLE."""
    git_dir = _git_dir_of(remote_path)
    if git_dir is None:
        return Observation.unavailable(f"the remote {remote_path} is not a git repository (or does not exist)")
    result = run_command(
        ["git", f"--git-dir={git_dir}", "config", "--null", "--list"],
        cwd=git_dir,
        timeout=deadline.remaining(),
        env=env,
    )
    if not result.ok:
        return Observation.unavailable(
            f"cannot read the configuration of {git_dir}: {result.describe_failure()}", result.reference
        )
    patterns: list[str] = []
    single: dict[str, str] = {}
    for entry in result.stdout.split("\x00"):
        if not entry:
            continue
        name, _, value = entry.partition("\n")
        name = name.lower()
        if name == CONFIG_KEY.lower():
            if value.strip():
                patterns.append(value.strip())
        else:
            single[name] = value
    hooks_path = single.get("core.hookspath")
    if hooks_path:
        hooks_dir = Path(os.path.expanduser(hooks_path))
        if not hooks_dir.is_absolute():
            hooks_dir = git_dir / hooks_dir  # receive-pack runs hooks in the git directory
    else:
        hooks_dir = git_dir / "hooks"
    hook: Path | None = None
    notes: list[str] = []
    for hook_name in _HOOK_NAMES:
        candidate = hooks_dir / hook_name
        try:
            info = candidate.stat()
        except FileNotFoundError:
            continue
        except OSError as error:
            notes.append(f"{candidate}: {error.strerror or error}")
            continue
        if not stat.S_ISREG(info.st_mode):
            notes.append(f"{candidate} is not a file")
            continue
        if not os.access(candidate, os.X_OK):
            notes.append(f"{candidate} is not executable, so git does not run it")
            continue
        try:
            with open(candidate, "rb") as handle:
                text = handle.read(1024 * 1024).decode("utf-8", errors="replace")
        except OSError as error:
            notes.append(f"{candidate}: {error.strerror or error}")
            continue
        if CONFIG_KEY.lower() not in text.lower():
            notes.append(f"{candidate} does not read {CONFIG_KEY}")
            continue
        hook = candidate
        break
    if hook is None and not notes:
        notes.append(f"no pre-receive or update hook in {hooks_dir}")
    note = "; ".join(notes)
    if hook is None and patterns:
        note = f"{CONFIG_KEY} is set but nothing enforces it ({note})"
    return LocalProtection(
        git_dir=git_dir,
        patterns=tuple(patterns),
        hook=hook,
        hook_note=note,
        deny_non_fast_forwards=_config_bool(single.get("receive.denynonfastforwards")),
        deny_deletes=_config_bool(single.get("receive.denydeletes")),
        reference=result.reference,
    )


# --- the GitHub-compatible REST API ------------------------------------------------------------


@dataclass(frozen=True)
class _Response:
    status: int | None
    body: Any = None
    error: str | None = None
    url: str = ""

    @property
    def message(self) -> str:
        if isinstance(self.body, dict) and isinstance(self.body.get("message"), str):
            return self.body["message"]
        return ""


def _is_loopback(host: str | None) -> bool:
    if not host:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _api_get(url: str, *, token: str | None, timeout: float) -> _Response:
    if timeout <= 0:
        return _Response(None, error="no time left for the request", url=url)
    headers = {
        "Accept": "application/vnd.github+json",
        "X-GitHub-Api-Version": "2022-11-28",
        "User-Agent": "statewise-verifier",
    }
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, headers=headers, method="GET")
    host = urllib.parse.urlparse(url).hostname
    # A loopback API never goes through a proxy from the environment.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({} if _is_loopback(host) else None))
    try:
        with opener.open(request, timeout=timeout) as response:
            status, raw = response.status, response.read(_MAX_BODY + 1)
    except urllib.error.HTTPError as error:
        status, raw = error.code, error.read(_MAX_BODY + 1) if error.fp is not None else b""
    except (urllib.error.URLError, OSError, ValueError) as error:
        reason = getattr(error, "reason", error)
        return _Response(None, error=f"GET {url} failed: {reason}", url=url)
    if len(raw) > _MAX_BODY:
        return _Response(status, error=f"GET {url}: the response is larger than {_MAX_BODY} bytes", url=url)
    try:
        body = json.loads(raw.decode("utf-8")) if raw.strip() else None
    except (UnicodeDecodeError, json.JSONDecodeError):
        body = None
    return _Response(status, body, url=url)


@dataclass(frozen=True)
class _Hosted:
    api_url: str
    owner: str
    repo: str
    token: str | None

    def url(self, path: str, query: Mapping[str, Any] | None = None) -> str:
        owner = urllib.parse.quote(self.owner, safe="")
        repo = urllib.parse.quote(self.repo, safe="")
        text = f"{self.api_url.rstrip('/')}/repos/{owner}/{repo}{path}"
        return text + ("?" + urllib.parse.urlencode(query) if query else "")


def _hosted(request: VerifierRequest, url: str) -> _Hosted:
    identity = normalize_repo_identity(url)
    host, _, path = identity.partition("/")
    parts = [part for part in path.split("/") if part]
    if len(parts) != 2:
        raise VerifierArgumentError(f"cannot tell owner/repository from remote URL {url!r}")
    given = request.args.get("api_url") or request.env.get("STATEWISE_GITHUB_API_URL")
    if given:
        api_url = str(given)
    elif host.lower() in _GITHUB_HOSTS:
        api_url = DEFAULT_GITHUB_API
    else:
        raise VerifierArgumentError(
            f"no protection API is known for host {host}; give api_url in the binding or set STATEWISE_GITHUB_API_URL"
        )
    if not api_url.lower().startswith(("http://", "https://")):
        raise VerifierArgumentError(f"api_url must be an http(s) URL, not {api_url!r}")
    return _Hosted(api_url=api_url, owner=parts[0], repo=parts[1], token=request.env.get("GITHUB_TOKEN") or None)


def _hosted_protection(hosted: _Hosted, branch: str, deadline: Deadline) -> Observation:
    quoted = urllib.parse.quote(branch, safe="")
    where = f"{hosted.owner}/{hosted.repo}"
    first = _api_get(hosted.url(f"/branches/{quoted}/protection"), token=hosted.token, timeout=deadline.remaining())
    if first.error is not None:
        return Observation.unavailable(first.error, first.url)
    if first.status == 200:
        return Observation.of(True, f"{where}: branch {branch} has protection rules (API 200)", first.url)
    if first.status == 404 and first.message in ("Branch not protected", "Branch not found"):
        return Observation.of(False, f"{where}: {first.message.lower()}: {branch} (API 404)", first.url)
    if first.status not in (401, 403, 404):
        return Observation.unavailable(
            f"{where}: protection API answered {first.status} {first.message}".strip(), first.url
        )
    # A bare 404/401/403: the token may not read protection settings. Ask the branch itself.
    second = _api_get(hosted.url(f"/branches/{quoted}"), token=hosted.token, timeout=deadline.remaining())
    if second.error is None and second.status == 200 and isinstance(second.body, dict):
        protected = second.body.get("protected")
        if isinstance(protected, bool):
            return Observation.of(
                protected,
                f"{where}: branch {branch} is {'' if protected else 'not '}protected (its protected field; "
                f"the protection endpoint answered {first.status})",
                second.url,
            )
    answer = second.error or f"{second.status} {second.message}".strip()
    return Observation.unavailable(
        f"{where}: protection endpoint answered {first.status} {first.message}, branch endpoint {answer}".strip(),
        first.url,
    )


def _hosted_protected_branches(hosted: _Hosted, deadline: Deadline) -> Observation:
    names: list[str] = []
    where = f"{hosted.owner}/{hosted.repo}"
    first_url = ""
    for page in range(1, _MAX_PAGES + 1):
        response = _api_get(
            hosted.url("/branches", {"protected": "true", "per_page": 100, "page": page}),
            token=hosted.token,
            timeout=deadline.remaining(),
        )
        first_url = first_url or response.url
        if response.error is not None:
            return Observation.unavailable(response.error, response.url)
        if response.status != 200 or not isinstance(response.body, list):
            return Observation.unavailable(
                f"{where}: the branches API answered {response.status} {response.message}".strip(), response.url
            )
        for item in response.body:
            if not isinstance(item, dict) or not isinstance(item.get("name"), str):
                return Observation.unavailable(
                    f"{where}: unexpected item in the branches list: {item!r}"[:300], response.url
                )
            names.append(item["name"])
        if len(response.body) < 100:
            shown = ", ".join(names) if names else "none"
            return Observation.of(names, f"{where}: protected branches (API): {shown}", first_url)
    return Observation.unavailable(f"{where}: more than {_MAX_PAGES * 100} protected branches; not all read", first_url)


# --- the adapters ---------------------------------------------------------------------------


class _ProtectionAdapter(GitAdapter):
    args = frozenset({"remote", "branch", "api_url", "provider"})

    def _remote(self, request: VerifierRequest, deadline: Deadline) -> tuple[str, str] | Observation:
        remote = check_remote_name(self.text_arg(request, "remote", "origin") or "origin")
        result = self.git(request, deadline, "remote", "get-url", remote)
        if result.ok and result.stdout.strip():
            return remote, result.stdout.strip()
        if result.error is None and result.returncode == 2:
            return Observation.unavailable(
                f"the repository has no remote named {remote}; no remote enforces anything", result.reference
            )
        return self.failure(request, result)

    def _provider(self, request: VerifierRequest, url: str) -> str:
        provider = self.text_arg(request, "provider", "auto")
        if provider not in ("auto", "local", "github"):
            raise VerifierArgumentError(f"provider must be auto, local or github, not {provider!r}")
        if provider == "auto":
            return "local" if is_local_url(url) else "github"
        if provider == "local" and not is_local_url(url):
            raise VerifierArgumentError(f"provider local, but the remote URL {url!r} is not a local path")
        return provider

    def _local(self, request: VerifierRequest, deadline: Deadline, url: str) -> LocalProtection | Observation:
        top = self.git(request, deadline, "rev-parse", "--show-toplevel")
        base = Path(top.stdout.strip()) if top.ok and top.stdout.strip() else self.workspace(request)
        return read_local_protection(local_path_of(url, base), env=request.env, deadline=deadline)


class BranchProtection(_ProtectionAdapter):
    """``git.branch_protection`` (bool): is ``branch`` protected on the remote?

    Args: ``branch`` (default: the current branch), ``remote`` (default ``origin``),
    ``provider`` (``auto``: local for path/file remotes, else GitHub; or ``local``/``github``),
    ``api_url``. See the module documentation for how each kind of remote is read.
    """

    name = "git.branch_protection"

    def _observe(self, request: VerifierRequest) -> Observation:
        deadline = Deadline(request.timeout)
        branch, problem = self.branch_arg(request, deadline)
        if problem is not None:
            return problem
        assert branch is not None
        found = self._remote(request, deadline)
        if isinstance(found, Observation):
            return found
        remote, url = found
        if self._provider(request, url) == "github":
            return _hosted_protection(_hosted(request, url), check_branch_name(branch), deadline)
        local = self._local(request, deadline, url)
        if isinstance(local, Observation):
            return local
        matched = local.matching(branch)
        where = f"{remote} ({local.git_dir})"
        if matched and local.enforced:
            return Observation.of(
                True,
                f"{where}: branch {branch} matches {CONFIG_KEY} {', '.join(repr(m) for m in matched)}, "
                f"{local.enforcement()}; {local.settings()}",
                str(local.hook),
            )
        if matched:
            reason = f"branch {branch} matches {', '.join(repr(m) for m in matched)} but {local.enforcement()}"
        elif local.patterns:
            reason = f"branch {branch} matches none of {CONFIG_KEY} {', '.join(repr(p) for p in local.patterns)}"
        else:
            reason = f"no {CONFIG_KEY} is configured"
        return Observation.of(False, f"{where}: not protected: {reason}; {local.settings()}", local.reference)


class ProtectedBranches(_ProtectionAdapter):
    """``git.protected_branches`` (list): the branches or patterns the remote protects.

    For a local remote: the ``statewise.protectedBranch`` patterns when a hook enforces them,
    else the empty list. For GitHub: the names of the protected branches
    (``GET /repos/{owner}/{repo}/branches?protected=true``, all pages).
    """

    name = "git.protected_branches"

    def _observe(self, request: VerifierRequest) -> Observation:
        deadline = Deadline(request.timeout)
        found = self._remote(request, deadline)
        if isinstance(found, Observation):
            return found
        remote, url = found
        if self._provider(request, url) == "github":
            return _hosted_protected_branches(_hosted(request, url), deadline)
        local = self._local(request, deadline, url)
        if isinstance(local, Observation):
            return local
        patterns = local.enforced_patterns()
        where = f"{remote} ({local.git_dir})"
        if patterns:
            detail = f"{where}: protects {', '.join(patterns)}, {local.enforcement()}; {local.settings()}"
            return Observation.of(patterns, detail, str(local.hook))
        reason = local.enforcement() if local.patterns else f"no {CONFIG_KEY} is configured"
        return Observation.of([], f"{where}: protects no branch: {reason}; {local.settings()}", local.reference)


# --- installing the protection ---------------------------------------------------------------


def hook_source() -> str:
    """The text of the shipped enforcing hook (``statewise/verifiers/hooks/pre-receive``)."""
    resource = importlib.resources.files("statewise.verifiers") / "hooks" / "pre-receive"
    return resource.read_text(encoding="utf-8")


def install_branch_protection(bare_repo: str | os.PathLike[str], patterns: Sequence[str]) -> Path:
    """Protect branches matching ``patterns`` in the repository at ``bare_repo``; return the hook path.

    Replaces every ``statewise.protectedBranch`` value in the repository's own config with
    ``patterns`` and installs the shipped ``pre-receive`` hook (mode 0755), which then refuses
    direct pushes, force pushes, creation and deletion of matching branches. An existing
    ``pre-receive`` hook that is not StateWise's is never overwritten (FileExistsError).
    Meant for sandboxes, demos and tests that need a remote which really enforces protection.
    """
    if isinstance(patterns, str):
        raise TypeError("patterns is a list of branch names or globs, not one string")
    cleaned = []
    for pattern in patterns:
        if not isinstance(pattern, str) or not pattern.strip() or any(c in pattern for c in "\n\r\x00"):
            raise ValueError(f"{pattern!r} is not a branch name or glob pattern")
        cleaned.append(pattern.strip())
    git_dir = _git_dir_of(Path(bare_repo))
    if git_dir is None:
        raise ValueError(f"{bare_repo} is not a git repository")
    config = git_dir / "config"
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}

    def git_config(*args: str, ok: tuple[int, ...] = (0,)) -> None:
        done = subprocess.run(
            ["git", "config", "--file", str(config), *args],
            capture_output=True,
            text=True,
            timeout=30,
            env=env,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        if done.returncode not in ok:
            raise RuntimeError(f"git config {' '.join(args)} failed: {done.stderr.strip()}")

    hooks_dir = git_dir / "hooks"
    configured = subprocess.run(
        ["git", f"--git-dir={git_dir}", "config", "--get", "core.hooksPath"],
        capture_output=True,
        text=True,
        timeout=30,
        env=env,
        stdin=subprocess.DEVNULL,
        check=False,
    ).stdout.strip()
    if configured:
        elsewhere = Path(os.path.expanduser(configured))
        elsewhere = elsewhere if elsewhere.is_absolute() else git_dir / elsewhere
        if elsewhere.resolve() != hooks_dir.resolve():
            raise RuntimeError(
                f"core.hooksPath is {configured!r}: git would not run a hook in {hooks_dir}; unset it first"
            )
    hook = hooks_dir / "pre-receive"
    if hook.exists() and HOOK_MARKER not in hook.read_text(encoding="utf-8", errors="replace"):
        raise FileExistsError(f"{hook} exists and is not StateWise's hook; not overwriting it")
    git_config("--unset-all", CONFIG_KEY, ok=(0, 5))  # 5: there was nothing to unset
    for pattern in cleaned:
        git_config("--add", CONFIG_KEY, pattern)
    hooks_dir.mkdir(parents=True, exist_ok=True)
    hook.write_text(hook_source(), encoding="utf-8")
    hook.chmod(0o755)
    return hook
