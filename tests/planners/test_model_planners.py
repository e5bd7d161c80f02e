"""Wire-protocol tests of the model-backed planners against a loopback server.

These are NOT model results. No model is called here and no network is reached: each test
starts a real HTTP server on 127.0.0.1 (an ephemeral port, in a background thread) that
speaks the relevant wire protocol, ``POST /v1/chat/completions`` (OpenAI-compatible) or
``POST /v1/messages`` (Anthropic), records every request's headers and body, and answers with
a canned response chosen by the test. The planners use the real ``openai`` and ``anthropic``
SDKs over real HTTP, so these tests check what goes over the wire, how the answer is parsed
into an Action, and that every malformed answer or transport failure becomes a PlannerError.
"""

from __future__ import annotations

import importlib.metadata
import json
import socket
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from statewise.actions import Action
from statewise.errors import PlannerError
from statewise.planners.anthropic import TOOL_NAME, AnthropicPlanner
from statewise.planners.base import MASKED, ContextRecord, Plan, Planner, PlanningContext, Task, Usage
from statewise.planners.openai_compat import OpenAICompatiblePlanner
from statewise.planners.prompt import action_schema, build_prompt
from statewise.scopes import TaskScope

API_KEY = "sk-test-loopback-0123"
REPO = "github.com/acme/app"
OPERATIONS = ["git.push", "git.commit", "pip.install"]
OBSERVED = datetime(2025, 3, 4, 5, 6, 7, tzinfo=UTC)

# --- the loopback server ------------------------------------------------------------------


@dataclass
class Reply:
    """A canned answer: status, JSON (or raw text) body, headers, and an optional stall."""

    body: Any = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    raw: bytes

    @property
    def body(self) -> Any:
        return json.loads(self.raw)


class WireServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.received: list[Received] = []
        self.replies: list[Reply] = []
        self.lock = threading.Lock()
        self.release = threading.Event()

    @property
    def root(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}"

    def reply(self, *replies: Reply) -> None:
        with self.lock:
            self.replies.extend(replies)

    def next_reply(self) -> Reply | None:
        with self.lock:
            return self.replies.pop(0) if self.replies else None


class _Handler(BaseHTTPRequestHandler):
    server: WireServer

    def log_message(self, format: str, *args: Any) -> None:  # keep pytest output clean
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        headers = {name.lower(): value for name, value in self.headers.items()}
        with self.server.lock:
            self.server.received.append(Received("POST", self.path, headers, raw))
        reply = self.server.next_reply()
        if reply is None:  # a test that sends more requests than it expects fails loudly
            reply = Reply({"error": {"message": "no canned reply left", "type": "test"}}, status=418)
        if reply.delay:
            self.server.release.wait(reply.delay)
        if isinstance(reply.body, (bytes, str)):
            payload = reply.body.encode() if isinstance(reply.body, str) else reply.body
            content_type = "text/plain"
        else:
            payload = json.dumps(reply.body).encode()
            content_type = "application/json"
        try:
            self.send_response(reply.status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)
        except OSError:  # the client gave up (a timeout test)
            pass


