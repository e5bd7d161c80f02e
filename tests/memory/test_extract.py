"""Typing memory-file lines with the contract's declarative rules; untyped lines stay text."""

from __future__ import annotations

from pathlib import Path

import pytest

from statewise.contract import Contract, load_contract_text
from statewise.errors import ContractError
from statewise.memory import MemoryFile, extract_text, line_digest
from statewise.records import Authority, SourceKind

SCOPE = "repo:github.com/acme/app"


def _file(tmp_path: Path, name: str = "AGENTS.md", max_lines: int | None = None) -> MemoryFile:
    return MemoryFile(path=tmp_path / name, agent="codex", kind="project", authority=Authority.DEVELOPER,
                      source=SourceKind.DEVELOPER, scope=SCOPE, base=tmp_path, relpath=name, max_lines=max_lines)


def _facts(lines):
    return {line.number: [(f.key, f.value, f.scope) for f in line.facts] for line in lines}


DOC = """# Project

This project uses Python 3.8 and Node 20.
The tests run with `npm run test:unit`.
Never push directly to `main`.
`release` may be force-pushed.
Sources live in `src/app/`; settings in `setup.cfg`.
Requires python >=3.10, and Python 3.9+ also works.
Compare with origin/main or `origin/main`.
Be kind to reviewers.

## Testing

```bash
$ pytest -q tests/unit
# a comment in a fence is not a command
```

## Lint

- Run `ruff check .` before committing.

| Task | Command |
|------|---------|
"""


def test_typed_facts_come_from_the_contract_rules(tmp_path: Path, contract: Contract):
    lines = extract_text(DOC, _file(tmp_path), contract, repo="github.com/acme/app")
    facts = _facts(lines)
    assert facts[3] == [("runtime.python_version", "3.8", SCOPE), ("runtime.node_version", "20", SCOPE)]
    assert facts[4] == [("project.test_command", "npm run test:unit", SCOPE)]
    assert facts[5] == [("repository.protected", True, "repo:github.com/acme/app@main")]
    assert facts[6] == [("repository.protected", False, "repo:github.com/acme/app@release")]
    assert facts[7] == [("fs.exists[src/app/]", True, SCOPE), ("fs.exists[setup.cfg]", True, SCOPE)]
    assert facts[15] == [("project.test_command", "pytest -q tests/unit", SCOPE)]
    assert facts[21] == [("project.command[lint]", "ruff check .", SCOPE)]


def test_lines_that_cannot_be_typed_are_kept_as_text_and_never_guessed(tmp_path: Path, contract: Contract):
    lines = extract_text(DOC, _file(tmp_path), contract, repo="github.com/acme/app")
    by_number = {line.number: line for line in lines}
    # version constraints are not versions; a remote ref is not a path; prose is prose
    for number in (8, 9, 10):
        assert by_number[number].facts == (), by_number[number].text
        assert not by_number[number].typed
    assert by_number[10].text == "Be kind to reviewers."
    assert by_number[10].digest == line_digest("Be kind to reviewers.")
    # structure is not content: headings, fence markers, table rules
    assert {1, 12, 14, 17, 19, 24}.isdisjoint(by_number)
    assert by_number[16].facts == ()  # a comment in a fence is text, not a command
    assert by_number[23].facts == ()  # a table header row is text


def test_extraction_is_deterministic(tmp_path: Path, contract: Contract):
    first = extract_text(DOC, _file(tmp_path), contract, repo="github.com/acme/app")
    second = extract_text(DOC, _file(tmp_path), contract, repo="github.com/acme/app")
    assert [(l.number, l.digest, l.facts) for l in first] == [(l.number, l.digest, l.facts) for l in second]


def test_a_branch_fact_needs_a_repository(tmp_path: Path, contract: Contract):
    lines = extract_text("Never push directly to `main`.\n", _file(tmp_path), contract, repo=None)
    assert lines[0].facts == ()


def test_front_matter_and_the_auto_memory_line_limit(tmp_path: Path, contract: Contract):
    text = "---\ndescription: uses Python 3.8\nalwaysApply: true\n---\nUse `src/app/`.\n"
    lines = extract_text(text, _file(tmp_path, "rule.mdc"), contract)
    assert [(l.number, l.text) for l in lines] == [(5, "Use `src/app/`.")]
    many = "".join(f"note {i}\n" for i in range(300))
    assert len(extract_text(many, _file(tmp_path, "MEMORY.md", max_lines=200), contract)) == 200


def test_a_qualifier_that_is_not_a_key_is_not_a_fact(tmp_path: Path, contract: Contract):
    lines = extract_text("See `docs/my notes/`.\n", _file(tmp_path), contract)
    assert lines[0].facts == ()


def test_memory_rules_must_name_declared_keys_and_typed_values():
    with pytest.raises(ContractError, match="not a key declared"):
        load_contract_text("name: x\nversion: 1\nextends: coding\nmemory:\n  rules:\n"
                           "    - {name: bad, line: 'x', key: no.such_key}\n")
    with pytest.raises(ContractError, match="bool"):
        load_contract_text("name: x\nversion: 1\nextends: coding\nmemory:\n  rules:\n"
                           "    - {name: bad, line: 'x', key: 'fs.exists[a]', value: 'yes'}\n")
    with pytest.raises(ContractError, match="exactly one of line or code"):
        load_contract_text("name: x\nversion: 1\nextends: coding\nmemory:\n  rules:\n"
                           "    - {name: bad, key: project.test_command}\n")


def test_an_extending_contract_adds_memory_rules(tmp_path: Path):
    extended = load_contract_text(
        "name: x\nversion: 1\nextends: coding\nmemory:\n  rules:\n"
        "    - {name: deploy_branch, line: 'deploys from `(?P<value>[\\w/-]+)`', key: git.default_branch}\n")
    names = [rule.name for rule in extended.memory.rules]
    assert "deploy_branch" in names and "python_version" in names
    lines = extract_text("CI deploys from `trunk`.\n", _file(tmp_path), extended)
    assert [(f.key, f.value) for f in lines[0].facts] == [("git.default_branch", "trunk")]


def test_tool_versions(tmp_path: Path, contract: Contract):
    lines = extract_text("Use npm 10.2 and Node.js v18.19.0.\nnpm 9 or later.\n", _file(tmp_path), contract)
    assert _facts(lines) == {1: [("runtime.node_version", "18.19.0", SCOPE), ("runtime.npm_version", "10.2", SCOPE)],
                             2: []}


def test_setup_steps_are_not_the_test_command_and_a_fenced_cd_carries_over(tmp_path: Path, contract: Contract):
    text = ("## Testing\n\n```bash\npython -m venv .venv\npip install -e '.[test]'\nsource .venv/bin/activate\n"
            "cd web\nnpm test\n```\n\n```sh\nnpm test\n```\n")
    facts = [(f.key, f.value) for line in extract_text(text, _file(tmp_path), contract) for f in line.facts]
    # the lone `cd web` is no command, but says web/ is a folder of the tree
    assert facts == [("fs.is_dir[web]", True), ("project.test_command", "cd web && npm test"),
                     ("project.test_command", "npm test")]
