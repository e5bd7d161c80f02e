"""Words, options and the walking context of the shell normalizer (no program knowledge)."""

from __future__ import annotations

import glob
import os
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# --- words ---------------------------------------------------------------------------------


class _Dynamic(Exception):
    """A word whose value is only known when the shell runs it."""


_DYNAMIC_NODES = {
    "simple_expansion": "a variable",
    "expansion": "a parameter expansion",
    "command_substitution": "a command substitution",
    "process_substitution": "a process substitution",
    "arithmetic_expansion": "an arithmetic expansion",
    "ansi_c_string": "an ANSI-C quoted string ($'...')",
    "translated_string": "a locale string ($\"...\")",
    "brace_expression": "a brace expansion",
}
_BRACE = re.compile(r"\{[^{}\s]*(?:,|\.\.)[^{}\s]*\}")
_GLOB_CHARS = frozenset("*?[")


@dataclass(frozen=True, slots=True)
class _Word:
    """One shell word: its source text and, when static, its value in pieces.

    Each piece is ``(text, literal)``; ``literal`` pieces were quoted or escaped, so glob
    characters in them match themselves.
    """

    text: str
    pieces: tuple[tuple[str, bool], ...] | None
    why: str = ""

    @property
    def static(self) -> bool:
        return self.pieces is not None

    @property
    def value(self) -> str | None:
        return None if self.pieces is None else "".join(text for text, _ in self.pieces)

    @property
    def has_glob(self) -> bool:
        return self.pieces is not None and any(
            not literal and any(c in _GLOB_CHARS for c in text) for text, literal in self.pieces)

    @property
    def glob_pattern(self) -> str:
        assert self.pieces is not None
        return "".join(glob.escape(text) if literal else text for text, literal in self.pieces)

    @classmethod
    def literal(cls, text: str) -> _Word:
        return cls(text, ((text, True),))


def _unescape_unquoted(text: str) -> list[tuple[str, bool]]:
    pieces: list[tuple[str, bool]] = []
    i = 0
    plain = ""
    while i < len(text):
        char = text[i]
        if char == "\\" and i + 1 < len(text):
            if text[i + 1] != "\n":
                if plain:
                    pieces.append((plain, False))
                    plain = ""
                pieces.append((text[i + 1], True))
            i += 2
            continue
        plain += char
        i += 1
    if plain:
        pieces.append((plain, False))
    return pieces


def _unescape_double_quoted(text: str) -> str:
    out = []
    i = 0
    while i < len(text):
        char = text[i]
        if char == "\\" and i + 1 < len(text) and text[i + 1] in '$`"\\\n':
            if text[i + 1] != "\n":
                out.append(text[i + 1])
            i += 2
            continue
        out.append(char)
        i += 1
    return "".join(out)


def _literal_dollar(source: bytes, after: int) -> bool:
    """Whether a `$` inside double quotes, followed by ``source[after:]``, stays a `$` for bash:
    it is followed by nothing that starts an expansion (a name, a digit, a special parameter,
    ``{``, ``(``, a quote of ``$'...'``/``$"..."`` is literal inside double quotes too)."""
    following = source[after:after + 1].decode("latin-1")
    return following in ("", '"', "/", "'", " ", "\t", "\n", ".", ",", ":", ";", "|", ")", "]", "^", "%", "+", "=", "\\")


def _node_text(node: Any, source: bytes) -> str:
    return source[node.start_byte:node.end_byte].decode("utf-8", "replace")


# The expansions whose value is the shell's working directory: `$PWD`, `${PWD}`, `$(pwd)`, `pwd`
# in backquotes (pwd -L / -P too: the directory is the same, and paths are compared resolved).
_WORKING_DIRECTORY = re.compile(r"\$PWD|\$\{PWD\}|\$\(\s*pwd(\s+-[LP])?\s*\)|`\s*pwd(\s+-[LP])?\s*`")


