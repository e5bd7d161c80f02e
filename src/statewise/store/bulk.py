"""Streaming bulk import of JSON Lines: the public ``Store.import_jsonl`` and ``record import``.

One line is one record or link, as ``export_jsonl`` writes them. Each line is validated by
pydantic straight from its JSON text against the same models the store uses everywhere
(``Record`` and ``Link``: key names, canonical scopes, typed values, provenance, timestamps
with a time zone) and then against the store's key schema, and goes into the database in
batches inside one transaction, so an import is still all or nothing. Nothing holds more
than one batch of lines: memory stays bounded whatever the file's size.

A record line is validated into a plain dict (``RecordLine``) with the same checks as
``Record``: the key's pattern, the scope made canonical (remembered for the few thousand
distinct scopes a store has; a million records share them), enums, time zones, positive
TTL and version, no extra fields. The value is checked against its type once, by the
store, with the key schema's choices. Building no model per line is what makes a million
lines take seconds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Annotated, Any, Literal, NotRequired

from pydantic import AfterValidator, AwareDatetime, ConfigDict, Field, TypeAdapter, ValidationError
from typing_extensions import TypedDict

from statewise.errors import ImportFormatError, KeyNameError, ScopeError, ValueTypeError
from statewise.records import _KEY as KEY_PATTERN  # the one definition of a key's form
from statewise.records import Authority, Link, RecordStatus, SourceKind
from statewise.scopes import Scope
from statewise.values import ValueType

__all__ = ["BATCH_LINES", "ImportBatch", "LinkLine", "Progress", "RecordLine", "parse_batches"]

#: Lines validated and written together; bounds the memory an import holds.
BATCH_LINES = 5000

#: Called after each batch with (lines read so far, characters read so far).
Progress = Callable[[int, int], None]


@lru_cache(maxsize=65536)
def _canonical_scope(scope: str) -> str:
    return str(Scope.parse(scope))


def _scope(value: str) -> str:
    try:
        return _canonical_scope(value)
    except ScopeError as error:
        raise ValueError(str(error)) from None


_Key = Annotated[str, Field(pattern=KEY_PATTERN.pattern)]
_Scope = Annotated[str, AfterValidator(_scope)]
_Positive = Annotated[int, Field(ge=1)]
_Forbid = ConfigDict(extra="forbid")


class ProvenanceLine(TypedDict):
    """:class:`statewise.records.Provenance` as a line holds it."""

    __pydantic_config__ = _Forbid  # type: ignore[misc]
    source: SourceKind
    authority: Authority
    actor: Annotated[str, Field(min_length=1)]
    reference: NotRequired[str | None]


class TimeLine(TypedDict):
    """:class:`statewise.records.RecordTime` as a line holds it."""

    __pydantic_config__ = _Forbid  # type: ignore[misc]
    observed_at: AwareDatetime
    recorded_at: AwareDatetime
    verified_at: NotRequired[AwareDatetime | None]
    ttl_seconds: NotRequired[_Positive | None]


class RecordLine(TypedDict):
    """A ``record`` line: the fields of :class:`statewise.records.Record` with the same
    checks (tests/store/test_bulk.py holds the two field lists equal), validated without
    building a model per line, which is most of what a million-line import costs."""

    __pydantic_config__ = _Forbid  # type: ignore[misc]
    type: Literal["record"]
    id: str
    key: _Key
    value: Any
    value_type: ValueType
    scope: _Scope
    status: NotRequired[RecordStatus]
    time: TimeLine
    provenance: ProvenanceLine
    supersedes: NotRequired[str | None]
    superseded_by: NotRequired[str | None]
    version: NotRequired[_Positive]
    status_reason: NotRequired[str | None]
    status_changed_at: NotRequired[AwareDatetime | None]


class LinkLine(Link):
    """A ``link`` line: a Link plus its ``type`` tag (links are few; the model is used)."""

    type: Literal["link"]


_LINE = TypeAdapter(Annotated[RecordLine | LinkLine, Field(discriminator="type")])


@dataclass(slots=True)
class ImportBatch:
    """Up to BATCH_LINES validated lines: records and links with their line numbers."""

    records: list[tuple[int, RecordLine]]
    links: list[tuple[int, Link]]
    lines_read: int
    chars_read: int


def _problem(error: ValidationError) -> str:
    """What is wrong with a line, in the words the store's import always used."""
    first = error.errors()[0]
    kind = first["type"]
    if kind in ("model_attributes_type", "model_type") and not first["loc"]:
        return "expected a JSON object"
    if kind in ("union_tag_not_found", "union_tag_invalid"):
        got = first.get("input", {}).get("type") if isinstance(first.get("input"), dict) else None
        return f"'type' must be 'record' or 'link', got {got!r}"
    loc = first["loc"][1:]  # the first element is the union tag
    field = ".".join(str(p) for p in loc) or "(line)"
    return f"field {field}: {first['msg']}"


def parse_batches(lines: Iterable[str], source: str, batch_lines: int = BATCH_LINES) -> Iterator[ImportBatch]:
    """Validate ``lines`` lazily and yield them in batches; a bad line raises
    ImportFormatError naming it. Blank lines are skipped."""
    records: list[tuple[int, RecordLine]] = []
    links: list[tuple[int, Link]] = []
    validate = _LINE.validate_json
    chars = 0
    number = 0
    for number, line in enumerate(lines, start=1):
        chars += len(line)
        if not line or line.isspace():
            continue
        try:
            item = validate(line)
        except ValidationError as error:
            if error.errors()[0]["type"] == "json_invalid" or not line.lstrip().startswith("{"):
                problem = _non_object_problem(line)
            else:
                problem = _problem(error)
            raise ImportFormatError(source, number, problem) from None
        except (KeyNameError, ValueTypeError, ScopeError) as error:
            raise ImportFormatError(source, number, str(error)) from None
        if type(item) is dict:
            records.append((number, item))
        else:
            links.append((number, item))
        if len(records) + len(links) >= batch_lines:
            yield ImportBatch(records, links, number, chars)
            records, links = [], []
    if records or links or number:
        yield ImportBatch(records, links, number, chars)


def _non_object_problem(line: str) -> str:
    import json

    try:
        json.loads(line)
    except json.JSONDecodeError as error:
        return f"not JSON ({error.msg} at column {error.colno})"
    return "expected a JSON object"

