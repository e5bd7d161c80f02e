"""The benchmark's case format: frozen pydantic models, the loader and the JSON Schema.

A *case* is one executable task: the workspace to build, the records to seed, the target
record whose condition varies (correct, corrupted, removed), the simulated developer, the
ground-truth decision-critical keys and the checks that judge the outcome. A *sequence* is
an ordered list of tasks that share one workspace spec and one store (paper RQ5). The
format is documented in docs/cases.md; its JSON Schema is ``case.schema.json`` beside this
module (regenerate it with ``python -m statewise.bench.schema``).

A case directory (a *set*) may also hold ``contract.yaml`` (a contract extension, usually
``extends: coding``) and ``playbook.yaml`` (extra rule-planner families); both apply to every
case of the directory. :func:`load_cases` returns them together as a :class:`CaseSet`.
"""

from __future__ import annotations

import binascii
import fnmatch
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any, Literal, Union

import yaml
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator, model_validator

from statewise.bench.checks import CHECKS, Check
from statewise.contract import Contract, builtin_contract, load_contract
from statewise.errors import ContractError, InputError, InputTooLargeError
from statewise.limits import MAX_CASE_BYTES, read_capped
from statewise.planners.rules import Playbook, builtin_playbook, load_playbook
from statewise.records import Authority, SourceKind, check_key

__all__ = [
    "CATEGORIES",
    "CONDITIONS",
    "DEFECTS",
    "PLACEHOLDERS",
    "Case",
    "CaseError",
    "CaseSet",
    "Scenario",
    "SequenceCase",
    "Step",
    "SubTask",
    "case_schema",
    "file_bytes",
    "fill_placeholders",
    "load_case",
    "load_cases",
]

CATEGORIES = ("runtime_env", "other_env", "filesystem", "git_policy", "config_build", "user_settings")
DEFECTS = (
    "wrong_value", "stale_value", "over_generalized", "conflict", "scope_mismatch",
    "correct_value_defective_metadata", "interacting", "conflicting_corrections", "partial_evidence",
)
CONDITIONS = ("correct", "corrupted", "removed")
#: Placeholders filled once the episode's sandbox exists.
PLACEHOLDERS = ("repo", "workspace", "user", "branch", "sandbox", "home", "origin", "python", "cwd", "default")
_PLACEHOLDER = re.compile(r"\{(" + "|".join(PLACEHOLDERS) + r")\}")
_SPECIAL_FILES = frozenset({"contract.yaml", "contract.yml", "playbook.yaml", "playbook.yml"})

Category = Literal["runtime_env", "other_env", "filesystem", "git_policy", "config_build", "user_settings"]
Defect = Literal[
    "wrong_value", "stale_value", "over_generalized", "conflict", "scope_mismatch",
    "correct_value_defective_metadata", "interacting", "conflicting_corrections", "partial_evidence",
]
Expected = Literal["act", "stop"]
Identifier = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9._-]*$", max_length=120,
                                  description="lower-case letters, digits, '.', '_' and '-'")]
Duration = Annotated[str, Field(pattern=r"^(\d+[wdhms])+$|^\d+$",
                                description="a duration such as 90s, 30m, 12h, 40d, 2w or 1h30m")]


class CaseError(InputError):
    """A case file that does not validate: ``source`` is the file, ``field`` the path in it."""

    def __init__(self, source: str, field: str, problem: str) -> None:
        self.source = source
        self.field = field
        self.problem = problem
        where = f"{source}: {field}" if field else source
        super().__init__(f"{where}: {problem}")


def fill_placeholders(value: Any, values: Mapping[str, str]) -> Any:
    """Fill ``{repo}``, ``{workspace}``, ... in every string inside ``value`` (lists and dicts
    recursively). Other braces are left alone, so regular expressions keep ``{2}``."""
    if isinstance(value, str):
        return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), value)
    if isinstance(value, list | tuple):
        return [fill_placeholders(item, values) for item in value]
    if isinstance(value, dict):
        return {key: fill_placeholders(item, values) for key, item in value.items()}
    return value


_UNITS = {"w": 7 * 86400, "d": 86400, "h": 3600, "m": 60, "s": 1}


def _seconds(text: str | None) -> int:
    """Seconds of a duration such as ``40d`` or ``1h30m`` (zero allowed, unlike a TTL)."""
    if text is None:
        return 0
    compact = text.strip().lower()
    if compact.isdigit():
        return int(compact)
    return sum(int(n) * _UNITS[unit] for n, unit in re.findall(r"(\d+)([wdhms])", compact))


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


