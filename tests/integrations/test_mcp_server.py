"""The MCP server, driven by the official SDK's own client: in process (both protocol eras)
and as a separate process over stdio, against a real SQLite store and a real git repository
whose origin really protects main."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp_types import CallToolResult, ElicitRequestFormParams, ElicitResult

from statewise.clarify import AnswerKind, Question
from statewise.integrations.mcp_server import build_server
from statewise.integrations.mcp_server.clarification import elicit_request, elicited_answer
from statewise.sandbox import make_git_sandbox
from statewise.store import open_store
from statewise.values import ValueType

pytestmark = pytest.mark.anyio

TIMEOUT = 60  # seconds, for each test as a whole
TOOLS = {"remember", "recall", "check_action", "verify", "history", "lineage", "revert_repair", "forget"}
FORCE_PUSH = {"tool": "git", "operation": "git.push", "target": "origin/main",
              "args": {"remote": "origin", "branch": "main", "source": "HEAD", "force": True}}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def sandbox(tmp_path):
    return make_git_sandbox(tmp_path / "sb")


@pytest.fixture
def store_path(tmp_path) -> str:
    return str(tmp_path / "store.db")


@pytest.fixture
def server(sandbox, store_path):
    built = build_server(store_location=store_path, workspace=str(sandbox.work))
    yield built
    built.statewise.close()


def _ago(**delta: float) -> str:
    return (datetime.now(UTC) - timedelta(**delta)).isoformat()


async def _call(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content[0].text
    assert result.structured_content is not None
    return result.structured_content


async def _error(client: Client, tool: str, arguments: dict[str, Any]) -> str:
    result: CallToolResult = await client.call_tool(tool, arguments)
    assert result.is_error, result.structured_content
    text = result.content[0].text
    return text


def _test_run(command: str) -> dict[str, Any]:
    return {"tool": "shell", "operation": "test.run", "args": {"command": command}}


# --- in process -----------------------------------------------------------------------------


async def test_tools_are_listed_with_typed_documented_inputs(server):
    with anyio.fail_after(TIMEOUT):
        async with Client(server, raise_exceptions=True) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.description and tool.output_schema is not None
        for name, schema in tool.input_schema["properties"].items():
            assert schema.get("description") or schema.get("$ref") or name == "action", (tool.name, name)
    remember = tools["remember"].input_schema
    assert remember["required"] == ["key", "value"]
    assert remember["properties"]["authority"]["enum"] == ["machine", "developer", "agent"]
    action = tools["check_action"].input_schema
    assert action["required"] == ["task", "action"]
    assert {"tool", "operation", "target", "args"} <= set(action["$defs"]["Action"]["properties"])
    # The hints are honest: recall with a workspace imports and checks the memory files (it
    # writes), so only history and lineage are read-only.
    assert {name for name, tool in tools.items() if tool.annotations.read_only_hint} == {"history", "lineage"}
    assert tools["recall"].annotations.idempotent_hint is True
    assert tools["recall"].annotations.destructive_hint is False
    assert tools["forget"].annotations.destructive_hint is True


async def test_every_tool_on_a_real_repository(server, sandbox, store_path):
    main = f"repo:{sandbox.repo_identity}@main"
    with anyio.fail_after(TIMEOUT):
        async with Client(server, raise_exceptions=True) as client:
            # A stale record says main is not protected; the origin's hook says it is.
            stored = await _call(client, "remember", {"key": "repository.protected", "value": False, "scope": main,
                                                      "observed_at": _ago(days=3), "reference": "an old session"})
            assert stored["outcome"] == "stored"
            old = stored["record"]
            assert old["scope"] == main and old["stale"] is True and old["authority"] == "machine"

            checked = await _call(client, "check_action", {"task": "push the changes", "action": FORCE_PUSH})
            assert checked["verdict"] == "stop" and checked["execute"] is False and checked["action"] is None
            assert "repository.protected" in checked["reason"]
            assert "state_action_agreement" in checked["blocked_by"]
            repairs = [r for r in checked["report"]["repairs"] if r["key"] == "repository.protected"]
            assert len(repairs) == 1
            repair = repairs[0]
            assert repair["kind"] == "supersede" and repair["record_id"] == old["id"]
            assert repair["old_value"] is False and repair["new_value"] is True
            assert checked["report"]["candidates"] is None and checked["report"]["costs"]["verifier_calls"] >= 1
            assert checked["questions"] == [] and "re-plan" in checked["next_step"]

            chain = await _call(client, "lineage", {"record_id": old["id"]})
            by_id = {r["id"]: r for r in chain["records"]}
            assert by_id[old["id"]]["status"] == "superseded"
            assert by_id[repair["new_record_id"]]["status"] == "active"
            assert by_id[repair["new_record_id"]]["value"] is True
            assert by_id[repair["new_record_id"]]["authority"] == "machine"
            [link] = chain["links"]
            assert link["kind"] == "supersede" and link["from_record"] == old["id"]
            assert link["to_record"] == repair["new_record_id"]
            assert link["evidence"]["actor"] == "git.branch_protection" and link["evidence"]["value"] is True

            # A second task reuses the repair: nothing to verify or repair again.
            again = await _call(client, "check_action", {"task": "push again", "action": FORCE_PUSH})
            assert again["verdict"] == "stop"
            assert not [r for r in again["report"]["repairs"] if r["key"] == "repository.protected"]

            reverted = await _call(client, "revert_repair", {"record_id": repair["new_record_id"],
                                                             "reason": "that check was wrong", "actor": "dev"})
            assert reverted["reverted"]["id"] == repair["new_record_id"]
            assert reverted["reverted"]["status"] != "active"
            restored = reverted["restored"]
            assert restored["value"] is False and restored["status"] == "active"
            assert restored["supersedes"] == repair["new_record_id"]

            recalled = await _call(client, "recall", {"keys": ["repository.protected"]})
            assert sandbox.repo_identity in recalled["task_scope"]
            applying = recalled["records"] + recalled["stale"]
            assert [r["id"] for r in applying] == [restored["id"]]
            assert applying[0]["stale"] is (applying[0] in recalled["stale"])
            assert set(applying[0]["time"]) >= {"observed_at", "recorded_at", "verified_at", "ttl_seconds"}
            assert recalled["held_back"]["stale"] == len(recalled["stale"])
            elsewhere = await _call(client, "recall", {"task_scope": f"repo:{sandbox.repo_identity}@feature/x",
                                                       "keys": ["repository.protected"]})
            assert elsewhere["records"] == [] and elsewhere["stale"] == []
            assert [r["id"] for r in elsewhere["near_misses"]] == [restored["id"]]
            assert elsewhere["held_back"]["near_misses"] == 1

            looked = await _call(client, "verify", {"key": "repository.protected", "scope": main})
            assert looked["observed"] is True and looked["status"] == "defective" and looked["repair"] is None
            assert looked["stored"]["id"] == restored["id"]
            written = await _call(client, "verify", {"key": "repository.protected", "scope": main, "write": True})
            assert written["status"] == "defective" and written["repair"]["kind"] == "supersede"
            observed_only = await _call(client, "verify", {"key": "git.current_branch"})
            assert observed_only["observed"] == "main" and observed_only["stored"] is None

            past = await _call(client, "history", {"key": "repository.protected", "scope": main})
            assert [r["value"] for r in past["records"]] == [False, True, False, True]
            assert [r["status"] for r in past["records"]][-1] == "active"
            assert past["records"][0]["id"] == old["id"]

            # The same value again is a confirmation, not a new version.
            confirmed = await _call(client, "remember", {"key": "repository.protected", "value": True, "scope": main})
            assert confirmed["outcome"] == "confirmed"
            assert confirmed["record"]["id"] == written["repair"]["new_record_id"]

    # Everything went to the real store on disk, and the server closed it.
    with open_store(store_path) as store:
        assert store.get_active("repository.protected", main).value is True
        assert len(store.history("repository.protected", main)) == 4


async def test_bad_inputs_are_tool_errors_with_one_line(server, sandbox):
    main = f"repo:{sandbox.repo_identity}@main"
    with anyio.fail_after(TIMEOUT):
        async with Client(server, raise_exceptions=True) as client:
            cases = [
                ("remember", {"key": "not.declared", "value": 1}, "not.declared"),
                ("remember", {"key": "Bad Key", "value": 1}, "dotted lower-case"),
                ("remember", {"key": "repository.protected", "value": "false", "scope": main}, "expected a bool"),
                ("remember", {"key": "project.test_command", "value": 3}, "expected a string"),
                ("remember", {"key": "repository.protected", "value": True, "scope": "repo"}, "bad scope 'repo'"),
                ("remember", {"key": "repository.protected", "value": True, "scope": main,
                              "observed_at": "yesterday"}, "ISO 8601"),
                ("remember", {"key": "repository.protected", "value": True, "workspace": "/no/such/dir"},
                 "not a directory"),
                ("recall", {"task_scope": "branch:main"}, "bad scope"),
                ("history", {"key": "repository.protected", "scope": "nowhere"}, "bad scope"),
                ("lineage", {"record_id": "rec_NOPE"}, "no record with id 'rec_NOPE'"),
                ("revert_repair", {"record_id": "rec_NOPE", "reason": "x"}, "no record with id"),
                ("verify", {"key": "repository.protected", "scope": main}, "no active record"),
                ("verify", {"key": "no.such_key"}, "does not declare"),
                ("check_action", {"task": "push", "action": {"tool": "git"}}, "operation"),
                ("check_action", {"task": "push", "action": FORCE_PUSH, "planner": "oracle"}, "planner"),
                # The SDK's own argument checking, in one line naming the argument:
                ("remember", {"value": 1}, "key: Field required"),
                ("remember", {"key": "repository.protected", "value": True, "authority": "boss"}, "authority:"),
                ("history", {"key": "repository.protected"}, "scope: Field required"),
                # Arguments the tool does not declare are refused, not ignored:
                ("recall", {"task_scope": main, "limit": 3}, "unexpected argument limit"),
                ("forget", {"record_id": "rec_NOPE", "reason": "x", "force": True}, "unexpected argument force"),
                ("forget", {"record_id": "rec_NOPE", "reason": "x"}, "no record with id"),
            ]
            for tool, arguments, expected in cases:
                text = await _error(client, tool, arguments)
                assert expected in text, (tool, arguments, text)
                assert "\n" not in text, text
            # A record that no repair produced cannot be reverted.
            plain = await _call(client, "remember", {"key": "repository.protected", "value": True, "scope": main})
            assert "cannot" in await _error(client, "revert_repair", {"record_id": plain["record"]["id"],
                                                                       "reason": "x"})


async def test_forget_retracts_a_record_and_keeps_it_in_history(server, sandbox):
    main = f"repo:{sandbox.repo_identity}@main"
    with anyio.fail_after(TIMEOUT):
        async with Client(server, raise_exceptions=True) as client:
            stored = await _call(client, "remember", {"key": "repository.protected", "value": False, "scope": main})
            record_id = stored["record"]["id"]
            gone = await _call(client, "forget", {"record_id": record_id, "reason": "the branch was renamed"})
            assert gone["retracted"]["status"] == "retracted"
            assert gone["retracted"]["status_reason"] == "the branch was renamed"
            recalled = await _call(client, "recall", {"task_scope": main})
            assert record_id not in {record["id"] for record in recalled["records"]}
            history = await _call(client, "history", {"key": "repository.protected", "scope": main})
            assert [record["status"] for record in history["records"]] == ["retracted"]


async def test_concurrent_calls_share_one_store(server, sandbox):
    results: list[dict[str, Any]] = []

    async def remember_and_check(index: int, client: Client) -> None:
        scope = f"repo:{sandbox.repo_identity}@topic-{index}"
        results.append(await _call(client, "remember", {"key": "repository.protected", "value": False,
                                                        "scope": scope}))
        results.append(await _call(client, "recall", {"task_scope": scope, "keys": ["repository.protected"]}))
        results.append(await _call(client, "check_action", {"task": "run the tests", "action": _test_run("pytest")}))

    with anyio.fail_after(TIMEOUT):
        async with Client(server, raise_exceptions=True) as client:
            async with anyio.create_task_group() as group:
                for index in range(6):
                    group.start_soon(remember_and_check, index, client)
            everything = await _call(client, "recall", {"task_scope": f"repo:{sandbox.repo_identity}",
                                                        "keys": ["repository.protected"]})
    assert len(results) == 18
    assert len(everything["near_misses"]) == 6  # one record per branch, none lost


# --- clarification --------------------------------------------------------------------------


async def _stale_test_command(client: Client, value: str = "pytest") -> dict[str, Any]:
    """A developer said long ago (past the 30-day TTL) that the tests run with ``value``."""
    stored = await _call(client, "remember", {"key": "project.test_command", "value": value,
                                              "authority": "developer", "actor": "dev",
                                              "observed_at": _ago(days=90)})
    assert stored["record"]["stale"] is True
    return stored["record"]


@pytest.mark.parametrize("value_type, stored, choices, field, reply, corrected", [
    (ValueType.BOOL, False, None, {"type": "boolean", "default": False}, True, True),
    (ValueType.INT, 3, None, {"type": "integer", "default": 3}, 4, 4),
    (ValueType.ENUM, "npm", ("npm", "yarn"), {"type": "string", "enum": ["npm", "yarn"], "default": "npm"}, "yarn",
     "yarn"),
    (ValueType.LIST, ["main"], None, {"type": "string", "default": "main"}, "main, release/*", ["main", "release/*"]),
    (ValueType.VERSION, "3.11", None, {"type": "string", "default": "3.11"}, "3.12", "3.12"),
])
def test_the_question_form_is_the_typed_value_plus_keep_and_dont_know(value_type, stored, choices, field, reply,
                                                                      corrected):
    question = Question(key="some.key", scope="global", value=stored, value_type=value_type, text="Still right?",
                        choices=choices)
    form = elicit_request(question).params
    assert form.message.startswith("Still right?")
    assert field.items() <= form.requested_schema["properties"]["value"].items()
    assert form.requested_schema["properties"]["choice"]["enum"] == ["set", "keep", "dont_know"]
    changed = elicited_answer(question, "accept", {"choice": "set", "value": reply})
    assert changed.kind is AnswerKind.CORRECT and changed.value == corrected
    assert elicited_answer(question, "accept", {}).kind is AnswerKind.CONFIRM  # the pre-filled form, submitted as is
    assert elicited_answer(question, "accept", {"choice": "keep", "value": reply}).kind is AnswerKind.CONFIRM
    assert elicited_answer(question, "accept", {"choice": "dont_know"}).kind is AnswerKind.UNKNOWN
    assert elicited_answer(question, "decline", None).kind is AnswerKind.UNKNOWN
    assert elicited_answer(question, "cancel", None).kind is AnswerKind.UNKNOWN
    wrong = elicited_answer(question, "accept", {"choice": "set", "value": "not a version" if value_type is ValueType.VERSION
                                         else {"nested": 1}})
    assert wrong.kind is AnswerKind.UNKNOWN and "fit" in wrong.note


@pytest.mark.parametrize("mode, era", [("auto", "2026-07-28"), ("legacy", "2025-11-25")])
async def test_elicited_answer_becomes_the_persistent_correction(server, sandbox, mode, era):
    asked: list[ElicitRequestFormParams] = []

    async def developer(context, params):
        asked.append(params)
        return ElicitResult(action="accept", content={"choice": "set", "value": "tox"})

    with anyio.fail_after(TIMEOUT):
        async with Client(server, mode=mode, elicitation_callback=developer) as client:
            assert client.protocol_version == era  # input-required rounds, or elicitation/create mid-call
            old = await _stale_test_command(client)
            checked = await _call(client, "check_action", {"task": "run the tests", "action": _test_run("pytest")})

            [question] = asked
            assert isinstance(question, ElicitRequestFormParams)
            assert "project.test_command" in question.message and "pytest" in question.message
            fields = question.requested_schema["properties"]
            assert fields["value"]["type"] == "string" and fields["value"]["default"] == "pytest"
            assert fields["choice"]["enum"] == ["set", "keep", "dont_know"]

            # The action relied on a value the developer just corrected: stop, and re-plan.
            assert checked["verdict"] == "stop"
            assert "project.test_command" in checked["reason"] and "tox" in checked["reason"]
            assert checked["questions"] == []
            assert checked["asked"] == [{"key": "project.test_command", "scope": old["scope"], "value": "pytest",
                                         "text": question.message.split("\n")[0], "answer": "correct",
                                         "new_value": "tox", "note": None}]
            [repair] = checked["report"]["repairs"]
            assert repair["kind"] == "supersede" and repair["record_id"] == old["id"]
            assert repair["old_value"] == "pytest" and repair["new_value"] == "tox"
            premise = checked["report"]["premises"][0]
            assert premise["route"] == "clarification" and premise["evidence"]["authority"] == "developer"

            # The correction persists: the next task uses it without asking again.
            recalled = await _call(client, "recall", {"keys": ["project.test_command"]})
            assert [(r["value"], r["authority"]) for r in recalled["records"]] == [("tox", "developer")]
            replanned = await _call(client, "check_action", {"task": "run the tests", "action": _test_run("tox")})
            assert replanned["verdict"] == "execute" and replanned["action"]["args"] == {"command": "tox"}
            assert len(asked) == 1


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_unsettled_answers_leave_the_question_as_data(server, mode):
    replies = iter([ElicitResult(action="accept", content={"choice": "dont_know"}), ElicitResult(action="decline")])

    async def developer(context, params):
        return next(replies)

    with anyio.fail_after(TIMEOUT):
        async with Client(server, mode=mode, elicitation_callback=developer) as client:
            old = await _stale_test_command(client)
            for note in ("does not know", "declined"):
                checked = await _call(client, "check_action", {"task": "run the tests",
                                                               "action": _test_run("pytest")})
                assert checked["verdict"] == "stop" and "premises_resolved" in checked["blocked_by"]
                assert [a["answer"] for a in checked["asked"]] == ["unknown"] and note in checked["asked"][0]["note"]
                [question] = checked["questions"]
                assert question["record_id"] == old["id"] and question["value"] == "pytest"
                assert checked["report"]["repairs"] == []
            # "keep" confirms the value on record (a fresh developer confirmation, no new version).
            kept = ElicitResult(action="accept", content={"choice": "keep", "value": "ignored"})
            replies = iter([kept])
            checked = await _call(client, "check_action", {"task": "run the tests", "action": _test_run("pytest")})
            assert checked["verdict"] == "execute" and checked["asked"][0]["answer"] == "confirm"
            assert [r["kind"] for r in checked["report"]["repairs"]] == ["confirm"]


async def test_client_without_elicitation_gets_the_question_as_data(server, sandbox):
    with anyio.fail_after(TIMEOUT):
        async with Client(server, raise_exceptions=True) as client:  # no elicitation_callback
            old = await _stale_test_command(client)
            checked = await _call(client, "check_action", {"task": "run the tests", "action": _test_run("pytest")})
            assert checked["verdict"] == "stop" and checked["asked"] == []
            [question] = checked["questions"]
            assert question["key"] == "project.test_command" and question["value"] == "pytest"
            assert question["scope"] == f"repo:{sandbox.repo_identity}" and "pytest" in question["text"]
            assert "remember(" in checked["next_step"] and "authority='developer'" in checked["next_step"]
            assert checked["report"]["repairs"] == []

            # The agent asks the developer and records the answer as told; the next check passes.
            answered = await _call(client, "remember", {"key": question["key"], "value": "tox",
                                                        "scope": question["scope"], "authority": "developer",
                                                        "actor": "dev"})
            assert answered["outcome"] == "superseded" and answered["superseded"] == old["id"]
            checked = await _call(client, "check_action", {"task": "run the tests", "action": _test_run("tox")})
            assert checked["verdict"] == "execute" and checked["questions"] == []


# --- a separate process over stdio ----------------------------------------------------------


def _stdio(sandbox, store_path: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "statewise.integrations.mcp_server", "--store", store_path, "--workspace", str(sandbox.work)],
        cwd=str(sandbox.root),
    )


async def test_separate_process_over_stdio(sandbox, store_path):
    main = f"repo:{sandbox.repo_identity}@main"
    with anyio.fail_after(TIMEOUT):
        async with Client(_stdio(sandbox, store_path)) as client:
            assert client.protocol_version == "2026-07-28" and client.server_info.name == "statewise"
            assert {tool.name for tool in (await client.list_tools()).tools} == TOOLS
            stored = await _call(client, "remember", {"key": "repository.protected", "value": False, "scope": main,
                                                      "observed_at": _ago(days=3)})
            recalled = await _call(client, "recall", {"keys": ["repository.protected"]})
            assert [r["id"] for r in recalled["stale"]] == [stored["record"]["id"]]
            checked = await _call(client, "check_action", {"task": "push the changes", "action": FORCE_PUSH})
            assert checked["verdict"] == "stop" and "repository.protected" in checked["reason"]
            assert any(r["key"] == "repository.protected" and r["new_value"] is True
                       for r in checked["report"]["repairs"])
    with open_store(store_path) as store:  # the server process wrote the repair to the store on disk
        assert store.get_active("repository.protected", main).value is True


async def test_separate_process_asks_mid_call_on_a_handshake_era_connection(sandbox, store_path):
    async def developer(context, params):
        return ElicitResult(action="accept", content={"choice": "set", "value": "tox"})

    with anyio.fail_after(TIMEOUT):
        async with Client(_stdio(sandbox, store_path), mode="legacy", elicitation_callback=developer) as client:
            assert client.protocol_version == "2025-11-25"
            await _stale_test_command(client)
            checked = await _call(client, "check_action", {"task": "run the tests", "action": _test_run("pytest")})
            assert checked["verdict"] == "stop" and checked["asked"][0]["new_value"] == "tox"
            recalled = await _call(client, "recall", {"keys": ["project.test_command"]})
            assert [r["value"] for r in recalled["records"]] == ["tox"]


#: The top-level fields each tool's structured result has, as its outputSchema must declare them.
RESULT_FIELDS = {
    "remember": {"outcome", "record", "superseded"},
    "recall": {"task_scope", "records", "stale", "shadowed", "near_misses", "held_back", "session_context"},
    "check_action": {"verdict", "execute", "action", "reason", "blocked_by", "questions", "asked", "next_step",
                     "report"},
    "verify": {"key", "observed", "status", "route", "detail", "missing", "question", "stored", "evidence", "repair"},
    "history": {"key", "scope", "records"},
    "lineage": {"record_id", "records", "links"},
    "revert_repair": {"reverted", "restored"},
    "forget": {"retracted"},
}


def _resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    """``node`` with a local ``$ref`` (``#/$defs/NAME``) followed."""
    while "$ref" in node:
        node = schema["$defs"][node["$ref"].removeprefix("#/$defs/")]
    return node


def _record_schema(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    """The record model inside a field that holds a record, a list of records or null."""
    node = _resolve(schema, node)
    if node.get("type") == "array":
        return _record_schema(schema, node["items"])
    for option in node.get("anyOf", []):
        if option.get("type") != "null":
            return _record_schema(schema, option)
    return node


async def test_every_output_schema_is_specific_and_real_results_validate_over_stdio(sandbox, store_path):
    """Over stdio with the official SDK client: every tool publishes an outputSchema with its
    own fields (records typed down to their freshness), and the structuredContent of a real
    call of each tool validates against it."""
    import jsonschema

    main = f"repo:{sandbox.repo_identity}@main"
    with anyio.fail_after(TIMEOUT):
        async with Client(_stdio(sandbox, store_path)) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert set(tools) == TOOLS == set(RESULT_FIELDS)
            for name, tool in tools.items():
                schema = tool.output_schema
                assert schema is not None and schema["type"] == "object", name
                assert set(schema["properties"]) == RESULT_FIELDS[name], name
                assert schema.get("additionalProperties") is False, name  # not a generic object
                assert set(schema["required"]) <= RESULT_FIELDS[name] and schema["required"], name
                jsonschema.Draft202012Validator.check_schema(schema)
            record = _record_schema(tools["recall"].output_schema, tools["recall"].output_schema["properties"]["stale"])
            assert record["properties"]["stale"]["type"] == "boolean"
            assert {"id", "key", "value", "scope", "status", "time", "provenance", "authority", "fresh_until"} <= \
                set(record["properties"])
            assert {option.get("type") for option in record["properties"]["value"]["anyOf"]} == \
                {"boolean", "integer", "string", "array"}
            verdict = _resolve(tools["check_action"].output_schema,
                               tools["check_action"].output_schema["properties"]["verdict"])
            assert verdict["enum"] == ["execute", "stop"]

            results: dict[str, dict[str, Any]] = {}
            results["remember"] = await _call(client, "remember", {"key": "repository.protected", "value": False,
                                                                   "scope": main, "observed_at": _ago(days=3)})
            old = results["remember"]["record"]["id"]
            # check_action before recall: recall with a workspace runs the session's record check
            # (integrations/prompt.py), which would make this repair itself.
            results["check_action"] = await _call(client, "check_action", {"task": "push", "action": FORCE_PUSH,
                                                                           "full_report": True})
            [repair] = [r for r in results["check_action"]["report"]["repairs"] if r["key"] == "repository.protected"]
            results["recall"] = await _call(client, "recall", {"workspace": str(sandbox.work)})
            results["verify"] = await _call(client, "verify", {"key": "repository.protected", "scope": main})
            results["history"] = await _call(client, "history", {"key": "repository.protected", "scope": main})
            results["lineage"] = await _call(client, "lineage", {"record_id": old})
            results["revert_repair"] = await _call(client, "revert_repair", {"record_id": repair["new_record_id"],
                                                                             "reason": "checking the schema"})
            results["forget"] = await _call(client, "forget", {"record_id": results["revert_repair"]["restored"]["id"],
                                                               "reason": "checking the schema"})
    for name, content in results.items():
        jsonschema.validate(content, tools[name].output_schema, cls=jsonschema.Draft202012Validator)
    assert results["check_action"]["verdict"] == "stop" and results["check_action"]["report"]["candidates"]
    assert results["verify"]["observed"] is True and results["forget"]["retracted"]["status"] == "retracted"
    # The schemas are strict enough to catch a wrong payload: a record without its freshness,
    # an unknown field, a verdict that is neither execute nor stop.
    broken = dict(results["remember"], record={k: v for k, v in results["remember"]["record"].items() if k != "stale"})
    for wrong, tool in [(broken, "remember"), (dict(results["forget"], extra=1), "forget"),
                        (dict(results["check_action"], verdict="maybe"), "check_action")]:
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(wrong, tools[tool].output_schema, cls=jsonschema.Draft202012Validator)


STALE_LINE = "The tests run with `npm run test:unit`."


async def test_recall_with_a_workspace_gives_the_session_context_the_hook_gives(sandbox, store_path):
    """An MCP-only agent gets the repaired state: recall(workspace=...) carries the SessionStart
    hook's note (same function, same budget), and after the correction is written back the
    note no longer names the line wrong."""
    import json

    from statewise.integrations.hooks import SESSION_CONTEXT_CHARS, SESSION_CONTEXT_TOKENS, run_hook
    from statewise.memory import apply_edits, check_memory, propose_edits
    from statewise.memory.context import estimate_tokens
    from statewise.memory.writeback import WriteBackPolicy
    from statewise.sandbox import git

    work = sandbox.work
    (work / "package.json").write_text('{"name": "app", "scripts": {"test": "echo ok"}}\n', encoding="utf-8")
    (work / "AGENTS.md").write_text(f"# Notes\n\n## Testing\n\n{STALE_LINE}\n", encoding="utf-8")
    git(work, "add", "package.json", "AGENTS.md")
    git(work, "commit", "--quiet", "-m", "notes")
    built = build_server(store_location=store_path, workspace=str(work))
    try:
        with anyio.fail_after(TIMEOUT):
            async with Client(built, raise_exceptions=True) as client:
                recalled = await _call(client, "recall", {"workspace": str(work)})
                context = recalled["session_context"]
                assert f'AGENTS.md:5 "{STALE_LINE}" is wrong' in context, context
                assert "npm.script_exists[test:unit] is false" in context and "Use: npm test" in context
                assert estimate_tokens(context) <= SESSION_CONTEXT_TOKENS + SESSION_CONTEXT_CHARS // 3
                # The check's correction is in the store the records come from.
                assert "project.test_command" in {r["key"] for r in recalled["records"]}
                # Without a workspace there is no session to start: no note is computed.
                assert (await _call(client, "recall", {"keys": ["project.test_command"]}))["session_context"] is None

                # The same text the SessionStart hook injects into Claude Code, Codex and Gemini CLI.
                hook = run_hook("codex", json.dumps({"hook_event_name": "SessionStart", "cwd": str(work),
                                                     "session_id": "s1"}), event="session",
                                store_location=store_path)
                assert json.loads(hook.stdout)["hookSpecificOutput"]["additionalContext"] == \
                    (await _call(client, "recall", {"workspace": str(work)}))["session_context"]

                # The developer writes the correction back (their own file, so with approval).
                store = open_store(store_path, key_schema=built.statewise.contract)
                try:
                    edits = propose_edits(check_memory(work, built.statewise.contract, store=store))
                    assert [r.applied for r in apply_edits(edits, WriteBackPolicy.ASK, store=store,
                                                           approve=lambda edit: True)] == [True]
                finally:
                    store.close()
                repaired = (await _call(client, "recall", {"workspace": str(work)}))["session_context"]
                assert "WRONG lines" not in repaired and STALE_LINE not in repaired, repaired
                assert "- project.test_command = npm test" in repaired, repaired
    finally:
        built.statewise.close()


def test_the_module_entry_point_reports_a_bad_contract(tmp_path):
    done = subprocess.run([sys.executable, "-m", "statewise.integrations.mcp_server", "--contract",
                           str(tmp_path / "missing.yaml"), "--store", str(tmp_path / "s.db")],
                          check=False, capture_output=True, text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL)
    assert done.returncode == 2 and done.stderr.startswith("error: ") and "missing.yaml" in done.stderr
    assert Path(tmp_path / "s.db").exists() is False


@pytest.mark.parametrize("how", ["ctrl-c in a terminal", "end of input"])
def test_statewise_mcp_stops_cleanly(tmp_path, how):
    import json
    import os
    import pty
    import signal
    import time

    store = tmp_path / "store.db"
    request = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}) + "\n"
    if how == "end of input":
        done = subprocess.run([sys.executable, "-m", "statewise", "--store", str(store), "mcp"], input=request,
                              capture_output=True, text=True, timeout=TIMEOUT, cwd=tmp_path)
        assert done.returncode == 0 and '"id":1' in done.stdout.replace(" ", "")
        return
    controller, terminal = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "statewise", "--store", str(store), "mcp"], stdin=terminal,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
    try:
        os.write(controller, request.encode())
        assert process.stdout is not None
        assert b'"id":1' in process.stdout.readline().replace(b" ", b"")  # serving, handlers installed
        started = time.monotonic()
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=10) == 130
        assert time.monotonic() - started < 10
        assert b"stopped by SIGINT" in process.stderr.read()
    finally:
        process.kill()
        os.close(controller)
        os.close(terminal)
