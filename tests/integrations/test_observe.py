"""Observation rules: a pathological contract pattern finds nothing rather than hang."""

from __future__ import annotations

import time

from statewise.contract import load_contract_text
from statewise.integrations.observe import match_observations
from statewise.scopes import TaskScope

RULES = """
extends: coding
name: patterns
version: 1
observations:
  - name: catastrophic
    command: '^git push'
    output: '^((a|aa)+)$'
    key: repository.protected
    value: true
  - name: ordinary
    command: '^git push'
    output: 'protected branch hook declined'
    key: repository.protected
    value: true
"""


def test_a_pathological_observation_pattern_is_cut_off_and_the_others_still_match():
    contract = load_contract_text(RULES, "patterns.yaml")
    task = TaskScope(user="dev", repo="github.com/acme/app", branch="main")
    output = "a" * 5000 + "!\nremote: error: protected branch hook declined\n"
    start = time.monotonic()
    found = match_observations(contract, "git push origin main", output, task)
    assert time.monotonic() - start < 2.0
    names = [fact.rule.name for fact in found]
    assert "catastrophic" not in names and "ordinary" in names
