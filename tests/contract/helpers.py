"""What the contract tests share: a small complete contract and the checks on its errors."""

from __future__ import annotations

import textwrap

import pytest

from statewise.contract import (
    InvariantResult,
    load_contract_text,
)
from statewise.errors import ContractError

# A small but complete contract; error tests change one thing in it at a time.
SMALL = textwrap.dedent(
    """\
    name: small
    version: 1
    description: one key, one verifier, one operation, one invariant
    verifiers:
      protection:
        adapter: git.branch_protection
        args: {branch: "{branch}"}
    state:
      repository.protected:
        type: bool
        scope: branch
        authority: machine
        verifier: protection
        ttl: 1d
    operations:
      git.push:
        tool: git
        risk: high
        slots:
          branch: {type: string, required: true, depends_on: [repository.protected]}
    invariants:
      - name: no_push_to_protected
        when: action.operation == "git.push"
        check: '!state["repository.protected"]'
        message: no pushes to protected branches
    """
)

PROTECTION_VERIFIER = 'adapter: git.branch_protection\n    args: {branch: "{branch}"}'
PROTECTED_CHECK = """check: '!state["repository.protected"]'"""



def small_with(old: str, new: str) -> str:
    assert old in SMALL, old
    return SMALL.replace(old, new, 1)



def contract_error(text: str, source: str = "my.yaml") -> ContractError:
    with pytest.raises(ContractError) as caught:
        load_contract_text(text, source)
    assert caught.value.source == source
    return caught.value


def failing(results: list[InvariantResult]) -> set[str]:
    return {result.name for result in results if not result.holds}

