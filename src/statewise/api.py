"""A small API for putting StateWise in front of any agent loop's tool calls.

::

    from statewise.api import StateWise

    with StateWise("/path/to/repo") as sw:
        sw.remember("project.test_command", "tox -q", authority="developer")
        decision = sw.check("push the changes", {"tool": "git", "operation": "git.push",
                                                 "args": {"remote": "origin", "branch": "main", "force": True}})
        if decision.execute:
            run_it(decision.action)          # the checked (possibly replanned) action
        else:
            tell_the_agent(decision.reason)  # names the record or check that blocked it

``StateWise.call`` does both steps: it checks, and calls your executor only with an action
the guard passed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from statewise.actions import Action
from statewise.clarify import ApprovalChannel, ClarificationChannel
from statewise.contract import Contract, builtin_contract, load_contract
from statewise.errors import KeyNameError
from statewise.pipeline import Decision, Guard, GuardConfig
from statewise.pipeline.resolution import established_scope
from statewise.planners.base import Planner, Task
from statewise.records import Evidence, Provenance, Record, RecordDraft, Retrieval, utcnow
from statewise.store import open_store
from statewise.store.base import Store
from statewise.workspace import derive_task_scope

__all__ = ["StateWise"]

T = TypeVar("T")


class StateWise:
    """StateWise for one workspace: its store, its contract, its guard."""

    def __init__(
        self,
        workspace: str | Path = ".",
        *,
        store: Store | str | None = None,
        contract: Contract | str | Path | None = None,
        planner: Planner | None = None,
        clarifier: ClarificationChannel | None = None,
        approver: ApprovalChannel | None = None,
        config: GuardConfig | None = None,
        user: str | None = None,
    ) -> None:
        self.workspace = Path(workspace).resolve()
        if isinstance(contract, Contract):
            self.contract = contract
        else:
            self.contract = load_contract(contract) if contract else builtin_contract()
        self._owns_store = not isinstance(store, Store)
        self.store = store if isinstance(store, Store) else open_store(store, key_schema=self.contract)
        self.user = user
        self.guard = Guard(self.store, self.contract, planner, clarifier=clarifier, approver=approver,
                           config=config, workspace=self.workspace)

    def task(self, text: str, *, family: str | None = None, params: Mapping[str, str] | None = None) -> Task:
        """A task running in this workspace (its scope derived from git)."""
        return Task(text=text, scope=derive_task_scope(self.workspace, user=self.user), family=family,
                    workspace=str(self.workspace), params=dict(params or {}))

    def check(self, task: str | Task, action: Action | Mapping[str, Any] | None = None) -> Decision:
        """Decide whether ``action`` may run (with a planner, ``None`` lets it propose)."""
        if isinstance(task, str):
            task = self.task(task)
        if action is not None and not isinstance(action, Action):
            action = Action.model_validate(dict(action))
        return self.guard.check(task, action)

    def call(self, task: str | Task, action: Action | Mapping[str, Any], execute: Callable[[Action], T]
             ) -> T | Decision:
        """Check, then run ``execute(checked_action)`` only if the guard passed it.

        Returns what ``execute`` returned, or the stop Decision (``decision.reason`` says why).
        """
        decision = self.check(task, action)
        if decision.execute and decision.action is not None:
            return execute(decision.action)
        return decision

    def remember(
        self, key: str, value: Any, *, scope: str | None = None, authority: str = "machine",
        source: str | None = None, actor: str = "agent", reference: str | None = None, replace: bool = True,
    ) -> Record:
        """Record a fact. The scope defaults to this workspace's scope at the key's level."""
        spec = self.contract.state_spec(key)
        if spec is None or self.contract.key_type(key) is None:
            raise KeyNameError(key, f"the {self.contract.name} contract does not declare this key")
        if scope is None:
            scope = established_scope(derive_task_scope(self.workspace, user=self.user), spec, None)
        default_source = {"machine": "observation", "developer": "developer", "agent": "agent_inference"}
        # The strings are the caller's input: validated (and turned into the enums) by the model.
        provenance = Provenance.model_validate({"source": source or default_source[authority], "authority": authority,
                                                "actor": actor, "reference": reference})
        existing = self.store.get_active(key, scope)
        if existing is not None and existing.value == value:
            # The same fact again is a confirmation, not a new version of it.
            evidence = Evidence(key=key, value=value, value_type=existing.value_type, scope=scope,
                                source=provenance.source, authority=provenance.authority, actor=actor,
                                observed_at=utcnow(), reference=reference, detail="remembered again")
            return self.store.confirm(existing.id, evidence, expected_version=existing.version)
        return self.store.put(RecordDraft(key=key, value=value, scope=scope, provenance=provenance),
                              replace=replace, reason="remembered")

    def recall(self, keys: Sequence[str] | None = None, text: str | None = None) -> Retrieval:
        """The records that apply here, with stale, shadowed and near-miss ones held apart."""
        return self.store.retrieve(derive_task_scope(self.workspace, user=self.user), keys=keys, text=text)

    def close(self) -> None:
        if self._owns_store:
            self.store.close()

    def __enter__(self) -> StateWise:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
