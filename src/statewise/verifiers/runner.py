"""Running a verifier binding safely: placeholders, the registry, timeouts and type checks.

:func:`run_verifier` is the only way the pipeline calls an adapter. It never raises and
never fails open: an unknown adapter, an exception, an adapter that overruns its timeout,
a malformed answer or an observed value that is not of the key's declared type all become
``UNAVAILABLE`` with a detail that says why.
"""

from __future__ import annotations

import math
import posixpath
import re
import string
import threading
import time
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from statewise.contract import COMMAND_ADAPTER, Contract, VerifierSpec, render_template
from statewise.errors import StateWiseError, ValueTypeError
from statewise.records import base_key
from statewise.registry import Registry
from statewise.scopes import TaskScope
from statewise.values import ValueType, check_value
from statewise.verifiers.base import Observation, ObservationStatus, VerifierRequest, within

__all__ = ["PlaceholderError", "UnsafeValueError", "fill_placeholders", "run_verifier", "verify_key"]

# Extra time, beyond the request's timeout, before run_verifier stops waiting for an adapter
# (run_command itself waits up to one second to reap a killed process group).
GRACE_SECONDS = 1.5


class PlaceholderError(StateWiseError, ValueError):
    """A binding uses a placeholder the task has no value for (e.g. {branch} on a detached HEAD)."""

    def __init__(self, placeholder: str, adapter: str) -> None:
        self.placeholder = placeholder
        self.adapter = adapter
        super().__init__(f"the {adapter} binding uses {{{placeholder}}}, but the task has no {placeholder}")


class UnsafeValueError(PlaceholderError):
    """A placeholder value that would change what a command means, not just what it asks.

    A value that turns an argv element into an option (``{qualifier}`` filled with
    ``--logs-dir=/tmp/x``), or that holds a NUL, a newline or another control character, is
    never placed in an argv: the verifier is UNAVAILABLE instead (issue 11, defect 8)."""

    def __init__(self, placeholder: str, adapter: str, why: str) -> None:
        self.why = why
        ValueError.__init__(self, f"the {adapter} binding's {{{placeholder}}} value is refused: {why}")
        self.placeholder = placeholder
        self.adapter = adapter


def fill_placeholders(
    spec: VerifierSpec,
    *,
    workspace: str | Path | None,
    branch: str | None,
    repo: str | None,
    user: str | None,
    qualifier: str | None,
) -> dict[str, Any]:
    """The adapter arguments of ``spec`` with every ``{placeholder}`` filled in.

    For an ordinary adapter this is ``spec.args`` filled. For the ``command`` adapter it is
    ``{"argv": [...], "cwd": ..., "stream": ..., "read": {"regex"|"json_path"|"exit_status": ...}}``
    with the placeholders in argv (every element but the program), cwd and json_path filled.
    Values are substituted as whole strings and never re-parsed by a shell.

    Raises :class:`PlaceholderError` when the spec uses a placeholder whose value is None
    or empty (a branch-scoped binding on a detached HEAD, a ``{qualifier}`` without one).
    """
    values = {
        "workspace": None if workspace is None else str(workspace),
        "branch": branch,
        "repo": repo,
        "user": user,
        "qualifier": qualifier,
    }
    for name in sorted(spec.placeholders()):
        if not values.get(name):
            raise PlaceholderError(name, spec.adapter)
    known = {name: value for name, value in values.items() if value}

    def fill(item: Any) -> Any:
        return render_template(item, known) if isinstance(item, str) else item

    if spec.adapter != COMMAND_ADAPTER:
        return {
            name: tuple(fill(item) for item in value) if isinstance(value, tuple) else fill(value)
            for name, value in spec.args.items()
        }
    read: dict[str, Any] = {}
    if spec.read is not None:
        if spec.read.exit_status is not None:
            read["exit_status"] = dict(spec.read.exit_status)
        if spec.read.regex is not None:
            read["regex"] = spec.read.regex  # a pattern, not a template
        if spec.read.json_path is not None:
            read["json_path"] = fill(spec.read.json_path)
    argv = list(spec.argv or ())
    filled_argv = argv[:1]
    for template in argv[1:]:
        filled = fill(template)
        _check_argv_item(template, filled, known, spec.adapter)
        filled_argv.append(filled)
    cwd = spec.cwd
    if cwd not in (None, "workspace"):
        cwd = _checked_cwd(cwd, fill(cwd), known, spec.adapter)
    return {
        "argv": filled_argv,
        "cwd": cwd,
        "stream": spec.stream,
        "read": read,
    }


