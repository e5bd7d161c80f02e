"""Resolution's reliability checks: conflicts only where a key holds one value per scope."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from statewise.contract import load_contract_text
from statewise.pipeline.resolution import reliability_findings
from statewise.records import Provenance, RecordDraft
from statewise.scopes import TaskScope
from statewise.store.sqlite import SQLiteStore

TEAM = """
extends: coding
name: team
version: 1
state:
  team.reviewers:
    type: list
    scope: repo
    authority: developer
    single_valued: false
    description: everyone who may review; several records, each naming some, never contradict
  team.lead:
    type: string
    scope: repo
    authority: developer
"""
DEVELOPER = Provenance(source="developer", authority="developer", actor="dev")
TASK = TaskScope(user="dev", repo="github.com/acme/app", branch="feature")


def _conflicts(findings: list[str]) -> list[str]:
    return [finding for finding in findings if finding.startswith("conflict:")]


def test_single_valued_false_keys_get_no_conflicts_and_single_valued_ones_do(tmp_path):
    contract = load_contract_text(TEAM, "team.yaml")
    assert contract.state["team.reviewers"].single_valued is False
    assert contract.state["team.lead"].single_valued is True
    store = SQLiteStore(tmp_path / "store.db", key_schema=contract)
    try:
        earlier = datetime.now(UTC) - timedelta(hours=2)
        later = datetime.now(UTC) - timedelta(hours=1)
        records = {}
        for key, first, second in (("team.reviewers", ["ana"], ["ben", "chen"]), ("team.lead", "ana", "ben")):
            older = store.put(RecordDraft(key=key, value=first, scope="repo:github.com/acme/app",
                                          provenance=DEVELOPER, observed_at=earlier))
            newer = store.put(RecordDraft(key=key, value=second, scope="repo:github.com/acme/app@feature",
                                          provenance=DEVELOPER, observed_at=later))
            records[key] = (older, newer)
        now = datetime.now(UTC)

        reviewers_old, reviewers_new = records["team.reviewers"]
        found = reliability_findings(reviewers_old, contract.state["team.reviewers"], TASK,
                                     [reviewers_old, reviewers_new], now)
        assert _conflicts(found) == []

        lead_old, lead_new = records["team.lead"]
        found = reliability_findings(lead_old, contract.state["team.lead"], TASK, [lead_old, lead_new], now)
        assert _conflicts(found) == [f"conflict: newer record {lead_new.id} in {lead_new.scope} says 'ben'"]
    finally:
        store.close()
