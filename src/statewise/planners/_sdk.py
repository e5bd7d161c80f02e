"""What the OpenAI and Anthropic SDK planners share: reading response objects, turning the
SDKs' errors into PlannerError (both SDKs name their error classes the same way), and closing
the client."""

from __future__ import annotations

from types import ModuleType
from typing import Any, Self

from statewise.errors import PlannerError

__all__ = ["ClientOwner", "planner_error", "response_field"]


def response_field(obj: Any, name: str) -> Any:
    """An attribute of an SDK response object, or None when the server left it out."""
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)


def _status_message(error: Any) -> str:
    body = getattr(error, "body", None)
    if isinstance(body, dict):
        detail = body.get("error", body)
        if isinstance(detail, dict) and isinstance(detail.get("message"), str):
            return str(detail["message"])[:300]
        if isinstance(detail, str):
            return detail[:300]
    return str(getattr(error, "message", error))[:300]


def planner_error(planner: str, error: Exception, sdk: ModuleType, *, timeout: float, max_retries: int) -> PlannerError:
    """The PlannerError for an exception raised while calling ``sdk``'s client."""
    if isinstance(error, sdk.APITimeoutError):
        return PlannerError(planner, f"the request timed out after {timeout}s ({max_retries} retries)")
    if isinstance(error, sdk.APIConnectionError):
        return PlannerError(planner, f"cannot reach the server ({max_retries} retries): {error}")
    if isinstance(error, sdk.APIStatusError):
        return PlannerError(planner, f"the server answered HTTP {error.status_code}: {_status_message(error)}")
    # Any other SDK error, or a response the SDK could not read, is still a planner failure.
    return PlannerError(planner, f"the request failed: {type(error).__name__}: {error}")


class ClientOwner:
    """The lifecycle shared by the SDK-backed planners: they own ``self._client`` and close it,
    also as a context manager."""

    _client: Any

    def close(self) -> None:
        """Close the SDK client's connections."""
        self._client.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
