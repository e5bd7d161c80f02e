"""The clarification question asked about a developer-owned key."""

from __future__ import annotations

from statewise.contract.templates import render_template
from statewise.records import base_key

# Placeholders a clarification question template may contain.
QUESTION_PLACEHOLDERS = frozenset({"key", "qualifier", "scope", "value"})
DEFAULT_QUESTION = "Is {key} = {value} still right for {scope}? If not, what is the current value?"


def question_text(template: str | None, key: str, *, scope: str, value: object) -> str:
    """The question about record ``key`` from the key's ``question`` template (or the default).

    ``{qualifier}`` is the record key's qualifier (``requests`` in
    ``python.package_version[requests]``), empty for an unqualified key.
    """
    qualifier = key[len(base_key(key)) + 1 : -1] if "[" in key else ""
    values = {"key": key, "qualifier": qualifier, "scope": scope, "value": str(value)}
    return render_template(template or DEFAULT_QUESTION, values)
