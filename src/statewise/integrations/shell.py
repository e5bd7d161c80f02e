"""From a shell command (or a file edit) an agent is about to run to normalized actions.

Claude Code's Bash tool, Codex's shell and Gemini CLI's ``run_shell_command`` hand us a
command string. :func:`analyze_command` parses it with the tree-sitter bash grammar (never
with regular expressions or ``shlex``), walks every simple command it contains — through
``&&``/``;``/``||`` lists, pipelines, subshells, braces, ``if``/``for``/``while``/``case``
bodies, function bodies, command and process substitutions, env prefixes, wrappers such as
``sudo``, ``env``, ``nohup``, ``timeout`` and ``xargs``, and ``sh -c``/``bash -lc`` bodies,
which are parsed again — and maps each one to the contract's operations (``git.push``,
``fs.delete``, ``pip.install``, ``test.run`` ...).

It fails closed. Whatever it cannot read with confidence — a parse error, a command name that
is not a static word (``$CMD``, ``$(...)``, ``$'...'``), ``eval``, a shell reading commands
from standard input, an option of a guarded command it does not know, an argument whose
value matters but is computed at run time — becomes an action with the operation
``shell.unresolved``, which no contract declares, so the gate stops it. Commands it parses
and knows to be read-only give no action; commands it parses but does not guard (``python
script.py``, ``make build``) give no action either and are listed in
:attr:`ShellAnalysis.unguarded`. See docs/shell.md.

Where a value depends on the repository (the branch a bare ``git push`` pushes), it is read
with argv-only, read-only ``git`` calls with a timeout; nothing is ever executed through a
shell here.
"""

from __future__ import annotations

import glob
import itertools
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from statewise.actions import Action
from statewise.integrations.shell_rules import DYNAMIC, CommandProblem, CommandRules

if TYPE_CHECKING:
    from statewise.contract import Contract

__all__ = ["DEFAULT_INDEX", "UNRESOLVED", "ShellAnalysis", "analyze_command", "command_disagreement", "file_action"]

#: The operation of an action the normalizer could not read with confidence. No contract
#: declares it, so the gate always stops it.
UNRESOLVED = "shell.unresolved"
#: The operation of a database migration (not declared by the built-in contract yet).
DB_MIGRATE = "db.migrate"

#: How deep ``sh -c`` bodies (and bodies of ``watch``, ``trap``, ``alias`` ...) are parsed again.
MAX_DEPTH = 4
#: A glob that expands to more paths than this is not enumerated; it is unresolved.
MAX_GLOB = 256
#: Seconds allowed for each read-only git query.
GIT_TIMEOUT = 3.0

_RISK: dict[str, str] = {
    "git.push": "high", "git.checkout": "low", "git.switch": "low", "git.branch_create": "low",
    "git.branch_delete": "high", "git.reset_hard": "high", "git.clean": "high", "git.rebase": "medium",
    "git.restore": "high", "pip.install": "medium", "uv.pip_install": "medium", "uv.add": "medium",
    "poetry.add": "medium", "npm.install": "medium", "pnpm.add": "medium", "yarn.add": "medium",
    "venv.create": "low", "test.run": "low", "fs.delete": "high", "fs.write": "medium",
    DB_MIGRATE: "high", UNRESOLVED: "high",
}


# --- the result ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ShellAnalysis:
    """What a shell command would do, as far as StateWise guards it.

    ``actions`` holds one normalized action per guarded effect, in command order, preceded by
    one ``shell.unresolved`` action per entry of ``unresolved``. ``unguarded`` lists the
    simple commands that were parsed but map to no contract operation (the hook lets them
    run: StateWise guards what the contract declares). ``read_only`` is true only when the
    command has no action, nothing unresolved and nothing unguarded.
    """

    command: str
    actions: tuple[Action, ...]
    unresolved: tuple[str, ...] = ()
    unguarded: tuple[str, ...] = ()
    read_only: bool = False

    @property
    def operations(self) -> tuple[str, ...]:
        """The operation of each action, in order."""
        return tuple(action.operation for action in self.actions)

    def first(self, operation: str) -> Action | None:
        """The first action with this operation, or None."""
        return next((a for a in self.actions if a.operation == operation), None)


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


def _node_text(node: Any, source: bytes) -> str:
    return source[node.start_byte:node.end_byte].decode("utf-8", "replace")


def _evaluate(node: Any, source: bytes, env: Mapping[str, str]) -> _Word:
    """The word a tree-sitter argument node stands for (dynamic when it is not static)."""
    text = _node_text(node, source)
    pieces: list[tuple[str, bool]] = []

    def add(part: Any) -> None:
        kind = part.type
        part_text = _node_text(part, source)
        if kind == "word":
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
            i += 1
            continue
        if value == "--":
            if spec.stop_at_positional:
                parsed.rest = i + 1
                return parsed
            parsed.positionals.extend(words[i + 1:])
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
                    parsed.options.append((name, attached))
                elif i + 1 < len(words):
                    parsed.options.append((name, words[i + 1].value))
                    if words[i + 1].value is None:
                        parsed.dynamic.append(name)
                    i += 1
                else:
                    parsed.error = f"option {name} needs a value"
                    return parsed
            elif name in spec.optional:
                parsed.options.append((name, attached if equals else None))
            elif name in spec.flags and not equals:
                parsed.options.append((name, None))
            elif spec.allow_unknown:
                parsed.options.append((name, attached if equals else None))
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
                    parsed.options.append((option, remainder))
                elif i + 1 < len(words):
                    parsed.options.append((option, words[i + 1].value))
                    if words[i + 1].value is None:
                        parsed.dynamic.append(option)
                    i += 1
                else:
                    parsed.error = f"option {option} needs a value"
                    return parsed
                break
            if option in spec.optional:
                parsed.options.append((option, remainder or None))
                break
            if option in spec.flags or spec.allow_unknown:
                parsed.options.append((option, None))
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

    def copy(self) -> _Ctx:
        return _Ctx(self.cwd, dict(self.env), self.depth, self.path_known, self.stdin, self.stdout)


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


# --- tables --------------------------------------------------------------------------------

def _words(text: str) -> list[str]:
    return text.replace("?", "").split()


