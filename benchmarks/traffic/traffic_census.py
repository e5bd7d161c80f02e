"""The census of the real-traffic corpus: which programs agents run, and which StateWise covers.

Each corpus command is parsed with the tree-sitter bash grammar (the one StateWise uses); every
simple command in it (through lists, pipelines, subshells, substitutions) counts once per corpus
command for its program (the basename of the command name, environment assignments skipped; behind a prefix such as
``sudo`` or ``timeout`` the inner program counts too) and,
for programs that take a subcommand (``SUBCOMMAND_PROGRAMS``), for program + subcommand
(``python -m X`` counts as ``python -m X``). A ``sh -c`` / ``bash -c`` body is not parsed again here.

Coverage says how StateWise's built-in contract and command model know the program today:

* ``reader``: a built-in reader (git, rm, pip, npm, make ... read by the command model);
* ``rule``: a ``commands:`` rule of the built-in contract (for a pair: the rule that matches it,
  with its operation, or ``read-only``);
* ``read-only``: known to change nothing (``ls``, ``grep``, ``cat`` ...);
* ``wrapper``: a prefix whose inner command is checked (``timeout``, ``xargs``, ``sh -c`` ...);
* ``session`` / ``container``: interactive sessions and container tools the model reads;
* ``known, unguarded``: known to the model but mapped to no operation;
* ``-``: unknown: it passes unguarded unless a rule names it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

from statewise.commands.rules import CommandMatch, CommandReadOnly, CommandRules
from statewise.contract import builtin_contract

#: Programs whose first non-option word is a subcommand (or, for make and the build tools, a target).
SUBCOMMAND_PROGRAMS = frozenset({
    "git", "pip", "pip3", "npm", "pnpm", "yarn", "bun", "npx", "uv", "poetry", "pdm", "pipenv", "conda", "mamba",
    "docker", "podman", "kubectl", "helm", "terraform", "cargo", "go", "make", "mvn", "mvnw", "gradle", "gradlew",
    "apt", "apt-get", "gh", "glab", "dotnet", "rustup", "brew", "systemctl", "tmux", "django-admin", "manage.py",
    "alembic", "tox", "nox", "pre-commit", "aws", "gcloud", "az", "heroku", "vercel", "ng", "rails", "bundle",
})
_PYTHON_NAMES = ("python", "python3", "python2", "pypy3")
#: Prefixes whose inner command is counted as well (sudo apt-get install counts for sudo, apt-get
#: and apt-get install), with how many words after their options are theirs (timeout's duration).
WRAPPERS = {"sudo": 0, "doas": 0, "env": 0, "nohup": 0, "nice": 0, "time": 0, "stdbuf": 0, "xargs": 0, "timeout": 1}


@lru_cache(maxsize=1)
def _parser() -> Parser:
    return Parser(Language(tree_sitter_bash.language()))


def _text(node: Node) -> str:
    return (node.text or b"").decode(errors="replace")


def _unquote(word: str) -> str:
    if len(word) >= 2 and word[0] == word[-1] and word[0] in "'\"":
        return word[1:-1]
    return word


def simple_commands(command: str) -> Iterator[list[str]]:
    """The words (name first) of every simple command in ``command``."""
    tree = _parser().parse(command.encode())
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type == "command":
            name = node.child_by_field_name("name")
            if name is not None:
                words = [_unquote(_text(name))]
                words += [_unquote(_text(arg)) for arg in node.children_by_field_name("argument")]
                yield words
        stack.extend(reversed(node.children))


def program_of(words: Sequence[str]) -> tuple[str, str | None]:
    """(program, program + subcommand or None) of one simple command."""
    program = words[0].rsplit("/", 1)[-1]
    args = list(words[1:])
    if program in _PYTHON_NAMES or program.startswith("python3."):
        if len(args) >= 2 and args[0] == "-m":
            return program, f"{program} -m {args[1]}"
        return program, None
    if program not in SUBCOMMAND_PROGRAMS:
        return program, None
    for arg in args:
        if arg.startswith("-"):
            if program in ("git",) and arg in ("-C", "-c"):
                return program, None  # the subcommand follows the option's value: not counted
            continue
        if arg and arg[0].isalnum() and "/" not in arg and "=" not in arg:
            return program, f"{program} {arg}"
        return program, None
    return program, None


def unwrapped(words: Sequence[str]) -> Iterator[list[str]]:
    """The simple command, then the command each wrapper prefix in front of it runs."""
    current = list(words)
    while current:
        yield current
        program = current[0].rsplit("/", 1)[-1]
        if program not in WRAPPERS:
            return
        rest = current[1:]
        while rest and (rest[0].startswith("-") or ("=" in rest[0] and program == "env")):
            rest = rest[1:]
        current = rest[WRAPPERS[program]:]


def census(entries: Sequence[Mapping[str, Any]]) -> tuple[Counter[str], Counter[str]]:
    """How many corpus commands run each program, and each program + subcommand."""
    programs: Counter[str] = Counter()
    pairs: Counter[str] = Counter()
    for entry in entries:
        seen_programs: set[str] = set()
        seen_pairs: set[str] = set()
        for simple in simple_commands(str(entry["command"])):
            for words in unwrapped(simple):
                if not words[0] or words[0].startswith("$"):
                    continue
                program, pair = program_of(words)
                seen_programs.add(program)
                if pair:
                    seen_pairs.add(pair)
        programs.update(seen_programs)
        pairs.update(seen_pairs)
    return programs, pairs


@lru_cache(maxsize=1)
def _rules() -> CommandRules:
    return CommandRules.of(builtin_contract(), Path("/"))


def coverage(name: str) -> str:
    """How the built-in contract and command model cover ``name`` (a program, or program +
    subcommand as the census writes it)."""
    # The command model's own tables: private names, read here only to report coverage.
    from statewise.commands import analyzer, tables

    parts = name.split()
    program = parts[0]
    key = tables._canonical(program.lower())
    rules = _rules()
    if len(parts) > 1 and rules.entries(program, None):
        found = rules.classify(program, parts[1:], {}, None)
        if isinstance(found, CommandMatch):
            return f"rule ({found.operation})"
        if isinstance(found, CommandReadOnly):
            return "rule (read-only)"
    if key in analyzer._HANDLERS:
        return "wrapper" if key in tables._TRANSPARENT or key in ("sudo", "doas", "env", "time", "command",
                                                                  "exec", "nice", "ionice", "timeout",
                                                                  "stdbuf", "flock", "xargs", "watch") else "reader"
    if rules.entries(program, None):
        return "rule"
    if key in tables._SHELLS:
        return "wrapper"
    if key in tables._READ_ONLY or key in tables._READ_ONLY_ARGS:
        return "read-only"
    if key in tables._SESSIONS:
        return "session"
    if key in tables._CONTAINER_TOOLS:
        return "container"
    if key in tables._KNOWN_UNGUARDED:
        return "known, unguarded"
    return "-"


def census_tables(entries: Sequence[Mapping[str, Any]], top: int = 100) -> str:
    """The two census tables (markdown): programs and program + subcommand, with coverage."""
    programs, pairs = census(entries)
    lines = [f"{len(entries)} corpus commands; {len(programs)} distinct programs, {len(pairs)} distinct "
             "program + subcommand pairs", ""]
    for title, counts in (("program", programs), ("program + subcommand", pairs)):
        rows = counts.most_common(top)
        covered = sum(1 for name, _ in rows if coverage(name) != "-")
        lines += [f"Top {len(rows)} by {title} ({covered} covered):", "",
                  f"| # | {title} | commands | covered by |", "|---:|---|---:|---|"]
        lines += [f"| {rank} | `{name}` | {count} | {coverage(name)} |" for rank, (name, count) in
                  enumerate(rows, 1)]
        lines.append("")
    return "\n".join(lines)