_CONTROL_CHARACTERS = re.compile(r"[\x00-\x1f\x7f]")


def _check_argv_item(template: str, filled: str, values: Mapping[str, str], adapter: str) -> None:
    """Refuse a filled argv element whose placeholder values change the command's meaning."""
    used = sorted({name for _, name, _, _ in string.Formatter().parse(template) if name})
    for name in used:
        value = values.get(name, "")
        if _CONTROL_CHARACTERS.search(value):
            raise UnsafeValueError(name, adapter, f"{value[:60]!r} holds a control character")
    if filled.startswith("-") and not template.startswith("-"):
        # The template did not write an option; a value made it one.
        name = used[0] if used else "?"
        raise UnsafeValueError(
            name, adapter, f"{filled[:60]!r} would be read as an option by the program, not as a value"
        )


def _checked_cwd(template: str, filled: str, values: Mapping[str, str], adapter: str) -> str:
    """A filled ``cwd``: no control characters, and under the workspace when the template says so."""
    for _, name, _, _ in string.Formatter().parse(template):
        if name and _CONTROL_CHARACTERS.search(values.get(name, "")):
            raise UnsafeValueError(name, adapter, f"{values[name][:60]!r} holds a control character")
    workspace = values.get("workspace")
    if template.startswith("{workspace}") and workspace:
        root = posixpath.normpath(workspace)
        if not within(posixpath.normpath(filled), root):
            name = next((n for _, n, _, _ in string.Formatter().parse(template) if n and n != "workspace"), "cwd")
            raise UnsafeValueError(name, adapter, f"cwd {filled[:80]!r} leaves the workspace {root}")
    return filled


VERIFIERS: Registry[object] = Registry("verifier", "statewise.verifiers")
"""Verifier adapters by name (``git.current_branch``, ``command``, ...). Entries may be
classes (instantiated with no arguments), instances, or callables taking a request."""


def _unavailable(detail: str, started: float) -> Observation:
    return Observation(ObservationStatus.UNAVAILABLE, None, detail, None, time.monotonic() - started)


def _instantiate(name: str) -> Any:
    plugin = VERIFIERS.get(name)
    return plugin() if isinstance(plugin, type) else plugin