# --- workspace ----------------------------------------------------------------------------


BranchName = Annotated[str, Field(pattern=r"^[A-Za-z0-9_][A-Za-z0-9._/-]*$", max_length=120,
                                  description="a git branch or tag name")]
#: Folder names of the sandbox root that a worktree may not take.
_RESERVED = frozenset({"work", "home", "bin", "tmp", "origin.git"})


class FileSpec(_Model):
    """A file written with more than text: binary content (base64) and/or an executable bit."""

    text: str | None = Field(default=None, description="UTF-8 text content")
    base64: str | None = Field(default=None, description="binary content, base64-encoded")
    executable: bool = Field(default=False, description="mode 755 instead of 644 (git records the bit)")

    @model_validator(mode="after")
    def _one_content(self) -> FileSpec:
        if (self.text is None) == (self.base64 is None):
            raise ValueError("a file has exactly one of text or base64")
        if self.base64 is not None:
            try:
                binascii.a2b_base64(self.base64.encode("ascii"), strict_mode=True)
            except (binascii.Error, UnicodeEncodeError, ValueError) as error:
                raise ValueError(f"base64: not valid base64 ({error})") from None
        return self

    def content(self) -> bytes:
        if self.base64 is not None:
            return binascii.a2b_base64(self.base64.encode("ascii"))
        return (self.text or "").encode("utf-8")


#: A file's content as a case writes it: text, or a FileSpec.
FileContent = Union[str, FileSpec]  # noqa: UP007


def file_bytes(value: str | FileSpec) -> bytes:
    """The bytes of a file value (text is written as UTF-8)."""
    return value.encode("utf-8") if isinstance(value, str) else value.content()


def file_executable(value: str | FileSpec) -> bool:
    return isinstance(value, FileSpec) and value.executable


def _relative_paths(value: dict[str, Any]) -> dict[str, Any]:
    for path in value:
        parts = Path(path).parts
        if not path or path.startswith("/") or ".." in parts or (parts and parts[0] == ".git"):
            raise ValueError(f"file path {path!r} must be relative, inside the workspace and not in .git")
    return value


class WorktreeSpec(_Model):
    """A linked worktree (``git worktree add``) at ``<sandbox>/<name>``, beside ``work/``."""

    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$", max_length=60)] = Field(
        description="its folder, a sibling of work/ (so ../NAME from the main checkout)")
    branch: BranchName = Field(description="the branch it has checked out (created when it does not exist)")
    start: str | None = Field(default=None, description="where a new branch starts (default: the default branch)")

    @field_validator("name")
    @classmethod
    def _not_reserved(cls, value: str) -> str:
        if value in _RESERVED:
            raise ValueError(f"{value!r} is a folder of the sandbox itself; pick another worktree name")
        return value


class TagSpec(_Model):
    """A tag made during the build: lightweight, or annotated with ``message``."""

    ref: str | None = Field(default=None, description="what it points at (default: the default branch)")
    message: str | None = Field(default=None, description="an annotated tag's message (omit: lightweight)")
    pushed: bool = Field(default=True, description="also pushed to the origin")


