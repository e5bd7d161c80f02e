"""The contract's declarative shell-command rules (``commands:``), applied to one command.

:mod:`statewise.commands` walks the bash grammar, peels wrappers (``sudo``,
``env``, ``sh -c`` ...) and knows git, pip, npm and the file tools itself. A program it has
no built-in handling for used to be "unguarded" and ran. Before that happens it asks
:class:`CommandRules`, built from the contract's ``commands:`` section, whether a rule
declares the program; if one does, the command becomes the rule's operation, with slots read
from the command's own words and environment (so a slot and the command it came from cannot
disagree), or it is unresolved when the rule cannot read it.

This module works on plain values (the static words, the environment the command sees) and
knows nothing about the grammar; it fails closed:

* an option the matching rule does not declare, a value-taking option without its value, an
  option given twice with different values, more arguments than the rule names slots for;
* a word the rule needs that is only known at run time (``$X``), or an environment variable
  a rule reads that was assigned a run-time value;
* options before the subcommand of a program whose rules have subcommands (``terraform
  -chdir=x apply``): which subcommand runs is not read, so it is not guessed.

A declared program whose subcommand no rule names (``terraform plan``) stays unguarded, as
every undeclared program is.

The built-in coding contract's rules (test runners, migration tools ...) always apply: a
contract's own rules come first, then the built-in ones, and the operation (its tool and risk)
is the contract's, or the built-in contract's when the contract does not declare it. See
docs/shell.md.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import functools
import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from statewise.actions import Action
from statewise.contract import CommandRule, Contract, builtin_contract

__all__ = ["DYNAMIC", "CommandMatch", "CommandProblem", "CommandReadOnly", "CommandRules", "operation_risk"]

#: The value the normalizer stores for an environment variable assigned a run-time value.
DYNAMIC = "\0dynamic"
#: Seconds allowed for the read-only git query that finds the repository root.
GIT_TIMEOUT = 3.0


@dataclass(frozen=True, slots=True)
class CommandMatch:
    """A command a rule declares: the operation, its tool, slots and risk."""

    rule: str
    operation: str
    tool: str
    args: Mapping[str, Any]
    risk: str
    cwd: bool = False  # the operation has a cwd slot

    def action(self, *, target: str | None = None, reason: str = "",
               args: Mapping[str, Any] | None = None) -> Action:
        """The action this match yields (``args``: the slots, when the caller added some)."""
        return Action(tool=self.tool, operation=self.operation, target=target,
                      args=dict(self.args if args is None else args), risk=self.risk,  # type: ignore[arg-type]
                      reason=reason)


@dataclass(frozen=True, slots=True)
class CommandReadOnly:
    """A declared command a ``read_only`` rule says has no effect."""

    rule: str


@dataclass(frozen=True, slots=True)
class CommandProblem:
    """A declared command that could not be read with confidence: why."""

    reason: str
    leading_option: bool = False  # only that an option comes before the subcommand


@dataclass(frozen=True, slots=True)
class _Shape:
    """A contract operation's argv shape: the subcommand words after its program."""

    operation: str
    tool: str
    risk: str
    subcommand: tuple[str, ...]
    slots: frozenset[str]


@dataclass(frozen=True, slots=True)
class _Entry:
    name: str
    rule: CommandRule
    tool: str
    risk: str
    cwd: bool = False  # the operation has a cwd slot: filled with the directory the command runs in
    own: bool = False  # the contract's own rule, not one of the built-in coding contract's


@functools.cache
def _builtin() -> Contract:
    return builtin_contract("coding")


def operation_risk(operation: str, contract: Contract | None = None) -> str:
    """The risk of ``operation``: the contract's, else the built-in coding contract's, else high
    (an operation no contract declares is stopped by the gate anyway)."""
    for source in (contract, _builtin()):
        if source is not None and operation in source.operations:
            return str(source.operations[operation].risk)
    return "high"


def _entry(name: str, rule: CommandRule, contract: Contract) -> _Entry:
    if rule.read_only or rule.operation is None:
        return _Entry(name, rule, "", "")
    operation = contract.operations.get(rule.operation) or _builtin().operations[rule.operation]
    return _Entry(name, rule, operation.tool, str(rule.risk or operation.risk), "cwd" in operation.slots)


