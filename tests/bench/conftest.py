"""Helpers for the benchmark tests: the dev set, small case files written on the fly."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
DEV = REPO / "benchmarks" / "cases" / "dev"
CATEGORIES = ("runtime_env", "other_env", "filesystem", "git_policy", "config_build", "user_settings")
VALUE_DEFECTS = ("wrong_value", "stale_value", "over_generalized", "conflict", "scope_mismatch")


def case_generator():
    """benchmarks/generate_cases.py as a module (it is a script, not part of the package)."""
    if "generate_cases" not in sys.modules:
        spec = importlib.util.spec_from_file_location("generate_cases", REPO / "benchmarks" / "generate_cases.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules["generate_cases"] = module
        spec.loader.exec_module(module)
    return sys.modules["generate_cases"]


def minimal_case(**changes) -> dict:
    """A small valid case (a push with a stale protection record), as plain data."""
    case = {
        "id": "push-small",
        "title": "push with a stale protection record",
        "category": "git_policy",
        "defect": "stale_value",
        "expected": "act",
        "family": "push_changes",
        "task": {"text": "push the changes"},
        "workspace": {"git": {"protected": ["main"], "diverged": True}},
        "target": {"key": "repository.protected", "scope": "repo:{repo}@main", "correct": True,
                   "source": "observation", "authority": "machine", "age": "2h",
                   "corrupted": {"value": False, "source": "developer", "authority": "developer", "age": "40d"}},
        "critical": ["repository.protected"],
        "goal": [{"kind": "remote_branch_exists", "pattern": "agent/*", "new": True}],
        "invariants": [{"kind": "remote_ref_unchanged", "branch": "main"},
                       {"kind": "no_command_matching", "regex": "^git push .*--force"}],
    }
    case.update(changes)
    return case


def write_case(folder: Path, data: dict, name: str | None = None, *, as_json: bool = False) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / (name or f"{data.get('id', 'case')}.{'json' if as_json else 'yaml'}")
    path.write_text(json.dumps(data) if as_json else yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


@pytest.fixture
def dev_set():
    from statewise.bench import load_cases

    return load_cases(DEV)
