"""Branch protection as the remote enforces it, observed only where it can be seen.

A verifier answers OBSERVED only for what it actually saw; everything else is UNAVAILABLE
with the reason, never "not protected". The source is chosen from the remote's URL:

* **A local path or ``file://`` remote** is read directly. Git refuses a push only through
  its server hooks (``pre-receive``, ``update``, ``reference-transaction``, and
  ``proc-receive`` when ``receive.procReceiveRefs`` is set), found in ``hooks/`` or
  ``core.hooksPath``. Each executable one is classified:

  - **StateWise's own** (it reads the multi-valued config ``statewise.protectedBranch``, as
    the shipped ``statewise/verifiers/hooks/pre-receive`` does): a branch matching one of
    those ``fnmatch`` globs (``*`` also crosses ``/``) is protected;
  - **declaring**: a hook with a line ``statewise-protects: main release/*`` (``none`` for
    nothing) protects exactly those globs;
  - **any other hook**: it may refuse anything, so protection is *not known*
    (UNAVAILABLE: "a server hook exists; protection not known"), unless a StateWise or
    declaring hook already protects the branch.

  With no hook at all nothing refuses a push, and "not protected" is an observation. The
  remote's ``receive.denyNonFastForwards`` and ``receive.denyDeletes`` are reported in the
  detail. The configuration is read with ``git config --null --list`` and parsed strictly:
  empty, undecodable or malformed output is UNAVAILABLE. :func:`install_branch_protection`
  sets all of this up on a repository.
* **GitHub** (``github.com`` remotes, or ``provider: github``): classic branch protection
  ``GET {api}/repos/{owner}/{repo}/branches/{branch}/protection`` *and* rulesets
  ``GET {api}/repos/{owner}/{repo}/rules/branches/{branch}``. Protected when either says so
  (200 with a protection object; a ruleset rule of a protective type applies). Not protected
  only when both answer definitely: 404 "Branch not protected" (or "Branch not found") and
  no protective rule. When the protection endpoint may not be read (a bare 404, 401 or 403:
  the token lacks admin rights), the branch's own ``protected`` field
  (``GET .../branches/{branch}``), which covers classic rules and rulesets, decides instead.
  The token is ``GH_TOKEN``, else ``GITHUB_TOKEN``, else ``gh auth token``.
* **GitLab** (``gitlab.com`` remotes, or ``provider: gitlab``): the project's protected
  branches ``GET {api}/projects/{path}/protected_branches`` (all pages; group-level ones are
  included, marked ``inherited``); a branch is protected when a name or wildcard (``*``)
  matches it. The token (``GITLAB_TOKEN``, else ``GL_TOKEN``) goes in ``PRIVATE-TOKEN``.

The API base URL is the binding's ``api_url``, else ``STATEWISE_GITHUB_API_URL`` /
``STATEWISE_GITLAB_API_URL``, else ``https://api.github.com`` / ``https://gitlab.com/api/v4``
for the public hosts (other hosts need one of the first two). Plain ``http://`` is accepted
only for a loopback address, so a token never crosses a network in clear text.

Network calls are bounded: each request gets ``api_timeout`` seconds (default 3, and never
more than what is left of the verifier's budget), including name resolution. A negative
answer that would repeat — the API unreachable or timing out, a 5xx, a 401, a rate limit —
is cached for ``STATEWISE_API_NEGATIVE_TTL`` seconds (default 60), so the second push in one
hook call is answered UNAVAILABLE at once instead of waiting again.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import ipaddress
import json
import os
import re
import subprocess
import threading
import time
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from statewise.scopes import normalize_repo_identity
from statewise.verifiers.base import (
    Deadline,
    Observation,
    VerifierArgumentError,
    VerifierRequest,
    run_command,
    which,
)
from statewise.verifiers.git import GitAdapter, check_branch_name, check_remote_name, is_local_url
from statewise.verifiers.local_protection import (
    CONFIG_KEY,
    DECLARATION,
    LocalProtection,
    ServerHook,
    git_dir_of,
    parse_config_list,
    read_local_protection,
)

__all__ = [
    "DECLARATION",
    "HOOK_MARKER",
    "NEGATIVE_CACHE",
    "BranchProtection",
    "LocalProtection",
    "ProtectedBranches",
    "ServerHook",
    "hook_source",
    "install_branch_protection",
    "is_local_url",
    "local_path_of",
    "parse_config_list",
    "read_local_protection",
]

HOOK_MARKER = "statewise-branch-protection"
DEFAULT_GITHUB_API = "https://api.github.com"
DEFAULT_GITLAB_API = "https://gitlab.com/api/v4"
_GITHUB_HOSTS = frozenset({"github.com", "www.github.com", "ssh.github.com"})
_GITLAB_HOSTS = frozenset({"gitlab.com", "www.gitlab.com"})
_PROVIDERS = ("auto", "local", "github", "gitlab")
# Ruleset rule types that refuse a direct push, a force push or a deletion. Content rules
# (commit message patterns, file size limits...) do not make a branch "protected".
DEFAULT_PROTECTIVE_RULES = (
    "update",
    "deletion",
    "non_fast_forward",
    "pull_request",
    "required_status_checks",
    "merge_queue",
    "required_deployments",
)
DEFAULT_API_TIMEOUT = 3.0
DEFAULT_NEGATIVE_TTL = 60.0
_MAX_BODY = 2 * 1024 * 1024
_MAX_PAGES = 10

_HOST = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?$")
_TOKEN = re.compile(r"^[\x21-\x7e]{1,512}$")


# --- remote URLs ---------------------------------------------------------------------------


def local_path_of(url: str, base: Path) -> Path:
    """The filesystem path of a local remote URL; relative paths are relative to ``base``."""
    url = url.strip()
    if url.lower().startswith("file://"):
        parsed = urllib.parse.urlparse(url)
        return Path(urllib.parse.unquote(parsed.path))
    path = Path(os.path.expanduser(url))
    return path if path.is_absolute() else base / path


# --- hosted APIs: bounded requests and a negative cache ------------------------------------------


class NegativeCache:
    """Answers that will not change in the next minute: an API that is down, a rejected token.

    Keys are ``("down", api)`` or ``("auth", api, token digest)``; values expire after a TTL.
    Thread-safe (verifiers run in worker threads)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[tuple[str, ...], tuple[float, str]] = {}

    def get(self, *keys: tuple[str, ...]) -> str | None:
        now = time.monotonic()
        with self._lock:
            for key in keys:
                entry = self._entries.get(key)
                if entry is None:
                    continue
                if entry[0] <= now:
                    del self._entries[key]
                    continue
                return entry[1]
        return None

    def put(self, key: tuple[str, ...], reason: str, ttl: float) -> None:
        if ttl <= 0:
            return
        with self._lock:
            self._entries[key] = (time.monotonic() + ttl, reason)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


