"""The write paths that skip re-validation give exactly what validated models would."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from statewise.records import Evidence, Link, Provenance, Record, RecordDraft, Supersession
from statewise.store import sql

MAIN = "repo:github.com/acme/app@main"


def test_supersede_returns_and_stores_records_that_validate_to_themselves(store):
    first = store.put(RecordDraft(key="project.test_command", value="pytest", value_type="string", scope=MAIN,
                                  provenance=Provenance(source="developer", authority="developer", actor="alice"),
                                  ttl_seconds=600))
    evidence = Evidence(key="project.test_command", value="tox", value_type="string", scope=MAIN,
                        source="observation", authority="machine", actor="verifier.x",
                        observed_at=datetime.now(UTC), detail="read tox.ini", reference="call-1")
    result = store.supersede(first.id, evidence, expected_version=1)
    assert Supersession.model_validate(result.model_dump()) == result
    assert Record.model_validate(result.new.model_dump()) == result.new
    assert Link.model_validate(result.link.model_dump()) == result.link
    assert store.get(result.new.id) == result.new
    assert store.get(first.id) == result.old
    assert result.old.version == 2 and result.old.superseded_by == result.new.id
    assert result.new.supersedes == first.id and result.new.time.ttl_seconds == 600
    assert result.new.provenance == evidence.provenance()
    assert store.links(result.new.id) == [result.link]
    assert store.lineage(result.new.id).records == [result.old, result.new]


def test_ids_have_the_records_module_form_and_sort_by_time():
    made = [sql._new_id("rec") for _ in range(200)]
    assert all(re.fullmatch(r"rec_[0-9A-HJKMNP-TV-Z]{26}", rid) for rid in made)
    assert len(set(made)) == 200
    assert made[0][:12] <= made[-1][:12]  # the millisecond prefix never goes back