_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "yash", "posh"})
_READ_ONLY = frozenset(_words("""
echo printf type true false test [ [[ sleep tput help
cd pushd popd export set unset shopt : read wait ulimit umask hash jobs fg bg disown declare typeset
local readonly let shift return exit break continue getopts times caller dirs logout
"""))
# Known programs that StateWise does not guard: not scanned for wrapped commands.
_KNOWN_UNGUARDED = frozenset(_words("""
mkdir cargo go gem bundle? apt apt-get aptitude dpkg brew dnf yum apk pacman zypper port snap flatpak
conda mamba micromamba pyenv rustup nvm volta asdf mise node deno bun? ruby perl php java javac mvn gradle
gcc g++ cc clang make? cmake ninja tar unzip ruff black isort flake8
mypy pyright pylint eslint prettier tsc git-lfs gh hub code open xdg-open awk gawk sed?
paste join fold fmt expand unexpand base64 iconv envsubst python-config
"""))
# Names whose appearance among an unknown program's arguments means it may run them.
_WRAPPED_DANGER = frozenset(_words("""
git rm rmdir unlink shred pip pip3 npm npx pnpm yarn uv uvx poetry sh bash zsh dash ksh fish eval sudo
doas xargs alembic rails rake prisma virtualenv tox pytest manage.py django-admin find mv cp dd truncate
chmod chown tee
"""))
_TRANSPARENT = frozenset({"nohup", "builtin", "coproc", "setsid", "chronic", "unbuffer", "busybox", "catchsegv"})
_NODE_RUNNERS = frozenset({"npx", "bunx", "pnpm", "yarn", "npm", "bun"})
_DEV_FILES = re.compile(r"^/dev/(null|stdout|stderr|tty|fd/\d+|zero)$")
_PYTHON_NAME = re.compile(r"^(python|pypy)(\d+(\.\d+)*)?[tm]?$")
_PIP_NAME = re.compile(r"^pip(\d+(\.\d+)*)?$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Environment variables that make a program run another command (or load code).
_DANGEROUS_ENV = re.compile(
    r"^(LD_PRELOAD|LD_AUDIT|BASH_ENV|ENV|PROMPT_COMMAND|GIT_SSH|GIT_SSH_COMMAND|GIT_EDITOR|GIT_SEQUENCE_EDITOR|"
    r"GIT_PAGER|GIT_ASKPASS|GIT_EXTERNAL_DIFF|GIT_EXEC_PATH|GIT_PROXY_COMMAND|GIT_CONFIG_COUNT|GIT_CONFIG_KEY_\d+|"
    r"GIT_CONFIG_PARAMETERS|GIT_CONFIG_GLOBAL|GIT_CONFIG_SYSTEM|GIT_TEMPLATE_DIR|EDITOR|VISUAL|PAGER|MANPAGER|"
    r"LESSOPEN|LESSCLOSE)$")
# git -c settings that run a command (or redirect the remote); they make the call unresolved.
_DANGEROUS_GIT_CONFIG = re.compile(
    r"^(alias\..*|core\.(sshcommand|pager|editor|hookspath|fsmonitor|askpass|gitproxy|alternaterefscommand)|"
    r"credential\..*|diff\..*\.(textconv|command)|diff\.external|merge\..*\.driver|filter\..*|gpg\..*program|"
    r"gpg\.program|sequence\.editor|uploadpack\..*|receive\..*|remote\..*\.(receivepack|uploadpack|proxy|url|pushurl)|"
    r"url\..*|protocol\..*|pager\..*|include\..*|includeif\..*|mergetool\..*|difftool\..*|web\.browser|"
    r"browser\..*|sendemail\..*|core\.worktree|ssh\..*|http\..*proxy.*|init\.templatedir)$", re.IGNORECASE)

_GIT_UNGUARDED = frozenset(_words("""
add am apply bisect bundle cherry-pick clone commit config fetch gc init maintenance merge
mv? notes prune pull repack replace rerere revert send-email sparse-checkout stash submodule
tag update-index symbolic-ref lfs reflog remote hash-object mktag mktree commit-tree read-tree
write-tree pack-refs fast-import fast-export filter-branch unpack-objects index-pack pack-objects
credential column interpret-trailers mailinfo mailsplit merge-file merge-tree stripspace
"""))


# --- read-only, proven from the argv ----------------------------------------------------------
# A program counts as read-only only when every option it is given is one listed here. An
# option that is not listed is an effect StateWise does not know (unresolved); an option that
# writes a file becomes an fs.write of that file (so the path checks apply); an option that
# runs a command, or makes the program do something else with effects, is unresolved with the
# reason given here.


@dataclass(frozen=True, slots=True)
class _ReadOnly:
    """How the argv of a read-only program is proven read-only."""

    spec: _Spec
    writes: frozenset[str] = frozenset()  # options whose value is a file the program writes
    effects: Mapping[str, str] = field(default_factory=dict)  # option -> what it does (unresolved)
    output_positional: int | None = None  # the positional that is a file written (uniq IN OUT)
    max_positionals: int | None = None  # more positionals are an effect (hostname NAME sets it)
    positional: str | None = None  # a regex every positional must match (date +FORMAT)
    numeric: bool = False  # -NUM (and +NUM) is a count: head -5, grep -3, seq 10 -1 1
    in_place: frozenset[str] = frozenset()  # options that make it write its file arguments (yq -i)

    @property
    def effectful(self) -> bool:
        return bool(self.writes or self.effects or self.output_positional is not None
                    or self.max_positionals is not None or self.positional or self.in_place)


def _ro(flags: str = "", valued: str = "", optional: str = "", *, writes: str = "",
        effects: Mapping[str, str] | None = None, **kwargs: Any) -> _ReadOnly:
    in_place = frozenset(kwargs.pop("in_place", "").split())
    spec = _Spec.of(flags + " " + " ".join(in_place), valued + " " + writes, optional)
    return _ReadOnly(spec, frozenset(writes.split()), dict(effects or {}), in_place=in_place, **kwargs)


_RUNS = "runs a command StateWise cannot see"
_LS = _ro("-a -A -b -B -c -C -d -D -f -F -g -G -h -H -i -k -l -L -m -n -N -o -p -q -Q -r -R -s -S -t -u -U -v -x "
          "-X -Z -1 -e -O -P -T -W -% -, --all --almost-all --author --escape --ignore-backups --directory --dired "
          "--classify --file-type --full-time --group-directories-first --no-group --human-readable --si "
          "--dereference-command-line --dereference-command-line-symlink-to-dir --inode --kibibytes --dereference "
          "--literal --numeric-uid-gid --hide-control-chars --show-control-chars --quote-name --reverse --recursive "
          "--size --context --zero --help --version",
          "-I -w --block-size --hide --ignore --width --tabsize --sort --time-style --format --indicator-style "
          "--quoting-style",
          "--color --colour --hyperlink --time --classify")
_GREP = _ro("-E -F -G -P -i -y -v -w -x -c -L -l -o -q -s -b -H -h -n -T -Z -z -a -I -r -R -U -u -V "
            "--extended-regexp --fixed-strings --basic-regexp --perl-regexp --ignore-case --no-ignore-case "
            "--invert-match --word-regexp --line-regexp --count --files-without-match --files-with-matches "
            "--only-matching --quiet --silent --no-messages --byte-offset --with-filename --no-filename "
            "--line-number --initial-tab --null --null-data --text --recursive --dereference-recursive "
            "--line-buffered --binary --help --version",
            "-e -f -m -A -B -C -D -d --regexp --file --max-count --after-context --before-context --context "
            "--label --binary-files --devices --directories --exclude --exclude-from --exclude-dir --include",
            "--color --colour", numeric=True)
_RG = _ro("-i -S -s -F -l -L -n -N -H -I -o -p -q -v -w -x -a -c -u -uu -uuu -U -P -z -0 -b -h -V -. "
          "--ignore-case --smart-case --case-sensitive --fixed-strings --files-with-matches --files-without-match "
          "--files --follow --line-number --no-line-number --no-heading --heading --with-filename --no-filename "
          "--hidden --no-hidden --unrestricted --no-ignore --no-ignore-vcs --no-ignore-dot --no-ignore-global "
          "--no-ignore-parent --no-ignore-exclude --no-ignore-files --no-ignore-messages --only-matching --pretty "
          "--quiet --invert-match --word-regexp --line-regexp --json --vimgrep --column --no-column --byte-offset "
          "--stats --trim --null --null-data --text --binary --no-binary --multiline --multiline-dotall --pcre2 "
          "--no-pcre2 --no-config --no-messages --debug --trace --passthru --passthrough --crlf --no-crlf "
          "--line-buffered --block-buffered --no-unicode --one-file-system --search-zip --count --count-matches "
          "--type-list --no-require-git --sort-files --max-columns-preview --include-zero --no-filename "
          "--glob-case-insensitive --ignore-file-case-insensitive --help --version",
          "-e -f -A -B -C -g -M -m -d -j -t -T -E -r --regexp --file --after-context --before-context --context "
          "--glob --iglob --max-columns --max-count --max-depth --maxdepth --threads --type --type-not --type-add "
          "--type-clear --encoding --replace --max-filesize --ignore-file --sort --sortr --engine "
          "--context-separator --field-match-separator --field-context-separator --path-separator --dfa-size-limit "
          "--regex-size-limit --pre --pre-glob --hostname-bin --hyperlink-format",
          "--color --colors", effects={"--pre": "runs a preprocessor command on every file",
                                       "--hostname-bin": "runs a program"}, numeric=True)
_HEAD = _ro("-q -v -z --quiet --silent --verbose --zero-terminated --help --version",
            "-c -n --bytes --lines", numeric=True)
_TAIL = _ro("-f -F -q -v -z -r --quiet --silent --verbose --zero-terminated --retry --help --version",
            "-c -n -s --bytes --lines --pid --sleep-interval --max-unchanged-stats", "--follow", numeric=True)
_CAT = _ro("-A -b -e -E -n -s -t -T -u -v -l --show-all --number-nonblank --number --squeeze-blank --show-ends "
           "--show-tabs --show-nonprinting --help --version")
_WC = _ro("-c -m -l -L -w --bytes --chars --lines --max-line-length --words --help --version",
          "--files0-from --total")
_SUMS = _ro("-b -c -t -z -w --binary --check --text --zero --tag --untagged --quiet --status --strict --warn "
            "--ignore-missing --help --version", "-l --length")

_READ_ONLY_ARGS: dict[str, _ReadOnly] = {
    **{name: _LS for name in ("ls", "ll", "la", "dir", "vdir")},
    "cat": _CAT,
    **{name: _ro("-A -p -P -n -f -u -S -V -h --plain --paging --number --force-colorization --unbuffered "
                 "--chop-long-lines --show-all --list-themes --list-languages --diff --help --version",
                 "-l -H -r -m --language --highlight-line --file-name --diff-context --tabs --wrap --terminal-width "
                 "--italic-text --decorations --theme --style --line-range --map-syntax --pager",
                 "--color", effects={"--pager": "runs a pager command"}) for name in ("bat", "batcat")},
    "head": _HEAD,
    "tail": _TAIL,
    **{name: _GREP for name in ("grep", "egrep", "fgrep", "zgrep")},
    "rg": _RG,
    "ag": _ro("-a -c -f -G -i -l -L -n -Q -s -S -u -U -v -w -z -0 --all-types --count --follow --hidden "
              "--ignore-case --smart-case --case-sensitive --literal --nocolor --color --column --nogroup --group "
              "--noheading --heading --filename --nofilename --files-with-matches --files-without-matches "
              "--skip-vcs-ignores --unrestricted --word-regexp --search-zip --null --print0 --stats --vimgrep "
              "--numbers --nonumbers --only-matching --silent --help --version -h -V",
              "-A -B -C -g -m -p --after --before --context --file-search-regex --ignore --ignore-dir --max-count "
              "--path-to-ignore --depth --workers --pager",
              effects={"--pager": "runs a pager command"}, numeric=True),
    "ack": _ro("-i -I -s -S -v -w -x -c -l -L -h -H -f -g -k -n -1 -Q --ignore-case --smart-case --invert-match "
               "--word-regexp --line-regexp --count --files-with-matches --files-without-matches --no-filename "
               "--with-filename --follow --nofollow --literal --nocolor --noenv --column --nocolumn --noheading "
               "--heading --nobreak --break --group --nogroup --sort-files --help --version --noignore-dir "
               "--recurse --no-recurse -r -R",
               "-A -B -C -m -t -T --after-context --before-context --context --max-count --type --ignore-dir "
               "--ignore-file --match --pager --output",
               "--color --colour",
               effects={"--pager": "runs a pager command", "--output": "evaluates a Perl expression per match"}),
    "wc": _WC,
    "pwd": _ro("-L -P --help --version"),
    "which": _ro("-a -s --all --skip-alias --skip-dot --skip-tilde --show-dot --show-tilde --read-alias "
                 "--read-functions --skip-functions --tty-only -i -v -V --version --help"),
    "whereis": _ro("-b -m -s -u -l -g", "-B -M -S -f"),
    "whoami": _ro("--help --version"),
    "id": _ro("-a -Z -g -G -n -r -u -z --context --group --groups --name --real --user --zero --help --version"),
    "groups": _ro("--help --version"),
    "date": _ro("-R -u --rfc-email --utc --universal --debug --help --version",
                "-d -f -r --date --file --reference --rfc-3339", "-I --iso-8601", positional=r"^\+"),
    "printenv": _ro("-0 --null --help --version"),
    "stat": _ro("-L -f -t --dereference --file-system --terse --help --version", "-c --format --printf --cached"),
    "file": _ro("-b -i -L -h -z -Z -k -s -r -0 -N -p -E -l -S --brief --mime --mime-type --mime-encoding "
                "--dereference --no-dereference --uncompress --uncompress-noreport --keep-going --special-files "
                "--raw --print0 --no-pad --preserve-date --extension --apple --no-sandbox --help --version",
                "-e -F -m -f -P --exclude --exclude-quiet --separator --magic-file --files-from --parameter"),
    "du": _ro("-a -b -c -D -H -h -k -L -l -m -P -S -s -x -0 --all --apparent-size --bytes --total "
              "--dereference-args --human-readable --si --count-links --dereference --no-dereference "
              "--separate-dirs --summarize --one-file-system --null --inodes --help --version",
              "-B -d -t -X --block-size --max-depth --threshold --exclude --exclude-from --files0-from --time-style",
              "--time"),
    "df": _ro("-a -h -H -i -k -l -P -T --all --human-readable --si --inodes --local --portability --print-type "
              "--total --sync --no-sync --help --version", "-B -t -x --block-size --type --exclude-type", "--output"),
    "tree": _ro("-a -d -l -f -x -R -q -N -Q -p -u -g -s -h -D -F -v -t -c -U -r -i -A -S -n -C -X -J --gitignore "
                "--ignore-case --matchdirs --metafirst --prune --info --noreport --si --du --inodes --device "
                "--dirsfirst --filesfirst --nolinks --fromfile --fromtabfile --fflinks --help --version",
                "-L -P -I -H -T --infofile --charset --filelimit --timefmt --sort --hintro --houtro", writes="-o"),
    "diff": _ro("-q -s -c -u -e -n -y -l -r -N -i -E -Z -b -w -B -a -d -t -T -p --brief --report-identical-files "
                "--ed --rcs --side-by-side --left-column --suppress-common-lines --show-c-function --expand-tabs "
                "--initial-tab --suppress-blank-empty --paginate --recursive --no-dereference --new-file "
                "--unidirectional-new-file --ignore-file-name-case --no-ignore-file-name-case --ignore-case "
                "--ignore-tab-expansion --ignore-trailing-space --ignore-space-change --ignore-all-space "
                "--ignore-blank-lines --text --strip-trailing-cr --minimal --speed-large-files --normal --help "
                "--version -v",
                "-C -U -W -F -x -X -S -I -D --width --show-function-line --tabsize --exclude --exclude-from "
                "--starting-file --from-file --to-file --ignore-matching-lines --ifdef --line-format "
                "--old-line-format --new-line-format --unchanged-line-format --old-group-format --new-group-format "
                "--changed-group-format --unchanged-group-format --horizon-lines --palette --label",
                "--unified --context --color"),
    "cmp": _ro("-b -l -s --print-bytes --verbose --quiet --silent --help --version", "-i -n --ignore-initial --bytes"),
    "comm": _ro("-1 -2 -3 -z --check-order --nocheck-order --total --zero-terminated --help --version",
                "--output-delimiter"),
    "cut": _ro("-n -s -z --complement --only-delimited --zero-terminated --help --version",
               "-b -c -d -f --bytes --characters --delimiter --fields --output-delimiter"),
    "tr": _ro("-c -C -d -s -t --complement --delete --squeeze-repeats --truncate-set1 --help --version"),
    "basename": _ro("-a -z --multiple --zero --help --version", "-s --suffix"),
    "dirname": _ro("-z --zero --help --version"),
    "realpath": _ro("-e -m -L -P -q -s -z --canonicalize-existing --canonicalize-missing --logical --physical "
                    "--quiet --strip --no-symlinks --zero --help --version", "--relative-to --relative-base"),
    "readlink": _ro("-f -e -m -n -q -s -v -z --canonicalize --canonicalize-existing --canonicalize-missing "
                    "--no-newline --quiet --silent --verbose --zero --help --version"),
    "jq": _ro("-n -r -j -a -c -s -S -e -C -M -R -h -V --tab --seq --stream --stream-errors --slurp --raw-input "
              "--null-input --compact-output --raw-output --raw-output0 --join-output --ascii-output --sort-keys "
              "--color-output --monochrome-output --exit-status --unbuffered --help --version --args --jsonargs "
              "--build-configuration",
              "-f -L --indent --from-file --arg --argjson --slurpfile --rawfile"),
    "yq": _ro("-e -P -C -M -N -r -j -n -0 -y -Y -v -V -h --exit-status --prettyPrint --colors --no-colors --no-doc "
              "--unwrapScalar --tojson --null-input --nul-output --verbose --version --help",
              "-o -p -I --output-format --input-format --indent --front-matter --expression --from-file --arg",
              in_place="-i --inplace --in-place",
              effects={"-s": "writes a file per document", "--split-exp": "writes a file per document"}),
    "xxd": _ro("-a -b -C -e -E -i -p -r -u -d -v -h", "-c -g -l -o -s -n", output_positional=1),
    "od": _ro("-b -c -d -f -i -l -o -s -x -v --output-duplicates --traditional --help --version",
              "-A -j -N -t --address-radix --skip-bytes --read-bytes --format --endian", "-S -w --strings --width"),
    "hexdump": _ro("-b -c -C -d -o -x -v", "-e -f -n -s -L"),
    "strings": _ro("-a -d -f -w -U -v -V --all --data --print-file-name --include-all-whitespace --help --version",
                   "-n -t -o -e -s -T --bytes --radix --encoding --output-separator --target --unicode", numeric=True),
    **{name: _SUMS for name in ("md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum", "sha512sum", "b2sum")},
    "shasum": _ro("-b -c -t -U -0 -s -w --binary --check --text --tag --status --quiet --strict --warn "
                  "--ignore-missing --UNIVERSAL --01 --help --version", "-a --algorithm"),
    "cksum": _ro("--base64 --raw --tag --untagged --check -c --debug -z --zero --help --version",
                 "-a -l --algorithm --length"),
    "column": _ro("-t -x -n -e -J -L -d --table --fillrows --json --keep-empty-lines --table-noheadings --help "
                  "--version", "-c -s -o -N -R -T -E -H -O -W -r -l --output-width --separator --output-separator "
                  "--table-columns --table-right --table-truncate --table-noextreme --table-hide --table-order "
                  "--table-wrap --table-name --tree --tree-id --tree-parent"),
    "nl": _ro("-p --no-renumber --help --version", "-b -d -f -h -i -l -n -s -v -w --body-numbering "
              "--section-delimiter --footer-numbering --header-numbering --line-increment --join-blank-lines "
              "--number-format --number-separator --starting-line-number --number-width"),
    "tac": _ro("-b -r --before --regex --help --version", "-s --separator"),
    "rev": _ro("--help --version"),
    "seq": _ro("-w --equal-width --help --version", "-f -s --format --separator", numeric=True),
    "uname": _ro("-a -s -n -r -v -m -p -i -o --all --kernel-name --nodename --kernel-release --kernel-version "
                 "--machine --processor --hardware-platform --operating-system --help --version"),
    "hostname": _ro("-a -A -d -f -i -I -s -y --alias --all-fqdns --domain --fqdn --long --ip-address "
                    "--all-ip-addresses --short --yp --nis --help --version", max_positionals=0),
    "ps": _ro("-A -a -d -e -f -F -H -j -l -L -M -N -T -w -x -y -Z -c -r -m -V --forest --headers --no-headers "
              "--cumulative --help --version --deselect",
              "-C -G -g -o -O -p -q -s -t -u -U --cols --columns --format --group --Group --pid --ppid --quick-pid "
              "--sid --sort --tty --user --User --width --rows --lines"),
    "pgrep": _ro("-l -a -c -f -i -n -o -v -w -x -q -A --list-name --list-full --count --full --ignore-case --newest "
                 "--oldest --inverse --lightweight --exact --quiet --ignore-ancestors --help --version",
                 "-d -g -G -O -P -s -t -u -U -r -F --delimiter --pgroup --group --older --parent --session "
                 "--terminal --euid --uid --runstates --pidfile --ns --nslist"),
    "free": _ro("-b -k -m -g -h -l -t -w -v --bytes --kilo --mega --giga --tera --peta --kibi --mebi --gibi "
                "--tebi --pebi --human --si --lohi --total --wide --committed --help --version",
                "-c -s --count --seconds"),
    "uptime": _ro("-p -s --pretty --since --help --version"),
    "locale": _ro("-a -m -c -k -v --all-locales --charmaps --category-name --keyword-name --verbose --help "
                  "--version"),
    "clear": _ro("-x -V", "-T"),
    "zcat": _ro("-f -l -q -v -L -V -h -t --force --list --quiet --verbose --license --version --help --test"),
    "lsof": _ro("-a -b -C -h -l -n -N -O -P -R -t -U -v -V -w -X -Q", "-A -c -d -D -e -F -g -k -K -L -m -o -p -r "
                "-s -S -T -u -z -x +c +d +D +f", "-i +L"),
    "nproc": _ro("--all --help --version", "--ignore"),
    "arch": _ro("--help --version"),
    "getconf": _ro("-a", "-v"),
    "lsb_release": _ro("-a -i -d -r -c -s -v -h --all --id --description --release --codename --short --help"),
    "history": _ro("", max_positionals=1, positional=r"^\d+$"),
    "sort": _ro("-b -d -f -g -h -i -M -n -R -r -V -c -C -m -s -u -z --ignore-leading-blanks --dictionary-order "
                "--ignore-case --general-numeric-sort --ignore-nonprinting --month-sort --human-numeric-sort "
                "--numeric-sort --random-sort --reverse --version-sort --merge --stable --unique --zero-terminated "
                "--debug --help --version",
                "-k -t -S -T --key --field-separator --buffer-size --temporary-directory --parallel --batch-size "
                "--random-source --files0-from --sort --compress-program", "--check", writes="-o --output",
                effects={"--compress-program": "runs a compression program"}),
    "uniq": _ro("-c -d -i -u -z --count --repeated --ignore-case --unique --zero-terminated --help --version",
                "-f -s -w --skip-fields --skip-chars --check-chars", "-D --all-repeated --group",
                output_positional=1),
}

# Read-only git subcommands and their options (shared groups first).
_GIT_DIFF_FLAGS = (
    "-p -u --patch -s --no-patch --raw --patch-with-raw -t --indent-heuristic --no-indent-heuristic --minimal "
    "--patience --histogram --numstat --shortstat --summary --patch-with-stat -z --name-only --name-status "
    "--no-color --no-color-moved --no-color-moved-ws --no-renames --rename-empty --no-rename-empty --check "
    "--full-index --binary --text -a --ignore-cr-at-eol --ignore-space-at-eol -b --ignore-space-change -w "
    "--ignore-all-space --ignore-blank-lines -W --function-context --exit-code --quiet --ext-diff --no-ext-diff "
    "--textconv --no-textconv --no-prefix --default-prefix --ita-invisible-in-index --ita-visible-in-index -R "
    "--cached --staged --merge-base --no-index -1 -2 -3 -0 --base --ours --theirs --cumulative "
    "--irreversible-delete -D --find-copies-harder --no-relative --compact-summary --pickaxe-all "
    "--pickaxe-regex --no-stat --histogram --remerge-diff --no-indent-heuristic --ignore-submodules")
_GIT_DIFF_VALUED = (
    "-U -S -G -O -l -I --unified --diff-algorithm --anchored --src-prefix --dst-prefix --line-prefix "
    "--inter-hunk-context --output-indicator-new --output-indicator-old --output-indicator-context --diff-filter "
    "--find-object --skip-to --rotate-to --ignore-matching-lines --color-moved-ws --stat-width --stat-name-width "
    "--stat-graph-width --stat-count --word-diff-regex --diff-merges")
_GIT_DIFF_OPTIONAL = (
    "--stat --dirstat -X --dirstat-by-file --color --color-moved --color-words --word-diff --submodule "
    "--ignore-submodules --abbrev --relative -M --find-renames -C --find-copies -B --break-rewrites "
    "--ws-error-highlight")
_GIT_REV_FLAGS = (
    "--all --reflog --not --merges --no-merges --first-parent --exclude-first-parent-only --bisect --left-only "
    "--right-only --cherry-pick --cherry-mark --cherry --left-right --boundary --reverse --topo-order "
    "--date-order --author-date-order --simplify-by-decoration --full-history --dense --sparse --simplify-merges "
    "--show-pulls --walk-reflogs -g --merge --oneline --abbrev-commit --no-abbrev-commit --no-abbrev "
    "--relative-date --parents --children --graph --no-graph --show-signature --no-decorate --source "
    "--use-mailmap --mailmap --no-mailmap --no-use-mailmap --full-diff --log-size --no-notes --standard-notes "
    "--no-standard-notes --no-expand-tabs --regexp-ignore-case -i --basic-regexp -E --extended-regexp -F "
    "--fixed-strings -P --perl-regexp --all-match --invert-grep --remove-empty --no-min-parents --no-max-parents "
    "--count --objects --objects-edge --unpacked --timestamp --do-walk --single-worktree --ignore-missing "
    "--alternate-refs -m -c --cc --dd --no-diff-merges --combined-all-paths --clear-decorations --stdin "
    "--follow --no-follow --in-commit-order --no-walk --indexed-objects --header --quiet")
_GIT_REV_VALUED = (
    "-n --max-count --skip --since --after --since-as-filter --until --before --author --committer --grep "
    "--grep-reflog --min-parents --max-parents -L --exclude --glob --decorate-refs --decorate-refs-exclude "
    "--encoding --max-age --min-age")
_GIT_REV_OPTIONAL = (
    "--pretty --format --decorate --date --branches --tags --remotes --notes --show-notes --ancestry-path "
    "--expand-tabs --no-walk --show-linear-break --exclude-hidden")


def _git_ro(flags: str = "", valued: str = "", optional: str = "", *, diff: bool = False, rev: bool = False,
            writes: str = "", effects: Mapping[str, str] | None = None, numeric: bool = False,
            flag_wins: str = "") -> _ReadOnly:
    """A git subcommand's options; ``flag_wins`` are its own flags that a shared group takes a
    value for (``git shortlog -n`` is --numbered, not --max-count)."""
    if diff:
        flags, valued, optional = (f"{flags} {_GIT_DIFF_FLAGS}", f"{valued} {_GIT_DIFF_VALUED}",
                                   f"{optional} {_GIT_DIFF_OPTIONAL}")
    if rev:
        flags, valued, optional = (f"{flags} {_GIT_REV_FLAGS}", f"{valued} {_GIT_REV_VALUED}",
                                   f"{optional} {_GIT_REV_OPTIONAL}")
    dropped = set(flag_wins.split())
    valued = " ".join(name for name in valued.split() if name not in dropped)
    return _ro(flags + " -h --help", valued, optional, writes=writes, effects=effects, numeric=numeric)


_GIT_OUTPUT = "--output"  # git diff/log/show --output=F writes F instead of standard output
_GIT_READ_ONLY_ARGS: dict[str, _ReadOnly] = {
    "status": _git_ro("-s --short -b --branch --show-stash --long -v --verbose -z --no-column --ahead-behind "
                      "--no-ahead-behind --renames --no-renames --no-optional-locks",
                      "", "--porcelain -u --untracked-files --ignore-submodules --ignored --column --find-renames"),
    "diff": _git_ro(diff=True, writes=_GIT_OUTPUT),
    "log": _git_ro("--no-follow", diff=True, rev=True, writes=_GIT_OUTPUT, numeric=True),
    "whatchanged": _git_ro(diff=True, rev=True, writes=_GIT_OUTPUT, numeric=True),
    "show": _git_ro(diff=True, rev=True, writes=_GIT_OUTPUT, numeric=True),
    "diff-files": _git_ro("-r -q", diff=True, writes=_GIT_OUTPUT),
    "diff-index": _git_ro("-r -m", diff=True, writes=_GIT_OUTPUT),
    "diff-tree": _git_ro("-r -t -v --root --always --no-commit-id", diff=True, rev=True, writes=_GIT_OUTPUT),
    "range-diff": _git_ro("--no-dual-color --left-only --right-only", "--creation-factor", diff=True, rev=True,
                          writes=_GIT_OUTPUT),
    "blame": _git_ro("-b --root --show-stats -l -t -f --show-name -n --show-number -s -e --show-email -w "
                     "--incremental --porcelain -p --line-porcelain -c --score-debug --progress --no-progress "
                     "--minimal --color-lines --color-by-age --first-parent",
                     "-L -S --contents --reverse --since --ignore-rev --ignore-revs-file --date --encoding",
                     "-M -C --abbrev"),
    "annotate": _git_ro("-b --root --show-stats -l -t -f -n -s -e -w -p -c --incremental --porcelain",
                        "-L -S --contents --reverse --date --encoding", "-M -C --abbrev"),
    "describe": _git_ro("--all --tags --contains --exact-match --debug --long --always --first-parent",
                        "--candidates --match --exclude", "--abbrev --dirty --broken"),
    "rev-parse": _git_ro(
        "--parseopt --sq-quote --keep-dashdash --stop-at-non-option --stuck-long --revs-only --no-revs --flags "
        "--no-flags --default --verify -q --quiet --sq --not --symbolic --symbolic-full-name --all --branches "
        "--tags --remotes --local-env-vars --git-dir --git-common-dir --absolute-git-dir --is-inside-git-dir "
        "--is-inside-work-tree --is-bare-repository --is-shallow-repository --resolve-git-dir --show-cdup "
        "--show-prefix --show-toplevel --show-superproject-working-tree --shared-index-path --show-object-format "
        "--show-ref-format --since --after --until --before --git-path --show-current --end-of-options",
        "--prefix --path-format --glob --exclude --exclude-hidden --resolve-git-dir --git-path",
        "--abbrev-ref --short --disambiguate --branches --tags --remotes --show-object-format"),
    "ls-files": _git_ro("-c -d -m -o -i -s -u -k -z -t -v -f --cached --deleted --modified --others --ignored "
                        "--stage --unmerged --killed --directory --no-empty-directory --eol --deduplicate "
                        "--full-name --recurse-submodules --debug --sparse --error-unmatch --resolve-undo "
                        "--exclude-standard",
                        "-x -X --exclude --exclude-from --exclude-per-directory --with-tree --format", "--abbrev"),
    "ls-tree": _git_ro("-d -r -t -l --long -z --name-only --name-status --object-only --full-name --full-tree",
                       "--format", "--abbrev"),
    "ls-remote": _git_ro("--heads --tags --branches --refs --exit-code --get-url --symref -q --quiet -t -b",
                         "--sort -o --server-option --upload-pack",
                         effects={"--upload-pack": _RUNS}),
    "cat-file": _git_ro("-t -s -e -p --textconv --filters --batch-all-objects --buffer --unordered "
                        "--follow-symlinks --allow-unknown-type -Z --mailmap --no-mailmap --use-mailmap",
                        "--path", "--batch --batch-check --batch-command"),
    "shortlog": _git_ro("-n --numbered -s --summary -e --email -c --committer", "--group", "-w",
                        rev=True, numeric=True, flag_wins="-n"),
    "grep": _git_ro("--cached --no-index --untracked --no-exclude-standard --exclude-standard "
                    "--recurse-submodules -a --text --textconv --no-textconv -i --ignore-case -I -r --recursive "
                    "--no-recursive -w --word-regexp -v --invert-match -h -H --full-name -E --extended-regexp -G "
                    "--basic-regexp -P --perl-regexp -F --fixed-strings -n --line-number --column -l "
                    "--files-with-matches --name-only -L --files-without-match -z --null -o --only-matching -c "
                    "--count --no-color --break --heading -p --show-function -W --function-context --and --or "
                    "--not --all-match -q --quiet",
                    "--max-depth --threads -f -e -A -B -C --context --after-context --before-context -m "
                    "--max-count",
                    "--color -O --open-files-in-pager",
                    effects={"-O": "runs a command on the files that match",
                             "--open-files-in-pager": "runs a command on the files that match"}, numeric=True),
    "show-ref": _git_ro("--head --branches --heads --tags -d --dereference -s --verify --exists -q --quiet",
                        "", "--hash --abbrev --exclude-existing"),
    "for-each-ref": _git_ro("--shell -s --perl -p --python --tcl --ignore-case --omit-empty --include-root-refs "
                            "--stdin", "--count --sort --format --points-at --exclude",
                            "--color --merged --no-merged --contains --no-contains"),
    "merge-base": _git_ro("-a --all --octopus --independent --is-ancestor --fork-point"),
    "rev-list": _git_ro("--bisect-all --bisect-vars --objects-edge-aggressive --no-object-names --object-names "
                        "--use-bitmap-index --exclude-promisor-objects", "--filter --missing --progress",
                        "--disk-usage", rev=True, numeric=True),
    "name-rev": _git_ro("--tags --all --annotate-stdin --stdin --name-only --no-undefined --always",
                        "--refs --exclude"),
    "version": _git_ro("--build-options"),
    "help": _git_ro("-a -g -i -m -c -u -w --all --guides --config --user-interfaces --developer-interfaces "
                    "--verbose --no-verbose --no-external-commands --no-aliases --info --man --web",
                    effects={"-w": "opens a web browser", "--web": "opens a web browser"}),
    "count-objects": _git_ro("-v --verbose -H --human-readable"),
    "check-ignore": _git_ro("-q --quiet -v --verbose --stdin -z -n --non-matching --no-index"),
    "check-attr": _git_ro("-a --all --cached --stdin -z", "--source"),
    "check-ref-format": _git_ro("--normalize --allow-onelevel --no-allow-onelevel --refspec-pattern --branch"),
    "cherry": _git_ro("-v", "", "--abbrev"),
    "var": _git_ro("-l"),
    "show-branch": _git_ro("-r --remotes -a --all --current --no-color --date-order --topo-order --sparse --list "
                           "--merge-base --independent --no-name --sha1-name --topics -g",
                           "", "--color --more --reflog"),
    "fsck": _git_ro("--unreachable --no-dangling --dangling --root --tags --cache --no-reflogs --full --no-full "
                    "--connectivity-only --strict --verbose -v --progress --no-progress --name-objects "
                    "--references --no-references --lost-found",
                    effects={"--lost-found": "writes the dangling objects into .git/lost-found"}),
    "verify-commit": _git_ro("-v --verbose --raw"),
    "verify-tag": _git_ro("-v --verbose --raw", "--format"),
    "get-tar-commit-id": _git_ro(),
    "archive": _git_ro("-l --list -v --verbose --worktree-attributes -0 -1 -2 -3 -4 -5 -6 -7 -8 -9",
                       "--format --prefix --add-file --add-virtual-file --mtime --remote --exec",
                       writes="-o --output",
                       effects={"--remote": "runs git-upload-archive on another machine", "--exec": _RUNS}),
    "format-patch": _git_ro(
        "--stdout --cover-letter --no-cover-letter --numbered -n -N --no-numbered -k --keep-subject --signoff -s "
        "--no-signature --no-thread --ignore-if-in-upstream --always --no-attach --progress --zero-commit "
        "--encode-email-headers --no-encode-email-headers --force-in-body-from --no-force-in-body-from -q "
        "--quiet --no-binary --no-notes",
        "--start-number --signature --signature-file --suffix --subject-prefix -v --reroll-count --to --cc "
        "--in-reply-to --add-header --base --interdiff --range-diff --creation-factor --filename-max-length "
        "--cover-from-description --description-file -o --output-directory",
        "--rfc --from --thread --attach --inline --notes", diff=True, rev=True, numeric=True, flag_wins="-n"),
    "request-pull": _git_ro("-p"),
    "bugreport": _git_ro("--no-diagnose", "-o --output-directory -s --suffix", "--diagnose"),
}
# git subcommands that start a program reading the terminal, or a server: never read-only.
_GIT_SESSIONS = {"instaweb": "starts a web server (instaweb.httpd) StateWise cannot see",
                 "difftool": "opens the configured diff tool", "mergetool": "opens the configured merge tool",
                 "gui": "opens a graphical tool", "citool": "opens a graphical tool"}

# --- interactive sessions ----------------------------------------------------------------------
# A program that reads its program or commands from the terminal opens a session whose later
# input (typed by the agent through a tool such as Codex's write_stdin) never reaches the hook.
# Such a call is unresolved. Each entry says what gives the program its input without a
# session: an option with inline code or a script (-c, -e, -f), a positional script, or
# standard input that is not the terminal (a pipe, a file, a heredoc).


@dataclass(frozen=True, slots=True)
class _Session:
    """When a program opens an interactive session."""

    what: str  # "an interpreter", "a database shell", "an editor", "a pager", ...
    valued: frozenset[str] = frozenset()  # options that take a separate value (so it is not the script)
    program: frozenset[str] = frozenset()  # options that give the code or commands inline: not interactive
    script: bool = True  # a positional is the program (a script); False: positionals are data (a database)
    script_index: int = 0  # which positional is the program (sqlite3 DB SQL: 1)
    interactive: frozenset[str] = frozenset()  # options that open a session even with a program (python -i)
    quiet: frozenset[str] = frozenset()  # options that only print and exit (--version)
    decides: str = "stdin"  # stdin: a terminal stdin opens it; stdout: a terminal stdout (pagers); always
    code_from_pipe: bool = True  # a pipe on stdin is a program only known at run time (curl ... | python3)
    runs_args: bool = False  # its arguments may be commands it runs (script -c, su -c): scanned as unknown
    program_flags: frozenset[str] = frozenset()  # program options that take no value (node --test, psql -l)
    in_place: frozenset[str] = frozenset()  # options that make it edit its file arguments (perl -i, ruby -i)
    runs: frozenset[str] = frozenset()  # options that run a command (man -P PAGER): unresolved


def _session(what: str, valued: str = "", program: str = "", **kwargs: Any) -> _Session:
    sets = {name: frozenset(kwargs.pop(name, "").split())
            for name in ("interactive", "quiet", "program_flags", "in_place", "runs")}
    quiet = sets["quiet"] | {"--version", "--help"}
    return _Session(what, frozenset(valued.split()), frozenset(program.split()) | sets["program_flags"],
                    interactive=sets["interactive"], quiet=quiet, program_flags=sets["program_flags"],
                    in_place=sets["in_place"], runs=sets["runs"], **kwargs)


_INTERPRETER = "an interactive interpreter"
_SESSIONS: dict[str, _Session] = {
    "node": _session(_INTERPRETER, "-r --require --import --loader --experimental-loader -C --conditions "
                     "--input-type --title --env-file", "-e --eval -p --print --run", interactive="-i --interactive",
                     quiet="--v8-options -v", program_flags="--test"),
    "nodejs": _session(_INTERPRETER, "-r --require", "-e --eval -p --print", interactive="-i --interactive"),
    "deno": _session(_INTERPRETER, script=False, program="run eval test task fmt lint check compile install "
                     "info doc bench serve", decides="subcommand"),
    "ruby": _session(_INTERPRETER, "-I -r -C -E", "-e", in_place="-i"),
    "irb": _session(_INTERPRETER, decides="always"),
    "perl": _session(_INTERPRETER, "", "-e -E", in_place="-i"),
    "php": _session(_INTERPRETER, "-c -d -z -t", "-r -R -B -E -F -f -S", interactive="-a",
                    program_flags="-l -s -w -i -m"),
    "lua": _session(_INTERPRETER, "-l", "-e", interactive="-i"),
    "luajit": _session(_INTERPRETER, "-l -j -O", "-e -b", interactive="-i"),
    "r": _session(_INTERPRETER, "", "-e -f --file", interactive="--interactive"),
    "julia": _session(_INTERPRETER, "-J -L -p -t --project --threads", "-e --eval -E --print", interactive="-i"),
    "ghci": _session(_INTERPRETER, decides="always"),
    "ipython": _session(_INTERPRETER, "--profile", "-c -m", interactive="-i"),
    "ipython3": _session(_INTERPRETER, "--profile", "-c -m", interactive="-i"),
    "bpython": _session(_INTERPRETER, decides="always"),
    "jshell": _session(_INTERPRETER, "--class-path --module-path", "", script=True),
    "scala": _session(_INTERPRETER, "-cp -classpath", "-e"),
    "erl": _session(_INTERPRETER, "-pa -pz -name -sname -setcookie", "-eval -s -run",
                    program_flags="-noshell -detached"),
    "iex": _session(_INTERPRETER, "--sname --name --cookie -r -pa", "-e --eval -S"),
    "tclsh": _session(_INTERPRETER),
    "guile": _session(_INTERPRETER, "-L -x", "-c -s"),
    "racket": _session(_INTERPRETER, "-l -t -r -u -S", "-e -f"),
    "sqlite3": _session("a database shell", "-cmd -init -separator -newline -nullvalue", "", script=True,
                        script_index=1, code_from_pipe=False),
    "psql": _session("a database shell", "-h -p -U -d -v -P -F -R -T -L -o --host --port --username --dbname "
                     "--variable --set --pset --field-separator --record-separator --table-attr --log-file --output",
                     "-c -f --command --file", script=False, code_from_pipe=False, program_flags="-l --list"),
    "mysql": _session("a database shell", "-h -P -u -D -S --host --port --user --database --socket "
                      "--default-character-set", "-e --execute", script=False, code_from_pipe=False),
    "mariadb": _session("a database shell", "-h -P -u -D -S --host --port --user --database --socket",
                        "-e --execute", script=False, code_from_pipe=False),
    "redis-cli": _session("a database shell", "-h -p -a -n -u -s --user --pass -r -i", "--eval", script=True,
                          code_from_pipe=False),
    "mongosh": _session("a database shell", "--host --port -u -p --username --password --authenticationDatabase",
                        "--eval -f --file", script=True, code_from_pipe=False),
    "mongo": _session("a database shell", "--host --port -u -p --username --password", "--eval", script=True,
                      code_from_pipe=False),
    **{name: _session("an editor", "-c --cmd -u -U -i -T -w -W -S --servername --remote", script=False,
                      decides="always", program_flags="-es -Es")
       for name in ("vi", "vim", "nvim", "view", "vimdiff", "gvim", "ex", "rvim")},
    **{name: _session("an editor", script=False, decides="always")
       for name in ("nano", "pico", "micro", "joe", "jed", "kak", "hx", "helix", "mcedit", "ne", "emacsclient")},
    "emacs": _session("an editor", "-l --load -f --funcall --eval -L --directory", "--script", script=False,
                      decides="always", program_flags="--batch -batch"),
    "ed": _session("an editor (ed reads its commands from standard input)", "-p", script=False),
    **{name: _session("a pager", "-p -P -x -y -z -b -h -j -k -o -O -t -T", script=False, decides="stdout",
                      code_from_pipe=False)
       for name in ("less", "more", "most", "pg", "zless", "zmore", "lessfile")},
    "man": _session("a pager (its page is shown in $PAGER)", "-P -M -S -s -C -L -p -e -m -H", script=False,
                    decides="stdout", program_flags="-f -k -w --where --path -c --catman --help -h",
                    code_from_pipe=False, runs="-P --pager -H --html"),
    "info": _session("a pager", "-d -f -n -o --directory --file --node --output", script=False, decides="stdout",
                     program_flags="--apropos -k -w --where --help -h", code_from_pipe=False),
    "script": _session("a terminal session recorded by script", "-E --echo -O --log-out -I --log-in "
                       "-B --log-io -T --log-timing -m --logging-format -t --timing", "-c --command", script=False,
                       decides="always", runs_args=True, quiet="-V"),
    **{name: _session("a terminal multiplexer", script=False, decides="always",
                      quiet="ls list-sessions has-session has -V")
       for name in ("tmux", "screen", "byobu", "zellij")},
    **{name: _session("a remote session", "-P -p -i -o -F -J -l -b -c", script=False, decides="always")
       for name in ("sftp", "telnet", "ftp", "mosh", "lftp")},
    **{name: _session("a debugger", "-x -ex -ix -iex -p -cd -d -s -c --core --pid --command --eval-command",
                      "-ex --eval-command -x --command", script=False, decides="always",
                      program_flags="-batch --batch")
       for name in ("gdb", "lldb", "pdb")},
    "su": _session("a shell as another user", "-s --shell -g --group -G --supp-group -w",
                   "-c --command", script=False, runs_args=True),
}
# Programs that open $EDITOR on the terminal: program -> the word that does it ("" = always).
_EDITOR_LAUNCHERS: dict[str, str] = {"crontab": "-e", "visudo": "", "vipw": "", "vigr": "", "sudoedit": "",
                                     "edquota": "", "systemctl": "edit", "kubectl": "edit", "oc": "edit"}
# Words that make docker/podman/kubectl attach the terminal to a container's program.
_CONTAINER_TTY = frozenset({"-i", "-it", "-ti", "--interactive", "-t", "--tty", "-itd", "-dit"})
_CONTAINER_TOOLS = frozenset({"docker", "podman", "kubectl", "nerdctl", "oc"})

# --- files written by programs StateWise otherwise leaves unguarded ----------------------------
# Options whose value is a file the program writes: each becomes an fs.write (so protected paths
# hold), and the program stays unguarded otherwise.
_OUTPUT_OPTIONS: dict[str, tuple[str, ...]] = {
    **{name: ("-o",) for name in ("gcc", "g++", "cc", "c++", "clang", "clang++", "ld", "as", "rustc", "javac")},
    "iconv": ("-o", "--output"),
    "pandoc": ("-o", "--output"),
    "base64": ("-o", "--output"),
    "tsc": ("--outFile", "--outfile"),
    "esbuild": ("--outfile",),
    "wget": ("-O", "--output-document", "-o", "--output-file", "-a", "--append-output"),
    "curl": ("-o", "--output", "-D", "--dump-header", "-c", "--cookie-jar", "--trace", "--trace-ascii", "--stderr",
             "--libcurl", "--etag-save", "--hsts", "--alt-svc"),
}

# Compressors: program -> (suffix, decompresses by default, keeps the input by default).
_COMPRESSORS: dict[str, tuple[str, bool, bool]] = {
    "gzip": (".gz", False, False), "gunzip": (".gz", True, False), "pigz": (".gz", False, False),
    "unpigz": (".gz", True, False), "bzip2": (".bz2", False, False), "bunzip2": (".bz2", True, False),
    "xz": (".xz", False, False), "unxz": (".xz", True, False), "lzma": (".lzma", False, False),
    "unlzma": (".lzma", True, False), "zstd": (".zst", False, True), "unzstd": (".zst", True, True),
    "lz4": (".lz4", False, True), "compress": (".Z", False, False), "uncompress": (".Z", True, False),
}
_CURL = _Spec.of(
    flags="-f -s -S -L -k -v -i -I -G -N -O -J -Z -# -4 -6 -0 -l -n -j -q -R -g -a -B -p -M -V -h --fail "
          "--fail-with-body --fail-early --silent --show-error --location --location-trusted --insecure --verbose "
          "--include --head --get --no-buffer --remote-name --remote-name-all --remote-header-name --parallel "
          "--parallel-immediate --progress-bar --no-progress-meter --ipv4 --ipv6 --http1.0 --http1.1 --http2 "
          "--http2-prior-knowledge --http3 --http3-only --compressed --compressed-ssh --list-only --netrc "
          "--netrc-optional --junk-session-cookies --remote-time --globoff --append --use-ascii --proxytunnel "
          "--manual --version --help --create-dirs --raw --tr-encoding --no-keepalive --no-sessionid --tcp-nodelay "
          "--tcp-fastopen --ssl --ssl-reqd --tlsv1 --tlsv1.0 --tlsv1.1 --tlsv1.2 --tlsv1.3 --sslv2 --sslv3 "
          "--cert-status --false-start --basic --digest --ntlm --negotiate --anyauth --disable --disable-eprt "
          "--disable-epsv --path-as-is --post301 --post302 --post303 --styled-output --no-styled-output "
          "--suppress-connect-headers --xattr --ssl-no-revoke --ssl-allow-beast --doh-insecure --proxy-insecure "
          "--retry-all-errors --retry-connrefused --no-clobber --remove-on-error --clobber --skip-existing "
          "--ca-native --trace-time --trace-ids --show-headers",
    valued="-o -D -c -b -H -X -d -F -T -u -U -A -e -m -w -x -r -E -K -C -Y -y -z -t -P --output --output-dir "
           "--dump-header --cookie-jar --cookie --header --request --data --data-raw --data-binary "
           "--data-urlencode --data-ascii --json --form --form-string --upload-file --user --proxy-user "
           "--user-agent --referer --max-time --connect-timeout --write-out --proxy --range --cert --key --cacert "
           "--capath --config --continue-at --speed-limit --speed-time --time-cond --telnet-option --ftp-port "
           "--retry --retry-delay --retry-max-time --url --resolve --connect-to --noproxy --unix-socket "
           "--abstract-unix-socket --oauth2-bearer --trace --trace-ascii --stderr --libcurl --etag-save "
           "--etag-compare --hsts --alt-svc --limit-rate --max-filesize --max-redirs --interface --dns-servers "
           "--cert-type --key-type --pass --ciphers --tls13-ciphers --pinnedpubkey --request-target --aws-sigv4 "
           "--proxy-header --preproxy --socks4 --socks4a --socks5 --socks5-hostname --local-port --keepalive-time "
           "--expect100-timeout --happy-eyeballs-timeout-ms --parallel-max --rate --variable --expand-url "
           "--expand-data --expand-header --url-query --mail-from --mail-rcpt --crlfile --engine --random-file "
           "--egd-file --sasl-authzid --login-options --service-name --krb --delegation --ftp-method "
           "--ftp-account --ftp-alternative-to-user --ftp-ssl-ccc-mode --doh-url --proto --proto-redir "
           "--proto-default --ip-tos --vlan-priority --mptcp --ech",
    optional="--ssl-auto-client-cert")
_WGET = _Spec.of(
    flags="-q -v -d -c -N -r -m -p -k -K -E -H -L -x -S -b -F --quiet --verbose --no-verbose "
          "--debug --continue --timestamping --recursive --mirror --page-requisites --convert-links --backup-converted "
          "--adjust-extension --span-hosts --relative --no-parent --no-directories --force-directories "
          "--no-host-directories --server-response --background --force-html --spider --no-check-certificate "
          "--no-clobber -nc --no-cache --no-cookies --ignore-length --no-dns-cache --inet4-only --inet6-only -4 -6 "
          "--retry-connrefused --no-proxy --content-disposition --trust-server-names --show-progress --no-config "
          "--https-only --no-hsts --delete-after --unlink --strict-comments --keep-session-cookies "
          "--ignore-case --no-iri --auth-no-challenge --no-http-keep-alive --no-netrc -h --help -V --version",
    valued="-O -o -a -P -t -T -w -l -A -R -D -U -Q -e -B -I -X --output-document --output-file --append-output "
           "--directory-prefix --tries --timeout --wait --level --accept --reject --domains --user-agent --quota "
           "--execute --base --include-directories --exclude-directories --header --user --password "
           "--http-user --http-password --post-data --post-file --body-data --body-file --method --referer "
           "--limit-rate --load-cookies --save-cookies --ca-certificate --certificate --private-key --config "
           "--use-askpass --cut-dirs --input-file --max-redirect --waitretry --read-timeout --connect-timeout "
           "--dns-timeout --bind-address --local-encoding --remote-encoding --restrict-file-names --progress "
           "--secure-protocol --ciphers --hsts-file --accept-regex --reject-regex --regex-type --exclude-domains "
           "--default-page --rejected-log --report-speed --warc-file",
    optional="--random-wait")

# --- environment variables that redirect an install ----------------------------------------------
# variable -> (tool, what it sets). A variable read from a config file StateWise does not read
# (PIP_CONFIG_FILE, NPM_CONFIG_USERCONFIG ...) makes the target unknown: unresolved.
_INSTALL_ENV: dict[str, tuple[str, str]] = {
    "PIP_PYTHON": ("pip", "python"),
    "PIP_TARGET": ("pip", "target"),
    "PIP_PREFIX": ("pip", "target"),
    "PIP_ROOT": ("pip", "target"),
    "PIP_USER": ("pip", "user"),
    "PIP_CONFIG_FILE": ("pip", "config"),
    "UV_PYTHON": ("uv", "python"),
    "UV_SYSTEM_PYTHON": ("uv", "system"),
    "UV_TARGET": ("uv", "target"),
    "UV_PREFIX": ("uv", "target"),
    "UV_CONFIG_FILE": ("uv", "config"),
    "VIRTUAL_ENV": ("uv", "venv"),
    "NPM_CONFIG_PREFIX": ("npm", "prefix"),
    "NPM_CONFIG_GLOBAL": ("npm", "global"),
    "NPM_CONFIG_LOCATION": ("npm", "location"),
    "NPM_CONFIG_USERCONFIG": ("npm", "config"),
    "NPM_CONFIG_GLOBALCONFIG": ("npm", "config"),
    "PNPM_HOME": ("pnpm", "prefix"),
    "YARN_GLOBAL_FOLDER": ("yarn", "prefix"),
    "BUN_INSTALL": ("bun", "prefix"),
}
_TRUE_WORDS = frozenset({"1", "true", "yes", "on"})
# Where an install fetches packages from: the tool -> (option names, environment variable) of
# each setting. The index slots of an install are read from these, never from anything else,
# so the slot is what the command really uses (issue 10 item 5).
_INDEX_SETTINGS: dict[str, dict[str, tuple[tuple[str, ...], tuple[str, ...]]]] = {
    "pip": {"index": (("-i", "--index-url"), ("PIP_INDEX_URL",)),
            "extra_index": (("--extra-index-url",), ("PIP_EXTRA_INDEX_URL",)),
            "find_links": (("-f", "--find-links"), ("PIP_FIND_LINKS",))},
    "uv": {"index": (("-i", "--index-url", "--default-index"), ("UV_DEFAULT_INDEX", "UV_INDEX_URL")),
           "extra_index": (("--extra-index-url", "--index"), ("UV_INDEX", "UV_EXTRA_INDEX_URL")),
           "find_links": (("-f", "--find-links"), ("UV_FIND_LINKS",))},
}
_INDEX_ENV = frozenset(name for tool in _INDEX_SETTINGS.values() for _, names in tool.values() for name in names) | {
    "PIP_NO_INDEX", "UV_NO_INDEX"}
#: The pip.conf setting of each index slot.
_INDEX_CONFIG_NAMES = {"index": "index-url", "extra_index": "extra-index-url", "find_links": "find-links"}
#: The index pip and uv use when nothing names another.
DEFAULT_INDEX = "https://pypi.org/simple"


def _index_url(value: str) -> str:
    """An index URL as compared: credentials dropped (never stored), no trailing slash."""
    text = value.strip()
    scheme, sep, rest = text.partition("://")
    if sep:
        host, slash, path = rest.partition("/")
        text = f"{scheme}://{host.rpartition('@')[2]}{slash}{path}"
    return text.rstrip("/") or text

# --- git settings that decide where a bare `git push` goes --------------------------------------
# Written by an earlier part of the same call (`git config remote.origin.push +feature:main`),
# these are simulated; any other setting that can redirect or run something makes later pushes
# in that repository unresolved.
_PUSH_CONFIG = re.compile(r"^(remote\..+\.(push|mirror)|push\.default|branch\..+\.(merge|remote|pushremote)|"
                          r"remote\.pushdefault)$", re.IGNORECASE)
# Sections whose removal or renaming (or a remote's URL) changes where pushes go: not simulated.
_PUSH_SECTIONS = re.compile(r"^(remote|branch|push|url)(\.|$)", re.IGNORECASE)


def _canonical(name: str) -> str:
    if _PYTHON_NAME.match(name):
        return "python"
    if _PIP_NAME.match(name):
        return "pip"
    if name == "py.test":
        return "pytest"
    return name


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


class _Analyzer:
    def __init__(self, command: str, workspace: Path, env: Mapping[str, str],
                 rules: CommandRules | None = None) -> None:
        self.command = command
        self.rules = rules or CommandRules()  # the contract's commands: section
        self.workspace = workspace
        self.base_env = dict(env)
        self.actions: list[Action] = []
        self.unresolved: list[tuple[str, str]] = []
        self.unguarded: list[str] = []
        self.heads: dict[str, str] = {}
        self.git_cache: dict[tuple[Any, ...], str | None] = {}
        # git settings that earlier parts of the call set (repository -> setting -> values), and
        # repositories whose push settings an earlier part changed in a way that is not simulated.
        self.config_overlay: dict[str, dict[str, list[str]]] = {}
        self.config_unknown: dict[str, str] = {}
        self.links: dict[str, str | None] = {}  # resolved path -> the path as written, when symlinks differ

    # -- results --

    def emit(self, operation: str, tool: str, args: Mapping[str, Any], *, target: str | None = None,
             reason: str = "") -> None:
        clean = {k: v for k, v in args.items() if v is not None}
        self.actions.append(Action(tool=tool, operation=operation, target=target, args=clean,
                                   risk=_RISK.get(operation, "high"), reason=reason))  # type: ignore[arg-type]

    def fail(self, reason: str, part: str) -> None:
        if (reason, part) not in self.unresolved:
            self.unresolved.append((reason, part))

    def unguard(self, part: str) -> None:
        if part not in self.unguarded:
            self.unguarded.append(part)

    def parsed_ok(self, call: _Call, parsed: _Parsed, what: str) -> bool:
        """False (with the reason recorded) if the options were not understood or an option's
        value is only known at run time."""
        if parsed.error:
            self.fail(f"{what}: {parsed.error}", call.part)
            return False
        if parsed.dynamic:
            self.fail(f"{what}: the value of {', '.join(parsed.dynamic)} is only known at run time", call.part)
            return False
        return True

    def probe(self, call: _Call) -> _Analyzer:
        """Classify ``call`` on the side, without recording it here."""
        other = _Analyzer(self.command, self.workspace, self.base_env, self.rules)
        other.heads = self.heads
        other.git_cache = self.git_cache
        other.config_overlay = self.config_overlay
        other.config_unknown = self.config_unknown
        other.dispatch(call)
        return other

    # -- parsing and walking --

    def analyze_text(self, text: str, ctx: _Ctx, part: str) -> None:
        if ctx.depth > MAX_DEPTH:
            self.fail(f"shell bodies nested deeper than {MAX_DEPTH} levels", part)
            return
        source = text.encode("utf-8", "surrogateescape")
        tree = _parser().parse(source)
        if tree.root_node.has_error:
            broken = _first_broken(tree.root_node)
            where = _node_text(broken, source).strip() if broken is not None else ""
            what = f"is missing `{broken.type}`" if broken is not None and broken.is_missing else \
                f"cannot parse `{where[:200]}`" if where else "cannot parse the command"
            self.fail(f"the shell grammar {what}", part if ctx.depth else text)
        self.walk(tree.root_node, source, ctx)

    def walk(self, node: Any, source: bytes, ctx: _Ctx) -> None:
        kind = node.type
        if node.is_error or node.is_missing or kind == "ERROR":
            return  # reported once, before the walk (analyze_text)
        if kind == "command":
            self.simple_command(node, source, ctx)
        elif kind == "redirected_statement":
            body = node.child_by_field_name("body")
            streams = (ctx.stdin, ctx.stdout)
            for child in node.children:
                if child.type in _REDIRECTS:
                    self.redirect(child, source, ctx)
                    _redirect_streams(child, source, ctx)
                elif body is not None and child.id == body.id:
                    continue
                elif child.is_named:
                    self.walk(child, source, ctx)
            if body is not None:
                self.walk(body, source, ctx)
            ctx.stdin, ctx.stdout = streams
        elif kind in ("variable_assignment", "variable_assignments", "declaration_command"):
            self.assignments(node, source, ctx)
        elif kind in ("subshell", "function_definition"):
            inner = ctx.copy()
            for child in node.named_children:
                self.walk(child, source, inner)
        elif kind == "pipeline":
            stages = [c for c in node.named_children if c.type not in _REDIRECTS]
            for child in node.named_children:
                inner = ctx.copy()
                if child.type not in _REDIRECTS:
                    index = next(i for i, stage in enumerate(stages) if stage.id == child.id)
                    inner.stdin = "pipe" if index > 0 else ctx.stdin
                    inner.stdout = "pipe" if index < len(stages) - 1 else ctx.stdout
                self.walk(child, source, inner)
        elif kind in _STATEMENTS:
            for child in node.named_children:
                self.walk(child, source, ctx)
        elif kind in _REDIRECTS:
            self.redirect(node, source, ctx)
        elif kind in ("comment", "heredoc_start", "heredoc_end", "variable_name", "word"):
            return
        elif kind in ("command_substitution", "process_substitution"):
            inner = ctx.copy()
            for child in node.named_children:
                self.walk(child, source, inner)
        else:
            self.scan(node, source, ctx)

    def scan(self, node: Any, source: bytes, ctx: _Ctx) -> None:
        """Find what runs inside a word, an expression or a heredoc: substitutions."""
        if node.is_error or node.is_missing or node.type == "ERROR":
            self.walk(node, source, ctx)
            return
        if node.type in ("command_substitution", "process_substitution"):
            self.walk(node, source, ctx)
            return
        if node.type in _STATEMENTS:
            self.walk(node, source, ctx)
            return
        for child in node.children:
            self.scan(child, source, ctx)

    def assignments(self, node: Any, source: bytes, ctx: _Ctx) -> None:
        part = _node_text(node, source)
        self.scan_children(node, source, ctx)
        for assignment in _iter_type(node, "variable_assignment"):
            name_node = assignment.child_by_field_name("name")
            value_node = assignment.child_by_field_name("value")
            name = _node_text(name_node, source) if name_node is not None else ""
            value = _evaluate(value_node, source, ctx.env).value if value_node is not None else ""
            self.set_env(ctx.env, name, value, part, ctx)

    def scan_children(self, node: Any, source: bytes, ctx: _Ctx) -> None:
        for child in node.children:
            self.scan(child, source, ctx)

    def set_env(self, env: dict[str, str], name: str, value: str | None, part: str, ctx: _Ctx) -> None:
        if _DANGEROUS_ENV.match(name):
            self.fail(f"setting {name} makes later commands run code StateWise cannot see", part)
        if value is None:
            env.pop(name, None)
            if name in ("PATH", "HOME", "GIT_DIR", "GIT_WORK_TREE", "VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT") or \
                    name in _INDEX_ENV or name in self.rules.env_vars:
                env[name] = DYNAMIC  # known to be set, to a value only known at run time
            return
        env[name] = value

    def redirect(self, node: Any, source: bytes, ctx: _Ctx) -> None:
        part = _node_text(node, source)
        if node.type == "heredoc_redirect":
            # The grammar nests what follows the heredoc's start on its line (`| sh`, `&& rm x`,
            # `> file`) inside the redirect: walk all of it.
            for child in node.children:
                if child.type in _REDIRECTS:
                    self.redirect(child, source, ctx)
                elif child.type == "heredoc_body":
                    self.scan(child, source, ctx)
                elif child.type in ("heredoc_start", "heredoc_end", "heredoc_content"):
                    continue
                elif child.is_named or child.is_error or child.is_missing:
                    self.walk(child, source, ctx)
            return
        if node.type == "herestring_redirect":
            self.scan_children(node, source, ctx)
            return
        operator = next((c.type for c in node.children if not c.is_named), "")
        destination = node.child_by_field_name("destination")
        if destination is None:
            named = [c for c in node.named_children if c.type != "file_descriptor"]
            destination = named[-1] if named else None
        if destination is None:
            return
        self.scan(destination, source, ctx)
        word = _evaluate(destination, source, ctx.env)
        writes = operator in (">", ">>", "&>", "&>>", ">|", "<>")
        if operator in (">&", "&>") and word.value is not None and (word.value.isdigit() or word.value == "-"):
            writes = False
        elif operator == ">&":
            writes = True
        if not writes:
            return
        if word.value is not None and _DEV_FILES.match(word.value):
            return
        self.write_paths(_Call([_Word.literal("redirect"), word], ctx.env, ctx, part), [word], via="redirect")

    # -- simple commands --

    def simple_command(self, node: Any, source: bytes, ctx: _Ctx) -> None:
        part = _node_text(node, source)
        children = list(node.children)
        for before, after in itertools.pairwise(children):
            gap = source[before.end_byte:after.start_byte].decode("utf-8", "replace").replace("\\\n", "")
            if not _SEPARATOR_GAP.match(gap):
                self.fail(f"the shell grammar and bash may split `{part.strip()}` differently", part)
                return
        env = dict(ctx.env)
        words: list[_Word] = []
        streams = (ctx.stdin, ctx.stdout)
        for child in children:
            if child.type in _REDIRECTS:
                _redirect_streams(child, source, ctx)
        call_ctx_streams = (ctx.stdin, ctx.stdout)
        ctx.stdin, ctx.stdout = streams
        for index, child in enumerate(children):
            field_name = node.field_name_for_child(index)
            if child.type == "variable_assignment":
                self.scan(child, source, ctx)
                name_node = child.child_by_field_name("name")
                value_node = child.child_by_field_name("value")
                value = _evaluate(value_node, source, ctx.env).value if value_node is not None else ""
                self.set_env(env, _node_text(name_node, source) if name_node is not None else "", value, part, ctx)
            elif child.type in _REDIRECTS:
                self.redirect(child, source, ctx)
            elif field_name == "name":
                self.scan(child, source, ctx)
                inner = child.named_children[0] if child.named_children else child
                words.append(_evaluate(inner, source, ctx.env))
            elif field_name == "argument" or (child.is_named and child.type != "comment"):
                self.scan(child, source, ctx)
                words.append(_evaluate(child, source, ctx.env))
        if not words:
            ctx.env.update(env)
            return
        ctx.stdin, ctx.stdout = call_ctx_streams
        try:
            self.dispatch(_Call(words, env, ctx, part))
        finally:
            ctx.stdin, ctx.stdout = streams

    def dispatch(self, call: _Call) -> None:
        if not call.words:
            return
        head = call.words[0]
        if head.value is None:
            self.fail(f"the command name `{head.text}` is not a static word ({head.why})", call.part)
            return
        name = head.value
        if call.kept and (call.kept[0].value or "").rsplit("/", 1)[-1] in _NODE_RUNNERS and "@" in name[1:]:
            name = _split_node_package(name)[0]  # npx prisma@5 migrate runs prisma
            call = _Call(call.words, call.env, call.ctx, call.part, call.kept, program=name)
        base = name.rsplit("/", 1)[-1]
        if not base:
            self.unguard(call.part)
            return
        # macOS file systems are case-insensitive: `RM -rf x` runs rm there.
        key = _canonical(base.lower())
        handler = _HANDLERS.get(key)
        if handler is not None:
            handler(self, call)
        elif key in _EDITOR_LAUNCHERS and (not _EDITOR_LAUNCHERS[key] or _EDITOR_LAUNCHERS[key] in (
                w.value for w in call.args)):
            self.interactive(call, "an editor ($EDITOR)")
        elif key in _SHELLS:
            self.shell(call)
        elif key in _READ_ONLY_ARGS:
            self.read_only_program(call, key)
        elif key in _READ_ONLY:
            self.read_only_builtin(call, key)
        elif key in _SESSIONS:
            self.session(call, key)
        elif key in _OUTPUT_OPTIONS:
            self.output_options(call)
            self.unknown(call)
        elif key in _CONTAINER_TOOLS:
            self.container(call)
        else:
            self.unknown(call)

    def read_only_builtin(self, call: _Call, key: str) -> None:
        if key in ("cd", "pushd"):
            args = [w for w in call.args if w.value not in ("-P", "-L", "-e", "-@", "--")]
            if not args:
                home = call.env.get("HOME")
                call.ctx.cwd = Path(home) if home and "\0" not in home else None
            elif args[0].value is None or args[0].value == "-":
                call.ctx.cwd = None
            else:
                call.ctx.cwd = self.resolve_dir(call.ctx, args[0].value)
        elif key == "popd":
            call.ctx.cwd = None
        elif key in ("export", "declare", "typeset", "local", "readonly"):
            for word in call.args:
                if word.value is not None and "=" in word.value and not word.value.startswith("-"):
                    name, _, value = word.value.partition("=")
                    self.set_env(call.ctx.env, name, value, call.part, call.ctx)
                elif word.value is None:
                    text_name = word.text.split("=", 1)[0]
                    if _ENV_NAME.match(text_name):
                        self.set_env(call.ctx.env, text_name, None, call.part, call.ctx)
        elif key == "unset":
            for word in call.args:
                if word.value == "PATH":
                    call.ctx.path_known = False
        elif key == "hash" and any((w.value or "-p").startswith("-p") for w in call.args):
            self.fail("`hash -p` makes a command name run another program", call.part)

    def unknown(self, call: _Call) -> None:
        if self.rules and self.declared(call):
            return
        key = _canonical(call.name.rsplit("/", 1)[-1].lower())
        if key not in _KNOWN_UNGUARDED:
            for word in call.args:
                value = word.value
                if value is None:
                    continue
                first = value.strip().split(None, 1)[0] if value.strip() else ""
                for candidate in (value, first):
                    name = candidate.rsplit("/", 1)[-1]
                    if name in _WRAPPED_DANGER or _PIP_NAME.match(name):
                        self.fail(f"`{call.name}` is not a program StateWise knows, and it may run `{value}`",
                                  call.part)
                        return
        self.unguard(call.part)

    def declared(self, call: _Call) -> bool:
        """True if the contract's ``commands:`` rules declare this program: the command is then
        emitted as the rule's operation, or unresolved when the rule cannot read it."""
        found = self.rules.classify(call.name, [w.value for w in call.args], call.env, call.ctx.cwd)
        if found is None:
            return False
        if isinstance(found, CommandProblem):
            self.fail(found.reason, call.part)
            return True
        args = dict(found.args)
        args.setdefault("command", call.text())
        self.actions.append(Action(tool=found.tool, operation=found.operation, args=args,
                                   risk=found.risk,  # type: ignore[arg-type]
                                   reason=f"the contract's command rule {found.rule}"))
        return True

    # -- read-only, proven --

    def read_only_program(self, call: _Call, key: str) -> None:
        """A read-only program: read-only only if every option is one it is known to accept."""
        ro = _READ_ONLY_ARGS[key]
        before = len(self.actions)
        if not self.prove_read_only(call, call.args, ro, call.name.rsplit("/", 1)[-1]):
            return
        if ro.in_place and len(self.actions) == before:
            parsed = _parse(self.counts_removed(call.args, ro), ro.spec)
            if any(parsed.has(name) for name in ro.in_place):
                files = parsed.positionals[1:] if len(parsed.positionals) > 1 else parsed.positionals
                self.write_paths(call, files, via=f"{call.name} -i")

    @staticmethod
    def counts_removed(words: Sequence[_Word], ro: _ReadOnly) -> list[_Word]:
        if not ro.numeric:
            return list(words)
        return [w for w in words if not (w.value and re.fullmatch(r"[-+]\d+", w.value))]

    def may_be_option(self, word: _Word, ro: _ReadOnly) -> bool:
        """Whether a word only known at run time could turn out to be an option with effects."""
        text = word.text.lstrip("\"'")
        if text.startswith("-"):
            prefix = re.split(r"[$`]", text, maxsplit=1)[0]
            name, equals, _ = prefix.partition("=")
            harmless = name in ro.spec.valued | ro.spec.optional and name not in ro.effects and name not in ro.writes
            return not (equals and harmless)
        return text[:1] in ("$", "`", "")

    def prove_read_only(self, call: _Call, words: Sequence[_Word], ro: _ReadOnly, what: str) -> bool:
        """True when the arguments have no effect; otherwise the effects are recorded (writes as
        fs.write, anything else unresolved) and False is returned."""
        words = self.counts_removed(words, ro)
        if ro.effectful:
            for word in words:
                if word.value == "--":
                    break  # what follows is never an option
                if word.value is None and self.may_be_option(word, ro):
                    self.fail(f"{what}: `{word.text}` is only known at run time and may be an option with effects "
                              f"({word.why})", call.part)
                    return False
        parsed = _parse(words, ro.spec)
        if parsed.error:
            self.fail(f"{what}: {parsed.error}; an option StateWise does not know may have effects", call.part)
            return False
        for name, _ in parsed.options:
            if name in ro.effects:
                self.fail(f"`{what} {name}` {ro.effects[name]}", call.part)
                return False
        proven = True
        for name in sorted(ro.writes):
            for value in parsed.values(name):
                if value is None:
                    self.fail(f"the file `{what} {name}` writes is only known at run time", call.part)
                    return False
                if value != "-" and not _DEV_FILES.match(value):
                    self.write_paths(call, [_Word.literal(value)], via=f"{what} {name}")
                    proven = False
        positionals = parsed.positionals
        if ro.output_positional is not None and len(positionals) > ro.output_positional:
            output = positionals[ro.output_positional]
            if output.value != "-" and not (output.value and _DEV_FILES.match(output.value)):
                self.write_paths(call, [output], via=what)
                proven = False
        if ro.max_positionals is not None and len(positionals) > ro.max_positionals or ro.positional and any(
                w.value is None or not re.search(ro.positional, w.value) for w in positionals):
            self.fail(f"`{what}` with these arguments changes something (only some of its forms are read-only)",
                      call.part)
            return False
        return proven

    def git_read_only(self, call: _Call, repo: _Repo, sub: str, words: list[_Word]) -> None:
        ro = _GIT_READ_ONLY_ARGS[sub]
        if not self.prove_read_only(call, words, ro, f"git {sub}"):
            return
        if sub in ("format-patch", "bugreport"):
            parsed = _parse(self.counts_removed(words, ro), ro.spec)
            if parsed.has("--stdout"):
                return
            directory = parsed.value("-o", "--output-directory")
            if parsed.dynamic:
                self.fail(f"the directory `git {sub}` writes into is only known at run time", call.part)
                return
            self.write_paths(call, [_Word.literal(directory or ".")], via=f"git {sub}",
                             extra={"into_directory": True})

    def interactive(self, call: _Call, what: str) -> None:
        self.fail(f"`{call.name}` opens {what}; the hook cannot see the session's later input", call.part)

    def session(self, call: _Call, key: str) -> None:
        """Programs that open an interactive session unless given their program another way."""
        s = _SESSIONS[key]
        values = [w.value for w in call.args]
        if any(v in s.quiet for v in values if v is not None) and not any(
                v in s.interactive for v in values if v is not None):
            return  # prints its version or help
        given = interactive = editing = False
        positionals: list[_Word] = []
        i = 0
        while i < len(call.args):
            word = call.args[i]
            value = word.value
            if value is None or not value.startswith("-") or value == "-":
                positionals.append(word)
                i += 1
                if s.script and not given and value != "-" and len(positionals) > s.script_index:
                    break  # the script's own arguments follow
                continue
            if value == "--":
                positionals.extend(call.args[i + 1:])
                break
            name = value.partition("=")[0]
            if name in s.runs or (not value.startswith("--") and any("-" + c in s.runs for c in value[1:2])):
                self.fail(f"`{call.name} {name}` runs a command", call.part)
                return
            takes_value = s.valued | (s.program - s.program_flags)
            if value.startswith("--") or name in s.program | s.valued | s.interactive | s.in_place:
                given = given or name in s.program
                interactive = interactive or name in s.interactive
                editing = editing or name in s.in_place
                if name in takes_value and "=" not in value:
                    i += 1
            else:  # a cluster of short options: -qc, -pie, -i.bak
                for index, char in enumerate(value[1:]):
                    option = "-" + char
                    given = given or option in s.program
                    interactive = interactive or option in s.interactive
                    editing = editing or option in s.in_place
                    if option in s.in_place:
                        break  # -i.bak: the rest is the backup suffix
                    if option in takes_value:
                        if index == len(value) - 2:
                            i += 1
                        break
            i += 1
        if s.decides == "subcommand":
            first = positionals[0].value if positionals else None
            if first is None and positionals:
                self.fail(f"the {call.name} subcommand is only known at run time", call.part)
            elif first in s.program:
                self.unknown(call)
            else:
                self.interactive(call, s.what)
            return
        if s.script and len(positionals) > s.script_index and positionals[s.script_index].value != "-":
            if positionals[s.script_index].value is None and not given:
                self.fail(f"`{call.name}` runs a program only known at run time ({positionals[s.script_index].text})",
                          call.part)
                return
            if editing and not given:
                positionals = positionals[s.script_index + 1:]  # the script, then the files it edits
            given = True
        if interactive or not given and (
                s.decides == "always" or s.decides == "stdin" and call.ctx.stdin == "tty"
                or s.decides == "stdout" and call.ctx.stdout == "tty"):
            self.interactive(call, s.what)
            return
        if not given and s.decides == "stdin" and call.ctx.stdin in ("pipe", "dynamic") and s.code_from_pipe:
            self.fail(f"`{call.name}` runs a program it reads from its standard input, only known at run time",
                      call.part)
            return
        if editing:
            self.write_paths(call, positionals, via=f"{call.name} -i")
        if s.what.startswith("an editor"):
            # ed <<EOF, vim -es, emacs --batch: editor commands, which may write the files named
            self.write_paths(call, [w for w in positionals if w.value != "-"], via=call.name)
        if s.runs_args:
            self.unknown(call)
        else:
            self.unguard(call.part)

    def ssh(self, call: _Call) -> None:
        spec = _Spec.of(flags="-4 -6 -A -a -C -f -G -g -K -k -M -N -n -q -s -T -t -V -v -X -x -Y -y",
                        valued="-B -b -c -D -E -e -F -I -i -J -L -l -m -O -o -p -Q -R -S -W -w",
                        stop_at_positional=True)
        parsed = _parse(call.args, spec)
        if not self.parsed_ok(call, parsed, "ssh"):
            return
        for value in parsed.values("-o"):
            option = re.split(r"[=\s]", value or "", maxsplit=1)[0].lower()
            if option in ("proxycommand", "localcommand", "permitlocalcommand", "knownhostscommand", "match",
                          "remotecommand"):
                self.fail(f"`ssh -o {option}` runs a command", call.part)
                return
        if parsed.has("-V", "-G", "-Q", "-O"):
            return
        rest = call.args[parsed.rest or 0:]
        if not rest:
            return
        command = rest[1:]
        if not command:
            if parsed.has("-N", "-W"):
                self.unguard(call.part)
            elif call.ctx.stdin == "tty":
                self.interactive(call, "a remote shell")
            else:
                self.fail("`ssh` runs the commands on its standard input on another machine", call.part)
            return
        values = [w.value for w in command]
        if any(v is None for v in values):
            self.fail("the command `ssh` runs on another machine is only known at run time", call.part)
            return
        text = " ".join(v for v in values if v is not None)
        remote = _Analyzer(self.command, self.workspace, self.base_env)
        ctx = _Ctx(None, dict(call.env), call.ctx.depth + 1, stdin=call.ctx.stdin, stdout=call.ctx.stdout)
        remote.analyze_text(text, ctx, call.part)
        if remote.actions or remote.unresolved:
            why = f" ({remote.unresolved[0][0]})" if remote.unresolved else ""
            self.fail(f"`ssh` runs `{text[:200]}` on another machine, where StateWise cannot check it{why}",
                      call.part)
            return
        self.unguard(call.part)  # a remote command StateWise does not guard: docs/shell.md

    def container(self, call: _Call) -> None:
        values = [w.value or "" for w in call.args]
        positionals = [v for v in values if not v.startswith("-")]
        sub = positionals[0] if positionals else ""
        second = positionals[1] if len(positionals) > 1 else ""
        attaches = sub in ("run", "exec", "attach", "debug", "start") or sub == "compose" and second in ("exec", "run")
        tty = any(v in _CONTAINER_TTY for v in values) or sub == "attach" or (
            sub == "compose" and second in ("exec", "run") and not {"-T", "--no-TTY", "-d", "--detach"} & set(values))
        if attaches and tty:
            self.interactive(call, "a terminal inside a container")
            return
        self.unknown(call)

    # -- programs that write files --

    def output_options(self, call: _Call) -> None:
        """Unguarded programs whose options name files they write (gcc -o, iconv -o ...)."""
        key = _canonical(call.name.rsplit("/", 1)[-1].lower())
        options = _OUTPUT_OPTIONS.get(key, ())
        words = call.args
        for index, word in enumerate(words):
            value = word.value
            if value is None or value == "--":
                if value == "--":
                    break
                continue
            for option in options:
                target: _Word | None = None
                if value == option and index + 1 < len(words):
                    target = words[index + 1]
                elif option.startswith("--") and value.startswith(option + "="):
                    target = _Word.literal(value[len(option) + 1:])
                elif not option.startswith("--") and value.startswith(option) and len(value) > len(option):
                    target = _Word.literal(value[len(option):])
                if target is None:
                    continue
                if target.value is None:
                    self.fail(f"the file `{call.name} {option}` writes is only known at run time", call.part)
                elif target.value != "-" and not _DEV_FILES.match(target.value):
                    self.write_paths(call, [target], via=f"{call.name} {option}")

    def compressor(self, call: _Call) -> None:
        key = _canonical(call.name.rsplit("/", 1)[-1].lower())
        suffix, decompressing, keeps = _COMPRESSORS[key]
        spec = _Spec.of(flags="-c --stdout --to-stdout -d --decompress --uncompress -z --compress -f --force -k --keep "
                              "-l --list -n --no-name -N --name -q --quiet -r --recursive -t --test -v --verbose "
                              "-1 -2 -3 -4 -5 -6 -7 -8 -9 --fast --best --rsyncable -h --help -V --version -L "
                              "--license -s --small --synchronous -e --extreme --rm -0 --ultra --no-progress -T0",
                        valued="-S --suffix -T --threads -F --format -C --check -o -M --memory -B -b",
                        optional="--long --adapt")
        parsed = _parse(call.args, spec)
        if not self.parsed_ok(call, parsed, call.name):
            return
        if parsed.has("-c", "--stdout", "--to-stdout", "-l", "--list", "-t", "--test", "-h", "--help", "-V",
                      "--version", "-L", "--license"):
            self.unguard(call.part)
            return
        decompressing = decompressing or parsed.has("-d", "--decompress", "--uncompress")
        keeps = (keeps and not parsed.has("--rm")) or parsed.has("-k", "--keep")
        suffix = parsed.value("-S", "--suffix") or suffix
        output = parsed.value("-o")
        recursive = parsed.has("-r", "--recursive")
        files = [w for w in parsed.positionals if w.value != "-"]
        for word in files:
            if word.value is None:
                self.fail(f"a file of `{call.name}` is only known at run time", call.part)
                continue
            if output is not None:
                written = output
            elif recursive:
                written = word.value
            elif decompressing:
                written = word.value[:-len(suffix)] if word.value.endswith(suffix) else word.value
            else:
                written = word.value + suffix
            self.write_paths(call, [_Word.literal(written)], via=call.name,
                             extra={"recursive": True} if recursive else None)
            if not keeps:
                self.delete_paths(call, [word], recursive=recursive, via=call.name)
        if not files:
            self.unguard(call.part)  # standard input to standard output

    def zip(self, call: _Call) -> None:
        flags = set("-r -R -j -D -q -v -u -f -d -m -T -y -X -e -g -F -FF -A -J -k -l -ll -L -o -S -z -0 -1 -2 -3 -4 "
                    "-5 -6 -7 -8 -9 -h -h2 --recurse-paths --junk-paths --quiet --verbose --update --freshen "
                    "--delete --move --test --symlinks --encrypt --grow --fix --help --version".split())
        valued = set("-b -n -t -tt -P -Z -s -sp -O --out --password --temp-path --suffixes -ll".split())
        lists = {"-x", "-i", "--exclude", "--include"}
        archive: _Word | None = None
        files: list[_Word] = []
        options: set[str] = set()
        output: str | None = None
        words = call.args
        i = 0
        in_list = False
        while i < len(words):
            value = words[i].value
            if value is not None and value.startswith("-") and value not in ("-", "-@"):
                in_list = False
                if value == "-TT" or value.startswith("--unzip-command"):
                    self.fail("`zip -TT` runs a command", call.part)
                    return
                if value in lists:
                    in_list = True
                elif value in valued:
                    if value in ("-O", "--out"):
                        output = words[i + 1].value if i + 1 < len(words) else None
                    i += 1
                elif value not in flags:
                    self.fail(f"zip: unknown option {value}; an option StateWise does not know may have effects",
                              call.part)
                    return
                options.add(value)
            elif value == "-@":
                self.fail("`zip -@` reads the names of the files from standard input", call.part)
                return
            elif not in_list:
                if archive is None:
                    archive = words[i]
                else:
                    files.append(words[i])
            i += 1
        if archive is None:
            self.unguard(call.part)
            return
        name = archive.value
        if name is not None and "." not in name.rsplit("/", 1)[-1]:
            archive = _Word.literal(name + ".zip")
        self.write_paths(call, [_Word.literal(output)] if output else [archive], via="zip")
        if options & {"-m", "--move"}:
            self.delete_paths(call, files, recursive=bool(options & {"-r", "-R", "--recurse-paths"}), via="zip -m")

    def split(self, call: _Call) -> None:
        name = call.name.rsplit("/", 1)[-1].lower()
        if name == "csplit":
            spec = _Spec.of(flags="-k -s -q -z --keep-files --quiet --silent --elide-empty-files --suppress-matched "
                                  "--help --version", valued="-f -b -n --prefix --suffix-format --digits")
            parsed = _parse(call.args, spec)
            if not self.parsed_ok(call, parsed, "csplit"):
                return
            digits = parsed.value("-n", "--digits") or "2"
            first = (parsed.value("-f", "--prefix") or "xx") + "0" * (int(digits) if digits.isdigit() else 2)
            self.write_paths(call, [_Word.literal(first)], via="csplit", extra={"first_of_many": True})
            return
        spec = _Spec.of(flags="-e -u --elide-empty-files --unbuffered --verbose --help --version",
                        valued="-a -b -C -l -n -t --suffix-length --bytes --line-bytes --lines --number --separator "
                               "--additional-suffix --filter",
                        optional="-d -x --numeric-suffixes --hex-suffixes")
        parsed = _parse(call.args, spec)
        if not self.parsed_ok(call, parsed, "split"):
            return
        if parsed.has("--filter"):
            self.fail("`split --filter` runs a command", call.part)
            return
        prefix = parsed.positionals[1].value if len(parsed.positionals) > 1 else "x"
        if prefix is None:
            self.fail("the prefix of the files `split` writes is only known at run time", call.part)
            return
        length = parsed.value("-a", "--suffix-length") or "2"
        digit = "0" if parsed.has("-d", "-x", "--numeric-suffixes", "--hex-suffixes") else "a"
        first = prefix + digit * (int(length) if length.isdigit() else 2) + (parsed.value("--additional-suffix") or "")
        self.write_paths(call, [_Word.literal(first)], via="split", extra={"first_of_many": True})

    def curl(self, call: _Call) -> None:
        parsed = _parse(call.args, _CURL)
        if not self.parsed_ok(call, parsed, "curl"):
            return
        if parsed.has("-K", "--config"):
            self.fail("`curl -K` reads its options from a file StateWise does not read", call.part)
            return
        for option in _OUTPUT_OPTIONS["curl"]:
            for value in parsed.values(option):
                if value is None:
                    self.fail(f"the file `curl {option}` writes is only known at run time", call.part)
                elif value != "-" and not _DEV_FILES.match(value):
                    self.write_paths(call, [_Word.literal(value)], via=f"curl {option}")
        directory = parsed.value("--output-dir")
        if parsed.has("-O", "--remote-name", "--remote-name-all", "-J", "--remote-header-name"):
            urls = [w for w in parsed.positionals] + [_Word.literal(v or "") for v in parsed.values("--url")]
            for url in urls:
                if url.value is None:
                    self.fail("a URL `curl -O` saves is only known at run time", call.part)
                    continue
                base = url.value.split("?", 1)[0].split("#", 1)[0].rstrip("/").rsplit("/", 1)[-1] or "index.html"
                if parsed.has("-J", "--remote-header-name"):
                    self.write_paths(call, [_Word.literal(directory or ".")], via="curl -J",
                                     extra={"into_directory": True})
                    break
                self.write_paths(call, [_Word.literal(os.path.join(directory, base) if directory else base)],
                                 via="curl -O")
        self.unguard(call.part)

    def wget(self, call: _Call) -> None:
        aliases = {"-nv": "--no-verbose", "-nc": "--no-clobber", "-np": "--no-parent", "-nd": "--no-directories",
                   "-nH": "--no-host-directories"}
        call = _Call([call.words[0], *(_Word.literal(aliases[w.value]) if w.value in aliases else w
                                       for w in call.args)], call.env, call.ctx, call.part, call.kept, call.program)
        parsed = _parse(call.args, _WGET)
        if not self.parsed_ok(call, parsed, "wget"):
            return
        if parsed.has("-e", "--execute", "--config", "--use-askpass"):
            self.fail("`wget -e/--config/--use-askpass` runs commands or reads options StateWise does not read",
                      call.part)
            return
        if parsed.has("-h", "--help", "-V", "--version"):
            return
        for option in _OUTPUT_OPTIONS["wget"]:
            for value in parsed.values(option):
                if value is None:
                    self.fail(f"the file `wget {option}` writes is only known at run time", call.part)
                elif value != "-" and not _DEV_FILES.match(value):
                    self.write_paths(call, [_Word.literal(value)], via=f"wget {option}")
        directory = parsed.value("-P", "--directory-prefix")
        if parsed.has("--spider") or parsed.has("-O", "--output-document"):
            self.unguard(call.part)
            return
        if parsed.has("-r", "--recursive", "-m", "--mirror", "-p", "--page-requisites", "-i", "--input-file"):
            self.write_paths(call, [_Word.literal(directory or ".")], via="wget", extra={"recursive": True})
        else:
            for url in parsed.positionals:
                if url.value is None:
                    self.fail("a URL `wget` saves is only known at run time", call.part)
                    continue
                base = url.value.split("?", 1)[0].split("#", 1)[0].rstrip("/").rsplit("/", 1)[-1]
                if "/" not in url.value.split("://", 1)[-1].rstrip("/"):
                    base = "index.html"
                self.write_paths(call, [_Word.literal(os.path.join(directory, base) if directory else base)],
                                 via="wget")
        self.unguard(call.part)

    # -- paths --

    def resolve_dir(self, ctx: _Ctx, value: str) -> Path | None:
        if "\0" in value:
            return None
        if not value.startswith("/") and ctx.cwd is None:
            return None
        joined = os.path.join(str(ctx.cwd) if ctx.cwd else "/", value)
        return Path(os.path.realpath(joined))

    def absolute(self, ctx: _Ctx, value: str, *, follow: bool) -> str | None:
        """``value`` made absolute against the context's directory. Symlinks in the parent are
        resolved; the last component only with ``follow`` (writes follow a final symlink,
        deleting one does not, unless written with a trailing slash)."""
        if "\0" in value or (not value.startswith("/") and ctx.cwd is None):
            return None
        joined = os.path.join(str(ctx.cwd) if ctx.cwd else "/", value)
        trailing = value.endswith("/")
        stripped = joined.rstrip("/") or "/"
        last = os.path.basename(stripped)
        if follow or trailing or last in ("", ".", "..") or stripped == "/":
            return os.path.realpath(stripped)
        return os.path.join(os.path.realpath(os.path.dirname(stripped)), last)

    def represent(self, absolute: str) -> tuple[str, bool]:
        root = str(self.workspace)
        if absolute == root:
            return ".", True
        if absolute.startswith(root.rstrip("/") + "/"):
            return os.path.relpath(absolute, root), True
        return absolute, False

    def expand(self, call: _Call, word: _Word, *, follow: bool) -> list[tuple[str, bool]] | None:
        """The paths a word names (globs expanded as bash would), workspace-relative where
        inside the workspace; None (and an unresolved reason) if that cannot be known."""
        if word.value is None:
            self.fail(f"the path `{word.text}` of `{call.name}` is only known at run time ({word.why})", call.part)
            return None
        values = [word.value]
        if word.has_glob:
            pattern = word.glob_pattern
            if not pattern.startswith("/"):
                if call.ctx.cwd is None:
                    self.fail(f"the glob `{word.text}` is relative to a directory that is not known", call.part)
                    return None
                pattern = os.path.join(glob.escape(str(call.ctx.cwd)), pattern)
            matches = sorted(glob.glob(pattern))
            if len(matches) > MAX_GLOB:
                self.fail(f"the glob `{word.text}` matches more than {MAX_GLOB} paths", call.part)
                return None
            if matches:
                values = matches
        found = []
        for value in values:
            if value == "":
                continue
            absolute = self.absolute(call.ctx, value, follow=follow)
            if absolute is None:
                self.fail(f"the path `{word.text}` is relative to a directory that is not known", call.part)
                return None
            found.append(self.represent(absolute))
            self.links[found[-1][0]] = self.link_name(call.ctx, value, found[-1][0])
        return found

    def link_name(self, ctx: _Ctx, value: str, path: str) -> str | None:
        """The path as written (``..`` folded, symlinks not followed) when symlinks make it name
        another file: writing ``config/prod.yaml`` through a symlinked ``config`` still changes
        what the developer protects as ``config/prod.yaml``."""
        joined = os.path.normpath(os.path.join(str(ctx.cwd) if ctx.cwd else "/", value))
        lexical = self.represent(joined)[0]
        return lexical if lexical != path else None

    def delete_paths(self, call: _Call, words: Iterable[_Word], *, recursive: bool, via: str,
                     extra: Mapping[str, Any] | None = None) -> None:
        for word in words:
            for path, inside in self.expand(call, word, follow=False) or ():
                self.emit("fs.delete", "fs", {"path": path, "recursive": recursive, "inside_workspace": inside,
                                              "via": via, "link_path": self.links.get(path), **(extra or {})},
                          target=path, reason=f"{via} deletes {path}")

    def write_paths(self, call: _Call, words: Iterable[_Word], *, via: str,
                    extra: Mapping[str, Any] | None = None) -> None:
        for word in words:
            for path, inside in self.expand(call, word, follow=True) or ():
                self.emit("fs.write", "fs", {"path": path, "inside_workspace": inside, "via": via,
                                             "link_path": self.links.get(path), **(extra or {})},
                          target=path, reason=f"{via} writes {path}")

    def which(self, call: _Call, name: str) -> str | None:
        """The absolute path of a program as the command would find it, or None."""
        if "/" in name:
            return self.absolute(call.ctx, name, follow=False)
        path = self.search_path(call)
        if path is None:
            return None
        found = shutil.which(name, path=path)
        return os.path.normpath(found) if found else None

    def search_path(self, call: _Call) -> str | None:
        """The command's PATH with relative entries made absolute against its directory, or
        None when it is not known."""
        path = call.env.get("PATH", os.defpath)
        if not call.ctx.path_known or "\0" in path:
            return None
        entries = []
        for entry in path.split(os.pathsep):
            entry = entry or "."
            if not entry.startswith("/"):
                if call.ctx.cwd is None:
                    return None
                entry = os.path.join(str(call.ctx.cwd), entry)
            entries.append(entry)
        return os.pathsep.join(entries)

    def cwd_arg(self, call: _Call) -> str | None:
        if call.ctx.cwd is None:
            return None
        path, _ = self.represent(str(call.ctx.cwd))
        return None if path == "." else path

    # -- git plumbing (read-only) --

    def git_query(self, repo: _Repo, *args: str) -> str | None:
        if repo.cwd is None or not repo.cwd.is_dir():
            return None
        key = (str(repo.cwd), repo.git_dir, repo.work_tree, args)
        if key in self.git_cache:
            return self.git_cache[key]
        argv = ["git"]
        if repo.git_dir:
            argv.append(f"--git-dir={repo.git_dir}")
        if repo.work_tree:
            argv.append(f"--work-tree={repo.work_tree}")
        argv.extend(args)
        environment = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
        for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
            environment.pop(name, None)
        try:
            done = subprocess.run(argv, cwd=repo.cwd, capture_output=True, text=True, timeout=GIT_TIMEOUT,
                                  stdin=subprocess.DEVNULL, env=environment, check=False)
            result = done.stdout.strip() if done.returncode == 0 else None
        except (OSError, subprocess.TimeoutExpired):
            result = None
        self.git_cache[key] = result
        return result

    def git_config(self, repo: _Repo, name: str) -> str | None:
        if name.lower() in repo.config:
            return repo.config[name.lower()]
        overlay = self.config_overlay.get(self.repo_key(repo), {})
        if name.lower() in overlay:
            return overlay[name.lower()][-1] if overlay[name.lower()] else None
        return self.git_query(repo, "config", "--get", name)

    def repo_key(self, repo: _Repo) -> str:
        top = self.git_query(repo, "rev-parse", "--show-toplevel") if repo.cwd else None
        return top or repo.git_dir or str(repo.cwd)

    def head(self, repo: _Repo) -> tuple[str | None, str]:
        """The current branch, or None and why it is not known."""
        if repo.cwd is None:
            return None, "the directory git runs in is not known"
        key = self.repo_key(repo)
        if key in self.heads:
            branch = self.heads[key]
            if branch == _UNKNOWN_HEAD:
                return None, "an earlier part of the command changes the current branch to one that is not known"
            return branch, ""
        branch = self.git_query(repo, "symbolic-ref", "--quiet", "--short", "HEAD")
        if branch:
            return branch, ""
        if self.git_query(repo, "rev-parse", "--git-dir") is None:
            return None, f"{repo.cwd} is not a git repository"
        return None, "HEAD is detached"

    def set_head(self, repo: _Repo, branch: str | None) -> None:
        if repo.cwd is not None:
            self.heads[self.repo_key(repo)] = branch if branch else _UNKNOWN_HEAD

    def branch_exists(self, repo: _Repo, name: str) -> bool:
        return self.git_query(repo, "show-ref", "--verify", "--quiet", f"refs/heads/{name}") is not None

    def tag_exists(self, repo: _Repo, name: str) -> bool:
        return self.git_query(repo, "show-ref", "--verify", "--quiet", f"refs/tags/{name}") is not None

    def refs(self, repo: _Repo, prefix: str) -> list[str] | None:
        out = self.git_query(repo, "for-each-ref", "--format=%(refname)", prefix)
        if out is None:
            return None
        return [line[len(prefix):] for line in out.splitlines() if line.startswith(prefix) and line != prefix + "HEAD"]

    # -- shells and wrappers --

    def shell(self, call: _Call) -> None:
        spec = _Spec.of(flags="-e -x -u -v -n -l -i -r -s -a -b -f -h -k -m -p -t -B -C -E -H -P -T -c --login "
                              "--norc --noprofile --posix --restricted --noediting --verbose --debugger "
                              "--no-rcs --interactive --no-config --private",
                        valued="-O -o --rcfile --init-file --init-command", stop_at_positional=True)
        words = [w if (w.value or "")[:1] != "+" else _Word.literal("-" + (w.value or "")[1:]) for w in call.args]
        parsed = _parse(words, spec)
        if not self.parsed_ok(call, parsed, f"{call.name}"):
            return
        rest = call.args[parsed.rest or 0:]
        if parsed.has("-n"):
            return
        if parsed.has("-c"):
            if not rest:
                self.fail(f"`{call.name} -c` without a command", call.part)
                return
            body = rest[0]
            if body.value is None:
                self.fail(f"the body of `{call.name} -c` is only known at run time ({body.why})", call.part)
                return
            inner = call.ctx.copy()
            inner.env = dict(call.env)
            inner.depth += 1
            self.analyze_text(body.value, inner, call.part)
            return
        if rest and not parsed.has("-s"):
            script = rest[0].value
            if script is None or script in ("-", "/dev/stdin") or script.startswith(("/dev/fd/", "/proc/self/fd/")):
                self.fail(f"`{call.name}` runs a script only known at run time ({rest[0].text})", call.part)
                return
            self.unguard(call.part)  # runs a script file
            return
        if call.ctx.stdin == "tty" and not parsed.has("-s"):
            self.interactive(call, "an interactive shell")
            return
        self.fail(f"`{call.name}` reads the commands it runs from its standard input", call.part)

    def wrapper(self, call: _Call, spec: _Spec, *, what: str = "", chdir: tuple[str, ...] = (),
                keep: bool = False, need_command: bool = False, assignments: bool = False) -> None:
        parsed = _parse(call.args, spec)
        if not self.parsed_ok(call, parsed, f"{call.name}"):
            return
        start = 1 + (parsed.rest if parsed.rest is not None else len(call.args))
        ctx = call.ctx
        for name in chdir:
            directory = parsed.value(name)
            if parsed.has(name):
                ctx = call.ctx.copy()
                ctx.cwd = self.resolve_dir(call.ctx, directory) if directory else None
        env = call.env
        # sudo VAR=value cmd: the assignments are the command's environment, not its name.
        while assignments and start < len(call.words):
            word = call.words[start]
            name, equals, assigned = (word.value or word.text).partition("=")
            if not equals or not _ENV_NAME.match(name):
                break
            env = dict(env) if env is call.env else env
            self.set_env(env, name, assigned if word.value is not None else None, call.part, ctx)
            start += 1
        if start >= len(call.words):
            if need_command:
                self.fail(f"`{call.name}` {what or 'runs no command StateWise can see'}", call.part)
            return
        self.dispatch(call.then(start, keep=keep, ctx=ctx, env=env))

    def sudo(self, call: _Call) -> None:
        spec = _Spec.of(flags="-A -b -E -H -i -K -k -l -n -P -S -s -V -v -B -N --askpass --background --login "
                              "--non-interactive --preserve-groups --reset-timestamp --remove-timestamp --shell "
                              "--stdin --set-home --version --validate --list --bell --no-update --help -h",
                        valued="-u -g -C -D -p -r -t -T -U -R --user --group --close-from --chdir --prompt --role "
                               "--type --command-timeout --other-user --chroot --host",
                        optional="--preserve-env", stop_at_positional=True)
        parsed = _parse(call.args, spec)
        if not self.parsed_ok(call, parsed, call.name):
            return
        if parsed.has("-R", "--chroot"):
            self.fail(f"`{call.name}` runs the command in another root directory", call.part)
            return
        if parsed.has("-s", "-i", "--shell", "--login") and parsed.rest is not None and parsed.rest >= len(call.args):
            self.fail(f"`{call.name} -s/-i` starts a shell that reads commands from its standard input", call.part)
            return
        self.wrapper(call, spec, chdir=("-D", "--chdir"), assignments=True)

    def env_wrapper(self, call: _Call) -> None:
        env = dict(call.env)
        ctx = call.ctx
        i = 1
        words = call.words
        while i < len(words):
            value = words[i].value
            if value is None:
                self.fail(f"`env` argument `{words[i].text}` is only known at run time", call.part)
                return
            if value in ("-i", "--ignore-environment", "-"):
                env = {}
            elif value in ("-0", "--null", "-v", "--debug"):
                pass
            elif value in ("-u", "--unset") and i + 1 < len(words):
                env.pop(words[i + 1].value or "", None)
                i += 1
            elif value.startswith("--unset="):
                env.pop(value.partition("=")[2], None)
            elif value in ("-C", "--chdir") and i + 1 < len(words):
                ctx = ctx.copy()
                ctx.cwd = self.resolve_dir(call.ctx, words[i + 1].value or "\0")
                i += 1
            elif value.startswith("--chdir="):
                ctx = ctx.copy()
                ctx.cwd = self.resolve_dir(call.ctx, value.partition("=")[2])
            elif value in ("-S", "--split-string") or value.startswith(("--split-string=", "-S")):
                self.fail("`env -S` splits a string into a command", call.part)
                return
            elif value.startswith(("--default-signal", "--ignore-signal", "--block-signal", "--list-signal")):
                pass
            elif value == "--":
                i += 1
                break
            elif value.startswith("-"):
                self.fail(f"env: unknown option {value}", call.part)
                return
            elif "=" in value and _ENV_NAME.match(value.partition("=")[0]):
                name, _, assigned = value.partition("=")
                self.set_env(env, name, assigned, call.part, ctx)
            else:
                break
            i += 1
        if i >= len(words):
            return  # prints the environment
        self.dispatch(call.then(i, env=env, ctx=ctx))

    def simple_wrapper(self, call: _Call) -> None:
        name = _canonical(call.name.rsplit("/", 1)[-1])
        specs = {
            "time": _Spec.of(flags="-p -v -a -q --portability --verbose --append --quiet",
                             valued="-f -o --format --output", stop_at_positional=True),
            "command": _Spec.of(flags="-p -v -V", stop_at_positional=True),
            "exec": _Spec.of(flags="-c -l", valued="-a", stop_at_positional=True),
            "nice": _Spec.of(valued="-n --adjustment", stop_at_positional=True),
            "ionice": _Spec.of(flags="-t --ignore", valued="-c -n --class --classdata", stop_at_positional=True),
            "timeout": _Spec.of(flags="--preserve-status --foreground -v --verbose", valued="-k -s --kill-after --signal",
                                stop_at_positional=True),
            "stdbuf": _Spec.of(valued="-i -o -e --input --output --error", stop_at_positional=True),
            "doas": _Spec.of(flags="-n -s -L", valued="-u -C", stop_at_positional=True),
            "flock": _Spec.of(flags="-s -x -e -u -n -o -F --shared --exclusive --unlock --nonblock --nb "
                                    "--close --no-fork --verbose",
                              valued="-w -E -c --timeout --wait --conflict-exit-code --command", stop_at_positional=True),
        }
        if name in _TRANSPARENT:
            self.dispatch(call.then(1))
            return
        if name == "nice":
            words = call.args
            if words and words[0].value and re.fullmatch(r"-\d+", words[0].value):
                self.dispatch(call.then(2))
                return
        spec = specs[name]
        if name == "time":
            output = _parse(call.args, spec).value("-o", "--output")
            if output:
                self.write_paths(call, [_Word.literal(output)], via="time -o")
        if name == "command" and any(w.value in ("-v", "-V") for w in call.args[:2]):
            return
        if name == "flock":
            parsed = _parse(call.args, spec)
            if not self.parsed_ok(call, parsed, "flock"):
                return
            start = 1 + (parsed.rest or 0)
            after = call.words[start + 1:start + 3]
            if not parsed.has("-c", "--command") and after and after[0].value in ("-c", "--command"):
                parsed.options.append(("-c", after[1].value if len(after) > 1 else None))
            if parsed.has("-c", "--command"):
                body = parsed.value("-c", "--command")
                if body is None:
                    self.fail("the body of `flock -c` is only known at run time", call.part)
                    return
                inner = call.ctx.copy()
                inner.depth += 1
                self.analyze_text(body, inner, call.part)
                return
            self.dispatch(call.then(start + 1))  # skip the lock file
            return
        if name == "timeout":
            parsed = _parse(call.args, spec)
            if not self.parsed_ok(call, parsed, "timeout"):
                return
            start = 1 + (parsed.rest or 0)
            self.dispatch(call.then(start + 1))  # skip the duration
            return
        self.wrapper(call, spec)

    def xargs(self, call: _Call) -> None:
        spec = _Spec.of(flags="-0 -r -t -p -x -o --null --no-run-if-empty --verbose --interactive --exit "
                              "--open-tty --show-limits",
                        valued="-I -n -L -P -d -E -s -a --max-args --max-lines --max-procs --delimiter "
                               "--max-chars --arg-file --process-slot-var",
                        optional="-i -e -l --replace --eof",
                        stop_at_positional=True)
        parsed = _parse(call.args, spec)
        if not self.parsed_ok(call, parsed, "xargs"):
            return
        start = 1 + (parsed.rest if parsed.rest is not None else len(call.args))
        if start >= len(call.words):
            return  # echo
        inner = call.then(start)
        # The arguments xargs appends are read at run time: probe with one such argument.
        result = self.probe(_Call([*inner.words, _Word("<stdin>", None, "an argument xargs reads at run time")],
                                  inner.env, inner.ctx, inner.part))
        if result.actions or result.unresolved:
            self.fail(f"xargs runs `{inner.name}` with arguments read at run time", call.part)
        elif result.unguarded:
            self.unguard(call.part)

    def watch(self, call: _Call) -> None:
        spec = _Spec.of(flags="-d -t -b -e -g -c -x -p -w -r -C --differences --no-title --beep --errexit "
                              "--chgexit --color --no-color --exec --precise --no-wrap --no-rerun",
                        valued="-n -q --interval --equexit", optional="--differences", stop_at_positional=True)
        parsed = _parse(call.args, spec)
        if not self.parsed_ok(call, parsed, "watch"):
            return
        start = 1 + (parsed.rest if parsed.rest is not None else len(call.args))
        if start >= len(call.words):
            return
        if parsed.has("-x", "--exec"):
            self.dispatch(call.then(start))
            return
        values = [w.value for w in call.words[start:]]
        if any(v is None for v in values):
            self.fail("the command `watch` runs is only known at run time", call.part)
            return
        inner = call.ctx.copy()
        inner.depth += 1
        self.analyze_text(" ".join(v for v in values if v is not None), inner, call.part)

    def eval_builtin(self, call: _Call) -> None:
        self.fail("`eval` runs a string as a command", call.part)

    def shell_body_builtin(self, call: _Call) -> None:
        """``trap 'cmd' SIG`` and ``alias name='cmd'``: the bodies are commands; read them."""
        name = call.name
        bodies: list[_Word] = []
        if name == "trap":
            args = [w for w in call.args if w.value not in ("-p", "-l", "--")]
            if len(args) >= 2:
                bodies.append(args[0])
        else:
            for word in call.args:
                if word.value is None:
                    self.fail(f"`{name}` with a definition only known at run time", call.part)
                    return
                if "=" in word.value:
                    bodies.append(_Word.literal(word.value.partition("=")[2]))
        for body in bodies:
            if body.value is None:
                self.fail(f"the body of `{name}` is only known at run time", call.part)
                continue
            inner = call.ctx.copy()
            inner.depth += 1
            self.analyze_text(body.value, inner, call.part)

    def source(self, call: _Call) -> None:
        if not call.args:
            return
        target = call.args[0].value
        if target is None or target in ("-", "/dev/stdin") or target.startswith(("/dev/fd/", "/proc/self/fd/")):
            self.fail(f"`{call.name}` runs commands only known at run time ({call.args[0].text})", call.part)
            return
        if target and target.endswith("bin/activate"):
            venv = self.absolute(call.ctx, target, follow=False)
            if venv:
                root = os.path.dirname(os.path.dirname(venv))
                call.ctx.env["VIRTUAL_ENV"] = root
                call.ctx.env["PATH"] = f"{root}/bin:{call.ctx.env.get('PATH', os.defpath)}"
                return
        call.ctx.path_known = False
        self.unguard(call.part)

    # -- runners: uv run, poetry run, npx ... --

    def runner(self, call: _Call, skip: int, spec: _Spec, *, chdir: tuple[str, ...] = ()) -> None:
        """``<tool> run [options] command ...``: the command after the options, with the runner's
        words kept in the text of a test command."""
        args = call.words[skip:]
        parsed = _parse(args, spec)
        if not self.parsed_ok(call, parsed, f"{call.name}"):
            return
        start = skip + (parsed.rest if parsed.rest is not None else len(args))
        ctx = call.ctx
        for name in chdir:
            if parsed.has(name):
                ctx = call.ctx.copy()
                value = parsed.value(name)
                ctx.cwd = self.resolve_dir(call.ctx, value) if value else None
        module = parsed.value("-m", "--module")
        if module:
            # uv run -m pytest: as python -m
            self.python_module(call.then(start, keep=True, ctx=ctx), module, call.words[start:], interpreter=None)
            return
        if start >= len(call.words):
            self.unguard(call.part)
            return
        self.dispatch(call.then(start, keep=True, ctx=ctx))

    # -- git --

    def git(self, call: _Call) -> None:
        repo = _Repo(call.ctx.cwd, call.env.get("GIT_DIR"), call.env.get("GIT_WORK_TREE"))
        if repo.git_dir and "\0" in repo.git_dir or repo.work_tree and "\0" in repo.work_tree:
            self.fail("GIT_DIR or GIT_WORK_TREE is only known at run time", call.part)
            return
        words = call.args
        i = 0
        while i < len(words):
            value = words[i].value
            nxt = words[i + 1].value if i + 1 < len(words) else None
            if value is None:
                self.fail(f"git: `{words[i].text}` is only known at run time ({words[i].why})", call.part)
                return
            if value == "-C":
                if nxt is None:
                    self.fail("the directory of `git -C` is only known at run time", call.part)
                    return
                if nxt:
                    repo.cwd = self.resolve_dir(_Ctx(repo.cwd, {}), nxt)
                i += 2
                continue
            if value in ("-c", "--config-env") or value.startswith("--config-env="):
                setting = value.partition("=")[2] if value.startswith("--config-env=") else nxt
                if setting is None:
                    self.fail(f"the setting of `git {value}` is only known at run time", call.part)
                    return
                key, equals, setting_value = setting.partition("=")
                if _DANGEROUS_GIT_CONFIG.match(key) or value != "-c":
                    self.fail(f"`git -c {key}` can run commands or redirect git", call.part)
                    return
                repo.config[key.lower()] = setting_value if equals else "true"
                i += 1 if value.startswith("--config-env=") else 2
                continue
            matched = False
            for option, attr in (("--git-dir", "git_dir"), ("--work-tree", "work_tree"), ("--namespace", None)):
                if value == option or value.startswith(option + "="):
                    given = value.partition("=")[2] if "=" in value else nxt
                    if given is None:
                        self.fail(f"the value of `git {option}` is only known at run time", call.part)
                        return
                    if attr:
                        resolved = self.resolve_dir(_Ctx(repo.cwd, {}), given)
                        setattr(repo, attr, str(resolved) if resolved else None)
                    i += 1 if "=" in value else 2
                    matched = True
                    break
            if matched:
                continue
            if value in ("--no-pager", "-p", "--paginate", "-P", "--bare", "--no-replace-objects", "--literal-pathspecs",
                         "--glob-pathspecs", "--noglob-pathspecs", "--icase-pathspecs", "--no-optional-locks",
                         "--no-advice", "--no-lazy-fetch"):
                i += 1
                continue
            if value in ("--version", "--help", "-h", "-v", "--html-path", "--man-path", "--info-path", "--exec-path"):
                return
            if value.startswith("-"):
                self.fail(f"git: unknown global option {value}", call.part)
                return
            break
        if i >= len(words):
            return
        sub = words[i].value or ""
        rest = words[i + 1:]
        if repo.cwd != call.ctx.cwd:  # git -C: paths on its command line are relative to that directory
            ctx = call.ctx.copy()
            ctx.cwd = repo.cwd
            call = _Call(call.words, call.env, ctx, call.part, call.kept, call.program)
        handler = _GIT_HANDLERS.get(sub)
        if handler is not None:
            failures = len(self.unresolved)
            handler(self, call, repo, rest)
            if sub in ("checkout", "switch", "rebase") and len(self.unresolved) > failures:
                self.set_head(repo, None)  # where HEAD ends up is not known either
        elif sub in _GIT_READ_ONLY_ARGS:
            self.git_read_only(call, repo, sub, rest)
        elif sub in _GIT_SESSIONS:
            self.git_session(call, sub, rest)
        elif sub in _GIT_UNGUARDED:
            if sub in _GIT_MESSAGE_EDITORS and _git_opens_editor(sub, [w.value for w in rest]):
                self.interactive(call, f"an editor for the {sub} message")
                return
            if sub == "submodule" and rest and rest[0].value == "foreach":
                self.git_foreach(call, rest[1:])
                return
            if sub == "bisect" and rest and rest[0].value == "run":
                if len(rest) > 1:
                    self.dispatch(_Call(rest[1:], call.env, call.ctx, call.part))
                return
            if sub in ("stash", "reflog") and self.git_log_like(call, repo, sub, rest):
                return
            if sub == "bundle" and rest and rest[0].value == "create":
                files = [w for w in rest[1:] if (w.value or "x")[:1] != "-"]
                self.write_paths(call, files[:1], via="git bundle create")
                return
            if sub == "remote" and not _git_listing(sub, [w.value for w in rest]):
                self.push_config_unknown(repo, f"git remote {rest[0].value if rest else ''}".strip())
            if _git_listing(sub, [w.value for w in rest]):
                return
            self.unguard(call.part)
        else:
            self.fail(f"`git {sub}` is not a git command StateWise knows (a git alias can run anything)", call.part)

    def git_session(self, call: _Call, sub: str, words: list[_Word]) -> None:
        """difftool/mergetool with -x run that command; otherwise they open a tool on the terminal."""
        values = [w.value for w in words]
        if "--tool-help" in values:
            return
        for index, value in enumerate(values):
            body = None
            if value in ("-x", "--extcmd") and index + 1 < len(words):
                body = words[index + 1]
            elif value is not None and value.startswith("--extcmd="):
                body = _Word.literal(value.partition("=")[2])
            elif value is not None and value.startswith("-x") and len(value) > 2:
                body = _Word.literal(value[2:])
            if body is not None:
                if body.value is None:
                    self.fail(f"the command of `git {sub} -x` is only known at run time", call.part)
                    return
                inner = call.ctx.copy()
                inner.depth += 1
                self.analyze_text(body.value, inner, call.part)
                return
        self.interactive(call, _GIT_SESSIONS[sub])

    def git_log_like(self, call: _Call, repo: _Repo, sub: str, words: list[_Word]) -> bool:
        """``git stash show`` and ``git reflog [show]`` take git log's options (--output=F too)."""
        first = words[0].value if words else None
        if sub == "stash" and first in ("list", "show"):
            self.git_read_only(call, repo, "log", words[1:])
            return True
        if sub == "reflog" and (first is None or first == "show" or first.startswith("-")):
            self.git_read_only(call, repo, "log", words[1:] if first == "show" else words)
            return True
        return False

    def git_config_command(self, call: _Call, repo: _Repo, words: list[_Word]) -> None:
        """``git config``: reads are read-only; writes of settings that decide where a push goes are
        simulated for the rest of the call; settings that run commands are unresolved."""
        values = [w.value for w in words]
        if any(v is None for v in values):
            self.fail("`git config` with arguments only known at run time", call.part)
            return
        args = [v for v in values if v is not None]
        scopes = {"--local", "--global", "--system", "--worktree", "--includes", "--no-includes", "-z", "--null",
                  "--name-only", "--show-origin", "--show-scope", "--bool", "--int", "--bool-or-int", "--path",
                  "--expiry-date", "--all", "--append", "--fixed-value"}
        valued = {"--type", "--default", "--blob", "--value", "--comment", "--url"}
        file: str | None = None
        rest: list[str] = []
        mode = None
        i = 0
        while i < len(args):
            value = args[i]
            if value in ("-f", "--file") and i + 1 < len(args):
                file, i = args[i + 1], i + 2
                continue
            if value.startswith("--file="):
                file = value.partition("=")[2]
            elif value in valued and i + 1 < len(args):
                i += 1
            elif value.startswith(tuple(v + "=" for v in valued)) or value in scopes:
                pass
            elif value.startswith("-") and mode is None:
                mode = value
            else:
                rest.append(value)
            i += 1
        subcommands = {"list": "-l", "get": "--get", "set": "set", "unset": "--unset", "edit": "-e",
                       "rename-section": "--rename-section", "remove-section": "--remove-section"}
        if mode is None and rest and rest[0] in subcommands:
            mode, rest = subcommands[rest[0]], rest[1:]
            if mode == "set" and "--append" in args:
                mode = "--add"
            elif mode == "--unset" and "--all" in args:
                mode = "--unset-all"
        reading = mode in ("-l", "--list", "--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color",
                           "--get-colorbool") or (mode is None and len(rest) < 2)
        if reading:
            return
        if mode in ("-e", "--edit"):
            self.interactive(call, "an editor on the git configuration")
            return
        if file is not None:
            self.write_paths(call, [_Word.literal(file)], via="git config --file")
            self.push_config_unknown(repo, "git config --file")
            return
        if mode in ("--rename-section", "--remove-section"):
            if rest and _PUSH_SECTIONS.match(rest[0]):
                self.push_config_unknown(repo, f"git config {mode} {rest[0]}")
            self.unguard(call.part)
            return
        if not rest:
            self.fail(f"git config {mode}: the setting is not given", call.part)
            return
        key = rest[0]
        if mode is not None and mode not in ("set", "--add", "--unset", "--unset-all", "--replace-all"):
            self.fail(f"git config: unknown option {mode}", call.part)
            return
        if _DANGEROUS_GIT_CONFIG.match(key):
            self.fail(f"`git config {key}` sets a git setting that runs commands or redirects git", call.part)
            return
        if _PUSH_CONFIG.match(key):
            overlay = self.push_overlay(repo)
            current = self.git_config_all(repo, key)
            if mode in ("--unset", "--unset-all"):
                overlay[key.lower()] = []
            elif mode == "--add":
                overlay[key.lower()] = [*(current or []), rest[1] if len(rest) > 1 else ""]
            else:
                overlay[key.lower()] = [rest[1] if len(rest) > 1 else ""]
        elif _PUSH_SECTIONS.match(key) and key.lower().startswith(("remote.", "url.")):
            self.push_config_unknown(repo, f"git config {key}")
        self.unguard(call.part)

    def push_overlay(self, repo: _Repo) -> dict[str, list[str]]:
        return self.config_overlay.setdefault(self.repo_key(repo), {})

    def push_config_unknown(self, repo: _Repo, why: str) -> None:
        self.config_unknown.setdefault(self.repo_key(repo), why)

    def git_config_all(self, repo: _Repo, name: str) -> list[str] | None:
        """Every value of a multi-valued setting, after what earlier parts of the call set."""
        if name.lower() in repo.config:
            return [repo.config[name.lower()]]
        overlay = self.config_overlay.get(self.repo_key(repo), {})
        if name.lower() in overlay:
            return overlay[name.lower()]
        out = self.git_query(repo, "config", "--get-all", name)
        return out.splitlines() if out else None

    def git_where(self, call: _Call, repo: _Repo) -> dict[str, Any]:
        """Where a working-tree operation runs, when that is not the workspace itself."""
        where: dict[str, Any] = {}
        if repo.cwd is not None:
            top = self.git_query(repo, "rev-parse", "--show-toplevel")
            path, _ = self.represent(os.path.realpath(top) if top else str(repo.cwd))
            if path != ".":
                where["cwd"] = path
        if repo.work_tree:
            where["work_tree"] = self.represent(repo.work_tree)[0]
        return where

    def git_foreach(self, call: _Call, words: list[_Word]) -> None:
        words = [w for w in words if w.value not in ("--recursive", "-q", "--quiet")]
        values = [w.value for w in words]
        if not words or any(v is None for v in values):
            self.fail("`git submodule foreach` runs a command only known at run time", call.part)
            return
        inner = call.ctx.copy()
        inner.depth += 1
        self.analyze_text(" ".join(v for v in values if v is not None), inner, call.part)

    def git_args_static(self, call: _Call, sub: str, words: Sequence[_Word]) -> bool:
        for word in words:
            if word.value is None:
                self.fail(f"`git {sub}` argument `{word.text}` is only known at run time ({word.why})", call.part)
                return False
        return True

    def git_push(self, call: _Call, repo: _Repo, words: list[_Word]) -> None:
        spec = _Spec.of(
            flags="-f --force --force-if-includes --no-force-if-includes --no-force-with-lease -u --set-upstream "
                  "-d --delete --all --branches --mirror --tags --follow-tags --no-follow-tags -n --dry-run "
                  "--porcelain -q --quiet -v --verbose --progress --no-progress --no-verify --verify --atomic "
                  "--no-atomic --thin --no-thin --prune --no-signed -4 --ipv4 -6 --ipv6 --no-recurse-submodules "
                  "--no-prune",
            valued="-o --push-option --repo --receive-pack --exec",
            optional="--force-with-lease --signed --recurse-submodules")
        parsed = _parse(words, spec)
        if not self.parsed_ok(call, parsed, "git push"):
            return
        if not self.git_args_static(call, "push", parsed.positionals):
            return
        if parsed.has("--receive-pack", "--exec"):
            self.fail("`git push --receive-pack/--exec` runs a command", call.part)
            return
        if parsed.has("-n", "--dry-run"):
            return
        if repo.cwd is None:
            self.fail("git push runs in a directory that is not known", call.part)
            return
        changed = self.config_unknown.get(self.repo_key(repo))
        if changed:
            self.fail(f"git push: an earlier part of the command ({changed}) changes settings that decide where "
                      "the push goes", call.part)
            return
        force = parsed.has("-f", "--force", "--force-with-lease", "--force-if-includes")
        set_upstream = parsed.has("-u", "--set-upstream") or None
        delete = parsed.has("-d", "--delete")
        positionals = [w.value or "" for w in parsed.positionals]
        remote = parsed.value("--repo") or (positionals[0] if positionals else None)
        refspecs = positionals[1:] if not parsed.has("--repo") else positionals
        # "git push origin tag v1" names refs/tags/v1
        joined: list[str] = []
        k = 0
        while k < len(refspecs):
            if refspecs[k] == "tag" and k + 1 < len(refspecs):
                joined.append(f"refs/tags/{refspecs[k + 1]}")
                k += 2
            else:
                joined.append(refspecs[k])
                k += 1
        refspecs = joined
        head, why = self.head(repo)
        if remote is None:
            if head is None:
                self.fail(f"git push without a remote: {why}", call.part)
                return
            remote = (self.git_config(repo, f"branch.{head}.pushRemote") or self.git_config(repo, "remote.pushDefault")
                      or self.git_config(repo, f"branch.{head}.remote") or "origin")
        common = {"remote": remote, "set_upstream": set_upstream}

        def push(branch: str, source: str | None, *, forced: bool = False, deleting: bool = False,
                 **extra: Any) -> None:
            args = {**common, "branch": branch, "source": source, "force": True if (force or forced) else None,
                    "delete": True if deleting else None, **extra}
            self.emit("git.push", "git", args, target=f"{remote}/{branch}",
                      reason=f"git push to {remote}/{branch}")

        mirror = parsed.has("--mirror") or (not refspecs and not parsed.has("--all", "--branches", "--tags") and (
            self.git_config(repo, f"remote.{remote}.mirror") or "").lower() in _TRUE_WORDS)
        if mirror and not parsed.has("--mirror"):
            parsed.options.append(("--mirror", None))  # remote.<name>.mirror: a bare push mirrors
        everything = parsed.has("--all", "--branches", "--mirror")
        if everything:
            branches = self.refs(repo, "refs/heads/")
            if branches is None:
                self.fail("git push --all/--mirror: the local branches cannot be listed", call.part)
                return
            for branch in branches:
                push(branch, branch, forced=parsed.has("--mirror"), all=True if not parsed.has("--mirror") else None,
                     mirror=True if parsed.has("--mirror") else None)
        if parsed.has("--mirror", "--prune"):
            local = set(self.refs(repo, "refs/heads/") or [])
            tracking = self.refs(repo, f"refs/remotes/{remote}/")
            if tracking is None:
                self.fail("git push --mirror/--prune: the remote branches cannot be listed", call.part)
            for branch in tracking or []:
                if branch not in local:
                    push(branch, None, deleting=True, prune=True)
        if parsed.has("--tags"):
            push("refs/tags/*", None, tags=True)
        if not refspecs and (everything or parsed.has("--tags")):
            return
        if not refspecs:
            configured = self.git_config_all(repo, f"remote.{remote}.push")
            if configured:
                refspecs = configured
            else:
                if head is None:
                    self.fail(f"git push without a refspec: {why}", call.part)
                    return
                mode = (self.git_config(repo, "push.default") or "simple").lower()
                if mode == "nothing":
                    return
                if mode == "matching":
                    tracking = set(self.refs(repo, f"refs/remotes/{remote}/") or [])
                    for branch in self.refs(repo, "refs/heads/") or []:
                        if branch in tracking:
                            push(branch, branch)
                    return
                branch = head
                if mode in ("upstream", "tracking"):
                    merge = self.git_config(repo, f"branch.{head}.merge")
                    if not merge:
                        self.fail(f"git push (push.default={mode}): {head} has no upstream", call.part)
                        return
                    branch = merge.removeprefix("refs/heads/")
                push(branch, head)
                if set_upstream:
                    self.set_upstream(repo, head, remote, branch)
                return
        for refspec in refspecs:
            forced = refspec.startswith("+")
            spec_text = refspec[1:] if forced else refspec
            if "*" in spec_text:
                self.fail(f"git push: the wildcard refspec `{refspec}` is not enumerated", call.part)
                continue
            source, colon, destination = spec_text.partition(":")
            if delete and not colon:
                destination, source, colon = source, "", ":"
            if colon and not source:
                name, kind = _ref_name(destination)
                push(name, None, deleting=True, ref_kind=kind)
                continue
            if not colon:
                if source in ("HEAD", "@"):
                    if head is None:
                        self.fail(f"git push {source}: {why}", call.part)
                        continue
                    destination = head
                elif source.startswith("refs/"):
                    destination = source
                elif self.tag_exists(repo, source) and not self.branch_exists(repo, source):
                    destination = f"refs/tags/{source}"
                else:
                    destination = source
            if destination in ("HEAD", "@") or not destination:
                self.fail(f"git push: the destination of `{refspec}` is not a branch name", call.part)
                continue
            name, kind = _ref_name(destination)
            push(name, source or None, forced=forced, ref_kind=kind)
            if set_upstream and kind is None:
                local = head if source in ("HEAD", "@", "") else source.removeprefix("refs/heads/")
                if local:
                    self.set_upstream(repo, local, remote, name)

    def set_upstream(self, repo: _Repo, branch: str, remote: str, merge: str) -> None:
        """What `git push -u`, `git branch -u` and tracking checkouts record for later pushes."""
        overlay = self.push_overlay(repo)
        overlay[f"branch.{branch}.remote".lower()] = [remote]
        overlay[f"branch.{branch}.merge".lower()] = [f"refs/heads/{merge}"]

    def tracking(self, repo: _Repo, branch: str, start: str | None) -> None:
        """A branch created from a remote-tracking branch tracks it (branch.autoSetupMerge)."""
        if not start or "/" not in start:
            return
        if self.git_query(repo, "rev-parse", "--verify", "--quiet", f"refs/remotes/{start}") is not None:
            remote, _, merge = start.partition("/")
            self.set_upstream(repo, branch, remote, merge)

    def git_checkout(self, call: _Call, repo: _Repo, words: list[_Word]) -> None:
        spec = _Spec.of(
            flags="-q --quiet -f --force -m --merge --detach --no-track --guess --no-guess --overlay --no-overlay "
                  "--progress --no-progress --ignore-skip-worktree-bits --ignore-other-worktrees "
                  "--no-recurse-submodules -p --patch --ours --theirs -2 -3 -l --pathspec-file-nul",
            valued="-b -B --orphan --pathspec-from-file",
            optional="-t --track --conflict --recurse-submodules")
        parsed = _parse(words, spec)
        if not self.parsed_ok(call, parsed, "git checkout"):
            return
        if not self.git_args_static(call, "checkout", parsed.positionals):
            return
        dashdash = any(w.value == "--" for w in words)
        positionals = [w.value or "" for w in parsed.positionals]
        create = parsed.value("-b", "-B", "--orphan")
        before = positionals
        paths: list[str] = []
        if dashdash:
            index = [w.value for w in words].index("--")
            after = {id(w) for w in words[index + 1:]}
            paths = [w.value or "" for w in parsed.positionals if id(w) in after]
            before = [w.value or "" for w in parsed.positionals if id(w) not in after]
        force = parsed.has("-f", "--force") or None
        if create is not None:
            start = before[0] if before else None
            if force:
                self.discard_changes(call, "git checkout --force")
            self.emit("git.checkout", "git", {"branch": create, "create": True, "start_point": start,
                                              "force": True if parsed.has("-B") else force,
                                              "orphan": True if parsed.has("--orphan") else None},
                      target=create, reason=f"git checkout -b {create}")
            self.set_head(repo, create)
            self.tracking(repo, create, start)
            if paths:
                self.git_restore_action(call, before[:1], paths)
            return
        if dashdash or parsed.has("--pathspec-from-file", "-p", "--patch", "--ours", "--theirs") or len(before) > 1:
            source = before[0] if before and (dashdash or len(before) > 1) else None
            self.git_restore_action(call, [source] if source else [], paths or before[1:] or before)
            return
        if parsed.has("--detach"):
            target = before[0] if before else "HEAD"
            if force:
                self.discard_changes(call, "git checkout --force")
            self.emit("git.checkout", "git", {"branch": target, "detach": True, "force": force},
                      target=target, reason=f"git checkout --detach {target}")
            self.set_head(repo, None)
            return
        if not before:
            if force:
                self.discard_changes(call, "git checkout --force")
            return  # otherwise it reports the state of the working tree
        target = before[0]
        if target == "-":
            previous = self.git_query(repo, "rev-parse", "--abbrev-ref", "@{-1}")
            if not previous:
                self.fail("git checkout -: the previous branch is not known", call.part)
                return
            target = previous
        if force:
            self.discard_changes(call, "git checkout --force")
        if parsed.has("-t", "--track") and "/" in target and not self.branch_exists(repo, target):
            local = target.split("/", 1)[1]
            self.tracking(repo, local, target)
            self.emit("git.checkout", "git", {"branch": local, "create": True, "start_point": target, "force": force},
                      target=local, reason=f"git checkout --track {target}")
            self.set_head(repo, local)
            return
        is_branch = self.branch_exists(repo, target)
        if not is_branch and repo.cwd is not None and (repo.cwd / target).exists():
            self.git_restore_action(call, [], [target])
            return
        self.emit("git.checkout", "git", {"branch": target, "force": force}, target=target,
                  reason=f"git checkout {target}")
        remote_branch = self.git_query(repo, "rev-parse", "--verify", "--quiet", f"refs/remotes/origin/{target}")
        self.set_head(repo, target if is_branch or remote_branch else None)

    def discard_changes(self, call: _Call, via: str) -> None:
        """checkout --force, switch --discard-changes: uncommitted work is thrown away, as with
        git reset --hard. It is a git.restore of the whole tree (undeclared: the gate stops it)."""
        self.emit("git.restore", "git", {"paths": ["."], "discard_all": True, "via": via}, target=".",
                  reason=f"{via} discards every uncommitted change")

    def git_restore_action(self, call: _Call, source: list[str], paths: list[str]) -> None:
        shown = [self.represent(a)[0] if (a := self.absolute(call.ctx, p, follow=False)) else p for p in paths] or ["."]
        self.emit("git.restore", "git", {"paths": shown, "source": source[0] if source else None},
                  target=" ".join(shown), reason="discards uncommitted changes to " + ", ".join(shown))

    def git_restore(self, call: _Call, repo: _Repo, words: list[_Word]) -> None:
        spec = _Spec.of(flags="-S --staged -W --worktree -q --quiet -p --patch --ours --theirs -m --merge "
                              "--ignore-unmerged --overlay --no-overlay --progress --no-progress "
                              "--ignore-skip-worktree-bits --no-recurse-submodules --pathspec-file-nul",
                        valued="-s --source --pathspec-from-file", optional="--conflict --recurse-submodules")
        parsed = _parse(words, spec)
        if not self.parsed_ok(call, parsed, "git restore"):
            return
        if not self.git_args_static(call, "restore", parsed.positionals):
            return
        if parsed.has("-S", "--staged") and not parsed.has("-W", "--worktree"):
            self.unguard(call.part)  # only the index
            return
        source = parsed.value("-s", "--source")
        self.git_restore_action(call, [source] if source else [], [w.value or "" for w in parsed.positionals])

    def git_switch(self, call: _Call, repo: _Repo, words: list[_Word]) -> None:
        spec = _Spec.of(
            flags="-d --detach -f --force --discard-changes -m --merge -q --quiet --progress --no-progress --no-track "
                  "--guess --no-guess --ignore-other-worktrees --no-recurse-submodules",
            valued="-c -C --create --force-create --orphan",
            optional="-t --track --conflict --recurse-submodules")
        parsed = _parse(words, spec)
        if not self.parsed_ok(call, parsed, "git switch"):
            return
        if not self.git_args_static(call, "switch", parsed.positionals):
            return
        positionals = [w.value or "" for w in parsed.positionals]
        create = parsed.value("-c", "-C", "--create", "--force-create", "--orphan")
        force = parsed.has("-f", "--force", "--discard-changes") or None
        if force:
            self.discard_changes(call, "git switch --discard-changes")
        if create is not None:
            self.tracking(repo, create, positionals[0] if positionals else None)
            self.emit("git.switch", "git", {"branch": create, "create": True,
                                            "start_point": positionals[0] if positionals else None,
                                            "force": True if parsed.has("-C", "--force-create") else force,
                                            "orphan": True if parsed.has("--orphan") else None},
                      target=create, reason=f"git switch -c {create}")
            self.set_head(repo, create)
            return
        if not positionals:
            if parsed.has("-d", "--detach"):
                self.emit("git.switch", "git", {"branch": "HEAD", "detach": True}, target="HEAD")
                self.set_head(repo, None)
                return
            self.fail("git switch without a branch", call.part)
            return
        target = positionals[0]
        if target == "-":
            previous = self.git_query(repo, "rev-parse", "--abbrev-ref", "@{-1}")
            if not previous:
                self.fail("git switch -: the previous branch is not known", call.part)
                return
            target = previous
        detach = parsed.has("-d", "--detach")
        self.emit("git.switch", "git", {"branch": target, "force": force, "detach": True if detach else None},
                  target=target, reason=f"git switch {target}")
        self.set_head(repo, None if detach else target)

    def git_branch(self, call: _Call, repo: _Repo, words: list[_Word]) -> None:
        spec = _Spec.of(
            flags="-d -D --delete -f --force -r --remotes -a --all -l --list -v -vv --verbose -q --quiet -m -M --move "
                  "-c -C --copy --show-current --no-track -i --ignore-case --no-column --no-color --no-abbrev "
                  "--create-reflog --edit-description --unset-upstream --omit-empty --recurse-submodules",
            valued="-u --set-upstream-to --contains --no-contains --merged --no-merged --points-at --sort --format",
            optional="-t --track --column --color --abbrev")
        parsed = _parse(words, spec)
        if not self.parsed_ok(call, parsed, "git branch"):
            return
        if not self.git_args_static(call, "branch", parsed.positionals):
            return
        names = [w.value or "" for w in parsed.positionals]
        force = parsed.has("-f", "--force")
        remote_tracking = parsed.has("-r", "--remotes")
        if parsed.has("-d", "-D", "--delete"):
            for name in names:
                self.emit("git.branch_delete", "git",
                          {"branch": name, "force": True if (parsed.has("-D") or force) else None,
                           "remote_tracking": True if remote_tracking else None},
                          target=name, reason=f"git branch -d {name}")
            return
        if parsed.has("-m", "-M", "--move", "-c", "-C", "--copy"):
            head, why = self.head(repo)
            if len(names) == 1:
                if head is None:
                    self.fail(f"git branch -m: {why}", call.part)
                    return
                old, new = head, names[0]
            elif len(names) >= 2:
                old, new = names[0], names[1]
            else:
                return
            if parsed.has("-m", "-M", "--move"):
                self.emit("git.branch_delete", "git", {"branch": old, "force": True if parsed.has("-M") or force else None,
                                                       "renamed_to": new},
                          target=old, reason=f"git branch -m renames {old} to {new}")
                if old == head:
                    self.set_head(repo, new)
            self.emit("git.branch_create", "git", {"name": new, "start_point": old,
                                                   "force": True if parsed.has("-M", "-C") or force else None},
                      target=new, reason=f"git branch creates {new}")
            return
        if parsed.has("-u", "--set-upstream-to", "--unset-upstream", "--edit-description"):
            upstream = parsed.value("-u", "--set-upstream-to")
            branch = names[0] if names else self.head(repo)[0]
            if parsed.has("--unset-upstream") and branch:
                overlay = self.push_overlay(repo)
                overlay[f"branch.{branch}.merge".lower()] = []
                overlay[f"branch.{branch}.remote".lower()] = []
            elif upstream and branch and "/" in upstream:
                remote, _, merge = upstream.partition("/")
                self.set_upstream(repo, branch, remote, merge)
            elif upstream:
                self.push_config_unknown(repo, "git branch --set-upstream-to")
            self.unguard(call.part)
            return
        listing = parsed.has("-l", "--list", "-a", "--all", "-r", "--remotes", "-v", "-vv", "--verbose",
                             "--show-current", "--contains", "--no-contains", "--merged", "--no-merged",
                             "--points-at", "--sort", "--format")
        if listing or not names:
            return
        self.emit("git.branch_create", "git", {"name": names[0], "start_point": names[1] if len(names) > 1 else None,
                                               "force": True if force else None},
                  target=names[0], reason=f"git branch {names[0]}")

    def git_reset(self, call: _Call, repo: _Repo, words: list[_Word]) -> None:
        spec = _Spec.of(flags="--hard --soft --mixed --keep --merge -q --quiet -p --patch -N --intent-to-add "
                              "--no-refresh --refresh --no-recurse-submodules --pathspec-file-nul",
                        valued="--pathspec-from-file", optional="--recurse-submodules")
        parsed = _parse(words, spec)
        if not self.parsed_ok(call, parsed, "git reset"):
            return
        if not parsed.has("--hard", "--merge", "--keep"):
            self.unguard(call.part)
            return
        if not self.git_args_static(call, "reset", parsed.positionals):
            return
        ref = parsed.positionals[0].value if parsed.positionals else "HEAD"
        mode = None if parsed.has("--hard") else "merge" if parsed.has("--merge") else "keep"
        self.emit("git.reset_hard", "git", {"ref": ref, "mode": mode, **self.git_where(call, repo)}, target=ref,
                  reason=f"git reset --hard {ref}")

    def git_clean(self, call: _Call, repo: _Repo, words: list[_Word]) -> None:
        spec = _Spec.of(flags="-d -f --force -x -X -n --dry-run -q --quiet -i --interactive",
                        valued="-e --exclude")
        parsed = _parse(words, spec)
        if not self.parsed_ok(call, parsed, "git clean"):
            return
        if parsed.has("-n", "--dry-run"):
            return
        if not self.git_args_static(call, "clean", parsed.positionals):
            return
        paths = []
        for word in parsed.positionals:
            absolute = self.absolute(call.ctx, word.value or "", follow=False)
            paths.append(self.represent(absolute)[0] if absolute else word.value or "")
        self.emit("git.clean", "git", {"directories": parsed.has("-d"), "ignored": parsed.has("-x", "-X"),
                                       "only_ignored": True if parsed.has("-X") else None,
                                       "paths": paths or None, **self.git_where(call, repo)},
                  target=" ".join(paths) or None, reason="git clean removes untracked files")

    def git_rebase(self, call: _Call, repo: _Repo, words: list[_Word]) -> None:
        spec = _Spec.of(
            flags="-i --interactive --autosquash --no-autosquash --autostash --no-autostash --keep-base --root -f "
                  "--force-rebase --no-ff --fork-point --no-fork-point -m --merge --apply -q --quiet -v --verbose "
                  "--stat -n --no-stat --no-verify --verify --signoff --committer-date-is-author-date "
                  "--reset-author-date --ignore-date --ignore-whitespace --reapply-cherry-picks "
                  "--no-reapply-cherry-picks --update-refs --no-update-refs -k --keep-empty --no-keep-empty "
                  "--rerere-autoupdate --no-rerere-autoupdate -r --no-rebase-merges --no-gpg-sign --continue "
                  "--abort --skip --quit --edit-todo --show-current-patch",
            valued="--onto -s --strategy -X --strategy-option -x --exec --whitespace",
            optional="--rebase-merges --gpg-sign -S --empty -C")
        parsed = _parse(words, spec)
        if not self.parsed_ok(call, parsed, "git rebase"):
            return
        for body in parsed.values("-x", "--exec"):
            if body is None:
                self.fail("the command of `git rebase --exec` is only known at run time", call.part)
                return
            inner = call.ctx.copy()
            inner.depth += 1
            self.analyze_text(body, inner, call.part)
        if parsed.has("--edit-todo") or parsed.has("-i", "--interactive") and not parsed.has(
                "--continue", "--abort", "--skip", "--quit", "--show-current-patch"):
            self.interactive(call, "an editor on the rebase todo list")
        if parsed.has("--continue", "--abort", "--skip", "--quit", "--edit-todo", "--show-current-patch"):
            self.unguard(call.part)
            return
        if not self.git_args_static(call, "rebase", parsed.positionals):
            return
        positionals = [w.value or "" for w in parsed.positionals]
        upstream = positionals[0] if positionals and not parsed.has("--root") else None
        branch = positionals[1] if len(positionals) > 1 else (positionals[0] if parsed.has("--root") and positionals
                                                               else None)
        onto = parsed.value("--onto") or upstream
        if onto is None and parsed.has("--root"):
            onto = "--root"
        if onto is None:
            _, why = self.head(repo)
            found = self.git_query(repo, "rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{upstream}")
            if not found:
                self.fail(f"git rebase without an upstream: the current branch has none ({why or 'no upstream'})",
                          call.part)
                return
            onto = found
        if branch is None:
            branch, _ = self.head(repo)
        else:
            self.set_head(repo, branch)
        self.emit("git.rebase", "git", {"onto": onto, "branch": branch,
                                        "interactive": True if parsed.has("-i", "--interactive") else None,
                                        "root": True if parsed.has("--root") else None},
                  target=onto, reason=f"git rebase onto {onto}")

    def git_worktree(self, call: _Call, repo: _Repo, words: list[_Word]) -> None:
        if not words or words[0].value is None:
            self.fail("git worktree without a static subcommand", call.part)
            return
        sub = words[0].value
        rest = words[1:]
        if sub == "list":
            return
        if sub == "add":
            spec = _Spec.of(flags="-f --force --detach --checkout --no-checkout --lock --guess-remote "
                                  "--no-guess-remote --track --no-track --orphan -q --quiet --relative-paths "
                                  "--no-relative-paths",
                            valued="-b -B --reason")
            parsed = _parse(rest, spec)
            if not self.parsed_ok(call, parsed, "git worktree add"):
                return
            if not parsed.positionals or not self.git_args_static(call, "worktree add", parsed.positionals):
                return
            path_word = parsed.positionals[0]
            commit = parsed.positionals[1].value if len(parsed.positionals) > 1 else None
            self.write_paths(call, [path_word], via="git worktree add", extra={"worktree": True})
            new = parsed.value("-b", "-B")
            if new is None and commit is None and not parsed.has("--detach"):
                candidate = (path_word.value or "").rstrip("/").rsplit("/", 1)[-1]
                if candidate and not self.branch_exists(repo, candidate):
                    new = candidate
            if new is not None:
                self.emit("git.branch_create", "git", {"name": new, "start_point": commit,
                                                       "force": True if parsed.has("-B") else None, "worktree": True},
                          target=new, reason=f"git worktree add creates branch {new}")
            return
        if sub == "remove":
            paths = [w for w in rest if (w.value or "x")[:1] != "-"]
            self.delete_paths(call, paths, recursive=True, via="git worktree remove")
            return
        if sub == "move":
            paths = [w for w in rest if (w.value or "x")[:1] != "-"]
            if len(paths) == 2:
                self.delete_paths(call, paths[:1], recursive=True, via="git worktree move")
                self.write_paths(call, paths[1:], via="git worktree move", extra={"worktree": True})
            return
        if sub in ("prune", "lock", "unlock", "repair"):
            self.unguard(call.part)
            return
        self.fail(f"git worktree {sub} is not known", call.part)

    def git_rm(self, call: _Call, repo: _Repo, words: list[_Word]) -> None:
        spec = _Spec.of(flags="-r -f --force -n --dry-run -q --quiet --cached --ignore-unmatch --sparse "
                              "--pathspec-file-nul",
                        valued="--pathspec-from-file")
        parsed = _parse(words, spec)
        if not self.parsed_ok(call, parsed, "git rm"):
            return
        if parsed.has("-n", "--dry-run", "--cached"):
            if parsed.has("--cached"):
                self.unguard(call.part)
            return
        if parsed.has("--pathspec-from-file"):
            self.fail("git rm --pathspec-from-file: the paths are read at run time", call.part)
            return
        self.delete_paths(call, parsed.positionals, recursive=parsed.has("-r"), via="git rm")

    def git_mv(self, call: _Call, repo: _Repo, words: list[_Word]) -> None:
        self.move(call, words, via="git mv", spec=_Spec.of(flags="-f --force -k -n --dry-run -v --verbose --sparse"))

    def git_update_ref(self, call: _Call, repo: _Repo, words: list[_Word]) -> None:
        values = [w.value for w in words]
        if any(v is None for v in values) or "--stdin" in values:
            self.fail("git update-ref with refs only known at run time", call.part)
            return
        plain = [v for v in values if v is not None and not v.startswith("-")]
        deleting = "-d" in values
        if not plain:
            return
        ref = plain[0]
        if not ref.startswith("refs/heads/"):
            self.unguard(call.part)
            return
        name = ref.removeprefix("refs/heads/")
        if deleting:
            self.emit("git.branch_delete", "git", {"branch": name, "force": True}, target=name,
                      reason=f"git update-ref -d {ref}")
        else:
            self.emit("git.branch_create", "git", {"name": name, "start_point": plain[1] if len(plain) > 1 else None,
                                                   "force": True}, target=name, reason=f"git update-ref {ref}")

    # -- files --

    def rm(self, call: _Call) -> None:
        spec = _Spec.of(flags="-r -R --recursive -f --force -i -I -v --verbose -d --dir --one-file-system "
                              "--no-preserve-root --help --version",
                        optional="--preserve-root --interactive")
        parsed = _parse(call.args, spec)
        if not self.parsed_ok(call, parsed, "rm"):
            return
        if parsed.has("--help", "--version"):
            return
        extra = {"no_preserve_root": True} if parsed.has("--no-preserve-root") else None
        self.delete_paths(call, parsed.positionals, recursive=parsed.has("-r", "-R", "--recursive"), via="rm",
                          extra=extra)

    def rmdir(self, call: _Call) -> None:
        parsed = _parse(call.args, _Spec.of(flags="-p --parents -v --verbose --ignore-fail-on-non-empty"))
        if not self.parsed_ok(call, parsed, "rmdir"):
            return
        words = list(parsed.positionals)
        if parsed.has("-p", "--parents"):
            for word in parsed.positionals:
                value = (word.value or "").rstrip("/")
                while word.value is not None and "/" in value:
                    value = value.rsplit("/", 1)[0]
                    if value:
                        words.append(_Word.literal(value))
        self.delete_paths(call, words, recursive=False, via="rmdir")

    def unlink(self, call: _Call) -> None:
        words = [w for w in call.args if w.value not in ("--",)]
        self.delete_paths(call, words, recursive=False, via="unlink")

    def shred(self, call: _Call) -> None:
        spec = _Spec.of(flags="-f --force -u -x --exact -v --verbose -z --zero", valued="-n --iterations -s --size "
                        "--random-source", optional="--remove")
        parsed = _parse(call.args, spec)
        if not self.parsed_ok(call, parsed, "shred"):
            return
        if parsed.has("-u", "--remove"):
            self.delete_paths(call, parsed.positionals, recursive=False, via="shred")
        else:
            self.write_paths(call, parsed.positionals, via="shred", extra={"destroys_content": True})

    def trash(self, call: _Call) -> None:
        words = [w for w in call.args if (w.value or "x")[:1] != "-"]
        self.delete_paths(call, words, recursive=True, via=call.name)

    def find(self, call: _Call) -> None:
        words = call.args
        i = 0
        while i < len(words) and words[i].value in ("-H", "-L", "-P") or (
                i < len(words) and (words[i].value or "").startswith(("-O", "-D"))):
            i += 2 if words[i].value == "-D" else 1
        roots: list[_Word] = []
        while i < len(words):
            value = words[i].value
            if value is not None and (value.startswith("-") or value in ("(", ")", "!", ",")):
                break
            roots.append(words[i])
            i += 1
        expression = words[i:]
        roots = roots or [_Word.literal(".")]
        deleting = False
        k = 0
        filters = []
        while k < len(expression):
            value = expression[k].value
            if value == "-delete":
                deleting = True
            elif value in ("-exec", "-execdir", "-ok", "-okdir"):
                end = k + 1
                while end < len(expression) and expression[end].value not in (";", "+"):
                    end += 1
                inner_words = expression[k + 1:end]
                if inner_words:
                    result = self.probe(_Call(list(inner_words), call.env, call.ctx, call.part))
                    if result.unresolved or any(a.operation != "fs.delete" for a in result.actions):
                        self.fail(f"find {value} runs `{inner_words[0].text}` on files found at run time", call.part)
                    elif result.actions:
                        deleting = True
                    elif result.unguarded:
                        self.unguard(call.part)
                k = end
            elif value in ("-fprint", "-fprint0", "-fls", "-fprintf") and k + 1 < len(expression):
                self.write_paths(call, [expression[k + 1]], via=f"find {value}")
                k += 1
            elif expression[k].value is not None:
                filters.append(expression[k].value or "")
            k += 1
        if deleting:
            self.delete_paths(call, roots, recursive=True, via="find",
                              extra={"filter": " ".join(filters) or None})

    def tee(self, call: _Call) -> None:
        parsed = _parse(call.args, _Spec.of(flags="-a --append -i --ignore-interrupts -p", optional="--output-error"))
        if not self.parsed_ok(call, parsed, "tee"):
            return
        files = [w for w in parsed.positionals if not (w.value and _DEV_FILES.match(w.value))]
        self.write_paths(call, files, via="tee", extra={"append": True if parsed.has("-a", "--append") else None})

    _CP = _Spec.of(
        flags="-a -r -R -f -i -n -p -v -u -l -s -x -d -H -L -P -b -T --archive --recursive --force --interactive "
              "--no-clobber --parents --verbose --remove-destination --strip-trailing-slashes --attributes-only "
              "--copy-contents --dereference --no-dereference --link --symbolic-link --one-file-system "
              "--no-target-directory -Z --debug --keep-directory-symlink",
        valued="-t --target-directory -S --suffix --no-preserve",
        optional="--update --backup --preserve --sparse --reflink --context")
    _MV = _Spec.of(flags="-f -i -n -u -v -b -T --force --interactive --no-clobber --verbose --strip-trailing-slashes "
                         "--no-target-directory --exchange --no-copy -Z --debug",
                   valued="-t --target-directory -S --suffix", optional="--update --backup --context")

    def destinations(self, call: _Call, parsed: _Parsed) -> tuple[list[_Word], list[_Word]] | None:
        """Sources and the words written, for cp/mv/ln/install-like commands."""
        positionals = list(parsed.positionals)
        target = parsed.value("-t", "--target-directory")
        if target is not None:
            directory, sources = _Word.literal(target), positionals
        elif len(positionals) >= 2:
            directory, sources = positionals[-1], positionals[:-1]
        else:
            return None
        if directory.value is None:
            self.fail(f"the destination of `{call.name}` is only known at run time", call.part)
            return None
        into_directory = target is not None or len(sources) > 1
        if not into_directory and not parsed.has("-T", "--no-target-directory") and call.ctx.cwd is not None:
            absolute = self.absolute(call.ctx, directory.value, follow=True)
            into_directory = bool(absolute and os.path.isdir(absolute))
        if not into_directory:
            return sources, [directory]
        written = []
        for source in sources:
            if source.value is None:
                self.fail(f"a source of `{call.name}` is only known at run time", call.part)
                return None
            name = source.value.rstrip("/").rsplit("/", 1)[-1]
            written.append(_Word.literal(directory.value.rstrip("/") + "/" + name))
        return sources, written

    def cp(self, call: _Call) -> None:
        parsed = _parse(call.args, self._CP)
        if not self.parsed_ok(call, parsed, "cp"):
            return
        found = self.destinations(call, parsed)
        if found:
            self.write_paths(call, found[1], via="cp",
                             extra={"recursive": True if parsed.has("-r", "-R", "-a", "--recursive", "--archive")
                                    else None})

    def mv(self, call: _Call) -> None:
        self.move(call, call.args, via="mv", spec=self._MV)

    def move(self, call: _Call, words: Sequence[_Word], *, via: str, spec: _Spec) -> None:
        parsed = _parse(words, spec)
        if not self.parsed_ok(call, parsed, f"{via}"):
            return
        if parsed.has("-n", "--dry-run") and via == "git mv":
            return
        found = self.destinations(call, parsed)
        if not found:
            return
        sources, written = found
        for source in sources:
            absolute = self.absolute(call.ctx, source.value, follow=False) if source.value is not None else None
            is_dir = bool(absolute and os.path.isdir(absolute) and not os.path.islink(absolute))
            self.delete_paths(call, [source], recursive=is_dir, via=via, extra={"moved": True})
        self.write_paths(call, written, via=via)

    def ln(self, call: _Call) -> None:
        spec = _Spec.of(flags="-s -f -n -r -v -b -i -L -P -T --symbolic --force --no-dereference --relative --verbose "
                              "--interactive --logical --physical --no-target-directory",
                        valued="-t -S --target-directory --suffix", optional="--backup")
        parsed = _parse(call.args, spec)
        if not self.parsed_ok(call, parsed, "ln"):
            return
        if len(parsed.positionals) == 1 and parsed.value("-t", "--target-directory") is None:
            value = parsed.positionals[0].value
            if value is None:
                self.fail("the target of `ln` is only known at run time", call.part)
                return
            self.write_paths(call, [_Word.literal(value.rstrip("/").rsplit("/", 1)[-1])], via="ln")
            return
        found = self.destinations(call, parsed)
        if found:
            self.write_paths(call, found[1], via="ln")

    def install(self, call: _Call) -> None:
        spec = _Spec.of(flags="-b -c -C --compare -D -d --directory -p -s -v -Z --preserve-timestamps --strip "
                              "--verbose --debug --no-target-directory -T --preserve-context",
                        valued="-g -m -o -S -t --group --mode --owner --suffix --target-directory --strip-program",
                        optional="--backup --context")
        parsed = _parse(call.args, spec)
        if not self.parsed_ok(call, parsed, "install"):
            return
        if parsed.has("-d", "--directory"):
            self.write_paths(call, parsed.positionals, via="install -d")
            return
        found = self.destinations(call, parsed)
        if found:
            self.write_paths(call, found[1], via="install")

    def touch(self, call: _Call) -> None:
        parsed = _parse(call.args, _Spec.of(flags="-a -c -m -f -h --no-create --no-dereference",
                                            valued="-d -r -t --date --reference --time"))
        if not self.parsed_ok(call, parsed, "touch"):
            return
        self.write_paths(call, parsed.positionals, via="touch")

    def truncate(self, call: _Call) -> None:
        parsed = _parse(call.args, _Spec.of(flags="-c -o --no-create --io-blocks", valued="-s -r --size --reference"))
        if not self.parsed_ok(call, parsed, "truncate"):
            return
        self.write_paths(call, parsed.positionals, via="truncate")

    def sed(self, call: _Call) -> None:
        spec = _Spec.of(flags="-n -E -r -s -u -z --quiet --silent --regexp-extended --separate --unbuffered "
                              "--null-data --posix --debug --sandbox --follow-symlinks --help --version",
                        valued="-e -f -l --expression --file --line-length", optional="-i --in-place")
        parsed = _parse(call.args, spec)
        if not self.parsed_ok(call, parsed, "sed"):
            return
        files = list(parsed.positionals)
        in_place = parsed.has("-i", "--in-place")
        if in_place and files and files[0].value == "" and parsed.value("-i", "--in-place") is None:
            files = files[1:]  # BSD sed: -i '' (no backup suffix)
        scripts: list[str | None] = list(parsed.values("-e", "--expression"))
        if not parsed.has("-e", "--expression", "-f", "--file"):
            scripts.append(files[0].value if files else "")
            files = files[1:]
        if parsed.has("-f", "--file") and not parsed.has("--sandbox"):
            self.fail("`sed -f` runs a script file StateWise does not read (it may write files or run commands)",
                      call.part)
            return
        if not parsed.has("--sandbox"):
            for script in scripts:
                if script is None:
                    self.fail("the sed script is only known at run time", call.part)
                    return
                effects = _sed_effects(script)
                if effects is None:
                    self.fail("the sed script cannot be read with confidence", call.part)
                    return
                written, runs = effects
                if runs:
                    self.fail("the sed script runs a command (`e`)", call.part)
                    return
                self.write_paths(call, [_Word.literal(w) for w in written if not _DEV_FILES.match(w)],
                                 via="sed w")
        if not in_place:
            self.unguard(call.part)
            return
        self.write_paths(call, files, via="sed -i")

    def dd(self, call: _Call) -> None:
        for word in call.args:
            if word.value is None:
                if word.text.startswith("of="):
                    self.fail("the output file of `dd` is only known at run time", call.part)
                continue
            if word.value.startswith("of="):
                target = word.value[3:]
                if not _DEV_FILES.match(target):
                    self.write_paths(call, [_Word.literal(target)], via="dd")
                return
        self.unguard(call.part)

    def chmod(self, call: _Call) -> None:
        spec = _Spec.of(flags="-R --recursive -v -c -f --silent --quiet --changes --verbose -h --dereference "
                              "--no-dereference -H -L -P --preserve-root --no-preserve-root",
                        valued="--reference --from")
        words = list(call.args)
        mode_index = None
        if call.name.rsplit("/", 1)[-1] == "chmod":
            for index, word in enumerate(words):
                if word.value and re.fullmatch(r"[ugoa]*[-+=][rwxXstugo]*(,[ugoa]*[-+=][rwxXstugo]*)*", word.value):
                    mode_index = index
                    break
        if mode_index is not None:
            words = words[:mode_index] + [_Word.literal("MODE")] + words[mode_index + 1:]
        parsed = _parse(words, spec)
        if not self.parsed_ok(call, parsed, f"{call.name}"):
            return
        files = parsed.positionals if parsed.has("--reference") else parsed.positionals[1:]
        self.write_paths(call, files, via=call.name.rsplit("/", 1)[-1],
                         extra={"attributes": True,
                                "recursive": True if parsed.has("-R", "--recursive") else None})

    def rsync(self, call: _Call) -> None:
        spec = _Spec.of(valued="-e --rsh --exclude --include -f --filter --exclude-from --include-from --files-from "
                               "--chmod --chown --backup-dir --suffix -T --temp-dir --partial-dir --log-file --port "
                               "--bwlimit --timeout --compare-dest --copy-dest --link-dest --max-size --min-size -B "
                               "--block-size --password-file --rsync-path --out-format --info --debug -M "
                               "--remote-option --iconv --checksum-choice --compress-choice --usermap --groupmap",
                        allow_unknown=True)
        parsed = _parse(call.args, spec)
        if parsed.error or len(parsed.positionals) < 2:
            self.unguard(call.part)
            return
        destination = parsed.positionals[-1]
        value = destination.value
        if value is None:
            self.fail("the destination of `rsync` is only known at run time", call.part)
            return
        if re.match(r"^[^/]*:", value) or value.startswith("rsync://"):
            self.unguard(call.part)
            return
        deletes = [name for name, _ in parsed.options if name.startswith("--del")]
        self.write_paths(call, [destination], via="rsync")
        if deletes:
            self.delete_paths(call, [destination], recursive=True, via="rsync " + deletes[0])
        if parsed.has("--remove-source-files"):
            self.delete_paths(call, parsed.positionals[:-1], recursive=False, via="rsync --remove-source-files")

    # -- Python --

    def python(self, call: _Call) -> None:
        interpreter = self.which(call, call.name)
        words = call.args
        i = 0
        inspect = False  # -i: a REPL after the script or -c
        while i < len(words):
            value = words[i].value
            if value is None:
                break  # the script is only known at run time (below)
            if not value.startswith("-") or value == "-":
                break
            if value in ("--version", "-V", "-h", "--help", "-VV"):
                return
            if value.startswith("--"):
                i += 2 if value == "--check-hash-based-pycs" else 1
                continue
            cluster = value[1:]
            for j, char in enumerate(cluster):
                if char == "i":
                    inspect = True
                if char in "mc":
                    if inspect:
                        self.interactive(call, "an interactive interpreter (-i)")
                        return
                    remainder = cluster[j + 1:]
                    target = remainder or (words[i + 1].value if i + 1 < len(words) else None)
                    after = i + (1 if remainder else 2)
                    if char == "c":
                        self.unguard(call.part)
                        return
                    if target is None:
                        self.fail("the module `python -m` runs is only known at run time", call.part)
                        return
                    self.python_module(call, target, words[after:], interpreter=interpreter)
                    return
                if char in "WX":
                    i += 0 if cluster[j + 1:] else 1
                    break
            i += 1
        if inspect:
            self.interactive(call, "an interactive interpreter (-i)")
            return
        if i >= len(words) or words[i].value == "-":
            self.stdin_program(call, "an interactive interpreter")
            return
        if words[i].value is None:
            self.fail(f"`{call.name}` runs a program only known at run time ({words[i].text})", call.part)
            return
        script = words[i].value or ""
        if script.rsplit("/", 1)[-1] == "manage.py":
            self.django(call, words[i + 1:])
            return
        self.unguard(call.part)

    def stdin_program(self, call: _Call, what: str) -> None:
        """An interpreter given no program: it reads one from standard input."""
        if call.ctx.stdin == "tty":
            self.interactive(call, what)
        elif call.ctx.stdin in ("pipe", "dynamic"):
            self.fail(f"`{call.name}` runs a program it reads from its standard input, only known at run time",
                      call.part)
        else:
            self.unguard(call.part)  # a heredoc or a file: the program is in the command, like -c

    def python_module(self, call: _Call, module: str, rest: Sequence[_Word], *, interpreter: str | None) -> None:
        if module == "pip":
            self.pip_command(call, list(rest), interpreter=interpreter, how="python -m pip")
        elif module in ("pytest", "unittest", "tox", "nox", "green", "ward"):
            self.test_run(call, rest)
        elif module == "venv":
            self.venv(call, list(rest), interpreter=interpreter, via="python -m venv")
        elif module == "virtualenv":
            self.virtualenv(_Call([_Word.literal("virtualenv"), *rest], call.env, call.ctx, call.part, call.kept),
                            interpreter)
        elif module in ("uv", "poetry", "alembic", "django", "pdm", "pipenv", "hatch"):
            name = "django-admin" if module == "django" else module
            self.dispatch(_Call([_Word.literal(name), *rest], call.env, call.ctx, call.part, call.kept))
        else:
            self.unguard(call.part)

    def pip(self, call: _Call) -> None:
        path = self.which(call, call.name)
        self.pip_command(call, call.args, interpreter=_interpreter_of_pip(path, self.search_path(call)),
                         how=call.name)

    def pip_command(self, call: _Call, words: list[_Word], *, interpreter: str | None, how: str) -> None:
        global_spec = _Spec.of(flags="-v --verbose -q --quiet --isolated --require-virtualenv --no-input "
                                     "--no-cache-dir --disable-pip-version-check --no-color --debug --version -V "
                                     "--help -h --no-python-version-warning",
                               valued="--python --proxy --retries --timeout --exists-action --trusted-host --cert "
                                      "--client-cert --cache-dir --log --use-feature --use-deprecated --keyring-provider "
                                      "--resume-retries",
                               stop_at_positional=True)
        parsed = _parse(words, global_spec)
        if not self.parsed_ok(call, parsed, f"{how}"):
            return
        python = parsed.value("--python")
        start = parsed.rest if parsed.rest is not None else len(words)
        if start >= len(words):
            return
        sub = words[start].value
        rest = words[start + 1:]
        if sub in ("list", "freeze", "show", "check", "download", "help", "search", "index", "inspect", "debug",
                   "hash", "config", "cache", "completion", "wheel"):
            if sub in ("config", "cache", "wheel", "download"):
                self.unguard(call.part)
            return
        if sub != "install":
            self.unguard(call.part)
            return
        spec = _Spec.of(
            flags="-U --upgrade --user --force-reinstall -I --ignore-installed --no-deps --pre -q --quiet -v --verbose "
                  "--no-cache-dir --no-build-isolation --dry-run --break-system-packages --no-index --require-hashes "
                  "--disable-pip-version-check --no-input --isolated --compile --no-compile --no-warn-script-location "
                  "--no-warn-conflicts --ignore-requires-python --prefer-binary --no-clean --check-build-dependencies "
                  "--no-color --use-pep517 --no-use-pep517 --only-deps --quiet",
            valued="-r --requirement -c --constraint -e --editable -t --target --prefix --root -i --index-url "
                   "--extra-index-url -f --find-links --python --platform --python-version --implementation --abi "
                   "--no-binary --only-binary --progress-bar --src --upgrade-strategy --global-option "
                   "--config-settings -C --trusted-host --cert --client-cert --proxy --retries --timeout "
                   "--exists-action --log --cache-dir --report --root-user-action --keyring-provider --use-feature "
                   "--use-deprecated --group --install-option",
            allow_unknown=True)
        parsed_install = _parse(rest, spec)
        if not self.parsed_ok(call, parsed_install, f"{how} install"):
            return
        if parsed_install.has("--dry-run"):
            return
        redirect = self.install_env(call, "pip")
        if redirect is None:
            return
        python = parsed_install.value("--python") or python or redirect.get("python")
        if python is not None:
            interpreter = self.interpreter_option(call, python)
        extra: dict[str, Any] = {}
        if "target" in redirect and not parsed_install.has("-t", "--target", "--prefix", "--root"):
            extra["target_dir"] = redirect["target"]
        if redirect.get("user") and not parsed_install.has("--user"):
            extra["user"] = True
        sources = self.package_sources(call, "pip", parsed_install, redirect)
        if sources is None:
            return
        extra.update(sources)
        self.python_install(call, "pip.install", "pip", parsed_install, interpreter=interpreter, how=how,
                            extra=extra)

    def package_sources(self, call: _Call, tool: str, parsed: _Parsed, config: Mapping[str, str]
                        ) -> dict[str, Any] | None:
        """Where an install of ``tool`` fetches packages from, read from what will run: the
        options, then the command's environment, then (pip) its configuration files. ``index``
        is the primary index (DEFAULT_INDEX when nothing names one), ``extra_index`` and
        ``find_links`` the other sources, ``no_index`` when no index is used. None (and the
        call unresolved) when a source is only known at run time."""
        found: dict[str, Any] = {}
        for slot, (options, variables) in _INDEX_SETTINGS[tool].items():
            values: list[str] = []
            if parsed.has(*options):
                given = parsed.values(*options)
                if any(v is None for v in given):
                    self.fail(f"where `{call.name}` installs from is only known at run time", call.part)
                    return None
                values = [v for v in given if v]
            else:
                for variable in variables:
                    value = call.env.get(variable)
                    if value is None:
                        continue
                    if "\0" in value:
                        self.fail(f"{variable} is set to a value only known at run time, so where `{call.name}` "
                                  "installs from is not known", call.part)
                        return None
                    values += value.split() if slot != "index" else [value]
                configured = config.get("config:" + _INDEX_CONFIG_NAMES[slot])
                if not values and configured:
                    values = configured.split()
            if slot == "index":
                if values:
                    found["index"] = _index_url(values[-1])
                elif "config:uv" not in config:  # uv's configuration names sources: not guessed
                    found["index"] = DEFAULT_INDEX
            elif values:
                found[slot] = [_index_url(v) for v in values] if slot == "extra_index" else values
        no_index_variable = "PIP_NO_INDEX" if tool == "pip" else "UV_NO_INDEX"
        no_index = parsed.has("--no-index") or (call.env.get(no_index_variable, "").strip().lower() in _TRUE_WORDS) \
            or (config.get("config:no-index", "").strip().lower() in _TRUE_WORDS)
        if no_index:
            found.pop("index", None)
            found.pop("extra_index", None)
            found["no_index"] = True
        return found

    def install_env(self, call: _Call, tool: str) -> dict[str, str] | None:
        """What the command's environment (and pip's configuration files) say about where
        ``tool`` installs (_INSTALL_ENV); None (and the call unresolved) when it points at
        settings StateWise does not read."""
        found: dict[str, str] = {}
        if tool == "pip":
            configured = self.pip_config(call)
            if configured is None:
                return None
            found.update(configured)
        for name, value in call.env.items():
            entry = _INSTALL_ENV.get(name.upper() if name.upper().startswith("NPM_CONFIG_") else name)
            if entry is None or entry[0] != tool:
                continue
            what = entry[1]
            if "\0" in value:
                self.fail(f"{name} is set to a value only known at run time, so where `{call.name}` installs is "
                          "not known", call.part)
                return None
            if what == "config" and value not in ("", os.devnull):
                self.fail(f"{name} makes `{call.name}` read settings from {value}, which StateWise does not "
                          "read, so where it installs is not known", call.part)
                return None
            if what in ("user", "system", "global"):
                found.pop(what, None)  # the environment wins over pip's configuration files
                if value.strip().lower() in _TRUE_WORDS:
                    found[what] = "true"
            elif what == "location":
                if value.strip().lower() == "global":
                    found["global"] = "true"
            elif what == "target" and value:
                found[what] = self.represent_path(call, value)
            elif value:
                found[what] = value
        return found

    def pip_config(self, call: _Call) -> dict[str, str] | None:
        """install settings in pip's configuration files that redirect an install (target,
        prefix, root, user, python), lowest precedence first; None if a file cannot be read."""
        import configparser

        home = call.env.get("HOME", "")
        xdg = call.env.get("XDG_CONFIG_HOME") or (os.path.join(home, ".config") if home else "")
        files = ["/etc/xdg/pip/pip.conf", "/etc/pip.conf"]
        if home:
            files.append(os.path.join(home, ".pip", "pip.conf"))
        if xdg:
            files.append(os.path.join(xdg, "pip", "pip.conf"))
        virtual_env = call.env.get("VIRTUAL_ENV")
        if virtual_env and "\0" not in virtual_env:
            files.append(os.path.join(virtual_env, "pip.conf"))
        found: dict[str, str] = {}
        for path in files:
            if not os.path.isfile(path):
                continue
            parser = configparser.RawConfigParser()
            try:
                parser.read(path, encoding="utf-8")
            except (OSError, UnicodeError, configparser.Error) as error:
                self.fail(f"pip's configuration {path} cannot be read ({type(error).__name__}), so where "
                          f"`{call.name}` installs is not known", call.part)
                return None
            for section in ("global", "install"):
                if not parser.has_section(section):
                    continue
                for key, value in parser.items(section):
                    name = key.replace("_", "-")
                    if name in ("target", "prefix", "root") and value:
                        found["target"] = self.represent_path(call, value)
                    elif name == "user":
                        found.pop("user", None)
                        if value.strip().lower() in _TRUE_WORDS:
                            found["user"] = "true"
                    elif name == "python" and value:
                        found["python"] = value
                    elif name in ("index-url", "extra-index-url", "find-links", "no-index"):
                        found["config:" + name] = value
        return found

    def represent_path(self, call: _Call, value: str) -> str:
        absolute = self.absolute(call.ctx, value, follow=True)
        return self.represent(absolute)[0] if absolute else value

    def interpreter_option(self, call: _Call, value: str) -> str | None:
        """``--python X`` of pip or uv: a path (or a venv directory) or a name on PATH."""
        if "/" in value or value.startswith("."):
            absolute = self.absolute(call.ctx, value, follow=False)
            if absolute and os.path.isdir(absolute):
                return os.path.join(absolute, "bin", "python")
            return absolute
        if _PYTHON_NAME.match(value):
            return self.which(call, value)
        return None  # a version request such as 3.12

    def python_install(self, call: _Call, operation: str, tool: str, parsed: _Parsed, *, interpreter: str | None,
                       how: str, extra: Mapping[str, Any] | None = None) -> None:
        requests: list[tuple[str | None, dict[str, Any]]] = []
        for word in parsed.positionals:
            requests.append((word.value, {}))
        for value in parsed.values("-e", "--editable"):
            requests.append((value, {"editable": True}))
        for value in parsed.values("-r", "--requirement", "--requirements"):
            requests.append((value, {"requirements_file": True}))
        if not requests:
            return
        if operation in ("pip.install", "uv.pip_install") and interpreter is None:
            self.fail(f"cannot tell which interpreter `{how}` installs into", call.part)
        common = {"interpreter": interpreter if operation in ("pip.install", "uv.pip_install") else None,
                  "user": True if parsed.has("--user") else None,
                  "target_dir": self.represent_path(call, target) if (
                      target := parsed.value("-t", "--target", "--prefix", "--root")) else None, **(extra or {})}
        for value, flags in requests:
            if value is None:
                self.fail(f"a package of `{how}` is only known at run time", call.part)
                continue
            name, version = (value, None) if flags.get("requirements_file") else _split_python_requirement(value)
            self.emit(operation, tool, {"package": name, "version": version, **common, **flags}, target=name,
                      reason=f"{how} installs {value}")

    def uv(self, call: _Call) -> None:
        global_spec = _Spec.of(flags="-q --quiet -v --verbose -n --no-cache --offline --native-tls --no-config "
                                     "--preview --no-preview --no-python-downloads --no-progress --help -h -V --version "
                                     "--managed-python --no-managed-python",
                               valued="--directory --project --cache-dir --color --config-file --python-preference "
                                      "--allow-insecure-host",
                               stop_at_positional=True)
        parsed = _parse(call.args, global_spec)
        if not self.parsed_ok(call, parsed, "uv"):
            return
        ctx = call.ctx
        if parsed.has("--directory"):
            ctx = call.ctx.copy()
            directory = parsed.value("--directory")
            ctx.cwd = self.resolve_dir(call.ctx, directory) if directory else None
        start = 1 + (parsed.rest if parsed.rest is not None else len(call.args))
        if start >= len(call.words):
            return
        inner = _Call(call.words, call.env, ctx, call.part, call.kept)
        sub = call.words[start].value
        rest = call.words[start + 1:]
        if sub == "pip":
            self.uv_pip(inner, rest)
        elif sub == "add":
            self.uv_add(inner, rest)
        elif sub == "venv":
            self.uv_venv(inner, rest)
        elif sub == "run":
            self.runner(inner, start + 1, _UV_RUN, chdir=("--directory",))
        elif sub == "tool" and rest and rest[0].value == "run":
            self.runner(inner, start + 2, _UVX)
        elif sub in ("tree", "version", "help", "self") or sub is None:
            return
        else:
            self.unguard(call.part)

    def uvx(self, call: _Call) -> None:
        self.runner(call, 1, _UVX)

    def uv_pip(self, call: _Call, words: list[_Word]) -> None:
        if not words or words[0].value != "install":
            if words and words[0].value in ("list", "freeze", "show", "check", "tree"):
                return
            self.unguard(call.part)
            return
        spec = _Spec.of(
            flags="-U --upgrade --reinstall --no-deps --system --break-system-packages --user --pre -q --quiet -v "
                  "--verbose --no-cache -n --offline --native-tls --compile-bytecode --dry-run --all-extras "
                  "--no-build-isolation --no-build --strict --refresh --exact --require-hashes --no-verify-hashes "
                  "--no-config --no-sources --torch-backend",
            valued="-p --python -r --requirement --requirements -c --constraint --constraints -e --editable -i "
                   "--index-url --extra-index-url -f --find-links --index --default-index --target --prefix "
                   "--python-platform --python-version --exclude-newer --index-strategy --keyring-provider "
                   "--resolution --prerelease --config-setting -C --override --overrides --upgrade-package -P "
                   "--reinstall-package --no-binary --only-binary --link-mode --refresh-package --extra --group "
                   "--cache-dir --directory --project --color --no-build-package --no-build-isolation-package",
            allow_unknown=True)
        parsed = _parse(words[1:], spec)
        if not self.parsed_ok(call, parsed, "uv pip install"):
            return
        if parsed.has("--dry-run"):
            return
        redirect = self.install_env(call, "uv")
        if redirect is None:
            return
        python = parsed.value("-p", "--python") or redirect.get("python")
        if python is not None:
            interpreter = self.interpreter_option(call, python)
        elif parsed.has("--system") or redirect.get("system"):
            interpreter = self.which(call, "python3") or self.which(call, "python")
        else:
            interpreter = self.uv_environment(call)
        sources = self.package_sources(call, "uv", parsed, self.uv_index_config(call))
        if sources is None:
            return
        self.python_install(call, "uv.pip_install", "uv", parsed, interpreter=interpreter, how="uv pip install",
                            extra=sources)

    def uv_index_config(self, call: _Call) -> dict[str, str]:
        """Whether uv's configuration (the nearest pyproject.toml/uv.toml, the user's uv.toml)
        names package sources. Their precedence is not modelled, so an install that relies on
        them gets no ``index`` slot (unknown) rather than a guessed one."""
        import tomllib

        files: list[str] = []
        directory = call.ctx.cwd
        while directory is not None:
            for name in ("uv.toml", "pyproject.toml"):
                if (directory / name).is_file():
                    files.append(str(directory / name))
            if directory.parent == directory:
                break
            directory = directory.parent
        xdg = call.env.get("XDG_CONFIG_HOME") or os.path.join(call.env.get("HOME", "/nonexistent"), ".config")
        files.append(os.path.join(xdg, "uv", "uv.toml"))
        for path in files:
            try:
                with open(path, "rb") as handle:
                    data = tomllib.load(handle)
            except (OSError, ValueError):
                continue
            table = data.get("tool", {}).get("uv", {}) if path.endswith("pyproject.toml") else data
            if isinstance(table, dict) and any(k in table for k in ("index", "index-url", "extra-index-url",
                                                                      "find-links", "no-index")):
                return {"config:uv": path}
        return {}

    def uv_environment(self, call: _Call) -> str | None:
        """The interpreter uv pip uses by default: $VIRTUAL_ENV, else the nearest .venv."""
        virtual_env = call.env.get("VIRTUAL_ENV")
        if virtual_env and "\0" not in virtual_env:
            return os.path.join(self.absolute(call.ctx, virtual_env, follow=False) or virtual_env, "bin", "python")
        directory = call.ctx.cwd
        while directory is not None:
            if (directory / ".venv" / "pyvenv.cfg").is_file():
                return str(directory / ".venv" / "bin" / "python")
            if directory.parent == directory:
                break
            directory = directory.parent
        return None

    def uv_add(self, call: _Call, words: list[_Word]) -> None:
        spec = _Spec.of(
            flags="--dev --editable --raw --raw-sources --frozen --locked --no-sync --active --workspace --no-workspace "
                  "-q --quiet -v --verbose --offline --no-cache --upgrade -U --reinstall --no-install-project "
                  "--no-config --no-build-isolation --compile-bytecode --dry-run --native-tls",
            valued="--optional --group --rev --tag --branch --extra --package --script -p --python --index "
                   "--default-index --index-url --extra-index-url -r --requirements -c --constraints --bounds "
                   "--marker -m --directory --project --cache-dir --upgrade-package -P --link-mode --resolution "
                   "--prerelease --exclude-newer --index-strategy -f --find-links --color",
            allow_unknown=True)
        parsed = _parse(words, spec)
        if not self.parsed_ok(call, parsed, "uv add"):
            return
        if parsed.has("--dry-run"):
            return
        venv = None
        project_env = call.env.get("UV_PROJECT_ENVIRONMENT")
        if parsed.has("--active") and call.env.get("VIRTUAL_ENV"):
            venv = self.absolute(call.ctx, call.env["VIRTUAL_ENV"], follow=False)
        elif project_env:
            venv = self.absolute(call.ctx, project_env, follow=False)
        self.python_install(call, "uv.add", "uv", parsed, interpreter=None, how="uv add",
                            extra={"venv": venv, "dev": True if parsed.has("--dev") else None,
                                   "group": parsed.value("--group")})

    def uv_venv(self, call: _Call, words: list[_Word]) -> None:
        spec = _Spec.of(flags="--seed --allow-existing --clear --system-site-packages --relocatable -q --quiet -v "
                              "--verbose --no-project --no-config --offline --native-tls --no-cache",
                        valued="-p --python --prompt --index-url --extra-index-url --index --default-index "
                               "--link-mode --index-strategy --keyring-provider --exclude-newer --cache-dir "
                               "--directory --project --color -f --find-links",
                        allow_unknown=True)
        parsed = _parse(words, spec)
        if not self.parsed_ok(call, parsed, "uv venv"):
            return
        python = parsed.value("-p", "--python")
        interpreter = self.interpreter_option(call, python) if python else None
        path = parsed.positionals[0] if parsed.positionals else _Word.literal(
            call.env.get("UV_PROJECT_ENVIRONMENT") or ".venv")
        self.venv_action(call, path, interpreter, via="uv venv", clear=parsed.has("--clear") or None)

    def venv(self, call: _Call, words: list[_Word], *, interpreter: str | None, via: str) -> None:
        spec = _Spec.of(flags="--system-site-packages --symlinks --copies --clear --upgrade --without-pip "
                              "--upgrade-deps --without-scm-ignore-files -h --help",
                        valued="--prompt")
        parsed = _parse(words, spec)
        if not self.parsed_ok(call, parsed, f"{via}"):
            return
        for path in parsed.positionals:
            self.venv_action(call, path, interpreter, via=via, clear=parsed.has("--clear") or None)

    def virtualenv(self, call: _Call, interpreter: str | None = None) -> None:
        spec = _Spec.of(flags="--clear --system-site-packages --symlinks --copies --always-copy --no-pip "
                              "--no-setuptools --no-wheel --no-download --download --no-periodic-update --no-vcs-ignore "
                              "-q --quiet -v --verbose --reset-app-data --upgrade-embed-wheels --read-only-app-data",
                        valued="-p --python --prompt --activators --creator --seeder --app-data --pip --setuptools "
                               "--wheel --extra-search-dir",
                        allow_unknown=True)
        parsed = _parse(call.args, spec)
        if not self.parsed_ok(call, parsed, "virtualenv"):
            return
        python = parsed.value("-p", "--python")
        chosen = self.interpreter_option(call, python) if python else interpreter
        for path in parsed.positionals:
            self.venv_action(call, path, chosen, via="virtualenv", clear=parsed.has("--clear") or None)

    def venv_action(self, call: _Call, path_word: _Word, interpreter: str | None, *, via: str,
                    clear: bool | None) -> None:
        for path, inside in self.expand(call, path_word, follow=True) or ():
            self.emit("venv.create", "python", {"path": path, "interpreter": interpreter, "inside_workspace": inside,
                                                "clear": clear},
                      target=path, reason=f"{via} creates {path}")

    def poetry(self, call: _Call) -> None:
        global_spec = _Spec.of(flags="-q --quiet -v -vv -vvv --verbose -n --no-interaction --ansi --no-ansi "
                                     "--no-plugins --no-cache -V --version -h --help",
                               valued="-C --directory -P --project", stop_at_positional=True)
        parsed = _parse(call.args, global_spec)
        if not self.parsed_ok(call, parsed, "poetry"):
            return
        ctx = call.ctx
        for name in ("-C", "--directory", "-P", "--project"):
            if parsed.has(name):
                ctx = call.ctx.copy()
                value = parsed.value(name)
                ctx.cwd = self.resolve_dir(call.ctx, value) if value else None
        start = 1 + (parsed.rest if parsed.rest is not None else len(call.args))
        if start >= len(call.words):
            return
        inner = _Call(call.words, call.env, ctx, call.part, call.kept)
        sub = call.words[start].value
        if sub == "add":
            spec = _Spec.of(flags="-D --dev -e --editable --allow-prereleases --dry-run --lock -q --quiet -v "
                                  "--verbose -n --no-interaction --optional",
                            valued="-G --group -E --extras --source --python --platform --markers",
                            allow_unknown=True)
            added = _parse(call.words[start + 1:], spec)
            if not self.parsed_ok(call, added, "poetry add"):
                return
            if added.has("--dry-run"):
                return
            self.python_install(inner, "poetry.add", "poetry", added, interpreter=None, how="poetry add",
                                extra={"dev": True if added.has("-D", "--dev") else None,
                                       "group": added.value("-G", "--group")})
        elif sub == "run":
            self.runner(inner, start + 1, _Spec.of(stop_at_positional=True))
        elif sub == "shell":
            self.interactive(call, "an interactive shell in the environment")
        elif sub in ("show", "check", "about", "help", "list", "version", "search", "config", "env"):
            if sub in ("config", "env"):
                self.unguard(call.part)
        else:
            self.unguard(call.part)

    def generic_add(self, call: _Call, operation: str, tool: str) -> None:
        """Installs through package managers the built-in contract does not declare."""
        packages = [w for w in call.args[1:] if (w.value or "x")[:1] != "-"]
        if not packages:
            self.unguard(call.part)
            return
        for word in packages:
            if word.value is None:
                self.fail(f"a package of `{call.name}` is only known at run time", call.part)
                continue
            name, version = _split_python_requirement(word.value)
            self.emit(operation, tool, {"package": name, "version": version}, target=name,
                      reason=f"{call.name} installs {word.value}")

    # -- Node --

    def npm(self, call: _Call) -> None:
        tool = _canonical(call.name.rsplit("/", 1)[-1])
        spec = _Spec.of(
            flags="-D --save-dev -P --save-prod -O --save-optional -E --save-exact -B --save-bundle --no-save -S --save "
                  "-g --global -f --force --legacy-peer-deps --strict-peer-deps --dry-run --ignore-scripts --no-audit "
                  "--no-fund --prefer-offline --prefer-online --offline --package-lock-only --no-package-lock "
                  "--foreground-scripts -y --yes --no -q --quiet --silent -s -d --loglevel --workspaces -ws "
                  "--include-workspace-root --save-peer --frozen-lockfile --no-frozen-lockfile -W "
                  "--ignore-workspace-root-check -T --tilde --exact --dev --peer --optional --recursive -r "
                  "--workspace-root -w --shamefully-hoist --no-optional --production --prod -v --version -h --help "
                  "--if-present --stream --parallel --no-bail --immutable",
            valued="--workspace --prefix --registry --tag --omit --include --install-strategy --cache --userconfig "
                   "--location "
                   "-C --dir --filter -F --cwd --reporter --network-concurrency --modules-folder --mode",
            allow_unknown=True)
        parsed = _parse(call.args, spec)
        if not self.parsed_ok(call, parsed, f"{tool}"):
            return
        ctx = call.ctx
        for name in ("--prefix", "-C", "--dir", "--cwd"):
            value = parsed.value(name)
            if parsed.has(name):
                ctx = call.ctx.copy()
                ctx.cwd = self.resolve_dir(call.ctx, value) if value else None
        inner = _Call(call.words, call.env, ctx, call.part, call.kept)
        positionals = parsed.positionals
        if parsed.has("-v", "--version", "-h", "--help") and not positionals:
            return
        sub = positionals[0].value if positionals else ("install" if tool in ("yarn", "bun") else None)
        if sub is None:
            if positionals:
                self.fail(f"the {tool} subcommand is only known at run time", call.part)
            return
        rest = positionals[1:]
        if tool == "yarn" and sub == "global" and rest and rest[0].value == "add":
            self.node_install(inner, tool, rest[1:], parsed, force_global=True)
            return
        installs = {"npm": ("install", "i", "add", "in", "ins", "inst", "insta", "instal", "isnt", "isnta", "isntal",
                            "isntall"),
                    "pnpm": ("add", "install", "i"), "yarn": ("add",), "bun": ("add", "install", "i", "a")}
        if sub in installs.get(tool, ()):
            if not rest:
                self.unguard(call.part)  # installs what the lockfile says
                return
            self.node_install(inner, tool, rest, parsed)
            return
        if sub in ("test", "t", "tst") and tool != "bun" or (tool == "bun" and sub == "test"):
            self.test_run(inner, call.args)
            return
        if sub in ("run", "run-script", "rum", "urn"):
            script = rest[0].value if rest else None
            if script is None and rest:
                self.fail(f"the {tool} script is only known at run time", call.part)
                return
            if script is not None and (script == "test" or script.startswith("test:")):
                self.test_run(inner, call.args)
                return
            if script is not None and _MIGRATION_SCRIPT.search(script):
                self.migration(inner, f"{tool} run {script}", call.args)
                return
            self.unguard(call.part)
            return
        if sub == "repl" and tool in ("bun", "pnpm", "npm"):
            self.interactive(call, "an interactive interpreter")
            return
        if sub in ("exec", "x", "dlx") or (tool == "pnpm" and sub == "dlx"):
            index = call.words.index(positionals[0])
            self.runner(inner, index + 1, _NPX)
            return
        if tool == "yarn" and sub in ("test",):
            self.test_run(inner, call.args)
            return
        if sub in ("ls", "list", "ll", "la", "view", "info", "show", "v", "outdated", "search", "help", "prefix",
                   "root", "bin", "whoami", "ping", "why", "explain", "fund", "docs", "repo", "bugs"):
            return
        if tool == "yarn" and sub not in ("install", "remove", "upgrade", "up", "link", "unlink", "dedupe", "pack",
                                          "publish", "cache", "config", "init", "import", "set", "plugin", "workspace",
                                          "workspaces", "create", "node", "patch", "rebuild", "npm", "constraints"):
            # yarn <script>: scripts named like tests or migrations
            if sub == "test" or sub.startswith("test:"):
                self.test_run(inner, call.args)
            elif _MIGRATION_SCRIPT.search(sub):
                self.migration(inner, f"yarn {sub}", call.args)
            else:
                self.unguard(call.part)
            return
        self.unguard(call.part)

    def node_install(self, call: _Call, tool: str, packages: list[_Word], parsed: _Parsed, *,
                     force_global: bool = False) -> None:
        operation = {"npm": "npm.install", "pnpm": "pnpm.add", "yarn": "yarn.add", "bun": "bun.add"}[tool]
        dev = parsed.has("-D", "--save-dev", "--dev")
        redirect = self.install_env(call, tool)
        if redirect is None:
            return
        location = parsed.value("--location")
        is_global = force_global or parsed.has("-g", "--global") or bool(redirect.get("global")) or location == "global"
        prefix = parsed.value("--prefix") if tool == "npm" else None
        prefix = prefix or (redirect.get("prefix") if tool == "npm" or is_global else None)
        if prefix:
            prefix = self.represent_path(call, prefix)
        for word in packages:
            if word.value is None:
                self.fail(f"a package of `{tool}` is only known at run time", call.part)
                continue
            name, version = _split_node_package(word.value)
            self.emit(operation, tool, {"package": name, "version": version, "dev": True if dev else None,
                                        "global": True if is_global else None, "prefix": prefix},
                      target=name, reason=f"{tool} installs {word.value}")

    def npx(self, call: _Call) -> None:
        self.runner(call, 1, _NPX)

    # -- tests, builds, migrations --

    def test_run(self, call: _Call, _rest: Sequence[_Word] = ()) -> None:
        values = [w.value for w in call.words]
        if any(flag in values for flag in ("--collect-only", "--co", "--version", "--help", "-h", "--fixtures",
                                           "--markers")) and _canonical(call.name.rsplit("/", 1)[-1]) in (
                "pytest", "python"):
            return
        text = call.text()
        if text is None:
            self.fail("the test command has arguments only known at run time", call.part)
            return
        self.emit("test.run", "shell", {"command": text, "cwd": self.cwd_arg(call)}, reason=f"runs the tests: {text}")

    def pytest(self, call: _Call) -> None:
        self.test_run(call)

    def go_or_cargo(self, call: _Call) -> None:
        sub = call.args[0].value if call.args else None
        if sub == "test":
            self.test_run(call)
        elif sub in ("version", "env", "list", "doc", "vet", "help", "tree", "metadata", "search"):
            return
        else:
            self.unguard(call.part)

    def make(self, call: _Call) -> None:
        spec = _Spec.of(flags="-k -s -B -i -e -w -n -q -t -r -R --silent --quiet --no-print-directory "
                              "--always-make --keep-going --ignore-errors --environment-overrides --dry-run "
                              "--just-print --recon --question --touch --print-directory --no-builtin-rules",
                        valued="-C -f -I -o -W --directory --file --makefile --include-dir --old-file --what-if",
                        optional="-j -l -O --jobs --load-average --output-sync --debug -d",
                        allow_unknown=True)
        words = list(call.args)
        for index, word in enumerate(words):  # -j 4
            if word.value == "-j" and index + 1 < len(words) and (words[index + 1].value or "").isdigit():
                words = words[:index] + [_Word.literal("-j" + (words[index + 1].value or ""))] + words[index + 2:]
                break
        parsed = _parse(words, spec)
        if not self.parsed_ok(call, parsed, "make"):
            return
        if parsed.has("-n", "--dry-run", "--just-print", "--recon", "-q", "--question"):
            return
        targets = [w.value for w in parsed.positionals if w.value is None or "=" not in w.value]
        if any(t is None for t in targets):
            self.fail("a make target is only known at run time", call.part)
            return
        if set(targets) & {"test", "tests", "check"}:
            self.test_run(call)
            return
        if any(t and _MIGRATION_SCRIPT.search(t) for t in targets):
            self.migration(call, "make", call.args)
            return
        self.unguard(call.part)

    def migration(self, call: _Call, framework: str, _rest: Sequence[_Word] = ()) -> None:
        text = call.text()
        self.emit(DB_MIGRATE, "shell", {"command": text, "framework": framework, "cwd": self.cwd_arg(call)},
                  reason=f"{framework} changes a database schema")
        if text is None:
            self.fail("the migration command has arguments only known at run time", call.part)

    def migration_tool(self, call: _Call) -> None:
        name = call.name.rsplit("/", 1)[-1]
        values = [w.value or "" for w in call.args]
        positionals = [v for v in values if not v.startswith("-")]
        first = positionals[0] if positionals else ""
        second = positionals[1] if len(positionals) > 1 else ""
        risky = False
        if name == "alembic":
            risky = first in ("upgrade", "downgrade", "stamp")
        elif name in ("django-admin", "manage.py"):
            self.django(call, call.args)
            return
        elif name in ("rails", "rake"):
            if first in ("test", "spec") or first.startswith("test:"):
                self.test_run(call)
                return
            risky = first.startswith("db:") and first not in ("db:version", "db:migrate:status")
        elif name == "prisma":
            risky = (first == "migrate" and second in ("dev", "deploy", "reset", "resolve")) or (
                first == "db" and second in ("push", "execute", "seed"))
        elif name == "flask":
            risky = first == "db" and second in ("upgrade", "downgrade", "stamp", "migrate")
        elif name == "knex":
            risky = first.startswith("migrate:") and first not in ("migrate:status", "migrate:list", "migrate:make") \
                or first.startswith("seed:run")
        elif name in ("sequelize", "sequelize-cli"):
            risky = first.startswith("db:")
        elif name.startswith("typeorm"):
            risky = first in ("migration:run", "migration:revert", "schema:sync", "schema:drop", "query")
        elif name == "dbmate":
            risky = first in ("up", "down", "rollback", "migrate", "drop", "create", "load")
        elif name == "goose":
            risky = any(p in ("up", "up-by-one", "up-to", "down", "down-to", "redo", "reset") for p in positionals)
        elif name == "migrate":
            risky = any(p in ("up", "down", "drop", "force", "goto") for p in positionals)
        elif name == "flyway":
            risky = first in ("migrate", "clean", "repair", "baseline", "undo")
        elif name == "liquibase":
            risky = first.startswith(("update", "rollback", "drop-all", "dropAll"))
        elif name == "supabase":
            risky = first == "db" and second in ("reset", "push")
        elif name == "diesel":
            risky = first in ("migration", "database") and second in ("run", "redo", "revert", "reset", "setup")
        elif name == "sqlx":
            risky = first in ("migrate", "database", "db") and second in ("run", "revert", "reset", "drop", "setup")
        elif name == "drizzle-kit":
            risky = first in ("push", "migrate", "drop")
        if risky:
            self.migration(call, name)
        else:
            self.unguard(call.part)

    def django(self, call: _Call, words: Sequence[_Word]) -> None:
        values = [w.value or "" for w in words]
        command = next((v for v in values if not v.startswith("-")), "")
        if command in ("migrate", "flush", "reset_db", "loaddata", "sqlflush_apply"):
            self.migration(call, "django")
        elif command == "test":
            self.test_run(call)
        else:
            self.unguard(call.part)

    def bundle(self, call: _Call) -> None:
        if call.args and call.args[0].value == "exec":
            self.runner(call, 2, _Spec.of(stop_at_positional=True))
        else:
            self.unguard(call.part)


def _git_listing(sub: str, values: list[str | None]) -> bool:
    """Whether ``git remote``/``tag``/``stash``/``config``/``notes``/``reflog`` only lists."""
    if any(v is None for v in values):
        return False
    words = [v for v in values if v is not None]
    if sub == "remote":
        return not [w for w in words if w not in ("-v", "--verbose")] or (words[0] in ("show", "get-url"))
    if sub == "tag":
        return not words or words[0] in ("-l", "--list", "-n", "--contains", "--points-at", "--merged",
                                         "--no-merged", "--sort") or words[0].startswith(("--sort=", "--format="))
    if sub == "stash":
        return bool(words) and words[0] in ("list", "show")
    if sub == "config":
        return bool(words) and words[0] in ("--get", "--get-all", "--get-regexp", "--list", "-l", "get", "list",
                                            "--show-origin", "--show-scope", "--name-only")
    if sub in ("notes", "reflog"):
        return not words or words[0] in ("list", "show")
    return False


_GIT_MESSAGE_EDITORS = frozenset({"commit", "tag"})


def _git_opens_editor(sub: str, values: list[str | None]) -> bool:
    """Whether ``git commit`` / ``git tag -a`` opens an editor for its message (no -m/-F/...)."""
    words = [v for v in values if v is not None]
    if len(words) < len(values):
        return False  # only known at run time: decided by the arguments' own checks
    if "-e" in words or "--edit" in words:
        return True
    short = "".join(w[1:] for w in words if w.startswith("-") and not w.startswith("--"))
    longs = {w.partition("=")[0] for w in words if w.startswith("--")}
    if sub == "tag":
        annotated = bool(set(short) & {"a", "s", "u"}) or bool(longs & {"--annotate", "--sign", "--local-user"})
        listing = bool(set(short) & {"l", "d", "v"}) or bool(longs & {"--list", "--delete", "--verify"})
        if not annotated or listing:
            return False
        return not (set(short) & {"m", "F"} or longs & {"--message", "--file"})
    if longs & {"--message", "--file", "--reuse-message", "--no-edit", "--dry-run", "--fixup", "--help"}:
        return False
    return not set(short) & {"m", "F", "C", "h"}


def _ref_name(destination: str) -> tuple[str, str | None]:
    """A push destination as the branch slot holds it, and its kind when it is not a branch."""
    if destination.startswith("refs/heads/"):
        return destination.removeprefix("refs/heads/"), None
    if destination.startswith("refs/tags/"):
        return destination, "tag"
    if destination.startswith("refs/"):
        return destination, "other"
    return destination, None


_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*?)\s*$")
_MIGRATION_SCRIPT = re.compile(r"(^|[:_-])(migrate|migration|migrations|db:push|db:reset)($|[:_-])")


