"""A planner backed by any server that speaks OpenAI's Chat Completions API.

One class covers OpenAI itself and the local servers that implement the same endpoint
(``POST {base_url}/chat/completions``): vLLM, Ollama, llama.cpp's ``llama-server`` and
LM Studio. It uses the official ``openai`` SDK (``pip install 'statewise[models]'``).

The answer is requested as structured output: by default ``response_format`` of type
``json_schema`` carrying :func:`statewise.planners.prompt.action_schema` (strict mode), or, for
servers that only support JSON mode, ``{"type": "json_object"}`` with the schema in the prompt.
Either way the answer is validated here; a malformed one raises PlannerError, never an action.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from typing import Any, Literal

from statewise.errors import PlannerError
from statewise.planners._sdk import ClientOwner, planner_error, response_field
from statewise.planners.base import Plan, PlanningContext, Task, Usage
from statewise.planners.prompt import (
    action_schema,
    build_prompt,
    decode_json,
    normalize_operations,
    parse_action,
)

__all__ = ["OpenAICompatiblePlanner"]

INSTALL_HINT = "pip install 'statewise[models]'"

Structured = Literal["json_schema", "json_object"]



class OpenAICompatiblePlanner(ClientOwner):
    """Plan with a chat model behind an OpenAI-compatible endpoint.

    ``base_url`` is the API root including ``/v1`` (``http://127.0.0.1:11434/v1`` for Ollama);
    None means the SDK's default (``OPENAI_BASE_URL``, else OpenAI). ``api_key`` None means
    ``OPENAI_API_KEY``; local servers that check no key still need some string. ``timeout`` is
    in seconds per attempt, ``max_retries`` is how many times the SDK retries a connection
    error, a timeout, 408/409/429 or a 5xx. ``operations`` restricts the operation names the
    model may choose (``stop`` is always allowed). ``structured`` picks how the answer's shape
    is requested, ``strict`` sets the json_schema strict flag.
    """

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        temperature: float | None = 0.0,
        timeout: float = 60,
        max_retries: int = 2,
        operations: Iterable[str] | None = None,
        *,
        structured: Structured = "json_schema",
        strict: bool = True,
        name: str | None = None,
    ) -> None:
        if not isinstance(model, str) or not model.strip():
            raise ValueError("model must be a non-empty model name")
        if structured not in ("json_schema", "json_object"):
            raise ValueError(f"structured must be 'json_schema' or 'json_object', not {structured!r}")
        if timeout <= 0:
            raise ValueError("timeout must be a positive number of seconds")
        if max_retries < 0:
            raise ValueError("max_retries must be 0 or more")
        self.model = model
        self.name = name or f"openai-compatible:{model}"
        self.base_url = base_url
        self.temperature = temperature
        self.timeout = timeout
        self.max_retries = max_retries
        self.operations = normalize_operations(operations)
        self.structured: Structured = structured
        self.strict = strict
        try:
            openai = importlib.import_module("openai")
        except ImportError:
            raise PlannerError(self.name, f"the openai package is not installed: {INSTALL_HINT}") from None
        self._openai = openai
        try:
            self._client = openai.OpenAI(
                base_url=base_url, api_key=api_key, timeout=timeout, max_retries=max_retries
            )
        except openai.OpenAIError as error:
            raise PlannerError(
                self.name,
                f"cannot create the client: {error} (for a local server that checks no key, "
                "pass any string as api_key)",
            ) from None

    def __repr__(self) -> str:
        where = self.base_url or "default endpoint"
        return (
            f"OpenAICompatiblePlanner(model={self.model!r}, base_url={where!r}, "
            f"structured={self.structured!r})"
        )

    def response_format(self) -> dict[str, Any]:
        """The ``response_format`` request field for the configured structured-output mode."""
        if self.structured == "json_object":
            return {"type": "json_object"}
        return {
            "type": "json_schema",
            "json_schema": {
                "name": "action",
                "schema": action_schema(self.operations),
                "strict": self.strict,
            },
        }

    @property
    def stochastic(self) -> bool:
        """How this planner samples: at a temperature above 0 two calls on one input may
        answer differently, so the guard asks several samples per probe. ``temperature``
        None sends none, and the server samples at its default (1.0 for OpenAI): stochastic too."""
        return self.temperature is None or self.temperature > 0

    def request(self, task: Task, context: PlanningContext) -> dict[str, Any]:
        """The keyword arguments of the ``chat.completions.create`` call for this input."""
        prompt = build_prompt(task, context, self.operations)
        request: dict[str, Any] = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": prompt.system},
                {"role": "user", "content": prompt.user},
            ],
            "response_format": self.response_format(),
        }
        if self.temperature is not None:
            request["temperature"] = self.temperature
        return request

    def plan(self, task: Task, context: PlanningContext) -> Plan:
        response = self._call(self.request(task, context))
        choices = response_field(response, "choices")
        if not choices:
            raise PlannerError(self.name, "the response has no choices")
        choice = choices[0]
        message = response_field(choice, "message")
        if message is None:
            raise PlannerError(self.name, "the response's first choice has no message")
        refusal = response_field(message, "refusal")
        if refusal:
            raise PlannerError(self.name, f"the model refused: {refusal}")
        finish_reason = response_field(choice, "finish_reason")
        if finish_reason == "length":
            raise PlannerError(self.name, "the answer was cut off at the token limit (finish_reason length)")
        if finish_reason == "content_filter":
            raise PlannerError(
                self.name,
                "the answer was withheld by a content filter (finish_reason content_filter)",
            )
        if finish_reason in ("tool_calls", "function_call"):
            raise PlannerError(
                self.name,
                f"the model called a tool instead of answering (finish_reason {finish_reason})",
            )
        content = response_field(message, "content")
        if content is not None and not isinstance(content, str):
            raise PlannerError(self.name, f"the message content is a {type(content).__name__}, not text")
        action = parse_action(self.name, decode_json(self.name, content), self.operations)
        return Plan(action=action, usage=self._usage(response), raw=content)

    def _call(self, request: dict[str, Any]) -> Any:
        openai = self._openai
        try:
            return self._client.chat.completions.create(**request)
        except Exception as error:  # noqa: BLE001 - every failure becomes a PlannerError
            raise planner_error(self.name, error, openai, timeout=self.timeout,
                                max_retries=self.max_retries) from None

    @staticmethod
    def _usage(response: Any) -> Usage | None:
        usage = response_field(response, "usage")
        if usage is None:
            return None
        prompt_tokens = response_field(usage, "prompt_tokens")
        completion_tokens = response_field(usage, "completion_tokens")
        if not isinstance(prompt_tokens, int) and not isinstance(completion_tokens, int):
            return None
        return Usage(
            input_tokens=prompt_tokens if isinstance(prompt_tokens, int) else 0,
            output_tokens=completion_tokens if isinstance(completion_tokens, int) else 0,
        )


