"""Git adapters: branches, upstreams, remotes, the working tree, and branch protection.

Every call is ``git`` with an argv list in the workspace, read-only, with the safe
environment of :func:`statewise.verifiers.base.run_command` (``GIT_OPTIONAL_LOCKS=0`` keeps
``git status`` from rewriting the index). Nothing fetches: ahead/behind counts and
``origin/HEAD`` are as last fetched, and the detail says so. Branch and remote names that
come from records or qualifiers are validated before they reach an argv, so a name such as
``--upload-pack=...`` can never be read as an option.

What git prints is parsed strictly: output that is not UTF-8, or does not have the shape the
command documents (a branch name, ``<ref>\0<upstream>`` lines, porcelain status entries), is
UNAVAILABLE, never a value. Empty output is a value only where git documents it as the
answer (no remotes, a clean tree, an empty remote).
"""

from __future__ import annotations

import re
from pathlib import Path

from statewise.verifiers.base import (
    Adapter,
    CommandResult,
    Deadline,
    Observation,
    VerifierArgumentError,
    VerifierRequest,
    has_control,
    run_command,
)

__all__ = [
    "AheadBehind",
    "BranchExists",
    "CleanTree",
    "CurrentBranch",
    "DefaultBranch",
    "RemoteUrl",
    "Remotes",
    "Upstream",
    "check_branch_name",
    "check_remote_name",
]

_LS_REMOTE_LINE = re.compile(r"^(?:ref: refs/\S+\tHEAD|[0-9a-f]{40}(?:[0-9a-f]{24})?\t\S+)$")
_STATUS_ENTRY = re.compile(rb"^[ MTADRCU?!][ MTADRCU?!] .+$", re.DOTALL)
_REMOTE_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._/-]*$")
_BAD_BRANCH = re.compile(r"(\.\.|[\x00-\x20\x7f~^:?*\[\\]|@\{|//|/\.|\.lock$|\.lock/|/$|^/|^-|^@$|\.$|^\.)")


def check_branch_name(name: str) -> str:
    """``name`` if it is a valid git branch name (and cannot be read as an option)."""
    if not isinstance(name, str) or not name or _BAD_BRANCH.search(name):
        raise VerifierArgumentError(f"{name!r} is not a valid branch name")
    return name


def check_remote_name(name: str) -> str:
    """``name`` if it is a plausible remote name (letters, digits, ``._/-``; not an option)."""
    if not isinstance(name, str) or not _REMOTE_NAME.match(name) or ".." in name:
        raise VerifierArgumentError(f"{name!r} is not a valid remote name")
    return name


def _garbled(result: CommandResult, what: str) -> Observation:
    return Observation.unavailable(
        f"{what}: git printed something that is not the documented output "
        f"({result.stdout.strip()[:80]!r}); nothing was read from it",
        result.reference,
    )


def _is_branch_name(text: str) -> bool:
    try:
        check_branch_name(text)
    except VerifierArgumentError:
        return False
    return True


class GitAdapter(Adapter):
    """Shared plumbing for adapters that run git in the workspace."""

    def git(self, request: VerifierRequest, deadline: Deadline, *args: str, cwd: Path | None = None) -> CommandResult:
        return run_command(
            ["git", *args],
            cwd=cwd or self.workspace(request),
            timeout=deadline.remaining(),
            env=request.env,
        )

    def failure(self, request: VerifierRequest, result: CommandResult) -> Observation:
        """UNAVAILABLE for a git command that did not answer, with the reason."""
        if result.error is None and "not a git repository" in result.stderr.lower():
            return Observation.unavailable(
                f"{self.workspace(request)} is not inside a git repository", result.reference
            )
        return Observation.unavailable(result.describe_failure(), result.reference)

    def current_branch(self, request: VerifierRequest, deadline: Deadline) -> tuple[str | None, CommandResult]:
        """The checked-out branch (None on a detached HEAD or unreadable output) and the result."""
        result = self.git(request, deadline, "symbolic-ref", "--quiet", "--short", "HEAD")
        name = (result.strict_stdout() or "").strip() if result.ok else ""
        if name and _is_branch_name(name):
            return name, result
        return None, result

    def branch_arg(
        self, request: VerifierRequest, deadline: Deadline, name: str = "branch"
    ) -> tuple[str | None, Observation | None]:
        """The branch named by argument ``name``, or the current branch when it is not given."""
        given = self.text_arg(request, name)
        if given is not None:
            return check_branch_name(given), None
        branch, result = self.current_branch(request, deadline)
        if branch is not None:
            return branch, None
        if result.ok:
            return None, _garbled(result, "git symbolic-ref HEAD")
        if result.error is None and result.returncode == 1:
            return None, Observation.unavailable("no branch given and HEAD is detached", result.reference)
        return None, self.failure(request, result)