def _split_python_requirement(value: str) -> tuple[str, str | None]:
    if value.startswith((".", "/", "~")) or "://" in value or value.endswith((".whl", ".tar.gz", ".zip")):
        return value, None
    match = _REQUIREMENT.match(value)
    if not match:
        return value, None
    name, _extras, rest = match.groups()
    if rest.startswith("@") and "://" not in rest:
        rest = rest[1:].strip()  # poetry add name@^2.0
    return name, (rest or None)


def _split_node_package(value: str) -> tuple[str, str | None]:
    if value.startswith((".", "/", "~", "git+", "github:", "file:", "npm:")) or "://" in value:
        return value, None
    at = value.rfind("@")
    if at > 0:
        return value[:at], value[at + 1:] or None
    return value, None


def _interpreter_of_pip(path: str | None, search_path: str | None) -> str | None:
    """The interpreter a pip executable installs into: the venv's python next to it, or its
    shebang's interpreter."""
    if not path:
        return None
    directory = os.path.dirname(path)
    if os.path.isfile(os.path.join(os.path.dirname(directory), "pyvenv.cfg")):
        for name in ("python", "python3"):
            candidate = os.path.join(directory, name)
            if os.path.exists(candidate):
                return candidate
        return os.path.join(directory, "python")
    try:
        with open(path, "rb") as handle:
            first = handle.readline(512).decode("utf-8", "replace").strip()
    except OSError:
        return None
    if first.startswith("#!"):
        parts = first[2:].split()
        if parts and parts[0].endswith("/env") and len(parts) > 1:
            found = shutil.which(parts[1], path=search_path) if search_path is not None else None
            return os.path.normpath(found) if found else None
        if parts and _PYTHON_NAME.match(parts[0].rsplit("/", 1)[-1]):
            return parts[0]
    return None