def _evaluate(node: Any, source: bytes, env: Mapping[str, str], cwd: str | None = None) -> _Word:
    """The word a tree-sitter argument node stands for (dynamic when it is not static).

    ``cwd``: the directory bash runs the word in, when the walk knows it; ``$PWD``, ``${PWD}``
    and ``$(pwd)`` then stand for it (a directory with spaces or glob characters is left
    dynamic: unquoted, bash would split or glob it)."""
    text = _node_text(node, source)
    pieces: list[tuple[str, bool]] = []
    usable = cwd if cwd is not None and not re.search(r"[\s*?\[\]{}]", cwd) else None

    def working_directory(part: Any) -> str | None:
        if usable is None or part.type not in ("simple_expansion", "expansion", "command_substitution"):
            return None
        return usable if _WORKING_DIRECTORY.fullmatch(_node_text(part, source)) else None

    def add(part: Any) -> None:
        kind = part.type
        part_text = _node_text(part, source)
        known = working_directory(part)
        if known is not None:
            pieces.append((known, True))
        elif kind == "word":
            pieces.extend(_unescape_unquoted(part_text))
        elif kind == "number":
            pieces.append((part_text, False))
        elif kind == "raw_string":
            pieces.append((part_text[1:-1], True))
        elif kind == "string":
            position = part.start_byte + 1
            end = part.end_byte - 1 if part_text.endswith('"') and len(part_text) > 1 else part.end_byte
            for child in part.children:
                if child.type == '"':
                    continue
                if child.start_byte > position:
                    pieces.append((_unescape_double_quoted(source[position:child.start_byte].decode()), True))
                if child.type == "string_content":
                    pieces.append((_unescape_double_quoted(_node_text(child, source)), True))
                elif child.type == "$" and _literal_dollar(source, child.end_byte):
                    pieces.append(("$", True))  # "s/x$/y/": a `$` that starts no expansion is itself
                elif working_directory(child) is not None:
                    pieces.append((usable or "", True))
                else:
                    raise _Dynamic(_DYNAMIC_NODES.get(child.type, child.type) + " inside a string")
                position = max(position, child.end_byte)
            if end > position:
                pieces.append((_unescape_double_quoted(source[position:end].decode()), True))
        elif kind == "concatenation":
            position = part.start_byte
            for child in part.children:
                if child.start_byte != position:
                    raise _Dynamic("a word the parser split")
                add(child)
                position = child.end_byte
        elif kind in _DYNAMIC_NODES:
            raise _Dynamic(_DYNAMIC_NODES[kind])
        else:
            raise _Dynamic(f"a {kind.replace('_', ' ')}")

    try:
        add(node)
    except _Dynamic as dynamic:
        return _Word(text, None, str(dynamic))
    masked = "".join(t if not literal else "\0" * len(t) for t, literal in pieces)
    if _BRACE.search(masked):
        return _Word(text, None, "a brace expansion")
    if pieces and not pieces[0][1] and pieces[0][0].startswith("~"):
        head = pieces[0][0]
        prefix, slash, rest = head.partition("/")
        if prefix == "~":
            home = env.get("HOME")
            if not home:
                return _Word(text, None, "~ with HOME unset")
            expanded = home
        elif prefix in ("~+", "~-"):
            return _Word(text, None, f"{prefix} (the shell's PWD/OLDPWD)")
        else:
            expanded = os.path.expanduser(prefix)
            if expanded == prefix:
                return _Word(text, None, f"{prefix} (an unknown user's home)")
        pieces[0] = (expanded + slash + rest, True)
    return _Word(text, tuple(pieces))


# --- options -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Spec:
    """A command's options: flags, options with a required value, options whose value may
    only be attached (``--force-with-lease[=...]``, ``-i[SUFFIX]``)."""

    flags: frozenset[str] = frozenset()
    valued: frozenset[str] = frozenset()
    optional: frozenset[str] = frozenset()
    stop_at_positional: bool = False
    allow_unknown: bool = False

    @classmethod
    def of(cls, flags: str = "", valued: str = "", optional: str = "", **kwargs: bool) -> _Spec:
        return cls(frozenset(flags.split()), frozenset(valued.split()), frozenset(optional.split()), **kwargs)

    @property
    def longs(self) -> list[str]:
        return sorted(o for o in self.flags | self.valued | self.optional if o.startswith("--"))


@dataclass(slots=True)
class _Parsed:
    options: list[tuple[str, str | None]] = field(default_factory=list)
    positionals: list[_Word] = field(default_factory=list)
    rest: int | None = None  # with stop_at_positional: the index of the first positional
    error: str | None = None
    dynamic: list[str] = field(default_factory=list)  # options whose value is only known at run time
    # Where each option's value came from: the index of the word after the option (a separate
    # value), or None (attached to the option's own word, or no value); and the index of each
    # positional. For readers that work on word positions (commands/sed.py).
    value_words: list[int | None] = field(default_factory=list)
    positions: list[int] = field(default_factory=list)

    def add(self, name: str, value: str | None, value_word: int | None = None) -> None:
        """An option seen, with its value and the index of the word holding a separate value."""
        self.options.append((name, value))
        self.value_words.append(value_word)

    def has(self, *names: str) -> bool:
        return any(name in names for name, _ in self.options)

    def value(self, *names: str) -> str | None:
        found = [value for name, value in self.options if name in names]
        return found[-1] if found else None

    def values(self, *names: str) -> list[str | None]:
        return [value for name, value in self.options if name in names]

    def count(self, *names: str) -> int:
        return sum(1 for name, _ in self.options if name in names)