class CurrentBranch(GitAdapter):
    """``git.current_branch`` (string): the branch checked out in the working tree.

    ABSENT on a detached HEAD (no branch is checked out). UNAVAILABLE outside a repository.
    """

    name = "git.current_branch"

    def _observe(self, request: VerifierRequest) -> Observation:
        deadline = Deadline(request.timeout)
        branch, result = self.current_branch(request, deadline)
        if branch is not None:
            return Observation.of(branch, f"HEAD of {self.workspace(request)} is branch {branch}", result.reference)
        if result.ok:
            return _garbled(result, "git symbolic-ref HEAD")
        if result.error is None and result.returncode == 1:
            head = self.git(request, deadline, "rev-parse", "--short", "HEAD")
            at = f" at {head.stdout.strip()}" if head.ok else ""
            return Observation.absent(f"HEAD is detached{at}: no branch is checked out", result.reference)
        return self.failure(request, result)


class DefaultBranch(GitAdapter):
    """``git.default_branch`` (string): the branch the remote's HEAD points to.

    For a remote on a local path or ``file://`` URL the remote itself is asked
    (``git ls-remote --symref <remote> HEAD``), which is authoritative. For a hosted remote
    the local ``refs/remotes/<remote>/HEAD`` is read (as of the last clone or
    ``git remote set-head``), falling back to ``ls-remote`` when it is not set.
    Args: ``remote`` (default ``origin``). ABSENT when the remote answers but has no HEAD
    branch (an empty repository). UNAVAILABLE when there is no such remote or it cannot be
    reached.
    """

    name = "git.default_branch"
    args = frozenset({"remote"})

    def _observe(self, request: VerifierRequest) -> Observation:
        deadline = Deadline(request.timeout)
        remote = check_remote_name(self.text_arg(request, "remote", "origin") or "origin")
        url_result = self.git(request, deadline, "remote", "get-url", remote)
        if not url_result.ok:
            if url_result.returncode == 2:
                return Observation.unavailable(f"the repository has no remote named {remote}", url_result.reference)
            return self.failure(request, url_result)
        url = (url_result.strict_stdout() or "").strip()
        if not url or has_control(url) or "\n" in url:
            return _garbled(url_result, f"git remote get-url {remote}")
        if not is_local_url(url):
            cached = self.git(request, deadline, "symbolic-ref", "--quiet", "--short", f"refs/remotes/{remote}/HEAD")
            cached_text = (cached.strict_stdout() or "").strip() if cached.ok else ""
            if cached_text.startswith(remote + "/") and _is_branch_name(cached_text[len(remote) + 1 :]):
                branch = cached_text[len(remote) + 1 :]
                return Observation.of(
                    branch,
                    f"refs/remotes/{remote}/HEAD points to {remote}/{branch} (as last fetched from {url}; "
                    "the remote was not contacted)",
                    cached.reference,
                )
        return self._ask_remote(request, deadline, remote, url)

    def _ask_remote(self, request: VerifierRequest, deadline: Deadline, remote: str, url: str) -> Observation:
        result = self.git(request, deadline, "ls-remote", "--symref", remote, "HEAD")
        if not result.ok:
            return Observation.unavailable(
                f"cannot ask {remote} ({url}): {result.describe_failure()}", result.reference
            )
        text = result.strict_stdout()
        lines = (text or "").splitlines()
        if text is None or not all(_LS_REMOTE_LINE.match(line) for line in lines):
            return _garbled(result, f"git ls-remote {remote}")
        for line in lines:
            if line.startswith("ref: ") and line.endswith("\tHEAD"):
                target = line[len("ref: ") : -len("\tHEAD")].strip()
                if target.startswith("refs/heads/") and _is_branch_name(target[len("refs/heads/") :]):
                    branch = target[len("refs/heads/") :]
                    return Observation.of(branch, f"{remote} ({url}) HEAD points to {branch}", result.reference)
        if not lines:
            return Observation.absent(f"{remote} ({url}) has no HEAD branch (an empty repository)", result.reference)
        return Observation.unavailable(
            f"{remote} ({url}) HEAD is detached; it names no default branch", result.reference
        )