_SED_SIMPLE = frozenset("=dDgGhHlnNpPqQxzF")


def _sed_effects(script: str) -> tuple[list[str], bool] | None:
    """The files a sed script writes (``w``, ``W``, ``s///w``) and whether it runs commands
    (``e``, ``s///e``); None if the script cannot be read with confidence."""
    written: list[str] = []
    runs = False
    i, n = 0, len(script)

    def rest_of_line(start: int) -> tuple[str, int]:
        end = script.find("\n", start)
        end = n if end < 0 else end
        return script[start:end].strip(), end

    def delimited(start: int, delimiter: str) -> int | None:
        """The index after the closing delimiter of a part that starts at ``start``."""
        k = start
        while k < n:
            if script[k] == "\\":
                k += 2
                continue
            if script[k] == delimiter:
                return k + 1
            k += 1
        return None

    def address(k: int) -> int | None:
        if k < n and script[k] == "$":
            return k + 1
        if k < n and script[k].isdigit():
            while k < n and (script[k].isdigit() or script[k] == "~"):
                k += 1
            return k
        if k < n and script[k] in "/\\":
            delimiter = "/"
            if script[k] == "\\":
                if k + 1 >= n:
                    return None
                delimiter, k = script[k + 1], k + 1
            end = delimited(k + 1, delimiter)
            if end is None:
                return None
            while end < n and script[end] in "IM":
                end += 1
            return end
        return k

    while i < n:
        char = script[i]
        if char in " \t\n;}":
            i += 1
            continue
        if char == "#":
            i = rest_of_line(i)[1]
            continue
        after = address(i)
        if after is None:
            return None
        i = after
        if i < n and script[i] == ",":
            i += 1
            if i < n and script[i] in "+~":
                i += 1
                while i < n and script[i].isdigit():
                    i += 1
            else:
                after = address(i)
                if after is None:
                    return None
                i = after
        while i < n and script[i] in " \t!":
            i += 1
        if i >= n:
            return None
        command = script[i]
        i += 1
        if command == "{":
            continue
        if command in "aic":
            while True:  # text up to an unescaped end of line
                end = script.find("\n", i)
                if end < 0:
                    i = n
                    break
                if end > 0 and script[end - 1] == "\\":
                    i = end + 1
                    continue
                i = end
                break
            continue
        if command in "btT:v":
            while i < n and script[i] not in ";\n":
                i += 1
            continue
        if command in "rRwW":
            name, i = rest_of_line(i)
            if command in "wW":
                if not name:
                    return None
                written.append(name)
            continue
        if command == "e":
            runs = True
            i = rest_of_line(i)[1]
            continue
        if command in "sy":
            if i >= n or script[i] in "\n\\":
                return None
            delimiter = script[i]
            middle = delimited(i + 1, delimiter)
            end = delimited(middle, delimiter) if middle is not None else None
            if end is None:
                return None
            i = end
            if command == "s":
                while i < n and script[i] in "gpiImMe0123456789w":
                    if script[i] == "e":
                        runs = True
                    if script[i] == "w":
                        name, i = rest_of_line(i + 1)
                        if not name:
                            return None
                        written.append(name)
                        break
                    i += 1
            continue
        if command in _SED_SIMPLE:
            while i < n and script[i].isdigit():
                i += 1
            continue
        return None
    return written, runs


