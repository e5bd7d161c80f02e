"""Observation capture: facts that a tool's output reveals, written to the store.

After a shell command ran, its command line and output are matched against the contract's
``observations`` rules (a push rejected because the branch is protected, the interpreter
version a command printed, a missing npm script). Each match becomes typed evidence with
provenance pointing at the tool call (source ``tool_output``, machine authority), and is
written through the store's normal paths: a confirmation when the store already says so, a
supersession (or narrowing) with lineage when it says otherwise, a new record when it says
nothing. This is how records enter the store in real use, and how stale ones get contradicted.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from statewise.contract import Contract, ObservationRule, RegexTimeout, contract_regex
from statewise.errors import ConflictError, StateWiseError, TransitionError, ValueTypeError
from statewise.integrations.hook_files import AGENT_TOOLS
from statewise.records import Authority, Evidence, RecordDraft, SourceKind, utcnow
from statewise.scopes import Scope, ScopeLevel, normalize_repo_identity
from statewise.store import default_location, open_store
from statewise.values import parse_value_text, same_value
from statewise.verifiers.git import is_local_url
from statewise.workspace import derive_task_scope, git_output

if TYPE_CHECKING:
    import regex

    from statewise.integrations.hooks import HookRequest
    from statewise.scopes import TaskScope
    from statewise.store.base import Store

__all__ = ["Observed", "capture", "match_observations", "output_text", "push_destination"]


def output_text(response: Any) -> str:
    """The text a tool printed, from the agents' different response shapes."""
    if response is None:
        return ""
    if isinstance(response, str):
        return response
    if isinstance(response, Mapping):
        parts = [str(response[name]) for name in ("stdout", "stderr", "output", "error", "llmContent",
                                                  "returnDisplay", "content") if response.get(name)]
        return "\n".join(parts) if parts else json.dumps(response)
    if isinstance(response, list):
        return "\n".join(output_text(item) for item in response)
    return str(response)


@dataclass(frozen=True)
class Observed:
    """One fact a rule found: the key, its typed value, and the scope it is established in."""

    rule: ObservationRule
    key: str
    value: Any
    scope: str
    excerpt: str


# Output beyond this many characters is not searched (a rule looks for a short message).
MAX_OUTPUT_CHARS = 1_000_000


# git push prints "To <url>" before the ref statuses of each remote it pushed to.
_PUSH_DESTINATION = re.compile(r"^To (\S+)[ \t]*$", re.MULTILINE)


def _identity(url: str, cwd: Path | None) -> str:
    """A remote URL's repository identity, a relative local path taken against ``cwd``."""
    text = url.strip()
    if cwd is not None and is_local_url(text) and not text.lower().startswith("file://"):
        text = os.path.normpath(os.path.join(str(cwd), os.path.expanduser(text)))
    return normalize_repo_identity(text)


def push_destination(output: str, task_scope: TaskScope, cwd: Path | None) -> tuple[bool, str | None]:
    """Where the push whose output this is went: ``(True, repo identity)``, ``(True, None)``
    when that cannot be told (several repositories, or one that is no valid scope), and
    ``(False, None)`` when the output names no destination at all."""
    urls = set(_PUSH_DESTINATION.findall(output))
    if not urls:
        return False, None
    origin = git_output(cwd, "remote", "get-url", "origin") if cwd is not None else None
    found: set[str | None] = set()
    for url in urls:
        if origin and (url == origin or _identity(url, cwd) == _identity(origin, cwd)):
            found.add(task_scope.repo)
            continue
        identity: str | None = _identity(url, cwd)
        try:
            Scope.parse(f"repo:{identity}")
        except (StateWiseError, ValueError):
            identity = None
        found.add(identity)
    return (True, found.pop()) if len(found) == 1 else (True, None)


def match_observations(contract: Contract, command: str, output: str, task_scope: TaskScope,
                       cwd: Path | None = None) -> list[Observed]:
    """Every fact the contract's observation rules find in one command's output.

    Every match of a rule counts (a push refused for two protected branches names both), once
    per key and scope. A value that does not parse as the key's type is no fact at all. A
    branch-level fact (a ``branch`` group) lands in the repository the push went to (its
    ``To <url>`` line, ``cwd`` resolving relative paths): origin's is the task's repository;
    another remote's is that repository; when the output names several, nothing is recorded."""
    found: list[Observed] = []
    seen: set[tuple[str, str]] = set()
    output = output[-MAX_OUTPUT_CHARS:]
    named, destination = push_destination(output, task_scope, cwd)
    for rule in contract.observations:
        try:  # time-bounded: a pathological contract pattern finds nothing rather than hang
            command_match = contract_regex(rule.command).search(command)
            if command_match is None:
                continue
            output_matches = contract_regex(rule.output, multiline=True).finditer(output)
        except RegexTimeout:
            continue
        for output_match in output_matches:
            fact = _fact(contract, rule, command_match, output_match, task_scope,
                         destination if named else task_scope.repo, named)
            if fact is not None and (fact.key, fact.scope) not in seen:
                seen.add((fact.key, fact.scope))
                found.append(fact)
    return found