def _parse(words: Sequence[_Word], spec: _Spec) -> _Parsed:
    """getopt_long-style parsing, with unique-prefix abbreviations of long options (as git
    and GNU tools accept them). An unknown option is an error unless ``allow_unknown``."""
    parsed = _Parsed()
    i = 0
    while i < len(words):
        word = words[i]
        value = word.value
        if value is None or value == "-" or not value.startswith("-"):
            if spec.stop_at_positional:
                parsed.rest = i
                return parsed
            parsed.positionals.append(word)
            parsed.positions.append(i)
            i += 1
            continue
        if value == "--":
            if spec.stop_at_positional:
                parsed.rest = i + 1
                return parsed
            parsed.positionals.extend(words[i + 1:])
            parsed.positions.extend(range(i + 1, len(words)))
            return parsed
        if value.startswith("--"):
            name, equals, attached = value.partition("=")
            known = spec.flags | spec.valued | spec.optional
            if name not in known:
                matches = [o for o in spec.longs if o.startswith(name)]
                if len(matches) == 1:
                    name = matches[0]
            if name in spec.valued:
                if equals:
                    parsed.add(name, attached)
                elif i + 1 < len(words):
                    parsed.add(name, words[i + 1].value, i + 1)
                    if words[i + 1].value is None:
                        parsed.dynamic.append(name)
                    i += 1
                else:
                    parsed.error = f"option {name} needs a value"
                    return parsed
            elif name in spec.optional:
                parsed.add(name, attached if equals else None)
            elif name in spec.flags and not equals:
                parsed.add(name, None)
            elif spec.allow_unknown:
                parsed.add(name, attached if equals else None)
            else:
                parsed.error = f"unknown option {value}"
                return parsed
            i += 1
            continue
        cluster = value[1:]
        j = 0
        while j < len(cluster):
            option = "-" + cluster[j]
            remainder = cluster[j + 1:]
            if option in spec.valued:
                if remainder:
                    parsed.add(option, remainder)
                elif i + 1 < len(words):
                    parsed.add(option, words[i + 1].value, i + 1)
                    if words[i + 1].value is None:
                        parsed.dynamic.append(option)
                    i += 1
                else:
                    parsed.error = f"option {option} needs a value"
                    return parsed
                break
            if option in spec.optional:
                parsed.add(option, remainder or None)
                break
            if option in spec.flags or spec.allow_unknown:
                parsed.add(option, None)
                j += 1
                continue
            parsed.error = f"unknown option {option}" + (f" (in {value})" if len(cluster) > 1 else "")
            return parsed
        i += 1
    if spec.stop_at_positional:
        parsed.rest = len(words)
    return parsed


# --- the walking context --------------------------------------------------------------------


@dataclass(slots=True)
class _Ctx:
    """The shell state a command runs in: its directory and environment."""

    cwd: Path | None
    env: dict[str, str]
    depth: int = 0
    path_known: bool = True
    # Where standard input comes from and standard output goes: "tty" (the agent's terminal,
    # as far as the command shows), "pipe", "file" or "here" (a heredoc or herestring). An
    # interpreter reading its program from a tty is an interactive session.
    stdin: str = "tty"
    stdout: str = "tty"
    # What is known of stdin, read according to ``stdin`` (every reader checks it first): with
    # "here", the text of a static here-document or here-string (an interpreter's program); with
    # "pipe", what a plain `echo` of static words before it prints (xargs's input); with "file",
    # the path of that file when it is static (tar, patch and git apply read what it names).
    stdin_text: str | None = None

    def copy(self) -> _Ctx:
        return _Ctx(self.cwd, dict(self.env), self.depth, self.path_known, self.stdin, self.stdout, self.stdin_text)


@dataclass(slots=True)
class _Call:
    """One simple command to classify: its words (the first names the program)."""

    words: list[_Word]
    env: dict[str, str]
    ctx: _Ctx
    part: str
    kept: list[_Word] = field(default_factory=list)  # runner words kept in a test command's text
    program: str | None = None  # the program, when it differs from the first word (npx prisma@5)

    def then(self, start: int, *, keep: bool = False, env: dict[str, str] | None = None,
             ctx: _Ctx | None = None) -> _Call:
        """The command that starts at word ``start`` (after a wrapper)."""
        kept = self.kept + (self.words[:start] if keep else [])
        return _Call(self.words[start:], env if env is not None else self.env, ctx or self.ctx, self.part, kept)

    @property
    def name(self) -> str:
        return self.program or self.words[0].value or self.words[0].text

    @property
    def args(self) -> list[_Word]:
        return self.words[1:]

    def text(self) -> str | None:
        """The normalized text of the command (runner words included), None if not static."""
        values = [w.value for w in self.kept + self.words]
        if any(v is None for v in values):
            return None
        return shlex.join(v for v in values if v is not None)


