"""Regressions on real repositories, through the real hook entry point and through Guard.

Issue 10: the origin refused pushes to ``main`` through its own pre-receive hook, printing
GitHub's GH006 text. The protection verifier said "not protected: no
statewise.protectedBranch is configured", refreshed the wrong ``false`` record as verified,
and a plain push to ``main`` went through. Now the verifier says it cannot know, and the
push is not executed.

Issue 11, defect 2: with a hosted remote whose API does not answer, one push cost 41 s
(two verifiers of 20 s each). Now one short per-call timeout, then cached."""

from __future__ import annotations

import json
import subprocess
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from statewise.actions import Action
from statewise.contract import builtin_contract
from statewise.integrations.hooks import run_hook
from statewise.pipeline import Guard, PremiseStatus
from statewise.planners.base import Task
from statewise.records import Provenance, RecordDraft, RecordStatus
from statewise.store.sqlite import SQLiteStore
from statewise.workspace import derive_task_scope
from tests.verifiers.fake_hosts import silent_server
from tests.verifiers.helpers import commit, git, make_repo
from tests.verifiers.test_protection import GH006_HOOK

DEVELOPER = Provenance(source="developer", authority="developer", actor="dev")


def gh006_origin(root: Path):
    """A working tree on main, one commit ahead of an origin whose own hook refuses main."""
    repo = make_repo(root)
    hook = repo.origin / "hooks" / "pre-receive"
    hook.write_text(GH006_HOOK, encoding="utf-8")
    hook.chmod(0o755)
    commit(repo.work, "change.txt", "a change for main\n")
    return repo


def seed_false(store_path: Path, work: Path) -> str:
    """The stale record of the incident: repository.protected = false for main."""
    scope = derive_task_scope(work)
    store = SQLiteStore(str(store_path), key_schema=builtin_contract())
    try:
        return store.put(RecordDraft(key="repository.protected", value=False, scope=f"repo:{scope.repo}@main",
                                     provenance=DEVELOPER, observed_at=datetime.now(UTC) - timedelta(days=3))).id
    finally:
        store.close()


def pre_tool(work: Path, command: str, store_path: Path):
    payload = {"session_id": "s1", "transcript_path": "/dev/null", "cwd": str(work), "permission_mode": "default",
               "hook_event_name": "PreToolUse", "tool_name": "Bash",
               "tool_input": {"command": command, "description": "push"}, "tool_use_id": "toolu_pre"}
    return run_hook("claude-code", json.dumps(payload), store_location=str(store_path))


def post_tool(work: Path, command: str, stdout: str, stderr: str, store_path: Path):
    payload = {"session_id": "s1", "cwd": str(work), "hook_event_name": "PostToolUse", "tool_name": "Bash",
               "tool_input": {"command": command},
               "tool_response": {"stdout": stdout, "stderr": stderr, "interrupted": False},
               "tool_use_id": "toolu_post"}
    return run_hook("claude-code", json.dumps(payload), event="post", store_location=str(store_path))


def remote_main(repo) -> str:
    return git(repo.origin, "rev-parse", "refs/heads/main").stdout.strip()


@pytest.mark.parametrize("stale_record", [True, False], ids=["stale-false-record", "empty-store"])
def test_a_foreign_gh006_hook_is_not_read_as_not_protected_through_the_hook(tmp_path: Path, stale_record: bool):
    repo = gh006_origin(tmp_path / "sb")
    store_path = tmp_path / "store.db"
    record_id = seed_false(store_path, repo.work) if stale_record else None
    before = remote_main(repo)

    outcome = pre_tool(repo.work, "git push origin main", store_path)

    decision = json.loads(outcome.stdout)["hookSpecificOutput"]
    assert decision["permissionDecision"] in ("deny", "ask")  # not executed
    if stale_record:
        assert "a server hook exists" in decision["permissionDecisionReason"]
    premises = {p.key: p for d in outcome.decisions for p in d.report.premises}
    assert premises["repository.protected"].status is PremiseStatus.UNRESOLVED
    assert "protection not known" in premises["repository.protected"].missing
    assert remote_main(repo) == before
    if record_id is not None:
        store = SQLiteStore(str(store_path))
        try:
            record = store.get(record_id)
            # The wrong record was neither refreshed as verified nor taken for the truth.
            assert record.status is RecordStatus.ACTIVE and record.version == 1
            assert record.time.verified_at is None
        finally:
            store.close()


def test_the_same_incident_through_guard(tmp_path: Path):
    repo = gh006_origin(tmp_path / "sb")
    store_path = tmp_path / "store.db"
    seed_false(store_path, repo.work)
    store = SQLiteStore(str(store_path), key_schema=builtin_contract())
    try:
        guard = Guard(store, builtin_contract(), workspace=repo.work)
        scope = derive_task_scope(repo.work)
        push = Action(tool="git", operation="git.push", args={"remote": "origin", "branch": "main", "source": "main"})
        decision = guard.check(Task(text="push the change", scope=scope, workspace=str(repo.work)), push)
    finally:
        store.close()
    assert not decision.execute
    protected = [p for p in decision.report.premises if p.key == "repository.protected"]
    assert protected and all(p.status is PremiseStatus.UNRESOLVED for p in protected)
    assert all(p.evidence is None for p in protected)  # nothing observed, nothing "confirmed"


