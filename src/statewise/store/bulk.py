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

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Annotated, Any, Literal, NotRequired

from pydantic import AfterValidator, AwareDatetime, ConfigDict, Field, TypeAdapter, ValidationError
from typing_extensions import TypedDict

from statewise.errors import ImportFormatError, KeyNameError, ScopeError, ValueTypeError
from statewise.records import (
    KEY_PATTERN,  # the one definition of a key's form
    Authority,
    KeySchema,
    KeyType,
    Link,
    Record,
    RecordStatus,
    SourceKind,
)
from statewise.scopes import Scope
from statewise.values import ValueType, check_value

__all__ = ["BATCH_LINES", "ImportBatch", "LineEncoder", "LinkLine", "Progress", "RecordLine", "parse_export"]

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


# --- the fast validators ---------------------------------------------------------------
#
# The reference validators above say what a line may hold and word every error. The fast
# ones below accept exactly the same lines but leave the costly parts to plain Python
# where it is cheaper: a timestamp already in the store's own form (UTC, microseconds, a
# "Z") stays the string it is, instead of becoming a datetime that is formatted back to
# that string; enums stay strings; a scope is made canonical through a dict of the few
# thousand scopes a store has. A line they reject, or one that fails a check after them,
# is validated again by the reference validator, whose message is the one reported.

#: A timestamp in the form the SQLite store writes (``%Y-%m-%dT%H:%M:%S.%fZ``), years 1000 to
#: 9999. Days 29 to 31 are checked against their month after validation (``_real_day``).
_STORED_STAMP = (r"^[1-9]\d{3}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d"
                 r"\.\d{6}Z$")
_Stored = Annotated[str, Field(pattern=_STORED_STAMP)]
_FastAware = Annotated[_Stored | AwareDatetime, Field(union_mode="left_to_right")]
_FastAny = Annotated[_Stored | datetime, Field(union_mode="left_to_right")]


# The enums' values as literals, so a valid line keeps plain strings (tests/store/test_bulk.py
# holds each list equal to its enum).
_SourceName = Literal["observation", "tool_output", "developer", "agent_inference", "import"]
_AuthorityName = Literal["machine", "developer", "agent"]
_TypeName = Literal["bool", "int", "string", "version", "path", "enum", "list"]
_StatusName = Literal["active", "superseded", "expired", "retracted"]
_LinkKindName = Literal["supersede", "narrow", "revert", "retract", "expire", "verify"]


class _FastProvenance(TypedDict):
    __pydantic_config__ = _Forbid  # type: ignore[misc]
    source: _SourceName
    authority: _AuthorityName
    actor: Annotated[str, Field(min_length=1)]
    reference: NotRequired[str | None]


class _FastTime(TypedDict):
    __pydantic_config__ = _Forbid  # type: ignore[misc]
    observed_at: _FastAware
    recorded_at: _FastAware
    verified_at: NotRequired[_FastAware | None]
    ttl_seconds: NotRequired[_Positive | None]


class _FastRecord(TypedDict):
    __pydantic_config__ = _Forbid  # type: ignore[misc]
    type: Literal["record"]
    id: str
    key: _Key
    value: Any
    value_type: _TypeName
    scope: str
    status: NotRequired[_StatusName]
    time: _FastTime
    provenance: _FastProvenance
    supersedes: NotRequired[str | None]
    superseded_by: NotRequired[str | None]
    version: NotRequired[_Positive]
    status_reason: NotRequired[str | None]
    status_changed_at: NotRequired[_FastAware | None]


class _FastEvidence(TypedDict):
    __pydantic_config__ = _Forbid  # type: ignore[misc]
    key: _Key
    value: Any
    value_type: _TypeName
    scope: str
    source: _SourceName
    authority: _AuthorityName
    actor: Annotated[str, Field(min_length=1)]
    observed_at: _FastAware
    detail: NotRequired[str]
    reference: NotRequired[str | None]


class _FastLink(TypedDict):
    __pydantic_config__ = _Forbid  # type: ignore[misc]
    type: Literal["link"]
    id: str
    kind: _LinkKindName
    from_record: str
    to_record: str | None
    scope: str
    evidence: NotRequired[_FastEvidence | None]
    reason: NotRequired[str]
    actor: str
    created_at: _FastAny