@dataclass(slots=True)
class _Repo:
    """Where a git command runs."""

    cwd: Path | None
    git_dir: str | None = None
    work_tree: str | None = None
    config: dict[str, str] = field(default_factory=dict)


_UNKNOWN_HEAD = "\0unknown"


# --- the analyzer --------------------------------------------------------------------------


_LANGUAGE: Any = None


def _parser() -> Any:
    global _LANGUAGE
    import tree_sitter
    import tree_sitter_bash

    if _LANGUAGE is None:
        _LANGUAGE = tree_sitter.Language(tree_sitter_bash.language())
    return tree_sitter.Parser(_LANGUAGE)


_STATEMENTS = frozenset({
    "program", "list", "pipeline", "redirected_statement", "subshell", "compound_statement", "if_statement",
    "elif_clause", "else_clause", "while_statement", "for_statement", "c_style_for_statement", "case_statement",
    "case_item", "do_group", "function_definition", "negated_command", "command", "variable_assignment",
    "variable_assignments", "declaration_command", "unset_command", "test_command",
})
_REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
_SEPARATOR_GAP = re.compile(r"^[ \t]+$")


def _redirect_streams(node: Any, source: bytes, ctx: _Ctx) -> None:
    """Record in ``ctx`` where a redirect points standard input or output."""
    if node.type in ("heredoc_redirect", "herestring_redirect"):
        body = [c for c in node.children if c.type not in ("heredoc_start", "heredoc_end", "<<", "<<-", "<<<")
                and c.type not in _REDIRECTS]
        dynamic = any(_has_expansion(c) for c in body)
        ctx.stdin = "dynamic" if dynamic else "here"
        ctx.stdin_text = None if dynamic else _here_text(node, source)
        return
    operator = next((c.type for c in node.children if not c.is_named), "")
    descriptor = next((_node_text(c, source) for c in node.children if c.type == "file_descriptor"), "")
    if operator in ("<", "<>") and descriptor in ("", "0"):
        ctx.stdin = "file"
        # the file's path, when static (patch, tar and git apply read what it names)
        destination = node.child_by_field_name("destination")
        ctx.stdin_text = None if destination is None else _evaluate(destination, source, ctx.env).value
    elif operator in (">", ">>", ">|", "&>", "&>>") and descriptor in ("", "1"):
        ctx.stdout = "file"
    elif operator == ">&" and descriptor in ("", "1"):
        ctx.stdout = "file"


def _here_text(node: Any, source: bytes) -> str | None:
    """The text a static here-document or here-string feeds to standard input."""
    for child in node.children:
        if child.type == "heredoc_body":
            text = _node_text(child, source)
            if any(c.type == "<<-" for c in node.children):  # <<- strips leading tabs
                text = "\n".join(line.lstrip("\t") for line in text.split("\n"))
            return text
        if node.type == "herestring_redirect" and child.is_named:
            value = _evaluate(child, source, {}).value
            return None if value is None else value + "\n"
    return None


def _has_expansion(node: Any) -> bool:
    if node.type in _DYNAMIC_NODES:
        return True
    return any(_has_expansion(child) for child in node.children)


def _first_broken(node: Any) -> Any:
    """The first ERROR or MISSING node under ``node``."""
    if node.is_error or node.is_missing or node.type == "ERROR":
        return node
    for child in node.children:
        if child.has_error or child.is_missing or child.is_error:
            found = _first_broken(child)
            if found is not None:
                return found
    return None


def _iter_type(node: Any, kind: str) -> Iterable[Any]:
    for child in node.children:
        if child.type == kind:
            yield child


_UV_RUN = _Spec.of(
    flags="--all-extras --no-dev --dev --frozen --locked --no-sync --isolated --active --no-project -q --quiet -v "
          "--verbose --offline --no-cache --script --gui-script --no-editable --exact --all-packages --no-config "
          "--native-tls --no-env-file --all-groups --only-dev --no-default-groups --compile-bytecode --reinstall "
          "--upgrade -U --preview",
    valued="--with --with-editable --with-requirements -p --python --directory --project --package --extra --group "
           "--env-file --index --index-url --extra-index-url --default-index -m --module --no-group --only-group "
           "--cache-dir --color --exclude-newer --resolution --prerelease --link-mode --index-strategy -C "
           "--config-setting",
    stop_at_positional=True)
_UVX = _Spec.of(flags="-q --quiet -v --verbose --isolated --offline --no-cache --native-tls --no-config",
                valued="--from --with --with-editable --with-requirements -p --python --index --index-url "
                       "--extra-index-url --default-index --cache-dir --color",
                stop_at_positional=True)
_NPX = _Spec.of(flags="-y --yes --no --no-install --quiet -q --ignore-existing --prefer-offline --silent -s",
                valued="-p --package --registry --cache --userconfig --prefix -C --dir --filter -F --workspace -w",
                stop_at_positional=True)

