"""The paths a program's own text names where StateWise cannot show the program only reads them.

The analyzer reads a program's calls (:mod:`.inline`) and turns the ones it knows into actions
(``open(p, "w")`` is a write of ``p``). A call it does not know (``socket.bind(p)``,
``os.mkfifo(p)``, ``net.createServer().listen(p)``) gives nothing, which is right for ordinary
work but not for StateWise's own folders: a program that binds a socket in the warm worker's
folder answers the guard's next checks. So every string a program names is kept here with
whether its every use is a read StateWise knows (:data:`PY_READS`, :data:`READS`: knowledge as
data); the hook's self-protection (:mod:`statewise.integrations.protect`) then denies a program
that names one of StateWise's protected paths in any other way, since a program the guard cannot
model that names a protected path is a write.

A string whose start is known and whose rest is computed (``f"/tmp/statewise-{uid}/x.sock"``)
is kept as a prefix: it names every path that starts so.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["PY_READS", "READS", "Named", "program_names", "python_names", "string_literals"]


@dataclass(frozen=True, slots=True)
class Named:
    """A string a program names: its value (only its start when ``prefix``); ``cwd``, the
    folder the program runs in (None: only known at run time), and ``where``, which program,
    are filled in by the analyzer."""

    value: str
    prefix: bool = False
    cwd: str | None = None
    where: str = ""


#: Python calls (after import aliases) whose path arguments are only read, or only shown: a
#: string given to one of them changes nothing. ``open`` is read-only unless its mode writes
#: (the analyzer reports that write itself).
PY_READS = frozenset({
    "open", "io.open", "builtins.open", "codecs.open", "print", "len", "repr", "os.listdir", "os.scandir",
    "os.walk", "os.stat", "os.lstat", "os.access", "os.readlink", "os.path.exists", "os.path.lexists",
    "os.path.isfile", "os.path.isdir", "os.path.islink", "os.path.getsize", "os.path.getmtime", "glob.glob", "glob.iglob", "fnmatch.fnmatch", "shutil.which", "logging.info", "logging.debug",
    "logging.warning", "sys.exit", "json.loads", "tomllib.loads",
})
#: pathlib methods that only read the path they are called on, and str methods whose answer is
#: not a path (a truth, a position).
PY_PATH_READS = frozenset({"read_text", "read_bytes", "exists", "is_file", "is_dir", "is_symlink", "stat", "lstat",
                           "iterdir", "glob", "rglob", "samefile", "match", "startswith", "endswith", "count",
                           "find", "rfind", "index"})
#: Methods that give another path or string made from the one they are called on: its use is
#: the use of what they give (``"/tmp/statewise-{}".format(uid)``, ``Path(p).resolve()``).
PY_METHOD_BUILDS = frozenset({"format", "replace", "join", "strip", "lstrip", "rstrip", "split", "rsplit",
                              "partition", "rpartition", "upper", "lower", "encode", "decode", "resolve", "absolute",
                              "expanduser", "joinpath", "with_name", "with_suffix", "with_stem"})
#: Calls that only build a path or a string from their arguments: the use of what they give
#: is the use of their arguments.
PY_BUILDS = frozenset({"os.path.join", "posixpath.join", "pathlib.Path", "pathlib.PosixPath", "pathlib.PurePath",
                       "Path", "PosixPath", "PurePath", "str", "os.fspath", "os.path.normpath", "os.path.expanduser",
                       "os.path.realpath", "os.path.abspath", "os.path.dirname", "os.path.basename", "bytes"})
#: The calls whose first string argument another language's program only reads or shows.
READS: dict[str, re.Pattern[str]] = {
    "node": re.compile(r"\b(?:readFileSync|existsSync|readdirSync|statSync|lstatSync|accessSync|readFile|readdir|"
                       r"console\.(?:log|error|info))\s*\(\s*$"),
    "perl": re.compile(r"(?:\bprint\b|\bsay\b|-[efdsrl])\s*\(?\s*$"),
    "ruby": re.compile(r"\b(?:File\.(?:read|exist\?|file\?|directory\?|readlines)|Dir\.(?:entries|glob|children)|"
                       r"puts|print|p)\b\s*\(?\s*$"),
    "awk": re.compile(r"\bprint\b\s*\(?\s*$"),
}
#: Where a language interpolates inside a string: the literal's known start ends there.
_INTERPOLATION = {"node": re.compile(r"\$\{"), "perl": re.compile(r"(?<!\\)[$@][\w{:]"), "ruby": re.compile(r"#\{")}


#: The closing bracket of each opening one (Perl's q(...), qx{...}).
_CLOSERS = {"{": "}", "(": ")", "[": "]", "<": ">"}


@dataclass(frozen=True, slots=True)
class _Literal:
    value: str | None  # None: interpolated, only known at run time
    end: int


def _string_at(code: str, start: int, language: str) -> _Literal | None:
    """The string literal starting at ``start`` (after whitespace), or None if there is none."""
    i = start
    while i < len(code) and code[i] in " \t":
        i += 1
    if i >= len(code):
        return None
    quote = code[i]
    if language == "perl" and code.startswith(("q(", "q{", "qq(", "qq{"), i):
        double = code[i + 1] == "q"
        opener = code[i + (2 if double else 1)]
        close = code.find(_CLOSERS[opener], i)
        if close < 0:
            return None
        body = code[i + (3 if double else 2):close]
        return _Literal(None if double and _interpolates(body, language) else body, close + 1)
    if quote not in "'\"`":
        return None
    if quote == "`" and language != "node":
        return None
    j = i + 1
    out: list[str] = []
    while j < len(code) and code[j] != quote:
        if code[j] == "\\" and j + 1 < len(code):
            nxt = code[j + 1]
            out.append({"n": "\n", "t": "\t"}.get(nxt, nxt) if quote != "'" or nxt in "'\\" else "\\" + nxt)
            j += 2
            continue
        out.append(code[j])
        j += 1
    if j >= len(code):
        return None
    body = "".join(out)
    dynamic = quote != "'" and _interpolates(code[i + 1:j], language) if language != "awk" else False
    return _Literal(None if dynamic else body, j + 1)


def string_literals(code: str, language: str) -> Iterator[tuple[int, _Literal]]:
    """Each string literal of a Perl, Node, Ruby or awk program with the index of its opening
    quote, left to right; the walk ends at a literal that does not close."""
    i = 0
    while i < len(code):
        char = code[i]
        if char in "'\"" or (char == "`" and language == "node"):
            literal = _string_at(code, i, language)
            if literal is None:
                return
            yield i, literal
            i = literal.end
            continue
        i += 1


def _interpolates(body: str, language: str) -> bool:
    if language == "perl":
        return bool(re.search(r"(?<!\\)[$@][\w{:]", body))
    if language == "ruby":
        return "#{" in body
    if language == "node":
        return "${" in body
    return False


def _is_path_like(text: str) -> bool:
    # What could name a file: no line breaks, not empty, not a whole program.
    return bool(text) and "\n" not in text and len(text) < 4096


class _PythonNames:
    """The strings of one Python module with whether each is only read."""

    def __init__(self, tree: ast.Module, modelled: frozenset[str]) -> None:
        self.tree = tree
        self.modelled = modelled
        self.parents: dict[ast.AST, ast.AST] = {}
        self.aliases: dict[str, str] = {}
        self.bound: dict[str, list[ast.AST]] = {}
        self.loads: dict[str, list[ast.Name]] = {}
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                self.parents[child] = node
            if isinstance(node, ast.Import):
                for alias in node.names:
                    self.aliases[alias.asname or alias.name.split(".")[0]] = (
                        alias.name if alias.asname else alias.name.split(".")[0])
            elif isinstance(node, ast.ImportFrom) and node.module:
                for alias in node.names:
                    self.aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
            elif isinstance(node, ast.Name):
                if isinstance(node.ctx, ast.Load):
                    self.loads.setdefault(node.id, []).append(node)
                else:
                    self.bound.setdefault(node.id, []).append(node)
            elif isinstance(node, ast.arg):
                self.bound.setdefault(node.arg, []).append(node)

    def qualified(self, node: ast.expr) -> str | None:
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id, node.id)
        if isinstance(node, ast.Attribute):
            base = self.qualified(node.value)
            return f"{base}.{node.attr}" if base else None
        return None

    def only_read(self, node: ast.AST, seen: frozenset[str] = frozenset()) -> bool:
        """Whether every use of the value of ``node`` is a known read (walking up through the
        expressions that only build a path from it, and through a name bound once to it)."""
        parent = self.parents.get(node)
        if parent is None:
            return False
        if isinstance(parent, ast.Expr):
            return True  # a string statement (a docstring): nothing uses it
        if isinstance(parent, ast.JoinedStr | ast.FormattedValue) or (
                isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Add | ast.Div | ast.Mod)):
            return self.only_read(parent, seen)
        if isinstance(parent, ast.List | ast.Tuple | ast.Starred):
            return self.only_read(parent, seen)
        if isinstance(parent, ast.Call):
            name = self.qualified(parent.func)
            if node is parent.func:
                return False
            if name in PY_BUILDS:
                return self.only_read(parent, seen)
            # A read, or a call the analyzer models (a command run, a file written or deleted):
            # what it does is its actions, checked as such.
            return name in PY_READS or name in self.modelled or (name is not None and _PY_EXEC.match(name) is not None)
        if isinstance(parent, ast.keyword):
            call = self.parents.get(parent)
            return isinstance(call, ast.Call) and self.qualified(call.func) in PY_READS and parent.arg != "file"
        if isinstance(parent, ast.Attribute) and node is parent.value:
            call = self.parents.get(parent)
            if not (isinstance(call, ast.Call) and call.func is parent):
                return False
            if parent.attr in PY_METHOD_BUILDS:
                return self.only_read(call, seen)
            # Path("x").read_text(), "x".startswith(...): a read; Path("x").write_text(): an
            # action of its own (commands/inline.py).
            return parent.attr in PY_PATH_READS or parent.attr in _PATH_MODELLED
        if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name):
            name = parent.targets[0].id
            if len(self.bound.get(name, [])) != 1 or name in seen:
                return False
            return all(self.only_read(use, seen | {name}) for use in self.loads.get(name, []))
        if isinstance(parent, ast.Compare):
            return True  # compared, not used as a path
        return False

    def names(self) -> list[Named]:
        found: list[Named] = []
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str | bytes):
                text = node.value.decode("utf-8", "surrogateescape") if isinstance(node.value, bytes) else node.value
                parent = self.parents.get(node)
                inside = parent if isinstance(parent, ast.JoinedStr) else None
                if inside is not None:
                    continue  # an f-string's pieces are taken with the f-string below
                if _is_path_like(text) and not self.only_read(node):
                    found.append(_known_start(text, parent, node))
            elif isinstance(node, ast.JoinedStr):
                head = node.values[0] if node.values else None
                if isinstance(head, ast.Constant) and isinstance(head.value, str) and _is_path_like(head.value) \
                        and not self.only_read(node):
                    found.append(Named(head.value, prefix=len(node.values) > 1))
        return found


#: pathlib methods the analyzer models as writes, deletes and moves (commands/inline.py).
_PATH_MODELLED = frozenset({"write_text", "write_bytes", "touch", "unlink", "rmdir", "rename", "open"})
#: os.exec*, os.spawn*, os.posix_spawn*: run as the command they run (commands/inline.py).
_PY_EXEC = re.compile(r"^os\.(exec|spawn|posix_spawn)[a-z]*$")


def _known_start(text: str, parent: ast.AST | None, node: ast.AST) -> Named:
    """The string as named: only its start when the rest is filled in at run time (the left of
    ``+``, a ``%`` or ``.format`` template up to its first field)."""
    if isinstance(parent, ast.BinOp) and parent.left is node:
        if isinstance(parent.op, ast.Add):
            return Named(text, prefix=True)
        if isinstance(parent.op, ast.Mod) and "%" in text:
            return Named(text[:text.index("%")], prefix=True)
    if isinstance(parent, ast.Attribute) and parent.attr == "format" and "{" in text:
        return Named(text[:text.index("{")], prefix=True)
    return Named(text)


def python_names(code: str, modelled: frozenset[str] = frozenset()) -> list[Named] | None:
    """The strings a Python program names and does not only read; None when it does not parse
    (the analyzer says it cannot check it). ``modelled``: the calls the analyzer reads as
    actions of their own (commands/inline.py's ``PY_MODELLED``), whose strings it checks as
    those actions."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError):
        return None
    try:
        return _PythonNames(tree, modelled).names()
    except RecursionError:
        return None


def program_names(code: str, language: str) -> list[Named]:
    """The string literals a Perl, Node, Ruby or awk program names, less those only given to a
    call of :data:`READS`; an interpolated string's known start is kept as a prefix."""
    found: list[Named] = []
    reads = READS.get(language)
    interpolation = _INTERPOLATION.get(language)
    for i, literal in string_literals(code, language):
        body = code[i + 1:literal.end - 1]
        value, prefix = literal.value, False
        if value is None:  # interpolated: only its start is known
            cut = interpolation.search(body) if interpolation is not None else None
            value, prefix = (body[:cut.start()] if cut else body), True
        # Joined with what follows (`+`; Perl's `.`; awk's juxtaposition is not read): a start.
        following = code[literal.end:].lstrip(" \t")[:1]
        prefix = prefix or following == "+" or (language == "perl" and following == ".")
        if _is_path_like(value) and not (reads is not None and reads.search(code[max(0, i - 80):i])):
            found.append(Named(value, prefix=prefix))
    return found