def run_verifier(spec: VerifierSpec, request: VerifierRequest) -> Observation:
    """Run the adapter ``spec.adapter`` for ``request``; never raises, never fails open.

    The adapter comes from :data:`statewise.verifiers.VERIFIERS` (classes are instantiated
    with no arguments; a plain callable is called with the request). It runs in a worker
    thread; if it has not answered ``request.timeout`` + a short grace period later, the
    result is UNAVAILABLE (built-in adapters also kill their own subprocesses at the
    timeout). An OBSERVED value is checked with :func:`statewise.values.check_value`
    against ``request.value_type`` and ``request.choices``.
    """
    started = time.monotonic()
    name = getattr(spec, "adapter", None)
    try:
        timeout = float(request.timeout)
    except (TypeError, ValueError):
        return _unavailable(f"verifier {name}: timeout {request.timeout!r} is not a number", started)
    if not math.isfinite(timeout) or timeout <= 0:
        return _unavailable(f"verifier {name}: timeout must be positive, got {request.timeout!r}", started)
    if name == COMMAND_ADAPTER and not request.args.get("argv"):
        return _unavailable(
            "verifier command: request.args has no argv; build the args with fill_placeholders", started
        )
    try:
        adapter = _instantiate(str(name))
    except Exception as error:  # noqa: BLE001 - unknown plugin, import error, constructor error
        return _unavailable(f"verifier {name}: cannot load the adapter: {error}", started)

    outcome: dict[str, Any] = {}

    def work() -> None:
        try:
            observe = getattr(adapter, "observe", None)
            outcome["observation"] = observe(request) if observe is not None else adapter(request)
        except BaseException as error:  # noqa: BLE001 - reported, never propagated
            outcome["error"] = error

    worker = threading.Thread(target=work, name=f"statewise-verifier-{name}", daemon=True)
    worker.start()
    worker.join(timeout + GRACE_SECONDS)
    if worker.is_alive():
        return _unavailable(f"verifier {name} did not answer within {timeout:g}s; nothing was decided", started)
    if "error" in outcome:
        raised = outcome["error"]
        return _unavailable(f"verifier {name} raised {type(raised).__name__}: {raised}"[:500], started)
    observation = outcome.get("observation")
    if not isinstance(observation, Observation):
        return _unavailable(f"verifier {name} returned {type(observation).__name__}, not an Observation", started)
    elapsed = time.monotonic() - started
    status = observation.status
    if not isinstance(status, ObservationStatus):
        return _unavailable(f"verifier {name} returned an unknown status {status!r}", started)
    if status is not ObservationStatus.OBSERVED:
        return replace(
            observation, value=None, elapsed=elapsed, detail=observation.detail or f"verifier {name}: {status}"
        )
    try:
        check_value(
            observation.value,
            ValueType(request.value_type),
            choices=request.choices,
            key=request.key,
        )
    except (ValueTypeError, ValueError) as error:
        return replace(
            observation,
            status=ObservationStatus.UNAVAILABLE,
            value=None,
            elapsed=elapsed,
            detail=f"verifier {name} observed a value of the wrong type ({error}); "
            f"nothing was decided. It saw: {observation.detail}"[:1000],
        )
    return replace(observation, elapsed=elapsed)


def verify_key(
    contract: Contract,
    key: str,
    task: TaskScope,
    workspace: str | Path,
    *,
    environ: Mapping[str, str] | None = None,
    timeout: float | None = None,
) -> Observation:
    """Observe record key ``key`` (``git.current_branch``, ``python.package_version[requests]``).

    Looks up the key's verifier binding in ``contract``, fills its placeholders from
    ``task`` (``{qualifier}`` from ``key[...]``, ``{workspace}`` from ``workspace``) and
    runs it with :func:`run_verifier`. ``environ`` is the agent's process environment
    (default: this process's); ``timeout`` overrides the binding's. An undeclared key, a key
    without a verifier, or a placeholder the task cannot fill gives UNAVAILABLE with the reason.
    """
    started = time.monotonic()
    try:
        spec = contract.state_spec(key)
        if spec is None:
            return _unavailable(f"{key}: not a key the {contract.name} contract declares", started)
        key_type = contract.key_type(key)
        if key_type is None:
            return _unavailable(f"{key}: {base_key(key)} is qualified; name one, e.g. {base_key(key)}[name]", started)
        binding = contract.verifier_for(key)
        if binding is None:
            authority = getattr(spec.authority, "value", spec.authority)
            return _unavailable(
                f"{key}: the contract gives it no verifier (authority {authority}); it cannot be observed", started
            )
        qualifier = key[len(base_key(key)) + 1 : -1] if "[" in key else None
        try:
            args = fill_placeholders(
                binding,
                workspace=str(workspace),
                branch=task.branch,
                repo=task.repo,
                user=task.user,
                qualifier=qualifier,
            )
        except PlaceholderError as error:
            return _unavailable(f"{key}: {error}", started)
        request = VerifierRequest(
            key=key,
            qualifier=qualifier,
            value_type=key_type.value_type,
            choices=key_type.choices,
            args=args,
            workspace=Path(workspace),
            task=task,
            timeout=float(timeout if timeout is not None else binding.timeout),
            environ=environ,
        )
    except Exception as error:  # noqa: BLE001 - never raise
        return _unavailable(f"{key}: cannot prepare the verifier: {type(error).__name__}: {error}", started)
    return run_verifier(binding, request)