_FAST_LINE = TypeAdapter(Annotated[_FastRecord | _FastLink, Field(discriminator="type")])
_VALUE_TYPES = {member.value: member for member in ValueType}
_DATETIME_JSON = TypeAdapter(datetime)


class _Rejected(Exception):
    """A line the fast path will not vouch for: the reference validator words the problem."""


def _real_day(stamp: str) -> str:
    """``stamp`` (matching _STORED_STAMP) if its day exists in its month, else _Rejected."""
    if stamp[8] == "3" or stamp[8:10] == "29":
        try:
            datetime.fromisoformat(stamp)
        except ValueError:
            raise _Rejected from None
    return stamp


@dataclass(slots=True)
class ImportBatch:
    """Up to BATCH_LINES lines, validated and encoded as the store's rows.

    ``record_rows`` and ``link_rows`` are the parameters of the store's INSERT statements,
    ``record_lines`` and ``link_lines`` their line numbers, and ``texts`` the batch's lines
    as read, to name the offending one if the database refuses a batch."""

    record_rows: list[tuple[Any, ...]]
    record_lines: list[int]
    link_rows: list[tuple[Any, ...]]
    link_lines: list[int]
    texts: list[tuple[int, str]]
    lines_read: int
    chars_read: int

    def records(self) -> Iterator[tuple[int, Record]]:
        """The batch's records as models, with their line numbers (the slow, exact path)."""
        for number, text in self.texts:
            item = _LINE.validate_json(text)
            if type(item) is dict:
                yield number, Record.model_validate({name: value for name, value in item.items() if name != "type"})

    def links(self) -> Iterator[tuple[int, Link]]:
        """The batch's links as models, with their line numbers."""
        for number, text in self.texts:
            item = _LINE.validate_json(text)
            if isinstance(item, LinkLine):
                yield number, Link.model_validate(item.model_dump(exclude={"type"}))


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


