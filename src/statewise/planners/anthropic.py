"""A planner backed by Anthropic's Messages API (``POST {base_url}/v1/messages``).

It uses the official ``anthropic`` SDK (``pip install 'statewise[models]'``) and gets a
structured answer by forcing one tool: the request declares a single tool,
``propose_action``, whose ``input_schema`` is :func:`statewise.planners.prompt.action_schema`,
and sets ``tool_choice`` to that tool, so the model's answer is the tool call's ``input``.
The input is validated here; a malformed answer raises PlannerError, never an action.

Sampling temperature: anthropic SDK 1.0 removed ``temperature`` from ``messages.create``, and
the API version that SDK 2.x sends (``anthropic-version: 2026-10-21``) rejects any sampling
parameter with HTTP 400. So ``temperature`` defaults to None (not sent); when set, it is sent
in the request body (``extra_body``) for servers and API versions that still accept it. Not
sent, the API samples at its default temperature (1.0), so the planner declares itself
stochastic (:attr:`AnthropicPlanner.stochastic`) and the guard takes several samples per probe;
only an explicit ``temperature=0`` makes it deterministic.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterable
from typing import Any

from statewise.errors import PlannerError
from statewise.planners._sdk import ClientOwner, planner_error, response_field
from statewise.planners.base import Plan, PlanningContext, Task, Usage
from statewise.planners.prompt import action_schema, build_prompt, normalize_operations, parse_action

__all__ = ["TOOL_NAME", "AnthropicPlanner"]

INSTALL_HINT = "pip install 'statewise[models]'"

#: The one tool the model is made to call; its input is the proposed action.
TOOL_NAME = "propose_action"

_TOOL_DESCRIPTION = (
    "Propose the single next action for the task, or an explicit stop (operation \"stop\" "
    "with a reason). Call this exactly once."
)



class AnthropicPlanner(ClientOwner):
    """Plan with a Claude model (or any server that implements the Messages API).

    ``base_url`` is the API root without ``/v1`` (None: ``ANTHROPIC_BASE_URL``, else
    Anthropic). ``api_key`` None lets the SDK find credentials (``ANTHROPIC_API_KEY`` ...).
    ``timeout`` is in seconds per attempt; ``max_retries`` is how many times the SDK retries a
    connection error, a timeout, 408/409/429 or a 5xx. ``max_tokens`` bounds the answer.
    ``operations`` restricts the operation names the model may choose (``stop`` always allowed).
    """

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        temperature: float | None = None,
        timeout: float = 60,
        max_tokens: int = 1024,
        operations: Iterable[str] | None = None,
        *,
        max_retries: int = 2,
        name: str | None = None,
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise ValueError("model must be a non-empty model name")
        if timeout <= 0:
            raise ValueError("timeout must be a positive number of seconds")
        if max_tokens <= 0:
            raise ValueError("max_tokens must be positive")
        if max_retries < 0:
            raise ValueError("max_retries must be 0 or more")
        self.model = model
        self.name = name or f"anthropic:{model}"
        self.base_url = base_url
        self.temperature = temperature
        self.timeout = timeout
        self.max_tokens = max_tokens
        self.max_retries = max_retries
        self.operations = normalize_operations(operations)
        try:
            anthropic = importlib.import_module("anthropic")
        except ImportError:
            raise PlannerError(self.name, f"the anthropic package is not installed: {INSTALL_HINT}") from None
        self._anthropic = anthropic
        try:
            self._client = anthropic.Anthropic(
                base_url=base_url, api_key=api_key, timeout=timeout, max_retries=max_retries
            )
        except anthropic.AnthropicError as error:
            raise PlannerError(self.name, f"cannot create the client: {error}") from None

    def __repr__(self) -> str:
        where = self.base_url or "default endpoint"
        return f"AnthropicPlanner(model={self.model!r}, base_url={where!r})"

    def tool(self) -> dict[str, Any]:
        """The single tool the request declares."""
        return {
            "name": TOOL_NAME,
            "description": _TOOL_DESCRIPTION,
            "input_schema": action_schema(self.operations),
        }

    @property
    def stochastic(self) -> bool:
        """How this planner samples: at a temperature above 0 two calls on one input may
        answer differently, so the guard asks several samples per probe. ``temperature``
        None (the default) sends none, so the API samples at its default temperature, 1.0: stochastic too."""
        return self.temperature is None or self.temperature > 0

    def request(self, task: Task, context: PlanningContext) -> dict[str, Any]:
        """The keyword arguments of the ``messages.create`` call for this input."""
        prompt = build_prompt(task, context, self.operations)
        request: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "system": prompt.system,
            "messages": [{"role": "user", "content": prompt.user}],
            "tools": [self.tool()],
            "tool_choice": {"type": "tool", "name": TOOL_NAME, "disable_parallel_tool_use": True},
        }
        if self.temperature is not None:
            request["extra_body"] = {"temperature": self.temperature}
        return request

    def plan(self, task: Task, context: PlanningContext) -> Plan:
        response = self._call(self.request(task, context))
        stop_reason = response_field(response, "stop_reason")
        if stop_reason == "max_tokens":
            raise PlannerError(
                self.name,
                f"the answer was cut off at max_tokens={self.max_tokens} (stop_reason max_tokens)",
            )
        if stop_reason == "refusal":
            raise PlannerError(self.name, "the model refused (stop_reason refusal)")
        if stop_reason == "model_context_window_exceeded":
            raise PlannerError(self.name, "the prompt and answer exceed the model's context window")
        content = response_field(response, "content")
        if not isinstance(content, list):
            raise PlannerError(self.name, "the response has no content blocks")
        calls = [block for block in content if response_field(block, "type") == "tool_use"]
        if not calls:
            kinds = ", ".join(str(response_field(block, "type")) for block in content) or "none"
            raise PlannerError(
                self.name,
                f"the response has no tool_use block (content blocks: {kinds}; stop_reason {stop_reason})",
            )
        if len(calls) > 1:
            raise PlannerError(
                self.name,
                f"the response has {len(calls)} tool_use blocks; expected exactly one",
            )
        call = calls[0]
        if response_field(call, "name") != TOOL_NAME:
            raise PlannerError(self.name, f"the model called tool {response_field(call, 'name')!r}, not {TOOL_NAME!r}")
        data = response_field(call, "input")
        action = parse_action(self.name, data, self.operations)
        raw = json.dumps(data, sort_keys=True, ensure_ascii=False)
        return Plan(action=action, usage=self._usage(response), raw=raw)

    def _call(self, request: dict[str, Any]) -> Any:
        anthropic = self._anthropic
        try:
            return self._client.messages.create(**request)
        except Exception as error:  # noqa: BLE001 - every failure becomes a PlannerError
            raise planner_error(self.name, error, anthropic, timeout=self.timeout,
                                max_retries=self.max_retries) from None

    @staticmethod
    def _usage(response: Any) -> Usage | None:
        usage = response_field(response, "usage")
        if usage is None:
            return None

        def count(name: str) -> int:
            value = response_field(usage, name)
            return value if isinstance(value, int) else 0

        # input_tokens excludes prompt-cache reads and writes; the call still processed them.
        input_tokens = (
            count("input_tokens") + count("cache_creation_input_tokens") + count("cache_read_input_tokens")
        )
        return Usage(input_tokens=input_tokens, output_tokens=count("output_tokens"))


