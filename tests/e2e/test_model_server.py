"""The scripted model server on its own: loopback only, one script step per tool result, the
three wire protocols, and the record of what it received (no agent client needed)."""

from __future__ import annotations

import json
import urllib.request

from tests.e2e.model_server import FINAL_TEXT, ModelServer, Step


def post(server: ModelServer, path: str, body: dict) -> str:
    request = urllib.request.Request(server.url + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.read().decode()


def sse_data(text: str) -> list[dict]:
    return [json.loads(line[len("data: "):]) for line in text.splitlines() if line.startswith("data: ")]


def test_binds_to_loopback_only():
    with ModelServer() as server:
        host, port = server._server.server_address[:2]
        assert host == "127.0.0.1" and port > 0 and server.url == f"http://127.0.0.1:{port}"


def test_anthropic_stream_calls_the_step_then_answers_text_and_records_the_result():
    tools = [{"name": "Bash", "input_schema": {}}, {"name": "Write", "input_schema": {}}]
    with ModelServer([Step("Bash", {"command": "git status"})]) as server:
        first = sse_data(post(server, "/v1/messages?beta=true", {"stream": True, "tools": tools, "messages": [
            {"role": "user", "content": "go"}]}))
        start = next(e for e in first if e["type"] == "content_block_start")["content_block"]
        delta = next(e for e in first if e["type"] == "content_block_delta")["delta"]
        assert start["type"] == "tool_use" and start["name"] == "Bash"
        assert json.loads(delta["partial_json"]) == {"command": "git status"}
        second = sse_data(post(server, "/v1/messages", {"stream": True, "tools": tools, "messages": [
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": start["id"], "is_error": True,
                                          "content": "denied: reason"}]}]}))
        text = next(e for e in second if e["type"] == "content_block_delta")["delta"]["text"]
        assert text == FINAL_TEXT
        side = json.loads(post(server, "/v1/messages", {"messages": [{"role": "user", "content": "title?"}]}))
        assert side["content"][0]["type"] == "text"
        assert json.loads(post(server, "/v1/messages/count_tokens", {}))["input_tokens"] > 0
        assert server.offered_tools() == ["Bash", "Write"]
        assert server.tool_results() == ["[is_error] denied: reason"]


def test_responses_api_uses_custom_tool_calls_for_free_form_tools():
    tools = [{"type": "function", "name": "exec_command"}, {"type": "custom", "name": "apply_patch"},
             {"type": "web_search"}]
    script = [Step("apply_patch", raw="*** Begin Patch\n*** End Patch\n"), Step("exec_command", {"cmd": "ls"})]
    with ModelServer(script) as server:
        events = sse_data(post(server, "/v1/responses", {"tools": tools, "input": []}))
        item = next(e for e in events if e["type"] == "response.output_item.done")["item"]
        assert item["type"] == "custom_tool_call" and item["input"].startswith("*** Begin Patch")
        events = sse_data(post(server, "/v1/responses", {"tools": tools, "input": [
            {"type": "custom_tool_call_output", "call_id": item["call_id"], "output": "blocked: why"}]}))
        item = next(e for e in events if e["type"] == "response.output_item.done")["item"]
        assert item["type"] == "function_call" and json.loads(item["arguments"]) == {"cmd": "ls"}
        assert events[-1]["type"] == "response.completed"
        assert server.offered_tools() == ["exec_command", "apply_patch", "web_search"]
        assert server.tool_results() == ["blocked: why"]


def test_gemini_stream_and_dynamic_arguments_from_earlier_results():
    tools = [{"functionDeclarations": [{"name": "run_shell_command"}]}]
    script = [Step("run_shell_command", {"command": "echo 7"}),
              Step("run_shell_command", dynamic=lambda results: {"command": f"seen {len(results)}"})]
    with ModelServer(script) as server:
        path = "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
        (first,) = sse_data(post(server, path, {"tools": tools, "contents": []}))
        call = first["candidates"][0]["content"]["parts"][0]["functionCall"]
        assert call == {"name": "run_shell_command", "args": {"command": "echo 7"}}
        answered = {"tools": tools, "contents": [{"role": "user", "parts": [
            {"functionResponse": {"name": "run_shell_command", "response": {"output": "7"}}}]}]}
        (second,) = sse_data(post(server, path, answered))
        assert second["candidates"][0]["content"]["parts"][0]["functionCall"]["args"] == {"command": "seen 1"}
        plain = json.loads(post(server, "/v1beta/models/gemini-2.5-pro:generateContent", {"contents": []}))
        assert "text" in plain["candidates"][0]["content"]["parts"][0]
        assert json.loads(post(server, "/v1beta/models/gemini-2.5-pro:countTokens", {}))["totalTokens"] > 0
        assert server.tool_results() == ['{"output": "7"}']