def _redirect_streams(node: Any, source: bytes, ctx: _Ctx) -> None:
    """Record in ``ctx`` where a redirect points standard input or output."""
    if node.type in ("heredoc_redirect", "herestring_redirect"):
        body = [c for c in node.children if c.type not in ("heredoc_start", "heredoc_end", "<<", "<<-", "<<<")
                and not (c.type in _REDIRECTS)]
        dynamic = any(_has_expansion(c) for c in body)
        ctx.stdin = "dynamic" if dynamic else "here"
        return
    operator = next((c.type for c in node.children if not c.is_named), "")
    descriptor = next((_node_text(c, source) for c in node.children if c.type == "file_descriptor"), "")
    if operator in ("<", "<>") and descriptor in ("", "0"):
        ctx.stdin = "file"
    elif operator in (">", ">>", ">|", "&>", "&>>") and descriptor in ("", "1"):
        ctx.stdout = "file"
    elif operator == ">&" and descriptor in ("", "1"):
        ctx.stdout = "file"


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


def _npx_call(self: _Analyzer, call: _Call) -> None:
    values = [w.value for w in call.words]
    if "-c" in values or "--call" in values:
        index = values.index("-c") if "-c" in values else values.index("--call")
        body = values[index + 1] if index + 1 < len(values) else None
        if body is None:
            self.fail("the body of `npx -c` is only known at run time", call.part)
            return
        inner = call.ctx.copy()
        inner.depth += 1
        self.analyze_text(body, inner, call.part)
        return
    self.runner(call, 1, _NPX)


