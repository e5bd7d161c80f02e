"""``{placeholder}`` templates in verifier arguments and questions: checked at load, filled at use."""

from __future__ import annotations

import string
from collections.abc import Mapping

# Placeholders a verifier argument may contain; the verifier registry fills them in for the
# task at hand. A closed set, so a typo is a load error rather than a verifier that silently
# receives "{brnach}".
ARG_PLACEHOLDERS = frozenset({"qualifier", "branch", "repo", "workspace", "user"})


def template_fields(text: str, allowed: frozenset[str]) -> list[str]:
    """The placeholder names in ``text``; ValueError if one is unknown or malformed."""
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError as error:
        raise ValueError(f"{text!r}: {error}; write {{{{ and }}}} for literal braces") from None
    names = []
    for _literal, field_name, format_spec, conversion in parsed:
        if field_name is None:
            continue
        if field_name not in allowed or format_spec or conversion:
            wanted = ", ".join("{" + name + "}" for name in sorted(allowed))
            raise ValueError(
                f"{text!r}: placeholder {{{field_name}}} is not one of {wanted} "
                "(write {{ and }} for literal braces)"
            )
        names.append(field_name)
    return names


def render_template(text: str, values: Mapping[str, str]) -> str:
    """Fill ``{placeholder}`` fields of a contract template; KeyError names a missing value."""
    return string.Formatter().vformat(text, (), values)