class LineEncoder:
    """Validates JSON Lines and turns them into a store's rows, batch by batch.

    ``encode_time`` and ``encode_json`` are the store's encoders for a datetime and a JSON
    value; a timestamp that is already in the stored form is passed through as its string
    (both backends take it). Every record is checked against ``key_schema`` as ``put``
    checks it. Caches hold what a million lines repeat (canonical scopes, declared key
    types, string values already checked against their key); each is bounded.
    """

    #: Entries a cache may hold before it starts again (a few MB each).
    CACHE_LIMIT = 1 << 18

    def __init__(self, source: str, key_schema: KeySchema | None, encode_time: Callable[[Any], Any],
                 encode_json: Callable[[Any], Any], batch_lines: int = BATCH_LINES) -> None:
        self.source = source
        self.key_schema = key_schema
        self.encode_time = encode_time
        self.encode_json = encode_json
        self.batch_lines = batch_lines
        self._scopes: dict[str, str] = {}
        self._declared: dict[str, KeyType] = {}
        self._checked: set[tuple[str, str, str]] = set()

    # --- errors ----------------------------------------------------------------------

    def _fail(self, number: int, line: str, error: Exception | None = None) -> ImportFormatError:
        """The error for a line the fast path refused: the reference validator's words, or
        the schema's (``error``) when the line itself is well formed."""
        try:
            _LINE.validate_json(line)
        except ValidationError as invalid:
            if invalid.errors()[0]["type"] == "json_invalid" or not line.lstrip().startswith("{"):
                return ImportFormatError(self.source, number, _non_object_problem(line))
            return ImportFormatError(self.source, number, _problem(invalid))
        except (KeyNameError, ValueTypeError, ScopeError) as invalid:
            return ImportFormatError(self.source, number, str(invalid))
        if error is not None:
            return ImportFormatError(self.source, number, str(error))
        # The fast path refused what the reference accepts: a bug here, never a silent pass.
        return ImportFormatError(self.source, number, "the line could not be validated")

    # --- parts -----------------------------------------------------------------------

    def _scope(self, scope: str) -> str:
        found = self._scopes.get(scope)
        if found is None:
            found = str(Scope.parse(scope))  # ScopeError -> _fail words it
            if len(self._scopes) >= self.CACHE_LIMIT:
                self._scopes.clear()
            self._scopes[scope] = found
        return found

    def _typed(self, key: str, value: Any, value_type: str) -> None:
        """What ``SQLStore._check_typed`` checks: the key declared, its type, the value."""
        schema = self.key_schema
        choices = None
        if schema is not None:
            declared = self._declared.get(key)
            if declared is None:
                declared = schema.key_type(key)
                if declared is None:
                    raise KeyNameError(key, "the contract in force does not declare this key")
                if len(self._declared) >= self.CACHE_LIMIT:
                    self._declared.clear()
                self._declared[key] = declared
            if value_type != declared.value_type.value:
                raise ValueTypeError(key=key, expected=f"type {declared.value_type.value}", got=value_type)
            choices = declared.choices
        if type(value) is str:
            # The same string under the same key passes the same check; most values repeat.
            seen = (key, value_type, value)
            if seen in self._checked:
                return
            check_value(value, _VALUE_TYPES[value_type], choices=choices, key=key)
            if len(self._checked) >= self.CACHE_LIMIT:
                self._checked.clear()
            self._checked.add(seen)
            return
        check_value(value, _VALUE_TYPES[value_type], choices=choices, key=key)

    def _evidence(self, evidence: _FastEvidence) -> dict[str, Any]:
        """An evidence object as ``Evidence.model_dump(mode="json")`` gives it."""
        check_value(evidence["value"], _VALUE_TYPES[evidence["value_type"]], key=evidence["key"])
        given = evidence["observed_at"]
        if isinstance(given, str):
            # Evidence.model_dump(mode="json") writes the stored form back unchanged, except
            # that it drops a fraction of zero.
            _real_day(given)
            observed: Any = given[:-8] + "Z" if given.endswith(".000000Z") else given
        else:
            observed = _DATETIME_JSON.dump_python(given, mode="json")
        return {
            "key": evidence["key"], "value": evidence["value"], "value_type": evidence["value_type"],
            "scope": self._scope(evidence["scope"]), "source": evidence["source"],
            "authority": evidence["authority"], "actor": evidence["actor"], "observed_at": observed,
            "detail": evidence.get("detail", ""), "reference": evidence.get("reference"),
        }

    # --- batches ---------------------------------------------------------------------

    def batches(self, lines: Iterable[str]) -> Iterator[ImportBatch]:
        """Validate and encode ``lines`` lazily, in batches; a bad line raises
        ImportFormatError naming it. Blank lines are skipped."""
        validate = _FAST_LINE.validate_json
        scope_of, typed, encode_time, encode_json = self._scope, self._typed, self.encode_time, self.encode_json
        scopes = self._scopes
        batch_lines = self.batch_lines

        def stamp(value: Any) -> Any:
            if type(value) is str:
                return _real_day(value)
            return None if value is None else encode_time(value)

        record_rows: list[tuple[Any, ...]] = []
        record_lines: list[int] = []
        link_rows: list[tuple[Any, ...]] = []
        link_lines: list[int] = []
        texts: list[tuple[int, str]] = []
        chars = 0
        number = 0
        for number, line in enumerate(lines, start=1):
            chars += len(line)
            if not line or line.isspace():
                continue
            try:
                item = validate(line)
                if item["type"] == "record":
                    key, value, value_type = item["key"], item["value"], item["value_type"]
                    scope = scopes.get(item["scope"]) or scope_of(item["scope"])
                    typed(key, value, value_type)
                    time, provenance, get, time_get = item["time"], item["provenance"], item.get, item["time"].get
                    record_rows.append((
                        item["id"], key, scope, value_type, encode_json(value), get("status", "active"),
                        stamp(time["observed_at"]), stamp(time["recorded_at"]), stamp(time_get("verified_at")),
                        time_get("ttl_seconds"), provenance["source"], provenance["authority"],
                        provenance["actor"], provenance.get("reference"), get("supersedes"),
                        get("superseded_by"), get("version", 1), get("status_reason"),
                        stamp(get("status_changed_at")),
                    ))
                    record_lines.append(number)
                else:
                    evidence = item.get("evidence")
                    link_rows.append((
                        item["id"], item["kind"], item["from_record"], item["to_record"], item["scope"],
                        encode_json(self._evidence(evidence)) if evidence is not None else None,
                        item.get("reason", ""), item["actor"], stamp(item["created_at"]),
                    ))
                    link_lines.append(number)
            except (KeyNameError, ValueTypeError) as error:
                raise self._fail(number, line, error) from None
            except (ValidationError, ScopeError, _Rejected, ValueError, TypeError):
                raise self._fail(number, line) from None
            texts.append((number, line))
            if len(texts) >= batch_lines:
                yield ImportBatch(record_rows, record_lines, link_rows, link_lines, texts, number, chars)
                record_rows, record_lines, link_rows, link_lines, texts = [], [], [], [], []
        if texts or number:
            yield ImportBatch(record_rows, record_lines, link_rows, link_lines, texts, number, chars)


