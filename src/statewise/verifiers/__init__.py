"""Read-only verifiers: observe the live workspace to confirm or correct records.

Adapters are looked up by name in :data:`VERIFIERS`, a registry fed by the entry-point
group ``statewise.verifiers``. The built-ins are registered there by StateWise's own
``pyproject.toml`` exactly as a third-party plugin registers its own. Call them through
:func:`run_verifier` (or :func:`verify_key` for a contract key), which never raises and
never fails open. See ``docs/verifiers.md``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from statewise.verifiers.base import (
    Observation,
    ObservationStatus,
    Verifier,
    VerifierRequest,
)
from statewise.verifiers.runner import (
    VERIFIERS,
    PlaceholderError,
    UnsafeValueError,
    fill_placeholders,
    run_verifier,
    verify_key,
)

if TYPE_CHECKING:
    from statewise.verifiers.protection import install_branch_protection

__all__ = [
    "VERIFIERS",
    "Observation",
    "ObservationStatus",
    "PlaceholderError",
    "UnsafeValueError",
    "Verifier",
    "VerifierRequest",
    "fill_placeholders",
    "install_branch_protection",
    "run_verifier",
    "verify_key",
]


def __getattr__(name: str) -> Any:
    # The branch protection module is imported when its verifier or this helper is first used:
    # a hook call checking a file write needs neither.
    if name == "install_branch_protection":
        from statewise.verifiers.protection import install_branch_protection

        return install_branch_protection
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