class BranchExists(GitAdapter):
    """``git.branch_exists`` (bool): whether local branch ``branch`` exists (``refs/heads/<branch>``)."""

    name = "git.branch_exists"
    args = frozenset({"branch"})
    required = frozenset({"branch"})

    def _observe(self, request: VerifierRequest) -> Observation:
        deadline = Deadline(request.timeout)
        branch = check_branch_name(self.text_arg(request, "branch") or "")
        result = self.git(request, deadline, "show-ref", "--verify", "--quiet", f"refs/heads/{branch}")
        if result.error is None and result.returncode in (0, 1):
            exists = result.returncode == 0
            return Observation.of(
                exists,
                f"refs/heads/{branch} {'exists' if exists else 'does not exist'} in {self.workspace(request)}",
                result.reference,
            )
        return self.failure(request, result)


class Upstream(GitAdapter):
    """``git.upstream`` (string): the upstream of ``branch`` (default: current), e.g. ``origin/feature``.

    ABSENT when the branch has no upstream configured, or does not exist.
    """

    name = "git.upstream"
    args = frozenset({"branch"})

    def _observe(self, request: VerifierRequest) -> Observation:
        deadline = Deadline(request.timeout)
        branch, problem = self.branch_arg(request, deadline)
        if problem is not None:
            return problem
        assert branch is not None
        ref = f"refs/heads/{branch}"
        result = self.git(request, deadline, "for-each-ref", "--format=%(refname)%00%(upstream:short)", ref)
        if not result.ok:
            return self.failure(request, result)
        text = result.strict_stdout()
        lines = (text or "").splitlines()
        # for-each-ref with one exact ref prints that ref's line, or nothing when it does not exist.
        if text is None or any(line.partition("\x00")[0] != ref or "\x00" not in line or has_control(
                line.partition("\x00")[2]) for line in lines):
            return _garbled(result, f"git for-each-ref {ref}")
        for line in lines:
            name, _, upstream = line.partition("\x00")
            if name == ref:
                if upstream:
                    return Observation.of(upstream, f"branch {branch} tracks {upstream}", result.reference)
                return Observation.absent(f"branch {branch} has no upstream configured", result.reference)
        return Observation.absent(f"there is no local branch {branch}, so it has no upstream", result.reference)


class RemoteUrl(GitAdapter):
    """``git.remote_url`` (string): the fetch URL of remote ``remote`` (``git remote get-url``).

    ABSENT when there is no such remote.
    """

    name = "git.remote_url"
    args = frozenset({"remote"})

    def _observe(self, request: VerifierRequest) -> Observation:
        deadline = Deadline(request.timeout)
        remote = check_remote_name(self.text_arg(request, "remote", "origin") or "origin")
        result = self.git(request, deadline, "remote", "get-url", remote)
        if result.ok:
            url = (result.strict_stdout() or "").strip()
            if not url or "\n" in url or has_control(url):
                return _garbled(result, f"git remote get-url {remote}")
            return Observation.of(url, f"remote {remote} fetches from {url}", result.reference)
        if result.error is None and result.returncode == 2:
            return Observation.absent(f"there is no remote named {remote}", result.reference)
        return self.failure(request, result)


class Remotes(GitAdapter):
    """``git.remotes`` (list): the names of the configured remotes (possibly empty)."""

    name = "git.remotes"

    def _observe(self, request: VerifierRequest) -> Observation:
        result = self.git(request, Deadline(request.timeout), "remote")
        if not result.ok:
            return self.failure(request, result)
        text = result.strict_stdout()
        names = [line.strip() for line in (text or "").splitlines() if line.strip()]
        if text is None or any(has_control(name) or any(ch.isspace() for ch in name) for name in names):
            return _garbled(result, "git remote")
        shown = ", ".join(names) if names else "none"
        return Observation.of(names, f"configured remotes: {shown}", result.reference)


