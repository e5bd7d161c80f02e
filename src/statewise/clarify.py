"""Clarification and approval channels: how the guard asks a developer.

A clarification is one targeted question about a developer-owned fact: it names the key,
the scope and the value in doubt, and takes a typed answer. An approval is a yes/no on a
proposed action that the contract says needs one. Each channel comes in three kinds:
interactive (a terminal), scripted (a simulated developer answering from given intent, for
tests and the benchmark) and callback (any function, for an agent integration).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from statewise.actions import Action
from statewise.errors import ValueTypeError
from statewise.values import ValueType, check_value, parse_value_text, render_value

__all__ = [
    "Answer",
    "AnswerKind",
    "ApprovalChannel",
    "ApprovalRequest",
    "CallbackApprover",
    "CallbackClarifier",
    "ClarificationChannel",
    "Question",
    "ScriptedApprover",
    "ScriptedClarifier",
    "TerminalApprover",
    "TerminalClarifier",
]


@dataclass(frozen=True, slots=True)
class Question:
    """One targeted question about one record."""

    key: str
    scope: str
    value: Any  # the value in doubt
    value_type: ValueType
    text: str
    record_id: str | None = None
    choices: tuple[str, ...] | None = None


class AnswerKind(str, enum.Enum):
    CONFIRM = "confirm"  # the value in doubt is right
    CORRECT = "correct"  # it is wrong; here is the right value
    UNKNOWN = "unknown"  # the developer does not know or will not say


@dataclass(frozen=True, slots=True)
class Answer:
    kind: AnswerKind
    value: Any = None
    by: str = "developer"
    note: str = ""

    @classmethod
    def confirm(cls, by: str = "developer") -> Answer:
        return cls(AnswerKind.CONFIRM, by=by)

    @classmethod
    def correct(cls, value: Any, by: str = "developer") -> Answer:
        return cls(AnswerKind.CORRECT, value, by=by)

    @classmethod
    def unknown(cls, by: str = "developer", note: str = "") -> Answer:
        return cls(AnswerKind.UNKNOWN, by=by, note=note)


@runtime_checkable
class ClarificationChannel(Protocol):
    def ask(self, question: Question) -> Answer: ...


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    action: Action
    reason: str  # why approval is needed (the contract's rule)
    task: str = ""


@runtime_checkable
class ApprovalChannel(Protocol):
    def approve(self, request: ApprovalRequest) -> bool: ...


# --- scripted (a simulated developer) ----------------------------------------------------


@dataclass
class ScriptedClarifier:
    """A simulated developer who knows the true intent for some keys.

    Asked about a key in ``intent``, it confirms when the value in doubt equals the intended
    value and corrects it otherwise; asked about anything else it answers "unknown". Every
    question is kept in ``asked``.
    """

    intent: Mapping[str, Any] = field(default_factory=dict)
    name: str = "simulated-developer"
    asked: list[Question] = field(default_factory=list)

    def ask(self, question: Question) -> Answer:
        self.asked.append(question)
        if question.key not in self.intent:
            return Answer.unknown(by=self.name, note="no intent given for this key")
        intended = self.intent[question.key]
        if intended == question.value:
            return Answer.confirm(by=self.name)
        return Answer.correct(intended, by=self.name)


@dataclass
class ScriptedApprover:
    """Approves exactly the operations in ``allow`` (all, when ``allow`` is None)."""

    allow: frozenset[str] | None = None
    requests: list[ApprovalRequest] = field(default_factory=list)

    def approve(self, request: ApprovalRequest) -> bool:
        self.requests.append(request)
        return self.allow is None or request.action.operation in self.allow


# --- callbacks ---------------------------------------------------------------------------


class CallbackClarifier:
    """Ask through any function ``(question) -> Answer``."""

    def __init__(self, function: Callable[[Question], Answer]) -> None:
        self.function = function

    def ask(self, question: Question) -> Answer:
        answer = self.function(question)
        if not isinstance(answer, Answer):
            raise TypeError(f"a clarification callback must return an Answer, not {type(answer).__name__}")
        return answer


class CallbackApprover:
    """Ask through any function ``(request) -> bool``."""

    def __init__(self, function: Callable[[ApprovalRequest], bool]) -> None:
        self.function = function

    def approve(self, request: ApprovalRequest) -> bool:
        return self.function(request) is True


# --- interactive terminal ----------------------------------------------------------------


class TerminalClarifier:
    """Ask on a terminal. Enter confirms, a value corrects, ``?`` means "don't know"."""

    def __init__(self, prompt: Callable[[str], str] = input, echo: Callable[[str], None] = print) -> None:
        self.prompt = prompt
        self.echo = echo

    def ask(self, question: Question) -> Answer:
        self.echo(question.text)
        hint = f" [{', '.join(question.choices)}]" if question.choices else ""
        while True:
            try:
                reply = self.prompt(f"{question.key} = {render_value(question.value)}{hint} "
                                    "(Enter keeps it, ? if unsure, or type the right value): ").strip()
            except EOFError:
                return Answer.unknown(note="no answer (end of input)")
            if reply == "":
                return Answer.confirm()
            if reply == "?":
                return Answer.unknown()
            try:
                value = parse_value_text(reply, question.value_type, choices=question.choices, key=question.key)
                check_value(value, question.value_type, choices=question.choices, key=question.key)
            except ValueTypeError as error:
                self.echo(str(error))
                continue
            return Answer.confirm() if value == question.value else Answer.correct(value)


class TerminalApprover:
    """Ask for a yes/no on a terminal; anything but y/yes is a no."""

    def __init__(self, prompt: Callable[[str], str] = input) -> None:
        self.prompt = prompt

    def approve(self, request: ApprovalRequest) -> bool:
        try:
            reply = self.prompt(f"Approve {request.action.describe()}? ({request.reason}) [y/N]: ")
        except EOFError:
            return False
        return reply.strip().lower() in ("y", "yes")