def _fact(contract: Contract, rule: ObservationRule, command_match: regex.Match[str],
          output_match: regex.Match[str], task_scope: TaskScope,
          repo: str | None, named: bool) -> Observed | None:
    groups = {**{k: v for k, v in command_match.groupdict().items() if v},
              **{k: v for k, v in output_match.groupdict().items() if v}}
    try:
        key = rule.key.format(**groups) if "{" in rule.key else rule.key
    except (KeyError, IndexError, ValueError):
        return None
    key_type = contract.key_type(key)
    spec = contract.state_spec(key)
    if key_type is None or spec is None:
        return None
    try:
        value = rule.value if rule.value is not None else parse_value_text(
            groups.get("value", ""), key_type.value_type, choices=key_type.choices, key=key)
    except ValueTypeError:
        return None
    scope = task_scope.most_specific_at(spec.scope)
    if spec.scope is ScopeLevel.BRANCH and groups.get("branch"):
        if repo is None:
            return None  # the push went somewhere that cannot be told: no fact to place
        try:
            scope = Scope(ScopeLevel.BRANCH, repo, groups["branch"])
            Scope.parse(str(scope))  # a branch name the scope grammar refuses is no fact
        except (StateWiseError, ValueError):
            return None
    if scope is None:
        return None
    return Observed(rule, key, value, str(scope), output_match.group(0)[:200])


def capture(request: HookRequest, *, store_location: str | None, contract: Contract) -> str:
    """Record what a finished shell call revealed; return a one-line note for the agent."""
    if request.tool_name not in AGENT_TOOLS[request.agent]["shell"]:
        return ""
    command = request.tool_input.get("command")
    if isinstance(command, list):
        command = " ".join(str(part) for part in command)
    if not isinstance(command, str):
        return ""
    workspace = request.cwd.resolve()
    task_scope = derive_task_scope(workspace)
    observed = match_observations(contract, command.strip(), output_text(request.tool_response), task_scope,
                                  cwd=request.cwd)
    if not observed:
        return ""
    notes = []
    store = open_store(store_location or default_location(workspace), key_schema=contract)
    try:
        for fact in observed:
            spec = contract.state_spec(fact.key)
            if spec is None:  # _fact keeps only keys the contract declares
                continue
            evidence = Evidence(
                key=fact.key, value=fact.value, value_type=spec.value_type, scope=fact.scope,
                source=SourceKind.TOOL_OUTPUT, authority=Authority.MACHINE,
                actor=f"{request.agent}:{request.tool_name}", observed_at=utcnow(),
                detail=f"{fact.rule.name}: {fact.excerpt}",
                reference=request.tool_use_id or request.session_id or None,
            )
            notes.append(_write_once_settled(store, task_scope, fact, evidence))
    finally:
        store.close()
    return "StateWise recorded from this output: " + "; ".join(notes)


#: How often a capture that lost a race is read and written again.
_WRITE_ATTEMPTS = 3


def _write_once_settled(store: Store, task_scope: TaskScope, fact: Observed, evidence: Evidence) -> str:
    """:func:`_write`, again from a fresh read when another writer got there first: Claude Code
    runs one post-tool hook per matching ``if`` rule, in parallel, so two processes can capture
    the same output at once. The store refuses the loser's write (one active record per key and
    scope, version checks); written again, it is a confirmation of what the winner stored."""
    for attempt in range(_WRITE_ATTEMPTS):
        try:
            return _write(store, task_scope, fact, evidence)
        except (ConflictError, TransitionError) as error:
            if attempt == _WRITE_ATTEMPTS - 1:
                return f"could not record {fact.key}: {error}"
        except StateWiseError as error:
            return f"could not record {fact.key}: {error}"
    raise AssertionError("unreachable")


def _write(store: Store, task_scope: TaskScope, fact: Observed, evidence: Evidence) -> str:
    current = next(iter(store.retrieve(task_scope, keys=[fact.key]).records), None)
    if current is None or not Scope.parse(current.scope).contains(Scope.parse(fact.scope)):
        existing = store.get_active(fact.key, fact.scope)
        if existing is None:
            created = store.put(RecordDraft(key=fact.key, value=fact.value, scope=fact.scope,
                                            provenance=evidence.provenance(), value_type=evidence.value_type,
                                            observed_at=evidence.observed_at, verified_at=evidence.observed_at))
            return f"{fact.key} = {json.dumps(fact.value)} in {fact.scope} (new record {created.id})"
        current = existing
    if same_value(current.value, fact.value, current.value_type):
        store.confirm(current.id, evidence.model_copy(update={"scope": current.scope}),
                      expected_version=current.version)
        return f"{fact.key} = {json.dumps(fact.value)} confirmed ({current.id})"
    result = store.supersede(current.id, evidence, expected_version=current.version, reason=fact.rule.name)
    return (f"{fact.key} was {json.dumps(current.value)}, now {json.dumps(fact.value)} in {result.new.scope} "
            f"({result.link.kind.value}, record {result.new.id})")
