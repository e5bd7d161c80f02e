"""Whether a remote branch moved since this clone last fetched it.

``git.remote_moved`` compares the remote's tip (``git ls-remote``, which asks the remote and
changes nothing locally: no ref, no object is written) with this clone's view of it, the
remote-tracking ref ``refs/remotes/<remote>/<branch>``. A force push is only safe over
commits someone here has seen.
"""

from __future__ import annotations

from statewise.verifiers.base import Deadline, Observation, VerifierRequest
from statewise.verifiers.git import GitAdapter, check_branch_name, check_remote_name

__all__ = ["RemoteMoved"]


class RemoteMoved(GitAdapter):
    """``git.remote_moved`` (bool): the remote's ``branch`` differs from ``<remote>/<branch>``.

    True when the remote's tip is not the one this clone last fetched (a teammate pushed: a
    ``--force-with-lease`` would be refused, a ``--force`` would overwrite their commits);
    False when they agree, or when neither exists (a branch never pushed). The remote
    having the branch while this clone has no tracking ref for it is True (its commits were
    never fetched here). UNAVAILABLE when the remote cannot be asked (offline, no access):
    never "not moved" on a guess.
    """

    name = "git.remote_moved"
    args = frozenset({"branch", "remote"})

    def _observe(self, request: VerifierRequest) -> Observation:
        deadline = Deadline(request.timeout)
        remote = check_remote_name(self.text_arg(request, "remote") or "origin")
        branch, problem = self.branch_arg(request, deadline)
        if problem is not None:
            return problem
        assert branch is not None
        check_branch_name(branch)
        asked = self.git(request, deadline, "ls-remote", "--", remote, f"refs/heads/{branch}")
        if not asked.ok:
            return Observation.unavailable(f"could not ask {remote} for {branch}: {asked.describe_failure()}",
                                           asked.reference)
        remote_tip = next((line.split("\t", 1)[0] for line in asked.stdout.splitlines()
                           if line.endswith(f"\trefs/heads/{branch}")), None)
        seen = self.git(request, deadline, "rev-parse", "-q", "--verify", f"refs/remotes/{remote}/{branch}^{{commit}}")
        if seen.error is not None or seen.returncode not in (0, 1):
            return self.failure(request, seen)
        local_view = seen.stdout.strip() or None
        if remote_tip == local_view:
            shown = f"at {remote_tip[:12]}" if remote_tip else "absent on both sides"
            return Observation.of(False, f"{remote}'s {branch} is as last fetched ({shown})", asked.reference)
        return Observation.of(
            True,
            f"{remote}'s {branch} is at {remote_tip[:12] if remote_tip else 'nothing (deleted)'}, but this clone last "
            f"saw {local_view[:12] if local_view else 'nothing'} (refs/remotes/{remote}/{branch})",
            asked.reference,
        )
