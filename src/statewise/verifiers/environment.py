"""Environment adapters: the agent's environment variables and PATH lookups."""

from __future__ import annotations

import re

from statewise.verifiers.base import Adapter, Observation, VerifierArgumentError, VerifierRequest, which

__all__ = ["EnvVar", "Which"]

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class EnvVar(Adapter):
    """``env.var`` (string): variable ``name`` of the agent's process environment.

    ABSENT when it is not set (an empty value is a value). The environment is the request's
    ``environ`` (the agent's), or this process's when none is given.
    """

    name = "env.var"
    args = frozenset({"name"})
    required = frozenset({"name"})

    def _observe(self, request: VerifierRequest) -> Observation:
        variable = str(request.args["name"])
        if not _NAME.match(variable):
            raise VerifierArgumentError(f"{variable!r} is not an environment variable name")
        value = request.env.get(variable)
        if value is None:
            return Observation.absent(f"{variable} is not set in the agent's environment", variable)
        return Observation.of(value, f"{variable} is set ({len(value)} characters)", variable)


class Which(Adapter):
    """``path.which`` (path): where command ``name`` resolves on the agent's PATH.

    Like ``shutil.which`` on the request's ``PATH`` (or the ``path`` argument), relative
    entries taken against the workspace. ABSENT when nothing executable of that name is found.
    """

    name = "path.which"
    args = frozenset({"name", "path"})
    required = frozenset({"name"})

    def _observe(self, request: VerifierRequest) -> Observation:
        command = str(request.args["name"])
        if not command or "/" in command or "\x00" in command:
            raise VerifierArgumentError(f"{command!r} is not a command name (no '/')")
        search = self.text_arg(request, "path")
        found = which(command, request.env, self.workspace(request), search)
        shown = "the given path" if search is not None else "the agent's PATH"
        if found is None:
            return Observation.absent(f"{command} is not found on {shown}", command)
        return Observation.of(found, f"{command} resolves to {found} on {shown}", found)