@functools.cache
def _builtin_entries() -> tuple[tuple[str, _Entry], ...]:
    """The built-in rules, each under its program name or its reading's (``reading:git.push``)."""
    contract = _builtin()
    return tuple((_index_name(rule), _entry(name, rule, contract)) for name, rule in contract.commands.items()
                 if rule.program is None or "/" not in rule.program)


@functools.cache
def _builtin_rules() -> CommandRules:
    """The built-in contract's rules (with its command catalogue), indexed once per process."""
    return CommandRules._of(_builtin(), Path("/"))


def _index_name(rule: CommandRule) -> str:
    return rule.program if rule.program is not None else f"reading:{rule.reading}"


def _specificity(entry: _Entry) -> tuple[int, int]:
    # read-only rules first (`pytest --collect-only`), then the longest subcommand first
    # (`kubectl rollout undo` before `kubectl rollout`)
    return (0 if entry.rule.read_only else 1, -len(entry.rule.subcommand))


def _word_matches(pattern: str, word: str) -> bool:
    return any(fnmatch.fnmatchcase(word, alternative) if alternative.endswith("*") else word == alternative
               for alternative in pattern.split("|"))


def _prefix_matches(patterns: Sequence[str], words: Sequence[str | None]) -> bool:
    return len(words) >= len(patterns) and all(
        w is not None and _word_matches(p, w) for p, w in zip(patterns, words, strict=False))