def _non_object_problem(line: str) -> str:
    import json

    try:
        json.loads(line)
    except json.JSONDecodeError as error:
        return f"not JSON ({error.msg} at column {error.colno})"
    return "expected a JSON object"



# --- parsing in a second process ---------------------------------------------------------

#: How long the store waits for the parsing process's next batch before it checks that the
#: process is still alive (it waits again if so; a dead process fails the import).
_POLL_SECONDS = 5.0


def _parse_in_child(encoder: LineEncoder, lines: Iterable[str], out: Any) -> None:
    """The parsing process: every batch down the pipe, then ``done`` or the line's error."""
    import os

    code = 0
    try:
        for batch in encoder.batches(lines):
            out.send(("batch", batch))
        out.send(("done", None))
    except ImportFormatError as error:
        out.send(("error", (error.source, error.line, error.problem)))
    except BaseException as error:  # noqa: BLE001 - reported to the parent, which fails the import
        code = 1
        try:
            out.send(("crash", f"{type(error).__name__}: {error}"))
        except BaseException:  # noqa: BLE001, S110 - the parent sees the exit code instead
            pass
    finally:
        # A forked child shares the parent's database connections and files: leave without
        # running any finaliser that could close or flush them.
        os._exit(code)


def parallel_batches(encoder: LineEncoder, lines: Iterable[str]) -> Iterator[ImportBatch]:
    """``encoder.batches(lines)``, computed in a forked process while the caller writes the
    previous batch: parsing and writing then use both cores. The pipe holds at most about one
    batch, so memory stays bounded. A bad line raises the same ImportFormatError; a parsing
    process that dies fails the import (RuntimeError) and one left behind is killed."""
    import multiprocessing

    context = multiprocessing.get_context("fork")
    receive, send = context.Pipe(duplex=False)
    child = context.Process(target=_parse_in_child, args=(encoder, lines, send), daemon=True)
    child.start()
    send.close()
    try:
        while True:
            while not receive.poll(_POLL_SECONDS):
                if not child.is_alive():
                    raise RuntimeError(f"the import's parsing process ended with code {child.exitcode}")
            try:
                kind, payload = receive.recv()
            except (EOFError, OSError):  # OSError: the process died in the middle of a batch
                child.join(_POLL_SECONDS)
                raise RuntimeError(f"the import's parsing process ended with code {child.exitcode}") from None
            if kind == "batch":
                yield payload
            elif kind == "done":
                return
            elif kind == "error":
                raise ImportFormatError(*payload)
            else:
                raise RuntimeError(f"the import's parsing process failed: {payload}")
    finally:
        receive.close()
        if child.is_alive():
            child.kill()
        child.join()


def parse_export(lines: Iterable[str], source: str) -> tuple[list[tuple[int, Record]], list[tuple[int, Link]]]:
    """The records and links of an export (the lines ``export_jsonl`` writes), each with its line
    number; ImportFormatError naming the source, the line and the field at the first bad one."""
    records: list[tuple[int, Record]] = []
    links: list[tuple[int, Link]] = []
    seen_ids: set[str] = set()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as error:
            raise ImportFormatError(source, number, f"not JSON ({error.msg} at column {error.colno})") from None
        if not isinstance(data, dict):
            raise ImportFormatError(source, number, "expected a JSON object")
        kind = data.pop("type", None)
        try:
            item: Record | Link
            if kind == "record":
                item = record = Record.model_validate(data)
                records.append((number, record))
            elif kind == "link":
                item = link = Link.model_validate(data)
                links.append((number, link))
            else:
                raise ImportFormatError(source, number, f"'type' must be 'record' or 'link', got {kind!r}")
        except ValidationError as error:
            first = error.errors()[0]
            field = ".".join(str(p) for p in first["loc"]) or "(line)"
            raise ImportFormatError(source, number, f"field {field}: {first['msg']}") from None
        except (KeyNameError, ValueTypeError) as error:
            raise ImportFormatError(source, number, str(error)) from None
        if item.id in seen_ids:
            raise ImportFormatError(source, number, f"id {item.id} appears twice")
        seen_ids.add(item.id)
    return records, links