NEGATIVE_CACHE = NegativeCache()
"""The process-wide negative cache of hosted-API answers (tests clear it)."""


@dataclass(frozen=True)
class _Response:
    status: int | None
    body: Any = None
    error: str | None = None
    url: str = ""
    undecodable: bool = False

    @property
    def message(self) -> str:
        message = self.body.get("message") if isinstance(self.body, dict) else None
        return message if isinstance(message, str) else ""

    def describe(self) -> str:
        if self.error is not None:
            return self.error
        return f"{self.status} {self.message}".strip()


def _is_loopback(host: str | None) -> bool:
    if not host:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class _Api:
    """One hosted repository and how to ask its API."""

    provider: str  # github or gitlab
    host: str
    api_url: str
    project: tuple[str, ...]  # owner, repo (GitHub) or the namespace path (GitLab)
    token: str | None
    token_source: str
    per_call: float
    negative_ttl: float

    @property
    def where(self) -> str:
        return "/".join(self.project)

    def repo_url(self, path: str, query: Mapping[str, Any] | None = None) -> str:
        if self.provider == "github":
            owner, repo = (urllib.parse.quote(part, safe="") for part in self.project)
            text = f"{self.api_url.rstrip('/')}/repos/{owner}/{repo}{path}"
        else:
            text = f"{self.api_url.rstrip('/')}/projects/{urllib.parse.quote(self.where, safe='')}{path}"
        return text + ("?" + urllib.parse.urlencode(query) if query else "")

    def _headers(self) -> dict[str, str]:
        headers = {"User-Agent": "statewise-verifier", "Accept": "application/json"}
        if self.provider == "github":
            headers["Accept"] = "application/vnd.github+json"
            headers["X-GitHub-Api-Version"] = "2022-11-28"
            if self.token:
                headers["Authorization"] = f"Bearer {self.token}"
        elif self.token:
            headers["PRIVATE-TOKEN"] = self.token
        return headers

    def _cache_keys(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        digest = hashlib.sha256((self.token or "").encode()).hexdigest()[:16]
        return ("down", self.api_url), ("auth", self.api_url, digest)

    def get(self, url: str, deadline: Deadline) -> _Response:
        """GET ``url``: never longer than ``per_call`` (or what is left), negative answers cached."""
        down, auth = self._cache_keys()
        cached = NEGATIVE_CACHE.get(down, auth)
        if cached is not None:
            note = f"{cached} (cached: not asked again for up to {self.negative_ttl:g}s)"
            return _Response(None, error=note, url=url)
        timeout = min(self.per_call, deadline.remaining())
        if timeout <= 0:
            return _Response(None, error="no time left for the request", url=url)
        response = _bounded_get(url, self._headers(), timeout)
        if response.error is not None:
            NEGATIVE_CACHE.put(down, f"{self.api_url}: {response.error}", self.negative_ttl)
        elif response.status is not None and response.status >= 500:
            NEGATIVE_CACHE.put(down, f"{self.api_url} answered {response.describe()}", self.negative_ttl)
        elif response.status == 429 or (response.status == 401 and self.token) or (
            response.status == 403 and "rate limit" in response.message.lower()
        ):
            # A rejected token or a rate limit holds for every endpoint for a while. A 401
            # without a token is only this endpoint wanting one (others may be public).
            NEGATIVE_CACHE.put(auth, f"{self.api_url} answered {response.describe()}", self.negative_ttl)
        return response


def _bounded_get(url: str, headers: Mapping[str, str], timeout: float) -> _Response:
    """One GET in a worker thread, abandoned after ``timeout`` seconds.

    urllib's own timeout covers each socket operation but not name resolution; the thread
    bounds the whole call, so a hanging resolver costs at most ``timeout`` too."""
    outcome: dict[str, _Response] = {}

    def work() -> None:
        outcome["response"] = _plain_get(url, headers, timeout)

    worker = threading.Thread(target=work, name="statewise-api-get", daemon=True)
    worker.start()
    worker.join(timeout + 0.25)
    if "response" not in outcome:
        return _Response(None, error=f"GET {url} did not answer within {timeout:g}s", url=url)
    return outcome["response"]


def _plain_get(url: str, headers: Mapping[str, str], timeout: float) -> _Response:
    # Imported here: urllib.request brings http.client and ssl (about 10 ms), and most checks,
    # a push to a local remote among them, never call an API.
    import urllib.error
    import urllib.request

    request = urllib.request.Request(url, headers=dict(headers), method="GET")
    host = urllib.parse.urlparse(url).hostname
    # A loopback API never goes through a proxy from the environment.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({} if _is_loopback(host) else None))
    try:
        with opener.open(request, timeout=timeout) as response:
            status, raw = response.status, response.read(_MAX_BODY + 1)
    except urllib.error.HTTPError as error:
        status = error.code
        try:
            raw = error.read(_MAX_BODY + 1) if error.fp is not None else b""
        except OSError:
            raw = b""
    except (urllib.error.URLError, OSError, ValueError) as error:
        reason = getattr(error, "reason", error)
        if isinstance(error, TimeoutError) or isinstance(reason, TimeoutError):
            return _Response(None, error=f"GET {url} did not answer within {timeout:g}s", url=url)
        return _Response(None, error=f"GET {url} failed: {reason}", url=url)
    except Exception as error:  # noqa: BLE001 - http.client raises odd things on garbage
        return _Response(None, error=f"GET {url} failed: {type(error).__name__}: {error}", url=url)
    if len(raw) > _MAX_BODY:
        return _Response(status, error=f"GET {url}: the response is larger than {_MAX_BODY} bytes", url=url)
    try:
        body = json.loads(raw.decode("utf-8")) if raw.strip() else None
    except (UnicodeDecodeError, json.JSONDecodeError):
        return _Response(status, None, url=url, undecodable=True)
    return _Response(status, body, url=url)


_GH_TOKENS: dict[tuple[str | None, str], tuple[float, str]] = {}


def _token(request: VerifierRequest, provider: str, host: str, deadline: Deadline) -> tuple[str | None, str]:
    """The API token and where it came from (never the token itself in a detail)."""
    names = ("GH_TOKEN", "GITHUB_TOKEN") if provider == "github" else ("GITLAB_TOKEN", "GL_TOKEN")
    for name in names:
        value = (request.env.get(name) or "").strip()
        if value:
            return value, name
    if provider == "github" and request.args.get("use_gh", True) is not False:
        gh = which("gh", request.env, Path(request.workspace))
        cached = _GH_TOKENS.get((gh, host))
        if cached is not None and cached[0] > time.monotonic():
            return cached[1], "gh auth token"
        if gh is not None and _HOST.match(host):
            # The host is validated above: it cannot be read as an option of gh.
            result = run_command(
                [gh, "auth", "token", "--hostname", host],
                cwd=Path(request.workspace) if Path(request.workspace).is_dir() else "/",
                timeout=min(2.0, deadline.remaining()),
                env=request.env,
            )
            token = (result.strict_stdout() or "").strip() if result.ok else ""
            if _TOKEN.match(token):
                # Several verifiers of one hook call ask for it: run gh once a minute at most.
                _GH_TOKENS[(gh, host)] = (time.monotonic() + 60.0, token)
                return token, "gh auth token"
    return None, "no token"


def _api_for(request: VerifierRequest, url: str, provider: str, deadline: Deadline) -> _Api:
    identity = normalize_repo_identity(url)
    host, _, path = identity.partition("/")
    parts = tuple(part for part in path.split("/") if part)
    host = host.lower()
    if provider == "auto":
        if host in _GITHUB_HOSTS:
            provider = "github"
        elif host in _GITLAB_HOSTS:
            provider = "gitlab"
        elif request.args.get("api_url") or request.env.get("STATEWISE_GITHUB_API_URL"):
            provider = "github"
        elif request.env.get("STATEWISE_GITLAB_API_URL"):
            provider = "gitlab"
        else:
            raise VerifierArgumentError(
                f"no protection API is known for host {host}; give provider and api_url in the binding, or set "
                "STATEWISE_GITHUB_API_URL or STATEWISE_GITLAB_API_URL"
            )
    if provider == "github" and len(parts) != 2:
        raise VerifierArgumentError(f"cannot tell owner/repository from remote URL {url!r}")
    if provider == "gitlab" and len(parts) < 2:
        raise VerifierArgumentError(f"cannot tell the project path from remote URL {url!r}")
    env_name = "STATEWISE_GITHUB_API_URL" if provider == "github" else "STATEWISE_GITLAB_API_URL"
    given = request.args.get("api_url") or request.env.get(env_name)
    if given:
        api_url = str(given)
    elif provider == "github" and host in _GITHUB_HOSTS:
        api_url = DEFAULT_GITHUB_API
    elif provider == "gitlab" and host in _GITLAB_HOSTS:
        api_url = DEFAULT_GITLAB_API
    else:
        raise VerifierArgumentError(
            f"no {provider} API URL is known for host {host}; give api_url in the binding or set {env_name}"
        )
    parsed = urllib.parse.urlparse(api_url)
    if parsed.scheme == "http" and not _is_loopback(parsed.hostname):
        raise VerifierArgumentError(f"api_url {api_url!r}: plain http is only accepted for a loopback address")
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise VerifierArgumentError(f"api_url must be an http(s) URL, not {api_url!r}")
    per_call = _positive(request.args.get("api_timeout"), DEFAULT_API_TIMEOUT, "api_timeout")
    ttl = _positive(request.env.get("STATEWISE_API_NEGATIVE_TTL"), DEFAULT_NEGATIVE_TTL, "STATEWISE_API_NEGATIVE_TTL",
                    allow_zero=True)
    token, source = _token(request, provider, host, deadline)
    return _Api(provider, host, api_url, parts, token, source, per_call, ttl)


def _positive(value: Any, default: float, name: str, *, allow_zero: bool = False) -> float:
    if value is None or value == "":
        return default
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise VerifierArgumentError(f"{name} must be a number of seconds, not {value!r}") from None
    if number < 0 or (number == 0 and not allow_zero) or number != number:
        raise VerifierArgumentError(f"{name} must be a positive number of seconds, not {value!r}")
    return number


def _protective_rules(request: VerifierRequest) -> frozenset[str]:
    given = request.args.get("protective_rules")
    if given is None or given == "":
        return frozenset(DEFAULT_PROTECTIVE_RULES)
    items = (given,) if isinstance(given, str) else tuple(given)
    if not all(isinstance(item, str) and item for item in items):
        raise VerifierArgumentError(f"protective_rules must list rule types, not {given!r}")
    return frozenset(items)


# --- GitHub -----------------------------------------------------------------------------------


def _github_rules(api: _Api, branch: str, deadline: Deadline, protective: frozenset[str]
                  ) -> tuple[bool | None, str, str]:
    """(True: a protective rule applies, False: none does, None: unknown), detail, URL."""
    quoted = urllib.parse.quote(branch, safe="")
    applying: list[str] = []
    first_url = ""
    for page in range(1, _MAX_PAGES + 1):
        response = api.get(api.repo_url(f"/rules/branches/{quoted}", {"per_page": 100, "page": page}), deadline)
        first_url = first_url or response.url
        if response.error is not None or response.status != 200 or not isinstance(response.body, list):
            shown = "an unreadable body" if response.undecodable else response.describe()
            return None, f"rulesets endpoint answered {shown}", first_url
        for rule in response.body:
            if not isinstance(rule, dict) or not isinstance(rule.get("type"), str):
                return None, f"rulesets endpoint gave an unexpected rule {rule!r}"[:200], first_url
            applying.append(rule["type"])
        if len(response.body) < 100:
            break
    else:
        return None, f"more than {_MAX_PAGES * 100} ruleset rules; not all read", first_url
    hits = sorted({rule for rule in applying if rule in protective})
    if hits:
        return True, f"ruleset rules apply: {', '.join(hits)}", first_url
    others = sorted(set(applying))
    return False, ("no ruleset rule applies" if not others else
                   f"only non-protective ruleset rules apply ({', '.join(others)})"), first_url


def _github_protection(api: _Api, branch: str, deadline: Deadline, protective: frozenset[str]) -> Observation:
    quoted = urllib.parse.quote(branch, safe="")
    where = f"{api.where} ({api.api_url}, token: {api.token_source})"
    classic = api.get(api.repo_url(f"/branches/{quoted}/protection"), deadline)
    if classic.error is not None:
        return Observation.unavailable(f"{where}: {classic.error}", classic.url)
    if classic.status == 200:
        if isinstance(classic.body, dict):
            return Observation.of(True, f"{where}: branch {branch} has classic protection rules (API 200)", classic.url)
        return Observation.unavailable(f"{where}: the protection endpoint answered 200 with an unreadable body",
                                       classic.url)
    # classic_no: the endpoint said definitely that no classic rule protects the branch.
    classic_no = classic.status == 404 and classic.message in ("Branch not protected", "Branch not found")
    if not classic_no and classic.status not in (401, 403, 404):
        return Observation.unavailable(f"{where}: the protection endpoint answered {classic.describe()}", classic.url)
    rules, rules_detail, rules_url = _github_rules(api, branch, deadline, protective)
    if rules is True:
        return Observation.of(True, f"{where}: branch {branch} is protected: {rules_detail}", rules_url)
    if classic_no and rules is False:
        return Observation.of(
            False, f"{where}: branch {branch}: {classic.message.lower()} (classic, API 404); {rules_detail}",
            classic.url,
        )
    # The protection endpoint may not be read with this token (a bare 404/401/403), or the
    # rulesets endpoint did not answer: the branch's own protected field covers both.
    if (classic.status == 401 and api.token) or NEGATIVE_CACHE.get(*api._cache_keys()):
        return Observation.unavailable(
            f"{where}: protection endpoint answered {classic.describe()}; {rules_detail}", classic.url
        )
    own = api.get(api.repo_url(f"/branches/{quoted}"), deadline)
    if own.error is None and own.status == 200 and isinstance(own.body, dict):
        protected = own.body.get("protected")
        if protected is True:
            return Observation.of(
                True, f"{where}: branch {branch} is protected (its protected field; protection endpoint "
                      f"answered {classic.describe()})", own.url)
        if protected is False and rules is False:
            return Observation.of(
                False, f"{where}: branch {branch} is not protected (its protected field; {rules_detail})", own.url)
    if own.error is None and own.status == 404 and own.message == "Branch not found" and rules is False:
        return Observation.of(
            False, f"{where}: there is no branch {branch}, so no classic rule protects it; {rules_detail}", own.url)
    shown = "an unreadable body" if own.undecodable else own.describe()
    return Observation.unavailable(
        f"{where}: protection endpoint answered {classic.describe()}, {rules_detail}, branch endpoint {shown}; "
        "protection not known",
        classic.url,
    )


def _github_protected_branches(api: _Api, deadline: Deadline) -> Observation:
    names: list[str] = []
    where = f"{api.where} ({api.api_url}, token: {api.token_source})"
    first_url = ""
    for page in range(1, _MAX_PAGES + 1):
        response = api.get(api.repo_url("/branches", {"protected": "true", "per_page": 100, "page": page}), deadline)
        first_url = first_url or response.url
        if response.error is not None:
            return Observation.unavailable(f"{where}: {response.error}", response.url)
        if response.status != 200 or not isinstance(response.body, list):
            shown = "an unreadable body" if response.undecodable else response.describe()
            return Observation.unavailable(f"{where}: the branches API answered {shown}", response.url)
        for item in response.body:
            if not isinstance(item, dict) or not isinstance(item.get("name"), str):
                return Observation.unavailable(f"{where}: unexpected item in the branches list: {item!r}"[:300],
                                               response.url)
            names.append(item["name"])
        if len(response.body) < 100:
            shown = ", ".join(names) if names else "none"
            return Observation.of(names, f"{where}: protected branches (API): {shown}", first_url)
    return Observation.unavailable(f"{where}: more than {_MAX_PAGES * 100} protected branches; not all read", first_url)


# --- GitLab -----------------------------------------------------------------------------------


def gitlab_wildcard_match(branch: str, pattern: str) -> bool:
    """GitLab's protected-branch wildcards: ``*`` matches any run of characters (``/`` too)."""
    return re.fullmatch(".*".join(re.escape(part) for part in pattern.split("*")), branch) is not None


def _gitlab_list(api: _Api, deadline: Deadline) -> list[dict[str, Any]] | Observation:
    where = f"{api.where} ({api.api_url}, token: {api.token_source})"
    items: list[dict[str, Any]] = []
    first_url = ""
    for page in range(1, _MAX_PAGES + 1):
        response = api.get(api.repo_url("/protected_branches", {"per_page": 100, "page": page}), deadline)
        first_url = first_url or response.url
        if response.error is not None:
            return Observation.unavailable(f"{where}: {response.error}", response.url)
        if response.status != 200 or not isinstance(response.body, list):
            shown = "an unreadable body" if response.undecodable else response.describe()
            return Observation.unavailable(f"{where}: the protected branches API answered {shown}", response.url)
        for item in response.body:
            if not isinstance(item, dict) or not isinstance(item.get("name"), str) or not item["name"]:
                return Observation.unavailable(f"{where}: unexpected protected branch {item!r}"[:300], response.url)
            items.append(item)
        if len(response.body) < 100:
            return items
    return Observation.unavailable(f"{where}: more than {_MAX_PAGES * 100} protected branches; not all read", first_url)


def _gitlab_protection(api: _Api, branch: str, deadline: Deadline) -> Observation:
    where = f"{api.where} ({api.api_url}, token: {api.token_source})"
    listed = _gitlab_list(api, deadline)
    if isinstance(listed, Observation):
        return listed
    reference = api.repo_url("/protected_branches")
    for item in listed:
        if gitlab_wildcard_match(branch, item["name"]):
            levels = [str(level.get("access_level_description", level.get("access_level")))
                      for level in item.get("push_access_levels") or [] if isinstance(level, dict)]
            force = item.get("allow_force_push")
            inherited = " (inherited from the group)" if item.get("inherited") is True else ""
            return Observation.of(
                True,
                f"{where}: branch {branch} matches protected branch {item['name']!r}{inherited}; push allowed for "
                f"{', '.join(levels) or 'nobody'}; allow_force_push={str(force).lower()}",
                reference,
            )
    shown = ", ".join(item["name"] for item in listed) or "none"
    return Observation.of(False, f"{where}: branch {branch} matches no protected branch (API: {shown})", reference)


# --- the adapters ---------------------------------------------------------------------------


class _ProtectionAdapter(GitAdapter):
    args = frozenset({"remote", "branch", "api_url", "provider", "api_timeout", "protective_rules", "use_gh"})

    def _remote(self, request: VerifierRequest, deadline: Deadline) -> tuple[str, str] | Observation:
        remote = check_remote_name(self.text_arg(request, "remote", "origin") or "origin")
        result = self.git(request, deadline, "remote", "get-url", remote)
        url = (result.strict_stdout() or "").strip() if result.ok else ""
        if result.ok and url and "\n" not in url and "\x00" not in url:
            return remote, url
        if result.ok:
            return Observation.unavailable(
                f"git remote get-url {remote} printed no usable URL: {result.stdout.strip()[:100]!r}", result.reference
            )
        if result.error is None and result.returncode == 2:
            return Observation.unavailable(
                f"the repository has no remote named {remote}; no remote enforces anything", result.reference
            )
        return self.failure(request, result)

    def _provider(self, request: VerifierRequest, url: str) -> str:
        provider = self.text_arg(request, "provider", "auto")
        if provider not in _PROVIDERS:
            raise VerifierArgumentError(f"provider must be one of {', '.join(_PROVIDERS)}, not {provider!r}")
        if provider == "auto" and is_local_url(url):
            return "local"
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
    ``provider`` (``auto``: local for path/file remotes, GitHub or GitLab by host; or
    ``local``/``github``/``gitlab``), ``api_url``, ``api_timeout`` (seconds per request,
    default 3), ``protective_rules`` (GitHub ruleset rule types that count as protection),
    ``use_gh`` (ask ``gh auth token`` when no token is in the environment; default true).
    See the module documentation for how each kind of remote is read.
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
        provider = self._provider(request, url)
        if provider != "local":
            api = _api_for(request, url, provider, deadline)
            if api.provider == "github":
                return _github_protection(api, check_branch_name(branch), deadline, _protective_rules(request))
            return _gitlab_protection(api, check_branch_name(branch), deadline)
        local = self._local(request, deadline, url)
        if isinstance(local, Observation):
            return local
        where = f"{remote} ({local.git_dir})"
        protecting = local.protecting(branch)
        if protecting is not None:
            hook, matched = protecting
            how = f"matches {CONFIG_KEY}" if hook.kind == "statewise" else f"matches what {hook.path} declares"
            return Observation.of(
                True,
                f"{where}: branch {branch} {how} {', '.join(repr(m) for m in matched)}, enforced by {hook.path}; "
                f"{local.settings()}",
                str(hook.path),
            )
        if local.foreign:
            return Observation.unavailable(f"{where}: branch {branch}: {local.unknown_because()}", local.reference)
        matched = local.matching(branch)
        if matched:
            reason = f"branch {branch} matches {', '.join(repr(m) for m in matched)} but {local.enforcement()}"
        elif local.enforced_patterns():
            reason = f"branch {branch} matches none of {', '.join(repr(p) for p in local.enforced_patterns())}"
        elif local.patterns:
            reason = local.enforcement()
        else:
            reason = f"no server hook refuses pushes ({local.enforcement()})"
        return Observation.of(False, f"{where}: not protected: {reason}; {local.settings()}", local.reference)


class ProtectedBranches(_ProtectionAdapter):
    """``git.protected_branches`` (list): the branches or patterns the remote protects.

    For a local remote: the globs its StateWise or declaring hooks enforce (UNAVAILABLE when
    another hook exists, since what it refuses is not known). For GitHub: the names of the
    protected branches (``GET /repos/{owner}/{repo}/branches?protected=true``, all pages).
    For GitLab: the names and wildcards of the project's protected branches.
    """

    name = "git.protected_branches"

    def _observe(self, request: VerifierRequest) -> Observation:
        deadline = Deadline(request.timeout)
        found = self._remote(request, deadline)
        if isinstance(found, Observation):
            return found
        remote, url = found
        provider = self._provider(request, url)
        if provider != "local":
            api = _api_for(request, url, provider, deadline)
            if api.provider == "github":
                return _github_protected_branches(api, deadline)
            listed = _gitlab_list(api, deadline)
            if isinstance(listed, Observation):
                return listed
            names = [item["name"] for item in listed]
            return Observation.of(
                names, f"{api.where} ({api.api_url}): protected branches (API): {', '.join(names) or 'none'}",
                api.repo_url("/protected_branches"),
            )
        local = self._local(request, deadline, url)
        if isinstance(local, Observation):
            return local
        where = f"{remote} ({local.git_dir})"
        if local.foreign:
            return Observation.unavailable(f"{where}: {local.unknown_because()}", local.reference)
        patterns = local.enforced_patterns()
        if patterns:
            enforcers = ", ".join(str(h.path) for h in local.hooks if h.kind in ("statewise", "declared"))
            detail = f"{where}: protects {', '.join(patterns)}, enforced by {enforcers}; {local.settings()}"
            return Observation.of(patterns, detail, enforcers)
        reason = local.enforcement() if local.patterns or not local.hooks else "its hooks protect no branch"
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
    git_dir = git_dir_of(Path(bare_repo))
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
