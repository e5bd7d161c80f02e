"""A scripted model server for driving the real agent clients offline (stdlib only).

It speaks just enough of three wire protocols for Claude Code, Codex and Gemini CLI to run a
real turn against it:

* the Anthropic Messages API with streaming SSE (``POST /v1/messages``) and
  ``POST /v1/messages/count_tokens``;
* the OpenAI Responses API with SSE (``POST /v1/responses``), as Codex uses it;
* the Gemini API: ``:streamGenerateContent?alt=sse``, ``:generateContent`` and ``:countTokens``.

The script needs no state between requests: step N is answered for a conversation that
already holds N tool results, so the first request calls ``script[0]``, the request that
carries its result calls ``script[1]``, and once the script is used up the model answers
with plain text. A request that offers no tools (titles, summaries, routing and other side
requests the clients make) gets a short text answer.

Every request is recorded (path and parsed body) so a test can read what each client really
offered as tools and what the model really received after a hook decided.

The server binds to 127.0.0.1 only, on a free port the kernel picks.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["FINAL_TEXT", "ModelServer", "RecordedRequest", "Step"]

#: What the model says once its script is used up.
FINAL_TEXT = "Done: the scripted turn is over."
SIDE_TEXT = "ok"


@dataclass(frozen=True, slots=True)
class Step:
    """One scripted tool call: the tool's name as the client offers it, and its input.

    For a Codex free-form ("custom") tool such as ``apply_patch`` the input is the raw text in
    ``raw``; for every other tool it is ``args``.
    """

    tool: str
    args: dict[str, Any] = field(default_factory=dict)
    raw: str | None = None
    #: Builds ``args`` from the tool results so far, for a call that depends on an earlier
    #: result (Codex's write_stdin needs the session id exec_command returned).
    dynamic: Callable[[list[str]], dict[str, Any]] | None = None

    def arguments(self, results: list[str]) -> dict[str, Any]:
        return self.dynamic(results) if self.dynamic is not None else self.args


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One request as the server received it."""

    method: str
    path: str
    body: Any
    protocol: str  # anthropic, openai, gemini or other

    @property
    def offered_tools(self) -> list[str]:
        """The names of the tools this request offered the model."""
        tools = self.body.get("tools") if isinstance(self.body, dict) else None
        names: list[str] = []
        for tool in tools or []:
            if not isinstance(tool, dict):
                continue
            if self.protocol == "gemini":
                names += [d.get("name", "") for d in tool.get("functionDeclarations") or tool.get("function_declarations") or []]
            elif tool.get("name"):
                names.append(tool["name"])
            elif tool.get("type"):
                names.append(tool["type"])  # OpenAI built-ins such as local_shell or web_search
        return names

    def tool_results(self) -> list[str]:
        """Every tool result this request carries, as the text the model received."""
        return list(_tool_results(self.protocol, self.body))


def _text_of(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(_text_of(v) for v in value)
    if isinstance(value, dict):
        if isinstance(value.get("text"), str):
            return value["text"]
        return json.dumps(value, sort_keys=True)
    return "" if value is None else str(value)


def _tool_results(protocol: str, body: Any) -> Iterator[str]:
    if not isinstance(body, dict):
        return
    if protocol == "anthropic":
        for message in body.get("messages") or []:
            content = message.get("content") if isinstance(message, dict) else None
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    prefix = "[is_error] " if block.get("is_error") else ""
                    yield prefix + _text_of(block.get("content"))
    elif protocol == "openai":
        for item in body.get("input") or []:
            if isinstance(item, dict) and str(item.get("type", "")).endswith("_call_output"):
                yield _text_of(item.get("output"))
    elif protocol == "gemini":
        for content in body.get("contents") or []:
            for part in content.get("parts") or [] if isinstance(content, dict) else []:
                if isinstance(part, dict) and "functionResponse" in part:
                    yield json.dumps(part["functionResponse"].get("response"), sort_keys=True)


def _sse(event: str | None, data: Any) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data)}\n\n".encode()