@dataclass(frozen=True)
class CommandRules:
    """The ``commands:`` rules of one contract, indexed by program (and by reading)."""

    by_name: Mapping[str, tuple[_Entry, ...]] = field(default_factory=dict)
    by_path: Mapping[str, tuple[_Entry, ...]] = field(default_factory=dict)  # rule program with a '/'
    env_vars: frozenset[str] = frozenset()
    by_reading: Mapping[str, tuple[_Entry, ...]] = field(default_factory=dict)
    own_programs: frozenset[str] = frozenset()  # programs the contract's own (not built-in) rules name
    # Operations that name their argv shape (``operations.<op>.argv``), by program basename.
    shapes: Mapping[str, tuple[_Shape, ...]] = field(default_factory=dict)

    @classmethod
    def of(cls, contract: Contract | None, workspace: Path) -> CommandRules:
        """The rules of ``contract`` followed by the built-in coding contract's; path programs
        resolve against the repository root of ``workspace`` (``workspace`` itself outside a
        repository)."""
        if contract is None or contract is _builtin():
            return _builtin_rules()  # no path rules: the same for every workspace, built once
        return cls._of(contract, workspace)

    @classmethod
    def _of(cls, contract: Contract | None, workspace: Path) -> CommandRules:
        by_name: dict[str, list[_Entry]] = {}
        by_path: dict[str, list[_Entry]] = {}
        env_vars: set[str] = set()
        root: Path | None = None
        own = dict(contract.commands) if contract is not None else {}
        by_reading: dict[str, list[_Entry]] = {}
        builtin = _builtin()
        inherited = set(builtin.commands)  # a contract extending coding holds these among its own
        for name, rule in own.items():
            entry = _entry(name, rule, contract)  # type: ignore[arg-type]  # own is empty without one
            if name not in inherited:
                entry = dataclasses.replace(entry, own=True)
            env_vars.update(rule.env)
            if rule.program is None:
                by_reading.setdefault(rule.reading or "", []).append(entry)
            elif "/" in rule.program:
                root = root or _repository_root(workspace)
                key = os.path.realpath(os.path.join(str(root), os.path.expanduser(rule.program)))
                by_path.setdefault(key, []).append(entry)
            else:
                by_name.setdefault(rule.program, []).append(entry)
        for program, entry in _builtin_entries():
            # A contract extending coding holds the built-in rules already (its own entries above).
            if entry.name in own:
                continue
            if contract is not None and contract is not builtin and entry.rule.operation in contract.operations:
                entry = _entry(entry.name, entry.rule, contract)  # the contract's tool and risk
            env_vars.update(entry.rule.env)
            if entry.rule.program is None:
                by_reading.setdefault(entry.rule.reading or "", []).append(entry)
            else:
                by_name.setdefault(program, []).append(entry)

        own_programs = frozenset(rule.program.rsplit("/", 1)[-1] for name, rule in own.items()
                                 if rule.program is not None and name not in inherited)

        def order(entries: list[_Entry]) -> tuple[_Entry, ...]:
            own_first = [e for e in entries if e.name not in inherited] + [e for e in entries if e.name in inherited]
            return tuple(sorted(own_first, key=_specificity))  # sorted() is stable: own rules stay first
        shapes: dict[str, list[_Shape]] = {}
        for operation_name, operation in (contract.operations.items() if contract is not None else ()):
            for argv in operation.argv:
                shapes.setdefault(argv[0].rsplit("/", 1)[-1], []).append(
                    _Shape(operation_name, operation.tool, str(operation.risk), tuple(argv[1:]),
                           frozenset(operation.slots)))
        return cls({k: order(v) for k, v in by_name.items()}, {k: order(v) for k, v in by_path.items()},
                   frozenset(env_vars), {k: tuple(v) for k, v in by_reading.items()}, own_programs,
                   {k: tuple(v) for k, v in shapes.items()})

    def shaped(self, program: str, args: Sequence[str | None],
               found: CommandMatch | CommandReadOnly | CommandProblem | None) -> list[CommandMatch]:
        """The actions of the contract's operations whose ``argv`` shape ``program args...`` has,
        beside what the command rules found (``found``): each gets the slots the rules read
        that it declares. A word the shape needs that is only known at run time matches no
        shape here; the rules that read the command say whether that is unresolved."""
        shapes = self.shapes.get(program.rsplit("/", 1)[-1])
        if not shapes:
            return []
        read = found.args if isinstance(found, CommandMatch) else {}
        # The words that are not options, with the values of the options the matching rule
        # declares skipped (`kubectl -n prod apply`: apply is the first word).
        rule = next((e.rule for e in self.by_name.get(program.rsplit("/", 1)[-1], ())
                     if isinstance(found, CommandMatch | CommandReadOnly) and e.name == found.rule), None)
        words = (_non_options(rule, args) if rule is not None
                 else [w for w in args if w is None or not w.startswith("-") or w == "-"])
        return [CommandMatch(f"operations.{shape.operation}.argv", shape.operation, shape.tool,
                             {k: v for k, v in read.items() if k in shape.slots}, shape.risk,
                             "cwd" in shape.slots)
                for shape in shapes if _prefix_matches(shape.subcommand, words[:len(shape.subcommand)])]

    def __bool__(self) -> bool:
        return bool(self.by_name or self.by_path)

    def map_reading(self, reading: str, facts: Mapping[str, Any]) -> list[CommandMatch]:
        """Every rule's action for ``reading`` with ``facts`` (the facts as slots, the rule's fixed
        slots added): the contract's own rules and the built-in ones, each rule whose ``when``
        the facts meet. Empty when no rule maps it: the caller leaves it unresolved."""
        found: list[CommandMatch] = []
        for entry in self.by_reading.get(reading, ()):
            rule = entry.rule
            if all(_fact_matches(expected, facts.get(fact)) for fact, expected in rule.when.items()):
                found.append(CommandMatch(entry.name, rule.operation or "", entry.tool, {**facts, **rule.slots},
                                          entry.risk, entry.cwd))
        return found

    def entries(self, program: str, cwd: Path | None) -> tuple[_Entry, ...] | None:
        """The rules for the program ``program`` names (as written), or None if none declares it.

        A bare name matches rules on its basename (PATH decides which file that is, and a rule
        for ``terraform`` means whichever terraform runs); a name with a ``/`` matches rules on
        their basename too, and path rules on the file it resolves to."""
        base = program.rsplit("/", 1)[-1]
        found = self.by_name.get(base) or self.by_name.get(base.lower())
        if found:
            return found
        if "/" in program and self.by_path:
            if cwd is None and not program.startswith("/"):
                # The directory is not known: a path rule with this file name may be the one.
                same = [e for k, v in self.by_path.items() if k.rsplit("/", 1)[-1] == base for e in v]
                return tuple(same) or None
            resolved = os.path.realpath(os.path.join(str(cwd or "/"), os.path.expanduser(program)))
            return self.by_path.get(resolved)
        return None

    def classify(self, program: str, args: Sequence[str | None], env: Mapping[str, str],
                 cwd: Path | None, *, own_only: bool = False) -> CommandMatch | CommandReadOnly | CommandProblem | None:
        """What ``program args...`` is under the rules: a match, read-only, a problem, or None
        (no rule applies). ``own_only``: the contract's own rules only, not the built-in ones."""
        entries = self.entries(program, cwd)
        if entries is not None and own_only:
            entries = tuple(e for e in entries if e.own) or None
        if entries is None:
            return None
        if "/" in program and cwd is None and not program.startswith("/"):
            return CommandProblem(f"`{program}` is declared by the contract's command rule {entries[0].name}, "
                                  "but the directory it runs in is not known")
        shown = program.rsplit("/", 1)[-1] if "/" not in (entries[0].rule.program or "") else program
        strict = [e for e in entries if e.rule.options == "declared"]
        longest = max((len(e.rule.subcommand) for e in strict), default=0)
        head = list(args[:longest])
        for index, word in enumerate(head):
            if word is None:
                return CommandProblem(f"`{shown}`: argument {index + 1} is only known at run time, so which of "
                                      "the contract's command rules applies cannot be read")
        leading = bool(args) and (args[0] or "").startswith("-")
        if leading and any(e.own and e.rule.options == "declared" and e.rule.subcommand for e in strict):
            # The contract's own rules for this program cannot read which subcommand runs: the
            # built-in catalogue's looser reading must not stand in for them (their invariants).
            entries = tuple(e for e in entries if e.own)
        for entry in entries:
            rule = entry.rule
            if rule.when_any and not any(w in rule.when_any for w in args):
                continue
            if rule.options == "any":
                found = _loose_match(entry, shown, _non_options(rule, args))
                if found is None:
                    continue
                if isinstance(found, CommandProblem):
                    return found
                if rule.read_only:
                    return CommandReadOnly(entry.name)
                # The subcommand's words are not positionals, unless it is matched anywhere or holds
                # a word written `*` (any word: `ssh` `[*, *]` is a host and a command's first word).
                keep = rule.anywhere or "*" in rule.subcommand
                return _apply(entry, shown, list(args), env, skip=0 if keep else len(rule.subcommand))
            if _prefix_matches(rule.subcommand, args) and not any(_prefix_matches(u, args[:len(u)])
                                                                   for u in rule.unless):
                if rule.read_only:
                    return CommandReadOnly(entry.name)
                return _apply(entry, shown, list(args[len(rule.subcommand):]), env)
        if strict and longest and args and (args[0] or "").startswith("-"):
            return CommandProblem(f"`{shown} {args[0]}`: an option before the subcommand, so which of the "
                                  f"contract's command rules ({', '.join(e.name for e in strict)}) applies "
                                  "cannot be read; put the options after the subcommand", leading_option=True)
        return None