_HANDLERS: dict[str, Callable[[_Analyzer, _Call], None]] = {
    "git": _Analyzer.git,
    "sudo": _Analyzer.sudo,
    "doas": _Analyzer.simple_wrapper,
    "env": _Analyzer.env_wrapper,
    "time": _Analyzer.simple_wrapper,
    "command": _Analyzer.simple_wrapper,
    "exec": _Analyzer.simple_wrapper,
    "nice": _Analyzer.simple_wrapper,
    "ionice": _Analyzer.simple_wrapper,
    "timeout": _Analyzer.simple_wrapper,
    "stdbuf": _Analyzer.simple_wrapper,
    "flock": _Analyzer.simple_wrapper,
    **{name: _Analyzer.simple_wrapper for name in _TRANSPARENT},
    "xargs": _Analyzer.xargs,
    "watch": _Analyzer.watch,
    "eval": _Analyzer.eval_builtin,
    "trap": _Analyzer.shell_body_builtin,
    "alias": _Analyzer.shell_body_builtin,
    "source": _Analyzer.source,
    ".": _Analyzer.source,
    "rm": _Analyzer.rm,
    "rmdir": _Analyzer.rmdir,
    "unlink": _Analyzer.unlink,
    "shred": _Analyzer.shred,
    "trash": _Analyzer.trash,
    "trash-put": _Analyzer.trash,
    "rimraf": _Analyzer.trash,
    "del-cli": _Analyzer.trash,
    "find": _Analyzer.find,
    "tee": _Analyzer.tee,
    "cp": _Analyzer.cp,
    "mv": _Analyzer.mv,
    "ln": _Analyzer.ln,
    "install": _Analyzer.install,
    "touch": _Analyzer.touch,
    "truncate": _Analyzer.truncate,
    "sed": _Analyzer.sed,
    "dd": _Analyzer.dd,
    "chmod": _Analyzer.chmod,
    "chown": _Analyzer.chmod,
    "chgrp": _Analyzer.chmod,
    "rsync": _Analyzer.rsync,
    "ssh": _Analyzer.ssh,
    "curl": _Analyzer.curl,
    "wget": _Analyzer.wget,
    "zip": _Analyzer.zip,
    "split": _Analyzer.split,
    "csplit": _Analyzer.split,
    **{name: _Analyzer.compressor for name in _COMPRESSORS},
    "python": _Analyzer.python,
    "pip": _Analyzer.pip,
    "uv": _Analyzer.uv,
    "uvx": _Analyzer.uvx,
    "poetry": _Analyzer.poetry,
    "virtualenv": _Analyzer.virtualenv,
    "pdm": lambda self, call: (self.generic_add(call, "pdm.add", "pdm") if call.args and call.args[0].value == "add"
                               else self.runner(call, 2, _Spec.of(stop_at_positional=True))
                               if call.args and call.args[0].value == "run" else self.unguard(call.part)),
    "pipenv": lambda self, call: (self.generic_add(call, "pipenv.install", "pipenv")
                                  if call.args and call.args[0].value == "install"
                                  else self.interactive(call, "an interactive shell in the environment")
                                  if call.args and call.args[0].value == "shell"
                                  else self.runner(call, 2, _Spec.of(stop_at_positional=True))
                                  if call.args and call.args[0].value == "run" else self.unguard(call.part)),
    "conda": lambda self, call: (self.generic_add(call, "conda.install", "conda")
                                 if call.args and call.args[0].value == "install" else self.unguard(call.part)),
    "mamba": lambda self, call: (self.generic_add(call, "conda.install", "mamba")
                                 if call.args and call.args[0].value == "install" else self.unguard(call.part)),
    "pipx": lambda self, call: (self.runner(call, 2, _UVX) if call.args and call.args[0].value == "run"
                                else self.unguard(call.part)),
    "npm": _Analyzer.npm,
    "pnpm": _Analyzer.npm,
    "yarn": _Analyzer.npm,
    "bun": _Analyzer.npm,
    "npx": _npx_call,
    "bunx": _npx_call,
    "pytest": _Analyzer.pytest,
    "tox": _Analyzer.pytest,
    "nox": _Analyzer.pytest,
    "jest": _Analyzer.pytest,
    "vitest": _Analyzer.pytest,
    "mocha": _Analyzer.pytest,
    "rspec": _Analyzer.pytest,
    "phpunit": _Analyzer.pytest,
    "ctest": _Analyzer.pytest,
    "go": _Analyzer.go_or_cargo,
    "cargo": _Analyzer.go_or_cargo,
    "make": _Analyzer.make,
    "gmake": _Analyzer.make,
    "bundle": _Analyzer.bundle,
    **{name: _Analyzer.migration_tool for name in (
        "alembic", "django-admin", "manage.py", "rails", "rake", "prisma", "flask", "knex", "sequelize",
        "sequelize-cli", "typeorm", "typeorm-ts-node-commonjs", "typeorm-ts-node-esm", "dbmate", "goose", "migrate",
        "flyway", "liquibase", "supabase", "diesel", "sqlx", "drizzle-kit")},
}
_GIT_HANDLERS: dict[str, Callable[[_Analyzer, _Call, _Repo, list[_Word]], None]] = {
    "push": _Analyzer.git_push,
    "checkout": _Analyzer.git_checkout,
    "switch": _Analyzer.git_switch,
    "restore": _Analyzer.git_restore,
    "branch": _Analyzer.git_branch,
    "reset": _Analyzer.git_reset,
    "clean": _Analyzer.git_clean,
    "rebase": _Analyzer.git_rebase,
    "worktree": _Analyzer.git_worktree,
    "rm": _Analyzer.git_rm,
    "mv": _Analyzer.git_mv,
    "update-ref": _Analyzer.git_update_ref,
    "config": _Analyzer.git_config_command,
}


