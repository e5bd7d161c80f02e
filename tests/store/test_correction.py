"""The in-scope correction (store/correction.py) on both backends: what its one UPDATE ...
RETURNING writes and returns, and that every refusal leaves the store as it was."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from statewise.errors import GroundingError, RecordNotFoundError, StaleVersionError, TransitionError
from statewise.records import Evidence, LinkKind, Provenance, RecordDraft, RecordStatus

DEV = Provenance(source="developer", authority="developer", actor="alice")
MAIN = "repo:github.com/acme/app@main"


def _draft(value: str, scope: str = MAIN) -> RecordDraft:
    return RecordDraft(key="project.test_command", value=value, scope=scope, value_type="string", provenance=DEV,
                       ttl_seconds=600)


def _evidence(value, scope: str = MAIN, key: str = "project.test_command", value_type: str = "string") -> Evidence:
    return Evidence(key=key, value=value, value_type=value_type, scope=scope, source="observation",
                    authority="machine", actor="verifier.test", observed_at=datetime.now(UTC), detail="seen")


def _state(store) -> tuple[list, list]:
    return ([(r.id, r.status, r.version, r.superseded_by, r.status_reason) for r in store.records()],
            [lk.id for lk in store.all_links()])


def test_what_an_in_scope_correction_returns_is_what_the_store_holds(store):
    old = store.put(_draft("pytest"))
    result = store.supersede(old.id, _evidence("pytest -q"), expected_version=1, reason="ran it")
    assert result.old == store.get(old.id) and result.new == store.get(result.new.id)
    assert result.old.status is RecordStatus.SUPERSEDED and result.old.version == 2
    assert result.old.superseded_by == result.new.id and result.old.status_reason == "ran it"
    assert result.new.supersedes == old.id and result.new.value == "pytest -q" and result.new.version == 1
    assert result.new.time.ttl_seconds == 600 and result.new.provenance.actor == "verifier.test"
    assert store.links(old.id) == [result.link] and result.link.kind is LinkKind.SUPERSEDE
    assert result.replaced is None
    assert store.get_active("project.test_command", MAIN) == result.new


@pytest.mark.parametrize(("make", "error"), [
    (lambda rid: (rid, _evidence("pytest"), 1), GroundingError),  # the same value: use confirm
    (lambda rid: (rid, _evidence("pytest -x"), 7), StaleVersionError),
    (lambda rid: (rid, _evidence(True, key="repository.protected", value_type="bool"), 1), GroundingError),
    (lambda rid: (rid, _evidence("pytest -x", scope="repo:github.com/acme/other"), 1), GroundingError),
    (lambda rid: ("rec_01J00000000000000000000000", _evidence("pytest -x"), 1), RecordNotFoundError),
])
def test_a_refused_correction_writes_nothing(store, make, error):
    old = store.put(_draft("pytest"))
    before = _state(store)
    record_id, evidence, version = make(old.id)
    with pytest.raises(error):
        store.supersede(record_id, evidence, expected_version=version)
    assert _state(store) == before


def test_a_superseded_record_cannot_be_corrected_again(store):
    old = store.put(_draft("pytest"))
    store.supersede(old.id, _evidence("pytest -q"), expected_version=1)
    before = _state(store)
    with pytest.raises(TransitionError):
        store.supersede(old.id, _evidence("pytest -x"), expected_version=2)
    assert _state(store) == before