def _fact_matches(expected: Any, actual: Any) -> bool:
    """A ``when`` value against a reading's fact: equal, one of a list, or a string pattern
    (``a|b``, ``prod*``) against a string fact (or any string of a list-valued one)."""
    if isinstance(expected, tuple):
        return any(_fact_matches(one, actual) for one in expected)
    if actual is None:
        return expected is False  # a flag a reading does not report is off
    if isinstance(actual, list | tuple):
        return any(_fact_matches(expected, one) for one in actual)
    if isinstance(expected, str) and isinstance(actual, str):
        return _word_matches(expected, actual)
    return type(expected) is type(actual) and expected == actual


def _non_options(rule: CommandRule, args: Sequence[str | None]) -> list[str | None]:
    """The words that are not options nor the value of a declared value-taking option (the
    value of an option the rule does not declare is read as a word: declare it to skip it)."""
    words: list[str | None] = []
    skip = False
    for word in args:
        if skip:
            skip = False
        elif word is not None and word.startswith("-") and word != "-":
            spec = rule.flags.get(word)
            skip = spec is not None and spec.value
        else:
            words.append(word)
    return words


def _loose_match(entry: _Entry, shown: str, words: Sequence[str | None]) -> CommandProblem | bool | None:
    """Whether an ``options: any`` rule's subcommand matches the words that are not options:
    True, None (it does not), or a problem (a word it needs is only known at run time)."""
    rule = entry.rule
    size = len(rule.subcommand)
    if rule.anywhere and size == 1:
        candidates = [w for w in words if w is None or _word_matches(rule.subcommand[0], w)]
        if not candidates:
            return None
        if all(c is None for c in candidates):
            return CommandProblem(f"`{shown}`: an argument is only known at run time, so whether the contract's "
                                  f"command rule {entry.name} applies cannot be read")
        return True
    needed = list(words[:size])
    if any(w is None for w in needed):
        return CommandProblem(f"`{shown}`: an argument is only known at run time, so which of the contract's "
                              "command rules applies cannot be read")
    if not _prefix_matches(rule.subcommand, needed):
        return None
    for unless in rule.unless:
        if _prefix_matches(unless, words[:len(unless)]):
            return None
    return True


