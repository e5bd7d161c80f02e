"""Node adapters: the version of the ``node`` on PATH, and installed npm packages."""

from __future__ import annotations

import json
import re

from statewise.verifiers.base import (
    Adapter,
    Observation,
    VerifierArgumentError,
    VerifierRequest,
    run_command,
    strict_output,
    which,
)

__all__ = ["NodeVersion", "NpmPackageVersion", "check_npm_package_name"]

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
        text = strict_output(result, path)
        if isinstance(text, Observation):
            return text
        match = _NODE_VERSION.search(text)
        if match is None:
            return Observation.unavailable(
                f"{path} --version printed no version: {result.stdout.strip()[:100]!r}", result.reference
            )
        return Observation.of(match.group(1), f"{path} --version printed {result.stdout.strip()}", result.reference)


# npm's package-name rules (validate-npm-package-name): at most 214 characters, lower case,
# URL-safe, not starting with "." or "_", optionally "@scope/name". A leading "-" is refused
# as well: such a name would be read as an option, and no package needs one.
_NPM_NAME = re.compile(r"^(?:@[a-z0-9~][a-z0-9._~-]*/)?[a-z0-9~][a-z0-9._~-]*$")

# npm writes debug logs, checks for updates and creates ~/.npm on every run; a verifier does
# none of it. A cache under /dev/null cannot be created, and `npm ls` does not need one.
_NPM_QUIET = {
    "npm_config_cache": "/dev/null/statewise-verifier-no-npm-cache",
    "npm_config_logs_max": "0",
    "npm_config_update_notifier": "false",
    "npm_config_fund": "false",
    "npm_config_audit": "false",
    "npm_config_offline": "true",
}


def check_npm_package_name(name: object) -> str:
    """``name`` if it is a valid npm package name (and cannot be read as an option)."""
    if not isinstance(name, str) or not name or len(name) > 214 or not _NPM_NAME.match(name):
        raise VerifierArgumentError(f"{name!r} is not a valid npm package name")
    return name


class NpmPackageVersion(Adapter):
    """``npm.package_version`` (version): the installed version of npm package ``package``.

    Runs ``npm ls --depth=0 --json -- <package>`` in the workspace: the name is validated as
    an npm package name and placed after ``--``, so it is never an option (issue 11, defect
    8: ``--logs-dir=DIR`` made npm write there). npm runs without log files, update check or
    network and without creating its cache (``npm_config_logs_max=0``,
    ``npm_config_update_notifier=false``, ``npm_config_offline=true``, a cache path under
    ``/dev/null``). ABSENT when npm reports the package missing or not
    installed; UNAVAILABLE when npm is not on PATH, fails otherwise, or prints something
    that is not the JSON it documents.
    """

    name = "npm.package_version"
    args = frozenset({"package", "program"})
    required = frozenset({"package"})

    def _observe(self, request: VerifierRequest) -> Observation:
        package = check_npm_package_name(self.text_arg(request, "package"))
        program = self.text_arg(request, "program", "npm") or "npm"
        if "/" in program:
            raise VerifierArgumentError(f"program must be a command name looked up on PATH, not {program!r}")
        workspace = self.workspace(request)
        path = which(program, request.env, workspace)
        if path is None:
            return Observation.unavailable(f"{program} is not on the agent's PATH; cannot ask it about {package}")
        env = {**request.env, **_NPM_QUIET}
        result = run_command(
            [path, "ls", "--depth=0", "--json", "--", package], cwd=workspace, timeout=request.timeout, env=env
        )
        if result.error is not None:
            return Observation.unavailable(result.error, result.reference)
        text = strict_output(result, f"{program} ls")
        if isinstance(text, Observation):
            return text
        try:
            document = json.loads(text)
        except json.JSONDecodeError:
            return Observation.unavailable(
                f"{program} ls printed no JSON (status {result.returncode}): {text.strip()[:120]!r}", result.reference
            )
        if not isinstance(document, dict):
            return Observation.unavailable(f"{program} ls printed JSON that is not an object", result.reference)
        dependencies = document.get("dependencies")
        entry = dependencies.get(package) if isinstance(dependencies, dict) else None
        if entry is None:
            if result.returncode in (0, 1) and (dependencies is None or isinstance(dependencies, dict)):
                return Observation.absent(f"{package} is not installed in {workspace} ({program} ls)", result.reference)
            return Observation.unavailable(result.describe_failure(), result.reference)
        if not isinstance(entry, dict):
            return Observation.unavailable(f"{program} ls: unexpected entry for {package}: {entry!r}"[:200],
                                           result.reference)
        if entry.get("missing") is True:
            return Observation.absent(f"{package} is declared but not installed in {workspace}", result.reference)
        version = entry.get("version")
        if not isinstance(version, str) or not _VERSION.match(version):
            return Observation.unavailable(f"{program} ls gave no version for {package}: {version!r}"[:200],
                                           result.reference)
        note = " (it does not satisfy the declared range)" if entry.get("invalid") else ""
        return Observation.of(version, f"{package} {version} is installed in {workspace}{note}", result.reference)


_VERSION = re.compile(r"^\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.+-]+)?$")
