"""``node.version``: the version of the ``node`` the agent's PATH resolves to."""

from __future__ import annotations

import re

from statewise.verifiers.base import Adapter, Observation, VerifierArgumentError, VerifierRequest, run_command, which

__all__ = ["NodeVersion"]

_NODE_VERSION = re.compile(r"^\s*v?(\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.]+)?)\s*$", re.MULTILINE)


class NodeVersion(Adapter):
    """``node.version`` (version): ``node --version`` (``v20.1.0``) reported as ``20.1.0``.

    Versions from every built-in adapter carry no leading ``v``. Args: ``program`` (default
    ``node``; a command name looked up on the agent's PATH). ABSENT when it is not on PATH.
    """

    name = "node.version"
    args = frozenset({"program"})

    def _observe(self, request: VerifierRequest) -> Observation:
        program = self.text_arg(request, "program", "node") or "node"
        if "/" in program:
            raise VerifierArgumentError(f"program must be a command name looked up on PATH, not {program!r}")
        workspace = self.workspace(request)
        path = which(program, request.env, workspace)
        if path is None:
            return Observation.absent(f"{program} is not on the agent's PATH")
        result = run_command([path, "--version"], cwd=workspace, timeout=request.timeout, env=request.env)
        if not result.ok:
            return Observation.unavailable(result.describe_failure(), result.reference)
        match = _NODE_VERSION.search(result.stdout)
        if match is None:
            return Observation.unavailable(
                f"{path} --version printed no version: {result.stdout.strip()[:100]!r}", result.reference
            )
        return Observation.of(match.group(1), f"{path} --version printed {result.stdout.strip()}", result.reference)