# --- the public entry points -----------------------------------------------------------------


def analyze_command(command: str, *, cwd: str | Path, workspace: str | Path | None = None,
                    env: Mapping[str, str] | None = None, contract: Contract | None = None) -> ShellAnalysis:
    """Normalize what ``command`` would do, run by bash in ``cwd``, into actions.

    ``workspace`` (default: ``cwd``) is what paths are made relative to: a path inside it is
    written workspace-relative, any other path absolute. ``env`` (default: this process's
    environment) is the environment the command would see; PATH decides which ``pip`` or
    ``python`` runs and HOME what ``~`` means. ``contract``'s ``commands:`` rules classify
    programs the normalizer has no built-in handling for (without one, such programs are
    unguarded).
    """
    start = Path(os.path.realpath(cwd))
    root = Path(os.path.realpath(workspace)) if workspace is not None else start
    environment = dict(os.environ if env is None else env)
    environment.setdefault("PWD", str(start))
    analyzer = _Analyzer(command, root, environment, CommandRules.of(contract, root))
    ctx = _Ctx(start, environment)
    try:
        analyzer.analyze_text(command, ctx, command)
    except RecursionError:
        analyzer.fail("the command nests too deeply to analyze", command)
    unresolved_actions = [
        Action(tool="shell", operation=UNRESOLVED,
               args={"command": command, "part": part.strip()[:2000], "why": reason[:2000]},
               risk="high", reason=reason)
        for reason, part in analyzer.unresolved
    ]
    reasons = tuple(reason for reason, _ in analyzer.unresolved)
    actions = tuple(unresolved_actions + analyzer.actions)
    unguarded = tuple(part.strip() for part in analyzer.unguarded)
    return ShellAnalysis(command=command, actions=actions, unresolved=reasons, unguarded=unguarded,
                         read_only=not actions and not unguarded)