@pytest.fixture(autouse=True)
def _isolated_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing from the environment may redirect or decorate the requests under test."""
    for variable in (
        "OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID", "OPENAI_ADMIN_KEY",
        "OPENAI_CUSTOM_HEADERS", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL",
        "ANTHROPIC_CUSTOM_HEADERS", "ANTHROPIC_PROFILE",
        "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy",
    ):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")


@pytest.fixture
def wire() -> Iterator[WireServer]:
    server = WireServer()
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.release.set()  # let a stalled handler finish
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


# --- inputs --------------------------------------------------------------------------------

TASK = Task(
    text="Push the fix for issue 42 to the main branch.",
    scope=TaskScope(user="alice", workspace="/home/alice/src/app", repo=REPO, branch="main"),
    family="push",
)


def context() -> PlanningContext:
    return PlanningContext.of(
        [
            ContextRecord(
                id="rec_1", key="repository.protected", value=False, scope=f"repo:{REPO}@main",
                source="observation", authority="machine", observed_at=OBSERVED,
            ),
            ContextRecord(
                id="rec_2", key="repository.default_remote", value=MASKED, scope=f"repo:{REPO}",
                source="developer", authority="developer", observed_at=None,
            ),
            ContextRecord(
                id="rec_3", key="python.version", value="3.8.10", scope="workspace:/home/alice/src/app",
                source="tool_output", authority="machine", observed_at=OBSERVED, stale=True,
            ),
        ]
    )


PUSH = {
    "tool": "git",
    "operation": "git.push",
    "target": "origin/main",
    "args": [{"name": "force", "value": False}, {"name": "remote", "value": "origin"}],
    "scope": f"repo:{REPO}@main",
    "risk": "medium",
    "reason": "main is not protected, so a plain push is allowed",
}
PUSH_ACTION = Action(
    tool="git", operation="git.push", target="origin/main", args={"force": False, "remote": "origin"},
    scope=f"repo:{REPO}@main", risk="medium", reason="main is not protected, so a plain push is allowed",
)


def chat_completion(content: Any, *, finish_reason: str = "stop", usage: Any = "default", **message: Any) -> dict:
    body: dict[str, Any] = {
        "id": "chatcmpl-loopback",
        "object": "chat.completion",
        "created": 1700000000,
        "model": "loopback-model",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, **message},
                "finish_reason": finish_reason,
            }
        ],
    }
    if usage == "default":
        body["usage"] = {"prompt_tokens": 321, "completion_tokens": 45, "total_tokens": 366}
    elif usage is not None:
        body["usage"] = usage
    return body


def anthropic_message(content: list[dict], *, stop_reason: str = "tool_use", usage: dict | None = None) -> dict:
    return {
        "id": "msg_loopback",
        "type": "message",
        "role": "assistant",
        "model": "loopback-claude",
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": usage or {"input_tokens": 400, "output_tokens": 60},
    }


def tool_use(data: Any, name: str = TOOL_NAME) -> dict:
    return {"type": "tool_use", "id": "toolu_loopback", "name": name, "input": data}


def openai_planner(wire: WireServer, **options: Any) -> OpenAICompatiblePlanner:
    options.setdefault("max_retries", 0)
    options.setdefault("timeout", 10)
    options.setdefault("operations", OPERATIONS)
    return OpenAICompatiblePlanner("loopback-model", base_url=f"{wire.root}/v1", api_key=API_KEY, **options)


def anthropic_planner(wire: WireServer, **options: Any) -> AnthropicPlanner:
    options.setdefault("max_retries", 0)
    options.setdefault("timeout", 10)
    options.setdefault("operations", OPERATIONS)
    return AnthropicPlanner("loopback-claude", base_url=wire.root, api_key=API_KEY, **options)


def assert_prompt_shows_the_inputs(text: str) -> None:
    assert json.dumps(TASK.text) in text
    assert "repository: github.com/acme/app" in text and "branch: main" in text
    assert "key: repository.protected" in text and "value: false" in text
    assert f"scope: repo:{REPO}@main" in text
    assert "source: observation (authority: machine)" in text
    assert f"observed_at: {OBSERVED.isoformat()}" in text
    assert "key: python.version" in text and 'value: "3.8.10"' in text and "stale: yes" in text
    assert "key: repository.default_remote" in text
    for name in OPERATIONS:
        assert f"- {name}" in text


# --- the prompt -----------------------------------------------------------------------------


def test_a_masked_record_is_shown_as_unknown_and_a_string_unknown_keeps_its_quotes():
    masked = PlanningContext.of(
        [
            ContextRecord(id="a", key="repository.protected", value=MASKED, scope="global",
                          source="developer", authority="developer"),
            ContextRecord(id="b", key="deploy.target", value="unknown", scope="global",
                          source="developer", authority="developer"),
        ]
    )
    text = build_prompt(TASK, masked, OPERATIONS).user
    first, second = text.split("key: repository.protected", 1)[1].split("key: deploy.target", 1)
    assert "value: unknown (masked" in first
    assert "MASKED" not in text and "false" not in first
    assert 'value: "unknown"' in second


def test_the_masked_value_is_not_leaked_even_when_a_probe_masks_a_known_record():
    plain = context()
    probed = plain.with_value("rec_1", MASKED)
    plain_text, probed_text = build_prompt(TASK, plain, OPERATIONS).user, build_prompt(TASK, probed, OPERATIONS).user
    assert "value: false" in plain_text
    assert "value: false" not in probed_text
    assert "value: unknown (masked" in probed_text.split("key: repository.protected", 1)[1].split("\n")[1]


def test_the_prompt_is_deterministic():
    first = build_prompt(TASK, context(), OPERATIONS)
    again = build_prompt(
        Task(text=TASK.text, scope=TaskScope(user="alice", workspace="/home/alice/src/app", repo=REPO, branch="main"),
             family="push"),
        context(),
        list(reversed(OPERATIONS)) + ["git.push"],  # order and repeats do not matter
    )
    assert first == again
    assert first.user.encode() == again.user.encode() and first.system.encode() == again.system.encode()
    assert build_prompt(TASK, context().without("rec_3"), OPERATIONS) != first


def test_the_prompt_shows_task_scope_records_and_allowed_operations():
    prompt = build_prompt(TASK, context(), OPERATIONS)
    assert_prompt_shows_the_inputs(prompt.user)
    assert "- stop" in prompt.user
    assert "exactly one" in prompt.system and '"stop"' in prompt.system
    assert json.dumps(action_schema(OPERATIONS), sort_keys=True) in prompt.user


def test_the_prompt_for_an_empty_context_and_unrestricted_operations():
    text = build_prompt(Task(text="tidy up", scope=TaskScope()), PlanningContext(), None).user
    assert "RECORDS (0;" in text and "(none)" in text
    assert "repository: unknown" in text and "task scope: global" in text
    assert "any operation name" in text


def _assert_strict(schema: Any) -> None:
    if isinstance(schema, dict):
        if schema.get("type") == "object":
            assert schema["additionalProperties"] is False
            assert sorted(schema["required"]) == sorted(schema["properties"])
        for value in schema.values():
            _assert_strict(value)
    elif isinstance(schema, list):
        for value in schema:
            _assert_strict(value)


def test_the_action_schema_is_valid_in_strict_mode_and_restricts_operations():
    schema = action_schema(OPERATIONS)
    _assert_strict(schema)
    assert schema["properties"]["operation"]["enum"] == ["git.commit", "git.push", "pip.install", "stop"]
    assert "enum" not in action_schema(None)["properties"]["operation"]


# --- OpenAI-compatible: the request and a good answer -----------------------------------------


def test_openai_request_on_the_wire_and_the_parsed_plan(wire: WireServer):
    wire.reply(Reply(chat_completion(json.dumps(PUSH))))
    with openai_planner(wire) as planner:
        plan = planner.plan(TASK, context())

    assert isinstance(plan, Plan)
    assert plan.action == PUSH_ACTION
    assert plan.usage == Usage(input_tokens=321, output_tokens=45)
    assert json.loads(plan.raw) == PUSH

    [request] = wire.received
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {API_KEY}"
    body = request.body
    assert body["model"] == "loopback-model"
    assert body["temperature"] == 0.0
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert_prompt_shows_the_inputs(body["messages"][1]["content"])
    assert "value: unknown (masked" in body["messages"][1]["content"]
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "action", "schema": action_schema(OPERATIONS), "strict": True},
    }
    assert "tools" not in body and "stream" not in body


def test_openai_identical_inputs_send_byte_identical_requests(wire: WireServer):
    wire.reply(Reply(chat_completion(json.dumps(PUSH))), Reply(chat_completion(json.dumps(PUSH))))
    with openai_planner(wire) as planner:
        planner.plan(TASK, context())
        planner.plan(TASK, context())
    first, second = wire.received
    assert first.raw == second.raw


def test_openai_stop_answer_becomes_an_explicit_stop(wire: WireServer):
    stop = {**PUSH, "tool": "none", "operation": "stop", "target": None, "args": [], "risk": None,
            "reason": "the default remote is unknown"}
    wire.reply(Reply(chat_completion(json.dumps(stop))))
    with openai_planner(wire) as planner:
        action = planner.plan(TASK, context()).action
    assert action.is_stop
    assert action == Action.stop("the default remote is unknown", scope=f"repo:{REPO}@main")


def test_openai_json_object_mode_for_servers_without_json_schema(wire: WireServer):
    wire.reply(Reply(chat_completion(json.dumps(PUSH))))
    with openai_planner(wire, structured="json_object", temperature=None) as planner:
        assert planner.plan(TASK, context()).action == PUSH_ACTION
    body = wire.received[0].body
    assert body["response_format"] == {"type": "json_object"}
    assert "temperature" not in body
    # The schema still reaches the model, in the prompt.
    assert json.dumps(action_schema(OPERATIONS), sort_keys=True) in body["messages"][1]["content"]


def test_openai_strict_flag_and_unrestricted_operations(wire: WireServer):
    wire.reply(Reply(chat_completion(json.dumps({**PUSH, "operation": "fs.write"}))))
    with openai_planner(wire, strict=False, operations=None, temperature=0.3) as planner:
        assert planner.plan(TASK, context()).action.operation == "fs.write"
    body = wire.received[0].body
    assert body["response_format"]["json_schema"]["strict"] is False
    assert "enum" not in body["response_format"]["json_schema"]["schema"]["properties"]["operation"]
    assert body["temperature"] == 0.3


def test_openai_answer_without_usage_reports_none(wire: WireServer):
    wire.reply(Reply(chat_completion(json.dumps(PUSH), usage=None)))
    with openai_planner(wire) as planner:
        plan = planner.plan(TASK, context())
    assert plan.action == PUSH_ACTION and plan.usage is None


def test_openai_planner_satisfies_the_protocol(wire: WireServer):
    with openai_planner(wire) as planner:
        assert isinstance(planner, Planner)
        assert planner.name == "openai-compatible:loopback-model"


# --- OpenAI-compatible: every malformed answer is a PlannerError ------------------------------

BAD_CONTENT = {
    "not JSON": "git push origin main",
    "truncated JSON": json.dumps(PUSH)[:-5],
    "JSON in a code fence": "```json\n" + json.dumps(PUSH) + "\n```",
    "empty content": "",
    "a JSON array": json.dumps([PUSH]),
    "a JSON string": json.dumps("git.push"),
    "missing field": json.dumps({k: v for k, v in PUSH.items() if k != "reason"}),
    "extra field": json.dumps({**PUSH, "confidence": 0.9}),
    "extra field in an argument": json.dumps({**PUSH, "args": [{"name": "force", "value": False, "why": "x"}]}),
    "args as an object": json.dumps({**PUSH, "args": {"force": False}}),
    "tool is a number": json.dumps({**PUSH, "tool": 7}),
    "target is a number": json.dumps({**PUSH, "target": 42}),
    "argument value is an object": json.dumps({**PUSH, "args": [{"name": "force", "value": {"x": 1}}]}),
    "argument value is a list of numbers": json.dumps({**PUSH, "args": [{"name": "n", "value": [1, 2]}]}),
    "repeated argument": json.dumps({**PUSH, "args": [{"name": "force", "value": False}, {"name": "force", "value": True}]}),
    "bad argument name": json.dumps({**PUSH, "args": [{"name": "force push", "value": True}]}),
    "operation not allowed": json.dumps({**PUSH, "operation": "git.reset"}),
    "unknown risk class": json.dumps({**PUSH, "risk": "yolo"}),
    "empty tool": json.dumps({**PUSH, "tool": ""}),
    "stop without a reason": json.dumps({**PUSH, "operation": "stop", "reason": "  "}),
    "duplicate JSON key": '{"tool": "git", ' + json.dumps(PUSH)[1:],
    "NaN in JSON": json.dumps({**PUSH, "args": [{"name": "n", "value": float("nan")}]}),
}


@pytest.mark.parametrize("case", sorted(BAD_CONTENT))
def test_openai_malformed_answer_raises_planner_error(wire: WireServer, case: str):
    wire.reply(Reply(chat_completion(BAD_CONTENT[case])))
    with openai_planner(wire) as planner, pytest.raises(PlannerError) as raised:
        planner.plan(TASK, context())
    assert raised.value.planner == "openai-compatible:loopback-model"
    assert str(raised.value).startswith("planner openai-compatible:loopback-model: ")


BAD_RESPONSES = {
    "null content": (chat_completion(None), "no content"),
    "refusal": (chat_completion(None, refusal="I can't help with that."), "refused"),
    "empty choices": ({**chat_completion("{}"), "choices": []}, "no choices"),
    "no choices field": ({k: v for k, v in chat_completion("{}").items() if k != "choices"}, "no choices"),
    "finish_reason length": (chat_completion(json.dumps(PUSH), finish_reason="length"), "token limit"),
    "finish_reason content_filter": (chat_completion(json.dumps(PUSH), finish_reason="content_filter"), "content filter"),
    "tool call instead of an answer": (chat_completion(None, finish_reason="tool_calls"), "called a tool"),
}


@pytest.mark.parametrize("case", sorted(BAD_RESPONSES))
def test_openai_malformed_response_raises_planner_error(wire: WireServer, case: str):
    body, expected = BAD_RESPONSES[case]
    wire.reply(Reply(body))
    with openai_planner(wire) as planner, pytest.raises(PlannerError, match=expected):
        planner.plan(TASK, context())


def test_openai_body_that_is_not_json_raises_planner_error(wire: WireServer):
    wire.reply(Reply("<html>gateway says hi</html>"))
    with openai_planner(wire) as planner, pytest.raises(PlannerError):
        planner.plan(TASK, context())


# --- OpenAI-compatible: transport failures ----------------------------------------------------


def test_openai_http_500_without_retries_raises_planner_error(wire: WireServer):
    wire.reply(Reply({"error": {"message": "model crashed", "type": "server_error"}}, status=500))
    with openai_planner(wire, max_retries=0) as planner, pytest.raises(PlannerError, match="HTTP 500: model crashed"):
        planner.plan(TASK, context())
    assert len(wire.received) == 1


def test_openai_retries_a_500_then_succeeds(wire: WireServer):
    wire.reply(
        Reply({"error": {"message": "busy"}}, status=500, headers={"retry-after-ms": "10"}),
        Reply(chat_completion(json.dumps(PUSH))),
    )
    with openai_planner(wire, max_retries=1) as planner:
        assert planner.plan(TASK, context()).action == PUSH_ACTION
    assert len(wire.received) == 2
    assert wire.received[0].body == wire.received[1].body


def test_openai_http_401_raises_planner_error(wire: WireServer):
    wire.reply(Reply({"error": {"message": "bad key", "type": "invalid_request_error"}}, status=401))
    with openai_planner(wire, max_retries=3) as planner, pytest.raises(PlannerError, match="HTTP 401"):
        planner.plan(TASK, context())
    assert len(wire.received) == 1  # not retried


def test_openai_server_that_hangs_past_the_timeout_raises_planner_error(wire: WireServer):
    wire.reply(Reply(chat_completion(json.dumps(PUSH)), delay=30))
    started = time.monotonic()
    with openai_planner(wire, timeout=0.5, max_retries=0) as planner, pytest.raises(PlannerError, match="timed out"):
        planner.plan(TASK, context())
    assert time.monotonic() - started < 10


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_openai_unreachable_server_raises_planner_error():
    planner = OpenAICompatiblePlanner(
        "m", base_url=f"http://127.0.0.1:{_closed_port()}/v1", api_key=API_KEY, max_retries=0, timeout=5
    )
    with planner, pytest.raises(PlannerError, match="cannot reach"):
        planner.plan(TASK, context())


def test_openai_without_an_api_key_raises_planner_error():
    with pytest.raises(PlannerError, match="api_key"):
        OpenAICompatiblePlanner("m", base_url="http://127.0.0.1:1/v1")


def test_openai_without_the_sdk_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setitem(sys.modules, "openai", None)  # makes `import openai` raise ImportError
    with pytest.raises(PlannerError, match=r"pip install 'statewise\[models\]'"):
        OpenAICompatiblePlanner("m", base_url="http://127.0.0.1:1/v1", api_key=API_KEY)


# --- Anthropic: the request and a good answer --------------------------------------------------


def test_anthropic_request_on_the_wire_and_the_parsed_plan(wire: WireServer):
    wire.reply(Reply(anthropic_message([tool_use(PUSH)], usage={
        "input_tokens": 400, "output_tokens": 60, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 0,
    })))
    with anthropic_planner(wire) as planner:
        plan = planner.plan(TASK, context())

    assert plan.action == PUSH_ACTION
    assert plan.usage == Usage(input_tokens=500, output_tokens=60)
    assert json.loads(plan.raw) == PUSH

    [request] = wire.received
    assert request.path == "/v1/messages"
    # SDK 2.x sends the key as a bearer token; SDK 0.x as x-api-key. Either must carry it.
    assert request.headers.get("authorization") == f"Bearer {API_KEY}" or request.headers.get("x-api-key") == API_KEY
    assert request.headers.get("anthropic-version")
    body = request.body
    assert body["model"] == "loopback-claude"
    assert body["max_tokens"] == 1024
    assert "temperature" not in body  # API version 2026-10-21 rejects sampling parameters
    assert "exactly one" in body["system"]
    assert [m["role"] for m in body["messages"]] == ["user"]
    content = body["messages"][0]["content"]
    assert_prompt_shows_the_inputs(content)
    assert "value: unknown (masked" in content
    assert body["tools"] == [
        {"name": TOOL_NAME, "description": body["tools"][0]["description"], "input_schema": action_schema(OPERATIONS)}
    ]
    assert body["tool_choice"] == {"type": "tool", "name": TOOL_NAME, "disable_parallel_tool_use": True}


def test_anthropic_identical_inputs_send_byte_identical_requests(wire: WireServer):
    wire.reply(Reply(anthropic_message([tool_use(PUSH)])), Reply(anthropic_message([tool_use(PUSH)])))
    with anthropic_planner(wire) as planner:
        planner.plan(TASK, context())
        planner.plan(TASK, context())
    first, second = wire.received
    assert first.raw == second.raw


def test_anthropic_temperature_and_max_tokens_when_set(wire: WireServer):
    wire.reply(Reply(anthropic_message([{"type": "text", "text": "Pushing."}, tool_use(PUSH)])))
    with anthropic_planner(wire, temperature=0.0, max_tokens=300) as planner:
        assert planner.plan(TASK, context()).action == PUSH_ACTION
    body = wire.received[0].body
    assert body["temperature"] == 0.0
    assert body["max_tokens"] == 300


def test_anthropic_stop_answer_becomes_an_explicit_stop(wire: WireServer):
    stop = {**PUSH, "operation": "stop", "args": [], "reason": "main may be protected; ask first"}
    wire.reply(Reply(anthropic_message([tool_use(stop)])))
    with anthropic_planner(wire) as planner:
        action = planner.plan(TASK, context()).action
    assert action == Action.stop("main may be protected; ask first", scope=f"repo:{REPO}@main")


def test_anthropic_planner_satisfies_the_protocol(wire: WireServer):
    with anthropic_planner(wire) as planner:
        assert isinstance(planner, Planner)
        assert planner.name == "anthropic:loopback-claude"


# --- Anthropic: every malformed answer is a PlannerError ---------------------------------------

BAD_MESSAGES = {
    "no tool_use block": (anthropic_message([{"type": "text", "text": "I would push."}], stop_reason="end_turn"), "no tool_use block"),
    "empty content": (anthropic_message([], stop_reason="end_turn"), "no tool_use block"),
    "another tool": (anthropic_message([tool_use(PUSH, name="run_shell")]), "run_shell"),
    "two tool_use blocks": (anthropic_message([tool_use(PUSH), tool_use(PUSH)]), "2 tool_use blocks"),
    "schema violation": (anthropic_message([tool_use({**PUSH, "args": {"force": False}})]), "action schema"),
    "extra field": (anthropic_message([tool_use({**PUSH, "confidence": 0.9})]), "action schema"),
    "missing field": (anthropic_message([tool_use({k: v for k, v in PUSH.items() if k != "tool"})]), "action schema"),
    "input is a string": (anthropic_message([tool_use(json.dumps(PUSH))]), "not an object"),
    "operation not allowed": (anthropic_message([tool_use({**PUSH, "operation": "git.reset"})]), "not allowed"),
    "non-finite number": (anthropic_message([tool_use({**PUSH, "args": [{"name": "n", "value": float("nan")}]})]), "non-finite"),
    "cut off at max_tokens": (anthropic_message([tool_use(PUSH)], stop_reason="max_tokens"), "max_tokens"),
    "refusal": (anthropic_message([], stop_reason="refusal"), "refused"),
    "no content field": ({k: v for k, v in anthropic_message([]).items() if k != "content"}, "no content"),
}


@pytest.mark.parametrize("case", sorted(BAD_MESSAGES))
def test_anthropic_malformed_answer_raises_planner_error(wire: WireServer, case: str):
    body, expected = BAD_MESSAGES[case]
    wire.reply(Reply(body))
    with anthropic_planner(wire) as planner, pytest.raises(PlannerError, match=expected) as raised:
        planner.plan(TASK, context())
    assert raised.value.planner == "anthropic:loopback-claude"


# --- Anthropic: transport failures --------------------------------------------------------------


def test_anthropic_http_500_without_retries_raises_planner_error(wire: WireServer):
    wire.reply(Reply({"type": "error", "error": {"type": "api_error", "message": "internal"}}, status=500))
    with anthropic_planner(wire, max_retries=0) as planner, pytest.raises(PlannerError, match="HTTP 500: internal"):
        planner.plan(TASK, context())
    assert len(wire.received) == 1


def test_anthropic_overloaded_529_is_retried_then_reported(wire: WireServer):
    overloaded = Reply({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
                       status=529, headers={"retry-after-ms": "10"})
    wire.reply(overloaded, overloaded)
    with anthropic_planner(wire, max_retries=1) as planner, pytest.raises(PlannerError, match="HTTP 529"):
        planner.plan(TASK, context())
    assert len(wire.received) == 2


def test_anthropic_server_that_hangs_past_the_timeout_raises_planner_error(wire: WireServer):
    wire.reply(Reply(anthropic_message([tool_use(PUSH)]), delay=30))
    started = time.monotonic()
    with anthropic_planner(wire, timeout=0.5, max_retries=0) as planner, pytest.raises(PlannerError, match="timed out"):
        planner.plan(TASK, context())
    assert time.monotonic() - started < 10


def test_anthropic_unreachable_server_raises_planner_error():
    planner = AnthropicPlanner("m", base_url=f"http://127.0.0.1:{_closed_port()}", api_key=API_KEY, max_retries=0, timeout=5)
    with planner, pytest.raises(PlannerError, match="cannot reach"):
        planner.plan(TASK, context())


def test_anthropic_without_the_sdk_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setitem(sys.modules, "anthropic", None)
    with pytest.raises(PlannerError, match=r"pip install 'statewise\[models\]'"):
        AnthropicPlanner("m", base_url="http://127.0.0.1:1", api_key=API_KEY)


# --- registration ---------------------------------------------------------------------------------


def test_both_planners_are_registered_as_entry_points():
    found = {ep.name: ep for ep in importlib.metadata.entry_points(group="statewise.planners")}
    assert found["openai"].load() is OpenAICompatiblePlanner
    assert found["anthropic"].load() is AnthropicPlanner


@pytest.mark.parametrize("make", [openai_planner, anthropic_planner])
def test_sdk_planners_close_their_client_when_used_as_context_managers(wire, make):
    with make(wire) as planner:
        client = planner._client
        assert not client.is_closed()
    assert client.is_closed()
