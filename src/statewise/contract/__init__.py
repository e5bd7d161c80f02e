"""Interface contracts: the declarative file that adapts the core to repositories and tools.

A contract declares

* ``state``: every record key the store accepts, with its value type, the scope level its
  facts normally live at, who has authority over it (a machine verifier, a developer, the
  agent), its freshness TTL and, for machine facts, the verifier that observes it;
* ``operations``: every side-effecting tool operation, with typed slots, the state keys each
  slot may depend on, the keys the operation is linked to by policy, its risk class and
  whether it needs approval;
* ``invariants``: hard safety rules written in CEL over ``action`` and ``state``;
* ``verifiers``: named verifier bindings (an adapter plus its arguments);
* ``scopes``: where a task's user, workspace, repository and branch come from.
* ``observations`` and ``memory``: what finished shell commands and agents' memory files reveal;
* ``commands``: declarative shell-command rules, mapped to operations.

Loading validates everything up front and either returns a complete :class:`Contract` or
raises :class:`~statewise.errors.ContractError` naming the file, the field path and what was
expected. Nothing is ever half-loaded. The core never mentions git or Python: everything
domain-specific lives in contract files such as the built-in ``coding`` contract.

The package is split along those concerns (docs/architecture.md draws it); every public name
is importable from ``statewise.contract`` itself.
"""

from __future__ import annotations

from statewise.contract.cache import cache_directory
from statewise.contract.commands import CommandFlag, CommandRule
from statewise.contract.durations import format_duration, parse_duration
from statewise.contract.invariants import INVARIANT_TIME_BUDGET, InvariantResult
from statewise.contract.loading import builtin_contract, list_builtin_contracts, load_contract, load_contract_text
from statewise.contract.model import Contract, summarize
from statewise.contract.observations import MemoryImplication, MemoryRule, MemorySpec, ObservationRule
from statewise.contract.patterns import REGEX_TIMEOUT_SECONDS, ContractPattern, RegexTimeout, contract_regex
from statewise.contract.questions import DEFAULT_QUESTION, QUESTION_PLACEHOLDERS
from statewise.contract.risk import Risk
from statewise.contract.safe_yaml import (
    MAX_CONTRACT_ALIASES,
    MAX_CONTRACT_DEPTH,
    MAX_CONTRACT_NODES,
)
from statewise.contract.spec import InvariantSpec, OperationSpec, ScopeSources, SlotSpec, StateSpec
from statewise.contract.templates import ARG_PLACEHOLDERS, render_template
from statewise.contract.verifier_spec import COMMAND_ADAPTER, ReadSpec, VerifierSpec, render_verifier

# Callers have imported the error from here since the contract was one module.
from statewise.errors import ContractError
from statewise.limits import MAX_CONTRACT_BYTES

__all__ = [
    "ARG_PLACEHOLDERS",
    "COMMAND_ADAPTER",
    "DEFAULT_QUESTION",
    "INVARIANT_TIME_BUDGET",
    "MAX_CONTRACT_ALIASES",
    "MAX_CONTRACT_BYTES",
    "MAX_CONTRACT_DEPTH",
    "MAX_CONTRACT_NODES",
    "QUESTION_PLACEHOLDERS",
    "REGEX_TIMEOUT_SECONDS",
    "CommandFlag",
    "CommandRule",
    "Contract",
    "ContractError",
    "ContractPattern",
    "InvariantResult",
    "InvariantSpec",
    "MemoryImplication",
    "MemoryRule",
    "MemorySpec",
    "ObservationRule",
    "OperationSpec",
    "ReadSpec",
    "RegexTimeout",
    "Risk",
    "ScopeSources",
    "SlotSpec",
    "StateSpec",
    "VerifierSpec",
    "builtin_contract",
    "cache_directory",
    "contract_regex",
    "format_duration",
    "list_builtin_contracts",
    "load_contract",
    "load_contract_text",
    "parse_duration",
    "render_template",
    "render_verifier",
    "summarize",
]