def _repository_root(workspace: Path) -> Path:
    """The top of the git work tree holding ``workspace`` (path rules are relative to it, so a
    hook running in a subdirectory finds the same file), or ``workspace`` outside one."""
    try:
        done = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=workspace, capture_output=True,
                              text=True, timeout=GIT_TIMEOUT, stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.SubprocessError):
        return workspace
    top = done.stdout.strip()
    return Path(top) if done.returncode == 0 and top.startswith("/") else workspace


def _apply(entry: _Entry, shown: str, words: list[str | None], env: Mapping[str, str], *, skip: int = 0
           ) -> CommandMatch | CommandProblem:
    """The slots ``entry`` reads from the words after the subcommand and from ``env``."""
    rule = entry.rule
    what = " ".join((shown, *rule.subcommand)) if rule.options == "declared" else shown
    slots: dict[str, Any] = dict(rule.slots)
    flagged: dict[str, Any] = {}
    positionals: list[str] = []
    only_positionals = False
    i = 0
    while i < len(words):
        word = words[i]
        if word is None:
            return CommandProblem(f"`{what}`: argument {i + 1} after the subcommand is only known at run time")
        if only_positionals or word == "-" or not word.startswith("-"):
            if skip:
                skip -= 1  # a word of the subcommand
            else:
                positionals.append(word)
            i += 1
            continue
        if word == "--":
            only_positionals = True
            i += 1
            continue
        name, equals, attached = word.partition("=")
        spec = rule.flags.get(word)
        if spec is not None:
            equals = ""
        else:
            spec = rule.flags.get(name) if equals else None
        if spec is None and rule.options == "any":
            i += 1  # an option the rule leaves alone; any value it takes is read as a word and ignored
            continue
        if spec is None:
            return CommandProblem(f"`{what}`: option {name} is not one the contract's command rule "
                                  f"{entry.name} declares, so what it does is not known")
        value: Any
        if spec.value:
            if equals:
                value = attached
            elif i + 1 < len(words):
                value = words[i + 1]
                i += 1
                if value is None:
                    return CommandProblem(f"`{what}`: the value of {name} is only known at run time")
            else:
                return CommandProblem(f"`{what}`: option {name} needs a value")
        elif equals:
            return CommandProblem(f"`{what}`: option {name} takes no value in the contract's command rule "
                                  f"{entry.name}")
        else:
            value = True
        i += 1
        if spec.slot is None:
            continue
        if spec.repeat:
            flagged.setdefault(spec.slot, []).append(value)
        elif spec.slot in flagged and flagged[spec.slot] != value:
            return CommandProblem(f"`{what}`: {name} is given twice with different values")
        else:
            flagged[spec.slot] = value
    slots.update(flagged)
    names = list(rule.positionals)
    for slot, value in zip(names, positionals, strict=False):
        slots[slot] = value
    surplus = positionals[len(names):]
    if surplus and rule.options == "any" and rule.rest is None:
        pass  # the words of a loosely read command are not slots, unless the rule names a rest slot
    elif surplus:
        if rule.rest is None:
            return CommandProblem(f"`{what}`: {len(positionals)} arguments, and the contract's command rule "
                                  f"{entry.name} names {len(names)}")
        slots[rule.rest] = surplus
    for variable, slot in rule.env.items():
        value = env.get(variable)
        if value == DYNAMIC:
            return CommandProblem(f"`{what}`: {variable} is set to a value only known at run time")
        if value is not None:
            slots[slot] = value
    return CommandMatch(entry.name, rule.operation or "", entry.tool, slots, entry.risk, entry.cwd)