def test_the_refusal_itself_becomes_machine_evidence(tmp_path: Path):
    """After the tool ran (the developer pushed anyway), its GH006 output records protection."""
    repo = gh006_origin(tmp_path / "sb")
    store_path = tmp_path / "store.db"
    record_id = seed_false(store_path, repo.work)
    refused = subprocess.run(["git", "push", "origin", "main"], cwd=repo.work, capture_output=True, text=True,
                             timeout=60)
    assert refused.returncode != 0 and "GH006" in refused.stderr  # the real remote's real answer

    note = json.loads(post_tool(repo.work, "git push origin main", refused.stdout, refused.stderr,
                                store_path).stdout)["hookSpecificOutput"]["additionalContext"]
    assert "repository.protected was false, now true" in note
    store = SQLiteStore(str(store_path))
    try:
        old = store.get(record_id)
        assert old.status is RecordStatus.SUPERSEDED
        new = store.get(old.superseded_by)
        assert new.value is True
        assert new.provenance.source.value == "tool_output" and new.provenance.authority.value == "machine"
        assert new.provenance.reference == "toolu_post" and new.provenance.actor == "claude-code:Bash"
    finally:
        store.close()
    # The next push to main is denied on that evidence: the invariant fails, it is not unresolved.
    outcome = pre_tool(repo.work, "git push origin main", store_path)
    again = json.loads(outcome.stdout)["hookSpecificOutput"]
    assert again["permissionDecision"] == "deny"
    assert "no_direct_push_to_protected_branch" in again["permissionDecisionReason"]
    premises = {p.key: p for d in outcome.decisions for p in d.report.premises}
    assert premises["repository.protected"].value is True


# --- a hosted API that does not answer (issue 11, defect 2) ------------------------------------------


def hosted_work(root: Path) -> Path:
    work = root / "hosted"
    git(root, "init", "-q", str(work))
    commit(work, "a.txt", "a")
    git(work, "remote", "add", "origin", "git@github.com:acme/app.git")
    return work


def test_an_api_that_hangs_gives_unresolved_not_unprotected_and_costs_one_short_timeout(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    work = hosted_work(tmp_path)
    store_path = tmp_path / "store.db"
    for name in ("GH_TOKEN", "GITHUB_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no gh: the token lookup is not what is timed
    with silent_server() as url:
        monkeypatch.setenv("STATEWISE_GITHUB_API_URL", url)
        started = time.monotonic()
        first = pre_tool(work, "git push origin feature && git push --force origin main", store_path)
        first_took = time.monotonic() - started
        started = time.monotonic()
        second = pre_tool(work, "git push origin main", store_path)
        second_took = time.monotonic() - started
    for outcome in (first, second):
        decision = json.loads(outcome.stdout)["hookSpecificOutput"]
        assert decision["permissionDecision"] in ("deny", "ask")
        premises = {p.key: p for d in outcome.decisions for p in d.report.premises}
        assert premises["repository.protected"].status is PremiseStatus.UNRESOLVED
    assert first_took < 6, first_took  # one 3 s API timeout, not 2 x 20 s
    assert second_took < 2, second_took  # the negative cache answers at once


# --- garbage from the remote's configuration (issue 11, defect 7) -----------------------------------


def test_garbage_from_git_config_does_not_confirm_a_stale_false_record(tmp_path: Path):
    """Random bytes from the remote's `git config --null --list` were read as "not protected";
    the stale false record was confirmed and the force push passed."""
    import os

    from statewise.verifiers import install_branch_protection
    from tests.verifiers.helpers import private_env
    from tests.verifiers.test_protection import garbage_git

    repo = make_repo(tmp_path / "sb")
    install_branch_protection(repo.origin, ["main"])
    git(repo.work, "commit", "-q", "--amend", "-m", "rewritten")
    store_path = tmp_path / "store.db"
    record_id = seed_false(store_path, repo.work)
    garbage_git(tmp_path / "bin", os.urandom(4096))
    store = SQLiteStore(str(store_path), key_schema=builtin_contract())
    try:
        guard = Guard(store, builtin_contract(), workspace=repo.work, environ=private_env(tmp_path / "bin"))
        push = Action(tool="git", operation="git.push",
                      args={"remote": "origin", "branch": "main", "source": "main", "force": True})
        decision = guard.check(Task(text="force push", scope=derive_task_scope(repo.work), workspace=str(repo.work)),
                               push)
        record = store.get(record_id)
    finally:
        store.close()
    assert not decision.execute
    protected = [p for p in decision.report.premises if p.key == "repository.protected"]
    assert protected and all(p.status is PremiseStatus.UNRESOLVED for p in protected)
    assert "not a configuration listing" in protected[0].missing
    assert record.status is RecordStatus.ACTIVE and record.version == 1 and record.time.verified_at is None