def command_disagreement(action: Action, *, cwd: str | Path, workspace: str | Path | None = None,
                         env: Mapping[str, str] | None = None, contract: Contract | None = None) -> str | None:
    """Why ``action``'s typed slots disagree with the shell command it will run, or None.

    For an action proposed with both typed slots and ``args.command`` (the API and planner
    paths), the command is normalized as the hook would normalize it and the proposal must be
    one of the actions it yields: same operation, and every slot the proposal types equal to
    the slot read from the command (an ``index`` that names the private index while the
    command installs from the public one disagrees). A command that cannot be read with
    confidence disagrees too. Without ``args.command`` there is nothing to compare: None.
    """
    command = action.args.get("command")
    if not isinstance(command, str) or not command.strip():
        return None
    analysis = analyze_command(command, cwd=cwd, workspace=workspace, env=env, contract=contract)
    if analysis.unresolved:
        return f"its command cannot be read with confidence: {analysis.unresolved[0]}"
    same = [a for a in analysis.actions if a.operation == action.operation]
    if not same:
        found = ", ".join(analysis.operations) or "no guarded action"
        return f"its command `{command[:200]}` is {found}, not {action.operation}"
    best = None
    for derived in same:
        differing = [name for name, value in action.args.items()
                     if name != "command" and name in derived.args and derived.args[name] != value]
        missing = [name for name in ("index", "extra_index", "find_links", "no_index", "target_dir", "user")
                   if name in derived.args and name not in action.args]
        if not differing and not missing:
            return None
        problem = "; ".join([f"{name} is {action.args[name]!r} but the command uses {derived.args[name]!r}"
                             for name in differing] +
                            [f"the command also sets {name} = {derived.args[name]!r}" for name in missing])
        best = best or problem
    return f"its slots disagree with its command `{command[:200]}`: {best}"


_PATH_KEYS = ("file_path", "path", "notebook_path", "absolute_path", "filePath", "filename", "file")


def file_action(tool_name: str, tool_input: Mapping[str, Any], *, cwd: str | Path,
                workspace: str | Path | None = None) -> Action:
    """The ``fs.write`` action of an agent's file tool (Edit, Write, MultiEdit, NotebookEdit,
    Gemini's write_file/replace ...).

    ``args.path`` is the target resolved against ``cwd`` (symlinks followed, as a write
    follows them), workspace-relative when inside ``workspace`` (default ``cwd``) and absolute
    otherwise; ``args.inside_workspace`` says which. An input without a usable path is a
    ``shell.unresolved`` action, which the gate stops.
    """
    start = Path(os.path.realpath(cwd))
    root = Path(os.path.realpath(workspace)) if workspace is not None else start
    raw = next((tool_input[key] for key in _PATH_KEYS if isinstance(tool_input.get(key), str) and tool_input[key]),
               None)
    if raw is None:
        return Action(tool="fs", operation=UNRESOLVED, args={"command": f"{tool_name} {dict(tool_input)!r}"[:2000]},
                      risk="high", reason=f"the {tool_name} input names no file path")
    expanded = os.path.expanduser(raw) if raw.startswith("~") else raw
    absolute = os.path.realpath(os.path.join(str(start), expanded))
    analyzer = _Analyzer("", root, {})
    path, inside = analyzer.represent(absolute)
    edits = tool_input.get("edits")
    args: dict[str, Any] = {"path": path, "inside_workspace": inside, "via": tool_name}
    link = analyzer.link_name(_Ctx(start, {}), expanded, path)
    if link is not None:
        args["link_path"] = link
    if isinstance(edits, list):
        args["edits"] = len(edits)
    return Action(tool="fs", operation="fs.write", target=path, args=args, risk="medium",
                  reason=f"{tool_name} writes {path}")