class ModelServer:
    """The scripted model: ``with ModelServer(steps) as server: ... server.url``."""

    def __init__(self, script: Sequence[Step] = (), *, final_text: str = FINAL_TEXT) -> None:
        self.script: list[Step] = list(script)
        #: What the model says when the script is done (its turn's last message).
        self.final_text = final_text
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="model-server", daemon=True)

    # --- lifecycle -------------------------------------------------------------------------

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> ModelServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    # --- what the tests read ---------------------------------------------------------------

    def recorded(self, protocol: str | None = None) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if protocol is None or r.protocol == protocol]

    def turn_requests(self) -> list[RecordedRequest]:
        """The requests that offered tools (the agent's own turns, not side requests)."""
        return [r for r in self.recorded() if r.offered_tools]

    def offered_tools(self) -> list[str]:
        """The tools the client offered on its main turn (the first request with tools)."""
        turns = self.turn_requests()
        return turns[0].offered_tools if turns else []

    def tool_results(self) -> list[str]:
        """The tool results of the longest conversation the model saw."""
        best: list[str] = []
        for request in self.turn_requests():
            results = request.tool_results()
            if len(results) >= len(best):
                best = results
        return best

    # --- answering ---------------------------------------------------------------------------

    def _step_for(self, protocol: str, body: Any) -> tuple[Step, dict[str, Any]] | None:
        results = list(_tool_results(protocol, body))
        if len(results) >= len(self.script):
            return None
        step = self.script[len(results)]
        return step, step.arguments(results)

    def _record(self, method: str, path: str, body: Any, protocol: str) -> None:
        with self._lock:
            self.requests.append(RecordedRequest(method, path, body, protocol))

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib's name
                return  # keep test output clean; every request is recorded instead

            def _body(self) -> Any:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                if not raw:
                    return {}
                try:
                    return json.loads(raw)
                except ValueError:
                    return {"_raw": raw.decode("utf-8", "replace")}

            def _json(self, status: int, payload: Any) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, chunks: Sequence[bytes]) -> None:
                data = b"".join(chunks)
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802 - stdlib's name
                server._record("GET", self.path, {}, "other")
                path = self.path.split("?", 1)[0]
                if path.endswith("/models"):
                    self._json(200, {"object": "list", "data": [], "models": []})
                else:
                    self._json(404, {"error": {"message": f"no such endpoint {path}"}})

            def do_HEAD(self) -> None:  # noqa: N802 - stdlib's name
                server._record("HEAD", self.path, {}, "other")
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_POST(self) -> None:  # noqa: N802 - stdlib's name
                body = self._body()
                path = self.path.split("?", 1)[0]
                if path.endswith("/messages/count_tokens"):
                    server._record("POST", self.path, body, "anthropic-count")
                    self._json(200, {"input_tokens": 42})
                elif path.endswith("/messages"):
                    server._record("POST", self.path, body, "anthropic")
                    self._anthropic(body)
                elif path.endswith("/responses"):
                    server._record("POST", self.path, body, "openai")
                    self._openai(body)
                elif path.endswith(":countTokens"):
                    server._record("POST", self.path, body, "gemini-count")
                    self._json(200, {"totalTokens": 42})
                elif path.endswith(":streamGenerateContent") or path.endswith(":generateContent"):
                    server._record("POST", self.path, body, "gemini")
                    self._gemini(body, stream=path.endswith(":streamGenerateContent"))
                else:
                    server._record("POST", self.path, body, "other")
                    self._json(404, {"error": {"message": f"no such endpoint {path}"}})

            # --- Anthropic Messages API ------------------------------------------------------

            def _anthropic(self, body: dict[str, Any]) -> None:
                planned = server._step_for("anthropic", body) if body.get("tools") else None
                step, args = planned if planned else (None, {})
                text = (server.final_text if body.get("tools") else SIDE_TEXT)
                message_id = f"msg_{uuid.uuid4().hex[:20]}"
                model = body.get("model", "claude-sonnet-4-5")
                usage = {"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0,
                         "cache_read_input_tokens": 0}
                if step is None:
                    block = {"type": "text", "text": ""}
                    deltas = [{"type": "text_delta", "text": text}]
                    stop = "end_turn"
                else:
                    block = {"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:20]}", "name": step.tool,
                             "input": {}}
                    deltas = [{"type": "input_json_delta", "partial_json": json.dumps(args)}]
                    stop = "tool_use"
                if not body.get("stream"):
                    content = ({"type": "text", "text": text} if step is None
                               else {**block, "input": args})
                    self._json(200, {"id": message_id, "type": "message", "role": "assistant", "model": model,
                                     "content": [content], "stop_reason": stop, "stop_sequence": None,
                                     "usage": usage})
                    return
                chunks = [
                    _sse("message_start", {"type": "message_start", "message": {
                        "id": message_id, "type": "message", "role": "assistant", "model": model, "content": [],
                        "stop_reason": None, "stop_sequence": None, "usage": usage}}),
                    _sse("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
                    *[_sse("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": d})
                      for d in deltas],
                    _sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
                    _sse("message_delta", {"type": "message_delta",
                                           "delta": {"stop_reason": stop, "stop_sequence": None},
                                           "usage": {"output_tokens": 5}}),
                    _sse("message_stop", {"type": "message_stop"}),
                ]
                self._stream(chunks)

            # --- OpenAI Responses API (Codex) --------------------------------------------------

            def _openai(self, body: dict[str, Any]) -> None:
                planned = server._step_for("openai", body) if body.get("tools") else None
                step, args = planned if planned else (None, {})
                response_id = f"resp_{uuid.uuid4().hex[:20]}"
                call_id = f"call_{uuid.uuid4().hex[:20]}"
                if step is None:
                    item = {"type": "message", "id": f"msg_{uuid.uuid4().hex[:20]}", "role": "assistant",
                            "status": "completed",
                            "content": [{"type": "output_text", "text": server.final_text if body.get("tools") else SIDE_TEXT,
                                         "annotations": []}]}
                else:
                    kinds = {t.get("name"): t.get("type") for t in body.get("tools") or [] if isinstance(t, dict)}
                    if kinds.get(step.tool) == "custom":
                        item = {"type": "custom_tool_call", "id": f"ctc_{uuid.uuid4().hex[:20]}", "status": "completed",
                                "call_id": call_id, "name": step.tool, "input": step.raw or ""}
                    else:
                        item = {"type": "function_call", "id": f"fc_{uuid.uuid4().hex[:20]}", "status": "completed",
                                "call_id": call_id, "name": step.tool, "arguments": json.dumps(args)}
                usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
                         "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}
                base = {"id": response_id, "object": "response", "model": body.get("model", "gpt-5.5")}
                chunks = [
                    _sse("response.created", {"type": "response.created", "sequence_number": 0,
                                              "response": {**base, "status": "in_progress", "output": []}}),
                    _sse("response.output_item.added", {"type": "response.output_item.added", "sequence_number": 1,
                                                        "output_index": 0, "item": item}),
                    _sse("response.output_item.done", {"type": "response.output_item.done", "sequence_number": 2,
                                                       "output_index": 0, "item": item}),
                    _sse("response.completed", {"type": "response.completed", "sequence_number": 3,
                                                "response": {**base, "status": "completed", "output": [item],
                                                             "usage": usage}}),
                ]
                self._stream(chunks)

            # --- Gemini API --------------------------------------------------------------------

            def _gemini(self, body: dict[str, Any], *, stream: bool) -> None:
                planned = server._step_for("gemini", body) if body.get("tools") else None
                step, args = planned if planned else (None, {})
                if step is None:
                    parts = [{"text": server.final_text if body.get("tools") else SIDE_TEXT}]
                else:
                    parts = [{"functionCall": {"name": step.tool, "args": args}}]
                payload = {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP",
                                           "index": 0}],
                           "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5,
                                             "totalTokenCount": 15},
                           "modelVersion": "gemini-2.5-pro"}
                if stream:
                    self._stream([_sse(None, payload)])
                else:
                    self._json(200, payload)

        return Handler
