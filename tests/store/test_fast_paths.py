"""The write paths that skip re-validation give exactly what validated models would."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

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


def test_records_read_back_validate_to_themselves_and_copy_without_touching_each_other(store):
    made = [store.put(RecordDraft(key=f"project.k{i}", value=f"v{i}", value_type="string", scope=MAIN,
                                  provenance=Provenance(source="developer", authority="developer", actor="alice")))
            for i in range(3)]
    read = [store.get(record.id) for record in made] + [store.get_active(made[0].key, MAIN)]
    for record in read:
        assert Record.model_validate(record.model_dump()) == record
        assert record.model_fields_set == set(Record.model_fields)
    # The read path shares one fields set between records; changing a copy must leave the
    # other records (and later reads) as they were.
    copied = read[0].model_copy(update={"version": 7})
    assert copied.version == 7 and read[0].version == 1
    copied.model_fields_set.add("not_a_field")
    assert "not_a_field" not in read[1].model_fields_set
    assert "not_a_field" not in store.get(made[2].id).model_fields_set


def test_retrieve_puts_the_most_specific_record_in_force_and_shadows_the_rest_in_order(store):
    from statewise.scopes import TaskScope

    who = Provenance(source="developer", authority="developer", actor="alice")
    task = TaskScope(user="alice", workspace="/home/alice/src/app", repo="github.com/acme/app", branch="main")
    scopes = ["global", "user:alice", "repo:github.com/acme/app", MAIN]
    for key in ("project.b", "project.a"):
        for scope in scopes:
            store.put(RecordDraft(key=key, value=f"{key}@{scope}", value_type="string", scope=scope, provenance=who))
    result = store.retrieve(task, near_miss_limit=0)
    assert [(r.key, r.scope) for r in result.records] == [("project.a", MAIN), ("project.b", MAIN)]
    # Shadowed: by key, then from the most specific scope to the least.
    assert [(r.key, r.scope) for r in result.shadowed] == [
        (key, scope) for key in ("project.a", "project.b") for scope in reversed(scopes[:-1])
    ]
    only_b = store.retrieve(task, keys=["project.b"], near_miss_limit=0)
    assert [r.value for r in only_b.records] == [f"project.b@{MAIN}"] and len(only_b.shadowed) == 3


def test_get_active_finds_a_record_by_any_spelling_of_its_scope_and_refuses_a_bad_one(store):
    from statewise.errors import ScopeError

    record = store.put(RecordDraft(key="project.root", value="/src", value_type="string",
                                   scope="workspace:/home/alice/src/app",
                                   provenance=Provenance(source="developer", authority="developer", actor="alice")))
    # The canonical text is looked up as given; another spelling is parsed and looked up again.
    assert store.get_active("project.root", "workspace:/home/alice/src/app") == record
    assert store.get_active("project.root", " workspace:/home//alice/src/app/ ") == record
    assert store.get_active("project.other", "workspace:/home//alice/src/app/") is None
    assert store.get_active("project.root", "workspace:/home/alice") is None
    for bad in ("nowhere", "workspace:relative/path", 42):
        with pytest.raises(ScopeError):
            store.get_active("project.root", bad)  # type: ignore[arg-type]