class GitSpec(_Model):
    """The workspace is a git repository with a bare ``origin`` (in the sandbox) whose
    pre-receive hook really enforces the protected patterns."""

    default: BranchName = Field(default="main", description="the default branch (the origin's HEAD)")
    branch: BranchName | None = Field(default=None, description="the branch checked out in the workspace "
                                                                "(default: the default branch)")
    protected: list[str] = Field(default_factory=list,
                                 description="branch names or globs the origin protects (its hook refuses "
                                             "direct pushes, force pushes, creation and deletion)")
    diverged: bool = Field(default=False, description="the checked-out branch's last pushed commit was amended "
                                                      "locally, so only a force push would update the remote")
    ahead: int = Field(default=1, ge=0, le=20,
                       description="local commits on the branch that were not pushed (after any divergence)")
    branches: list[BranchName] = Field(default_factory=list, description="extra branches created from the "
                                       "default branch and pushed to the origin before protection is on")
    branch_on_origin: bool = Field(default=True, description="when branch is not the default: push it too")
    untracked: list[str] = Field(default_factory=list,
                                 description="globs of workspace files left untracked (not committed)")
    branch_files: dict[BranchName, dict[str, FileContent]] = Field(
        default_factory=dict, description="branch -> files committed on that branch only (the default branch, "
                                          "the checked-out branch or one of branches); pushed with it")
    staged: dict[str, FileContent] = Field(default_factory=dict,
                                           description="files written and staged (git add), not committed")
    modified: dict[str, FileContent] = Field(default_factory=dict,
                                             description="tracked files changed in the working tree, not staged")
    upstream: str | None = Field(default=None, description="the checked-out branch's upstream, e.g. origin/main "
                                                           "(none: no upstream; default: its own origin branch)")
    remote_ahead: dict[BranchName, int] = Field(
        default_factory=dict, description="branch -> commits a teammate pushed to the origin that the "
                                          "workspace's history lacks")
    fetched: bool = Field(default=False, description="the workspace fetched after the teammate's pushes "
                                                     "(its origin/* refs know them)")
    tags: dict[BranchName, TagSpec] = Field(default_factory=dict, description="tag name -> tag")
    worktrees: list[WorktreeSpec] = Field(default_factory=list, description="linked worktrees")

    server_hooks: dict[Literal["update", "reference-transaction"], str] = Field(
        default_factory=dict, description="hook name -> script installed (executable) in the origin's hooks/, "
                                          "beside the protection hook: a server rule StateWise may not know")

    _paths = field_validator("staged", "modified")(_relative_paths)

    @property
    def current(self) -> str:
        """The checked-out branch."""
        return self.branch or self.default

    @field_validator("remote_ahead")
    @classmethod
    def _counts(cls, value: dict[str, int]) -> dict[str, int]:
        for branch, count in value.items():
            if not 1 <= count <= 20:
                raise ValueError(f"remote_ahead.{branch}: between 1 and 20 commits")
        return value

    @model_validator(mode="after")
    def _known_branches(self) -> GitSpec:
        pushed = {self.default, *self.branches} | ({self.current} if self.branch_on_origin else set())
        for branch in self.branch_files:
            if branch not in {self.default, self.current, *self.branches}:
                raise ValueError(f"branch_files.{branch}: not the default branch, the checked-out branch "
                                 "or one of branches")
        for branch in self.remote_ahead:
            if branch not in pushed:
                raise ValueError(f"remote_ahead.{branch}: the branch is not on the origin")
        names = [w.name for w in self.worktrees]
        taken = [w.branch for w in self.worktrees] + [self.current]
        if len(set(names)) != len(names):
            raise ValueError("worktrees: two worktrees have the same name")
        if len(set(taken)) != len(taken):
            raise ValueError("worktrees: a branch is checked out twice (git refuses that)")
        return self


class ShimSpec(_Model):
    """A tool shim: an executable script on the sandbox's private PATH."""

    version: str | None = Field(default=None, description="print this version (for any arguments) and exit 0")
    stdout: str = Field(default="", description="what the shim prints (when no version is given)")
    stderr: str = ""
    exit: int = Field(default=0, ge=0, le=255)
    script: str | None = Field(default=None, description="a /bin/sh script body instead (sees the arguments as "
                                                        "$1, $2, ...): a tool that answers per argument")

    @model_validator(mode="after")
    def _one_kind(self) -> ShimSpec:
        if self.version is not None and (self.stdout or self.stderr or self.exit):
            raise ValueError("a shim has either a version or stdout/stderr/exit, not both")
        if self.script is not None and (self.version is not None or self.stdout or self.stderr or self.exit):
            raise ValueError("script: a shim with a script has no version, stdout, stderr or exit")
        return self


class VenvSpec(_Model):
    path: str = Field(default=".venv", min_length=1, description="relative to the workspace")
    packages: dict[str, str] = Field(default_factory=dict,
                                     description="distributions present in the venv (name -> version; a "
                                                 "dist-info folder is written, no code)")