class CleanTree(GitAdapter):
    """``git.clean_tree`` (bool): no staged, unstaged or untracked (non-ignored) changes.

    Runs ``git status --porcelain`` with ``GIT_OPTIONAL_LOCKS=0``, so the index is not refreshed.
    """

    name = "git.clean_tree"

    def _observe(self, request: VerifierRequest) -> Observation:
        result = self.git(
            request, Deadline(request.timeout), "status", "--porcelain=v1", "-z", "--untracked-files=normal"
        )
        if not result.ok:
            return self.failure(request, result)
        # Paths are raw bytes (not necessarily UTF-8): the structure is checked on bytes.
        raw = result.raw_stdout
        if raw and not raw.endswith(b"\x00"):
            return _garbled(result, "git status --porcelain")
        entries = []
        tokens = iter(raw[:-1].split(b"\x00") if raw else [])
        for token in tokens:
            if not _STATUS_ENTRY.match(token):
                return _garbled(result, "git status --porcelain")
            entries.append(token.decode("utf-8", errors="replace"))
            if token[:1] in (b"R", b"C") or token[1:2] in (b"R", b"C"):
                next(tokens, None)  # the rename's or copy's original path
        if not entries:
            return Observation.of(True, "git status: nothing staged, changed or untracked", result.reference)
        shown = ", ".join(entry[3:] for entry in entries[:5]) + (" ..." if len(entries) > 5 else "")
        return Observation.of(
            False, f"git status: {len(entries)} changed or untracked path(s): {shown}", result.reference
        )


class AheadBehind(GitAdapter):
    """``git.ahead_behind`` (int): commits ``branch`` is ahead of (or behind) its upstream.

    Args: ``branch`` (default: current), ``upstream`` (default: the branch's configured
    upstream), ``field``: ``ahead`` (default; commits on the branch not in the upstream) or
    ``behind`` (commits in the upstream not on the branch). The other count is in the
    detail. Counts are against the remote-tracking ref as last fetched (nothing is
    fetched). ABSENT when the branch has no upstream.
    """

    name = "git.ahead_behind"
    args = frozenset({"branch", "upstream", "field"})

    def _observe(self, request: VerifierRequest) -> Observation:
        deadline = Deadline(request.timeout)
        field = self.text_arg(request, "field", "ahead")
        if field not in ("ahead", "behind"):
            raise VerifierArgumentError(f"field must be ahead or behind, not {field!r}")
        branch, problem = self.branch_arg(request, deadline)
        if problem is not None:
            return problem
        assert branch is not None
        upstream = self.text_arg(request, "upstream")
        if upstream is not None:
            upstream_ref = check_branch_name(upstream)
        else:
            ref = f"refs/heads/{branch}"
            listing = self.git(request, deadline, "for-each-ref", "--format=%(refname)%00%(upstream)", ref)
            if not listing.ok:
                return self.failure(request, listing)
            found = [
                line.partition("\x00")[2] for line in listing.stdout.splitlines() if line.partition("\x00")[0] == ref
            ]
            if not found:
                return Observation.absent(f"there is no local branch {branch}", listing.reference)
            if not found[0]:
                return Observation.absent(f"branch {branch} has no upstream to compare with", listing.reference)
            upstream_ref = found[0]
        result = self.git(
            request, deadline, "rev-list", "--left-right", "--count", f"refs/heads/{branch}...{upstream_ref}", "--"
        )
        if not result.ok:
            return Observation.unavailable(
                f"cannot compare {branch} with {upstream_ref}: {result.describe_failure()}", result.reference
            )
        parts = result.stdout.split()
        if len(parts) != 2 or not all(p.isdigit() for p in parts):
            return Observation.unavailable(f"unexpected rev-list output {result.stdout.strip()!r}", result.reference)
        ahead, behind = int(parts[0]), int(parts[1])
        short = upstream_ref.removeprefix("refs/remotes/").removeprefix("refs/heads/")
        return Observation.of(
            ahead if field == "ahead" else behind,
            f"{branch} is {ahead} ahead of and {behind} behind {short} (as last fetched)",
            result.reference,
        )


_URL_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*)://")


def is_local_url(url: str) -> bool:
    """True for a remote on this machine: a path or a ``file://`` URL (git's own rules)."""
    url = url.strip()
    if url.lower().startswith("file://"):
        return True
    if _URL_SCHEME.match(url):
        return False
    # scp-like syntax (host:path) has a colon before the first slash.
    colon, slash = url.find(":"), url.find("/")
    return not (colon > 0 and (slash == -1 or colon < slash))