class WorkspaceSpec(_Model):
    git: GitSpec | None = Field(default=None, description="omit for a plain directory")
    files: dict[str, FileContent] = Field(default_factory=dict,
                                          description="path (relative to the workspace) -> text, or "
                                                      "{text|base64, executable}")
    shims: dict[Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")], ShimSpec] = Field(
        default_factory=dict)
    env: dict[Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")], str] = Field(default_factory=dict)
    venv: VenvSpec | None = None
    user: str = Field(default="dev", pattern=r"^[A-Za-z0-9._-]+$", description="the task's user scope")
    cwd: str | None = Field(default=None, description="the agent's working directory, relative to the "
                                                      "workspace: a subfolder, or ../NAME[/sub] for a worktree")

    _relative_files = field_validator("files")(_relative_paths)

    @field_validator("cwd")
    @classmethod
    def _cwd_inside(cls, value: str | None) -> str | None:
        if value is None:
            return value
        parts = Path(os.path.normpath(Path("work") / value)).parts
        if value.startswith("/") or not parts or parts[0] == "..":
            raise ValueError(f"{value!r} must be relative and stay inside the sandbox")
        if parts[0] in _RESERVED - {"work"}:
            raise ValueError(f"{value!r} points into the sandbox's own {parts[0]}/")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> WorkspaceSpec:
        if self.git is None:
            return self
        worktrees = {w.name for w in self.git.worktrees}
        for path in self.git.modified:
            if path not in self.files or any(fnmatch.fnmatchcase(path, p) for p in self.git.untracked):
                raise ValueError(f"git.modified.{path}: not a tracked file (list it in files, not untracked)")
        if self.cwd is not None:
            top = Path(os.path.normpath(Path("work") / self.cwd)).parts[0]
            if top != "work" and top not in worktrees:
                raise ValueError(f"cwd: {self.cwd!r} is neither inside the workspace nor in a worktree")
        return self

    def fingerprint(self) -> str:
        return json.dumps(self.model_dump(mode="json", exclude_defaults=True), sort_keys=True)


# --- records ------------------------------------------------------------------------------


def _key(value: str) -> str:
    check_key(value)
    return value


class RecordSpec(_Model):
    """A record seeded into the store. ``age`` sets its observed time (now - age)."""

    key: Annotated[str, Field(min_length=3)]
    value: Any
    scope: str = Field(default="global", description="a record scope; placeholders are filled")
    source: SourceKind = SourceKind.DEVELOPER
    authority: Authority = Authority.DEVELOPER
    actor: str | None = None
    age: Duration = "0s"
    ttl: Duration | None = Field(default=None, description="overrides the key's declared TTL")
    verified_age: Duration | None = Field(default=None, description="last verified this long ago")

    _check_key = field_validator("key")(_key)


class CorruptionSpec(_Model):
    """How the target record differs in the corrupted condition: its value and/or its metadata.
    Fields left out are the correct record's."""

    value: Any = None
    scope: str | None = Field(default=None, description="e.g. global, for an over-generalized record")
    source: SourceKind | None = None
    authority: Authority | None = None
    actor: str | None = None
    age: Duration | None = None
    ttl: Duration | None = None
    verified_age: Duration | None = None

    @model_validator(mode="after")
    def _changes_something(self) -> CorruptionSpec:
        if not self.model_fields_set:
            raise ValueError("a corruption changes the value or some metadata")
        if "value" in self.model_fields_set and self.value is None:
            raise ValueError("a corrupted value cannot be null (use the removed condition for no record)")
        return self


class TargetSpec(_Model):
    """The record the conditions vary: correct, corrupted, or removed."""

    key: Annotated[str, Field(min_length=3)]
    scope: str = "global"
    correct: Any = Field(description="the correct value; null when the correct store has no such record")
    source: SourceKind = SourceKind.DEVELOPER
    authority: Authority = Authority.DEVELOPER
    actor: str | None = None
    age: Duration = "1h"
    ttl: Duration | None = None
    verified_age: Duration | None = None
    corrupted: CorruptionSpec
    removed: bool = Field(default=True, description="whether the removed-record condition applies to this case")

    _check_key = field_validator("key")(_key)

    def record(self, condition: str) -> RecordSpec | None:
        """The target record seeded under ``condition`` (None: no record)."""
        if condition == "removed" and self.removed:
            return None
        base = RecordSpec(key=self.key, value=self.correct, scope=self.scope, source=self.source,
                          authority=self.authority, actor=self.actor, age=self.age, ttl=self.ttl,
                          verified_age=self.verified_age) if self.correct is not None else None
        if condition in ("correct", "removed"):  # removed: a record with removed: false stays correct
            return base
        if condition != "corrupted":
            raise ValueError(f"unknown condition {condition!r}; conditions are {', '.join(CONDITIONS)}")
        changes = {name: getattr(self.corrupted, name) for name in self.corrupted.model_fields_set}
        if base is None:
            if "value" not in changes:
                raise ValueError("the correct record is absent, so the corruption needs a value")
            base = RecordSpec(key=self.key, value=changes["value"], scope=self.scope, source=self.source,
                              authority=self.authority, actor=self.actor, age=self.age, ttl=self.ttl,
                              verified_age=self.verified_age)
        return base.model_copy(update=changes)


class DeveloperSpec(_Model):
    """The simulated developer: the true intent for developer-owned keys, and approvals."""

    intent: dict[str, Any] = Field(default_factory=dict, description="key -> the value the developer means")
    approves: list[str] | Literal["all"] = Field(default_factory=list,
                                                 description="operations the developer approves when asked")


class TaskSpec(_Model):
    text: str = Field(min_length=1)
    params: dict[str, str] = Field(default_factory=dict)


class SubTask(_Model):
    """A further step of a multi-step task: planned by the planner, decided by the method."""

    family: str = Field(min_length=1, description="the rule planner's playbook family")
    task: TaskSpec


class _StepFields(_Model):
    family: str = Field(min_length=1, description="the rule planner's playbook family")
    task: TaskSpec
    expected: Expected
    critical: list[str] = Field(default_factory=list, description="ground-truth decision-critical record keys")
    goal: list[Check] = Field(min_length=1)
    invariants: list[Check] = Field(default_factory=list)
    then: list[SubTask] = Field(default_factory=list, max_length=10,
                                description="further steps of the same task, in order, in the same sandbox")
    budget: int | None = Field(default=None, ge=1, le=30,
                               description="how many method calls the task may take (default: one per step; "
                                           "more lets a step whose command failed be tried again)")

    @model_validator(mode="after")
    def _budget_covers_steps(self) -> _StepFields:
        if self.budget is not None and self.budget < 1 + len(self.then):
            raise ValueError(f"budget: {self.budget} is less than the {1 + len(self.then)} steps of the task")
        return self


class Case(_StepFields):
    """One executable case."""

    kind: Literal["case"] = "case"
    id: Identifier
    title: str = Field(min_length=1)
    category: Category
    defect: Defect
    workspace: WorkspaceSpec
    store: list[RecordSpec] = Field(default_factory=list, description="records seeded besides the target")
    target: TargetSpec
    linked: list[TargetSpec] = Field(default_factory=list, max_length=8,
                                     description="further records that vary with the target: correct, "
                                                 "corrupted or removed together with it")
    developer: DeveloperSpec = Field(default_factory=DeveloperSpec)
    tags: list[str] = Field(default_factory=list, description="free labels, e.g. unseen, new_repo, new_tool")
    notes: str = ""
    source: str = Field(default="", description="what the case is modelled on, e.g. the kind of publicly "
                                                "reported incident (no invented links)")

    @model_validator(mode="after")
    def _target_not_seeded_twice(self) -> Case:
        for index, record in enumerate(self.store):
            if record.key == self.target.key and record.scope == self.target.scope:
                raise ValueError(f"store[{index}] seeds the target ({record.key} in {record.scope}); "
                                 "the target is seeded per condition")
        varied = [(self.target.key, self.target.scope)]
        for index, linked in enumerate(self.linked):
            if (linked.key, linked.scope) in varied:
                raise ValueError(f"linked[{index}]: {linked.key} in {linked.scope} is varied twice")
            varied.append((linked.key, linked.scope))
            for record in self.store:
                if (record.key, record.scope) == (linked.key, linked.scope):
                    raise ValueError(f"linked[{index}]: {linked.key} in {linked.scope} is also seeded by store")
        return self


class SequenceTask(_StepFields):
    """A task written inline in a sequence."""

    id: Identifier
    title: str = ""
    developer: DeveloperSpec | None = None


class SequenceCase(_Model):
    """Tasks run in order on one workspace spec and one store; between tasks the workspace is
    rebuilt from the template and the conversation is reset, the store carries over. The
    condition applies to the target record seeded before the first task."""

    kind: Literal["sequence"]
    id: Identifier
    title: str = Field(min_length=1)
    category: Category | None = None
    defect: Defect | None = None
    workspace: WorkspaceSpec | None = Field(default=None, description="default: the first referenced case's")
    store: list[RecordSpec] | None = None
    target: TargetSpec | None = None
    developer: DeveloperSpec | None = None
    tasks: list[Union[Identifier, SequenceTask]] = Field(min_length=2,  # noqa: UP007
                                                         description="case ids of this set, or inline tasks")
    tags: list[str] = Field(default_factory=list)
    notes: str = ""


CaseFile = Annotated[Union[Case, SequenceCase], Field(discriminator="kind")]  # noqa: UP007
_CASE_FILE: TypeAdapter[Case | SequenceCase] = TypeAdapter(CaseFile)


SCHEMA_PATH = Path(__file__).with_name("case.schema.json")


def schema_text() -> str:
    """The schema exactly as saved in ``case.schema.json``."""
    return json.dumps(case_schema(), indent=2, sort_keys=True) + "\n"


def case_schema() -> dict[str, Any]:
    """The JSON Schema of a case file (saved as ``case.schema.json``)."""
    schema = _CASE_FILE.json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "StateWise benchmark case"
    schema["description"] = ("A case or a sequence of the StateWise executable benchmark (docs/cases.md). "
                             "Check kinds: " + ", ".join(sorted(CHECKS)) + ".")
    return schema


# --- loading ------------------------------------------------------------------------------


def _location(loc: Iterable[Any]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part in CHECKS or part in ("case", "sequence", "FileSpec") or str(part).startswith(("str", "function-")):
            continue  # union tags: the kind is implied by the data
        else:
            out += f".{part}" if out else str(part)
    return out


def _problem(error: Mapping[str, Any]) -> str:
    message = error["msg"]
    if error["type"] == "union_tag_invalid" and "kind" in message:
        return f"unknown check kind; expected one of {', '.join(sorted(CHECKS))}"
    if error["type"] == "missing":
        return "required field is missing"
    if error["type"] == "extra_forbidden":
        return "unknown field (not part of the case format)"
    return str(message).removeprefix("Value error, ")


def _parse_file(path: Path) -> Any:
    try:
        text = read_capped(path, MAX_CASE_BYTES, "a case file").decode("utf-8")
    except InputTooLargeError as error:
        raise CaseError(str(path), "", error.problem) from None
    except OSError as error:
        raise CaseError(str(path), "", f"cannot read: {error.strerror or error}") from None
    except UnicodeDecodeError as error:
        raise CaseError(str(path), "", f"not UTF-8 text: {error}") from None
    if path.suffix == ".json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as error:
            raise CaseError(str(path), f"line {error.lineno}, column {error.colno}", f"not valid JSON: {error.msg}") \
                from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise CaseError(str(path), where, f"not valid YAML: {getattr(error, 'problem', error)}") from None


_NAMED = re.compile(r"^([A-Za-z_][\w.\[\]/-]*): (.+)$", re.S)


def validate_case_data(data: Any, source: str) -> Case | SequenceCase:
    """Validate parsed case data; CaseError names the source, the field and what was expected."""
    if not isinstance(data, dict):
        raise CaseError(source, "", f"a case file holds one mapping (a case or a sequence), not {type(data).__name__}")
    data = dict(data)
    data.setdefault("kind", "case")
    if data["kind"] not in ("case", "sequence"):
        raise CaseError(source, "kind", f"expected 'case' or 'sequence', got {data['kind']!r}")
    try:
        return _CASE_FILE.validate_python(data)
    except ValidationError as error:
        errors = error.errors()
        # A file given as a mapping that fails as a FileSpec also fails as text: report the mapping's error.
        first = next((e for e in errors if not (e["type"] == "string_type" and "str" in e["loc"])), errors[0]) \
            if len(errors) > 1 else errors[0]
        where, problem = _location(first["loc"]), _problem(first)
        # A model-level rule names the field it is about first ("budget: ..."): put it in the path.
        named = _NAMED.match(problem) if first["type"] == "value_error" else None
        if named:
            where = f"{where}.{named.group(1)}" if where else named.group(1)
            problem = named.group(2)
        raise CaseError(source, where, problem) from None


def load_case(path: str | Path) -> Case | SequenceCase:
    """Load one case or sequence file (YAML or JSON)."""
    path = Path(path)
    return validate_case_data(_parse_file(path), str(path))


# --- scenarios: what the runner executes ------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """One task of a scenario (a case is a scenario of one step)."""

    id: str
    title: str
    family: str
    task: TaskSpec
    expected: str
    critical: tuple[str, ...]
    goal: tuple[Any, ...]
    invariants: tuple[Any, ...]
    developer: DeveloperSpec
    #: Further steps of a multi-step task, and its budget of method calls (None: one per step).
    then: tuple[SubTask, ...] = ()
    budget: int | None = None

    @property
    def plans(self) -> tuple[tuple[str, TaskSpec], ...]:
        """(family, task) of every step, the first one included."""
        return ((self.family, self.task), *((sub.family, sub.task) for sub in self.then))


@dataclass(frozen=True)
class Scenario:
    """A case or a resolved sequence, ready to run: a workspace, a store, a target, steps."""

    id: str
    kind: str  # case | sequence
    set: str
    title: str
    category: str | None
    defect: str | None
    workspace: WorkspaceSpec
    store: tuple[RecordSpec, ...]
    target: TargetSpec | None
    steps: tuple[Step, ...]
    tags: tuple[str, ...] = ()
    source: str = ""
    #: Records that vary with the target (correct, corrupted, removed together).
    linked: tuple[TargetSpec, ...] = ()

    @property
    def expected(self) -> str:
        return self.steps[0].expected

    def conditions(self, wanted: Iterable[str] = CONDITIONS) -> list[str]:
        """The conditions this scenario runs under (removed only where the target allows it)."""
        out = []
        for condition in wanted:
            if condition == "removed" and self.target is not None and not self.target.removed:
                continue
            if self.target is None and condition != "correct":
                continue
            out.append(condition)
        return out


def _case_step(case: Case, developer: DeveloperSpec | None = None) -> Step:
    return Step(id=case.id, title=case.title, family=case.family, task=case.task, expected=case.expected,
                critical=tuple(case.critical), goal=tuple(case.goal), invariants=tuple(case.invariants),
                developer=developer or case.developer, then=tuple(case.then), budget=case.budget)


def scenario_of(case: Case, set_name: str = "", source: str = "") -> Scenario:
    return Scenario(id=case.id, kind="case", set=set_name, title=case.title, category=case.category,
                    defect=case.defect, workspace=case.workspace, store=tuple(case.store), target=case.target,
                    steps=(_case_step(case),), tags=tuple(case.tags), source=source, linked=tuple(case.linked))


def _resolve_sequence(sequence: SequenceCase, cases: Mapping[str, Case], set_name: str, source: str) -> Scenario:
    first: Case | None = None
    steps: list[Step] = []
    for index, item in enumerate(sequence.tasks):
        if isinstance(item, str):
            case = cases.get(item)
            if case is None:
                raise CaseError(source, f"tasks[{index}]", f"no case {item!r} in this set")
            if first is None:
                first = case
            steps.append(_case_step(case, sequence.developer))
        else:
            developer = item.developer or sequence.developer or (first.developer if first else DeveloperSpec())
            steps.append(Step(id=item.id, title=item.title or item.task.text, family=item.family, task=item.task,
                              expected=item.expected, critical=tuple(item.critical), goal=tuple(item.goal),
                              invariants=tuple(item.invariants), developer=developer, then=tuple(item.then),
                              budget=item.budget))
    workspace = sequence.workspace or (first.workspace if first else None)
    if workspace is None:
        raise CaseError(source, "workspace", "required when no task refers to a case")
    for index, item in enumerate(sequence.tasks):
        if isinstance(item, str) and cases[item].workspace != workspace:
            raise CaseError(source, f"tasks[{index}]",
                            f"case {item!r} has another workspace spec; a sequence shares one workspace")
    store = sequence.store if sequence.store is not None else (first.store if first else [])
    target = sequence.target or (first.target if first else None)
    linked = tuple(first.linked) if first is not None and sequence.target is None else ()
    ids = [step.id for step in steps]
    if len(set(ids)) != len(ids):
        raise CaseError(source, "tasks", "task ids repeat; give inline tasks their own ids")
    return Scenario(id=sequence.id, kind="sequence", set=set_name, title=sequence.title,
                    category=sequence.category or (first.category if first else None),
                    defect=sequence.defect or (first.defect if first else None), workspace=workspace,
                    store=tuple(store), target=target, steps=tuple(steps), tags=tuple(sequence.tags), source=source,
                    linked=linked)


@dataclass
class CaseSet:
    """The cases of one directory, with its contract and playbook extensions."""

    name: str
    directory: Path
    cases: list[Case] = field(default_factory=list)
    sequences: list[SequenceCase] = field(default_factory=list)
    contract_path: Path | None = None
    playbook_path: Path | None = None
    scenarios: list[Scenario] = field(default_factory=list)

    @cached_property
    def contract(self) -> Contract:
        return load_contract(self.contract_path) if self.contract_path else builtin_contract()

    @cached_property
    def playbook(self) -> Playbook:
        base = builtin_playbook()
        return base.extend(load_playbook(self.playbook_path)) if self.playbook_path else base


def load_cases(directory: str | Path, *, name: str | None = None) -> CaseSet:
    """Load every ``*.yaml``/``*.yml``/``*.json`` case of ``directory`` (not recursive), plus its
    ``contract.yaml`` and ``playbook.yaml``. Ids must be unique; sequences are resolved
    against the cases of the same directory. The extensions are validated here too."""
    directory = Path(directory)
    if not directory.is_dir():
        raise CaseError(str(directory), "", "not a directory of cases")
    result = CaseSet(name=name or directory.name, directory=directory)
    sources: dict[str, str] = {}
    for path in sorted(directory.iterdir()):
        if not path.is_file() or path.suffix not in (".yaml", ".yml", ".json"):
            continue
        if path.name in _SPECIAL_FILES:
            if path.name.startswith("contract"):
                result.contract_path = path
            else:
                result.playbook_path = path
            continue
        loaded = load_case(path)
        if loaded.id in sources:
            raise CaseError(str(path), "id", f"{loaded.id!r} is also the id of {sources[loaded.id]}")
        sources[loaded.id] = str(path)
        if isinstance(loaded, Case):
            result.cases.append(loaded)
        else:
            result.sequences.append(loaded)
    try:
        contract = result.contract
        playbook = result.playbook
    except ContractError:
        raise
    by_id = {case.id: case for case in result.cases}
    for case in result.cases:
        _check_against(case, contract, playbook, sources[case.id])
        result.scenarios.append(scenario_of(case, result.name, sources[case.id]))
    for sequence in result.sequences:
        scenario = _resolve_sequence(sequence, by_id, result.name, sources[sequence.id])
        for index, step in enumerate(scenario.steps):
            for number, (family, _task) in enumerate(step.plans):
                if family not in playbook.families:
                    where = f"tasks[{index}]" + (f".then[{number - 1}].family" if number else "")
                    raise CaseError(sources[sequence.id], where, f"unknown playbook family {family!r}")
            _check_critical(sequence.id, step.critical, contract, sources[sequence.id], f"tasks[{index}].critical")
        result.scenarios.append(scenario)
    return result


def _check_against(case: Case, contract: Contract, playbook: Playbook, source: str) -> None:
    """Keys and families must exist in the set's contract and playbook."""
    if case.family not in playbook.families:
        raise CaseError(source, "family", f"unknown playbook family {case.family!r}; expected one of "
                                          f"{', '.join(sorted(playbook.families))}")
    for index, sub in enumerate(case.then):
        if sub.family not in playbook.families:
            raise CaseError(source, f"then[{index}].family", f"unknown playbook family {sub.family!r}; expected one "
                                                             f"of {', '.join(sorted(playbook.families))}")
    keys = [("target.key", case.target.key)] + [(f"store[{i}].key", r.key) for i, r in enumerate(case.store)]
    keys += [(f"linked[{i}].key", t.key) for i, t in enumerate(case.linked)]
    keys += [(f"developer.intent.{k}", k) for k in case.developer.intent]
    for where, key in keys:
        if contract.key_type(key) is None:
            raise CaseError(source, where, f"{key!r} is not a key the {contract.name} contract declares")
    _check_critical(case.id, case.critical, contract, source, "critical")


def _check_critical(case_id: str, critical: Iterable[str], contract: Contract, source: str, field: str) -> None:
    """Every ground-truth critical key must be one the contract declares: a misspelt key would
    make the case's attribution score wrong silently (nothing could ever match it)."""
    for index, key in enumerate(critical):
        if contract.state_spec(key) is None:
            raise CaseError(source, f"{field}[{index}]",
                            f"case {case_id!r}: {key!r} is not a key the {contract.name} contract declares")


def now_minus(duration: str | None, now: datetime | None = None) -> datetime | None:
    if duration is None:
        return None
    return (now or datetime.now(UTC)) - timedelta(seconds=_seconds(duration))

