"""Interpreters' programs: what ``python -c``, ``python - <<EOF``, a workspace ``python3 x.py``,
``perl -e``, ``node -e``, ``ruby -e`` and ``awk`` programs run and change.

Python is parsed with the standard :mod:`ast` module. The calls that run commands
(``subprocess.run/call/Popen/check_call/check_output``, ``os.system``, ``os.popen``, ``os.exec*``)
are analyzed as the command they run (an argv list as argv, a string as shell), and the calls
that change files (``shutil.rmtree``, ``os.remove/unlink/rmdir/rename/replace``, ``open`` for
writing, ``pathlib.Path(...).write_text/write_bytes/unlink/rmdir/rename``) as those changes,
when their arguments are literals (or names bound once to literals). A name bound once to one
of a few literals chosen at run time (``next((n for n in ("a", "b") if ...), "c")``, ``"a" if
... else "b"``) is read as each of them: the call is checked once per value (at most
:data:`MAX_ALTERNATIVES` combinations). Any other argument only known at run time is "cannot
check".

Perl, Node, Ruby and awk have no parser here: their programs are scanned for the calls in
:data:`_CALLS` (data, one table per language) and the string literals given to them, which are
analyzed the same way. A call given something other than literals is "cannot check".
"""

from __future__ import annotations

import ast
import os
import re
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from statewise.commands.inside import _Inside
from statewise.commands.named import (
    _CLOSERS,
    Named,
    _interpolates,
    _string_at,
    program_names,
    python_names,
    string_literals,
)
from statewise.commands.tables import _SESSIONS
from statewise.commands.words import _Call, _Ctx, _Word

# --- Python --------------------------------------------------------------------------------

#: Calls (as ``module.function`` after import aliases are resolved) and what they do.
_PY_RUN_ARGV_OR_SHELL = frozenset({
    "subprocess.run", "subprocess.call", "subprocess.Popen", "subprocess.check_call", "subprocess.check_output",
    "asyncio.create_subprocess_exec"})
_PY_RUN_SHELL = frozenset({"os.system", "os.popen", "subprocess.getoutput", "subprocess.getstatusoutput",
                           "asyncio.create_subprocess_shell", "commands.getoutput"})
_PY_EXEC = re.compile(r"^os\.(exec|spawn|posix_spawn)[a-z]*$")
_PY_DELETE = {"shutil.rmtree": True, "os.remove": False, "os.unlink": False, "os.rmdir": False,
              "os.removedirs": False}
_PY_MOVE = frozenset({"os.rename", "os.replace", "shutil.move", "os.renames"})
_PY_COPY = frozenset({"shutil.copy", "shutil.copy2", "shutil.copyfile", "shutil.copytree"})
_PY_OPEN = frozenset({"open", "io.open", "builtins.open", "codecs.open"})
_PY_CODE = frozenset({"exec", "eval", "builtins.exec", "builtins.eval"})
#: The calls read here as actions of their own (a command run, a file written, deleted, moved):
#: a string given to one is checked as that action (commands/named.py).
PY_MODELLED = _PY_RUN_ARGV_OR_SHELL | _PY_RUN_SHELL | _PY_COPY | _PY_MOVE | frozenset(_PY_DELETE)
#: pathlib methods: what they do to the path they are called on.
_PATH_WRITE = frozenset({"write_text", "write_bytes", "touch"})
_PATH_DELETE = frozenset({"unlink", "rmdir"})
_PATH_MOVE = frozenset({"rename", "replace"})
_PATH_TYPES = frozenset({"pathlib.Path", "pathlib.PosixPath", "pathlib.PurePath", "Path"})


#: The value of ``tempfile.mkdtemp()`` and of ``with tempfile.TemporaryDirectory() as d``: a
#: fresh directory of the system's temporary area, created by the program itself. What the
#: program writes or deletes under it touches nothing that existed before.
TEMPORARY = "\x00temporary\x00"
_TEMPORARY_CALLS = frozenset({"tempfile.mkdtemp", "tempfile.mktemp", "tempfile.TemporaryDirectory"})


class _Unknown(Exception):
    """A value only known when the program runs."""


#: The most combinations of run-time choices one call is checked under; more is "cannot check".
MAX_ALTERNATIVES = 8


class _Choice(_Unknown):
    """A name whose value is one of a few literals chosen at run time: the call that reads it
    is checked once per value (an ``_Unknown`` where no caller enumerates it)."""

    def __init__(self, name: str, values: tuple[object, ...]) -> None:
        super().__init__(f"`{name}`")
        self.name = name
        self.values = values


@dataclass(frozen=True, slots=True)
class _PyPath:
    """A pathlib path whose value is known."""

    value: str


@dataclass(frozen=True, slots=True)
class _PyEffect:
    """One thing a Python program does: ``kind`` is run (argv), shell (a string), delete, write,
    move (source, destination), or unknown (with the reason)."""

    kind: str
    values: tuple[str, ...]
    what: str
    line: int
    cwd: str | None = None
    recursive: bool = False


class _PythonReader(ast.NodeVisitor):
    """The effects of one Python module, with import aliases and names bound once to literals."""

    def __init__(self, tree: ast.Module) -> None:
        self.aliases: dict[str, str] = {}
        self.constants: dict[str, object] = {}
        self.effects: list[_PyEffect] = []
        assigned: dict[str, list[ast.expr]] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    self.aliases[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else \
                        alias.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom) and node.module:
                for alias in node.names:
                    self.aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        assigned.setdefault(target.id, []).append(node.value)
                    else:
                        for name in ast.walk(target):
                            if isinstance(name, ast.Name):
                                assigned.setdefault(name.id, []).extend([ast.Constant(None), ast.Constant(None)])
            elif isinstance(node, ast.AnnAssign | ast.AugAssign) and isinstance(node.target, ast.Name):
                assigned.setdefault(node.target.id, []).extend([ast.Constant(None), ast.Constant(None)])
            elif isinstance(node, ast.For | ast.comprehension | ast.With | ast.withitem | ast.NamedExpr):
                for bound in _targets(node):
                    for name in ast.walk(bound):
                        if isinstance(name, ast.Name):
                            assigned.setdefault(name.id, []).extend([ast.Constant(None), ast.Constant(None)])
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                for argument in ast.walk(node.args):
                    if isinstance(argument, ast.arg):
                        assigned.setdefault(argument.arg, []).extend([ast.Constant(None), ast.Constant(None)])
        # A name bound exactly once is a constant when its value is; resolved in order of need.
        self.single = {name: values[0] for name, values in assigned.items() if len(values) == 1}
        self.resolving: set[str] = set()
        self.chosen: dict[str, object] = {}  # the value each run-time choice takes in this reading
        self.temporary = {item.optional_vars.id for item in ast.walk(tree) if isinstance(item, ast.withitem)
                          and isinstance(item.optional_vars, ast.Name) and isinstance(item.context_expr, ast.Call)
                          and self.qualified(item.context_expr.func) in _TEMPORARY_CALLS
                          and len(assigned.get(item.optional_vars.id, [])) <= 2}

    # -- values --

    def qualified(self, node: ast.expr) -> str | None:
        """``subprocess.run`` for ``sp.run`` after ``import subprocess as sp``."""
        if isinstance(node, ast.Name):
            return self.aliases.get(node.id, node.id)
        if isinstance(node, ast.Attribute):
            base = self.qualified(node.value)
            return f"{base}.{node.attr}" if base else None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "__import__" \
                and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            return node.args[0].value
        return None

    def value(self, node: ast.expr) -> object:
        """The value of a literal expression (str, bytes, numbers, lists/tuples of them, a
        pathlib path); raises _Unknown otherwise."""
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.List | ast.Tuple):
            items: list[object] = []
            for element in node.elts:
                if isinstance(element, ast.Starred):
                    starred = self.value(element.value)
                    if not isinstance(starred, list | tuple):
                        raise _Unknown("a starred value")
                    items.extend(starred)
                else:
                    items.append(self.value(element))
            return items
        if isinstance(node, ast.Attribute) and self.qualified(node) == "sys.executable":
            return "python3"  # the interpreter running the program, found on PATH as typed
        if isinstance(node, ast.Name) and node.id in self.temporary:
            return TEMPORARY
        if isinstance(node, ast.Name):
            if node.id in self.chosen:
                return self.chosen[node.id]
            if node.id in self.single and node.id not in self.resolving:
                self.resolving.add(node.id)
                try:
                    bound = self.single[node.id]
                    choices = self.alternatives(bound)
                    if choices is not None:
                        raise _Choice(node.id, choices)
                    return self.value(bound)
                finally:
                    self.resolving.discard(node.id)
            raise _Unknown(f"`{node.id}`")
        if isinstance(node, ast.JoinedStr):
            parts: list[str] = []
            for piece in node.values:
                if isinstance(piece, ast.Constant):
                    parts.append(str(piece.value))
                elif isinstance(piece, ast.FormattedValue) and piece.format_spec is None and piece.conversion == -1:
                    parts.append(str(self.text(piece.value)))
                else:
                    raise _Unknown("a formatted string")
            return "".join(parts)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = self.value(node.left), self.value(node.right)
            if isinstance(left, str) and isinstance(right, str):
                return left + right
            if isinstance(left, list) and isinstance(right, list):
                return left + right
            raise _Unknown("a sum")
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            left = self.value(node.left)
            right = self.value(node.right)
            if isinstance(left, _PyPath) and isinstance(right, str | _PyPath):
                return _PyPath(str(PurePosixPath(left.value) / (right.value if isinstance(right, _PyPath) else right)))
            raise _Unknown("a path expression")
        if isinstance(node, ast.Call):
            name = self.qualified(node.func)
            if name in _PATH_TYPES or (name or "").split(".")[-1] in ("Path", "PosixPath") and \
                    (name or "").startswith("pathlib"):
                parts_ = [self.text(argument) for argument in node.args] or ["."]
                return _PyPath(str(PurePosixPath(*parts_)))
            if name in ("os.path.join", "posixpath.join"):
                return os.path.join(*[self.text(argument) for argument in node.args])
            if name in _TEMPORARY_CALLS:
                return TEMPORARY
            if name in ("str", "os.fspath") and len(node.args) == 1:
                return self.text(node.args[0])
            if name in ("shlex.split",) and len(node.args) == 1:
                return shlex.split(self.text(node.args[0]))
            if isinstance(node.func, ast.Attribute) and node.func.attr == "split" and not node.args:
                base = self.value(node.func.value)
                if isinstance(base, str):
                    return base.split()
        raise _Unknown(f"`{ast.unparse(node)[:80]}`")

    def alternatives(self, node: ast.expr) -> tuple[object, ...] | None:
        """The literal values ``node`` may take when it picks one of them at run time, or None.

        ``next((n for n in LITERALS if ...), DEFAULT)`` takes one of the literals (or the
        default); ``A if ... else B`` takes A or B (each may itself be such a choice). The
        condition is not read: every value is possible. A choice among values that are not
        all literals is not one (None)."""
        try:
            if isinstance(node, ast.IfExp):
                values: list[object] = []
                for branch in (node.body, node.orelse):
                    values.extend(self.alternatives(branch) or (self.value(branch),))
                return tuple(dict.fromkeys(values)) if all(_hashable(v) for v in values) else None
            if isinstance(node, ast.Call) and self.qualified(node.func) == "next" and 1 <= len(node.args) <= 2 \
                    and not node.keywords and isinstance(node.args[0], ast.GeneratorExp):
                generator = node.args[0]
                if len(generator.generators) != 1:
                    return None
                loop = generator.generators[0]
                if not (isinstance(loop.target, ast.Name) and isinstance(generator.elt, ast.Name)
                        and generator.elt.id == loop.target.id and not loop.is_async):
                    return None
                items = self.value(loop.iter)
                if not isinstance(items, list) or not items:
                    return None
                values = list(items)
                if len(node.args) == 2:
                    values.append(self.value(node.args[1]))
                return tuple(dict.fromkeys(values)) if all(_hashable(v) for v in values) else None
        except _Choice:
            return None  # a choice inside a choice's literals: not read
        return None

    def text(self, node: ast.expr) -> str:
        found = self.value(node)
        if isinstance(found, _PyPath):
            return found.value
        if isinstance(found, str):
            return found
        if isinstance(found, bytes):
            return found.decode("utf-8", "surrogateescape")
        if isinstance(found, int | float) and not isinstance(found, bool):
            return str(found)
        raise _Unknown(f"`{ast.unparse(node)[:80]}`")

    def argv(self, node: ast.expr) -> list[str]:
        found = self.value(node)
        if isinstance(found, list):
            return [item.value if isinstance(item, _PyPath) else item if isinstance(item, str)
                    else _raise(f"`{ast.unparse(node)[:80]}`") for item in found]
        if isinstance(found, _PyPath):
            return [found.value]
        if isinstance(found, str):
            return [found]
        raise _Unknown(f"`{ast.unparse(node)[:80]}`")

    # -- effects --

    def add(self, kind: str, values: Sequence[str], what: str, node: ast.AST, *, cwd: str | None = None,
            recursive: bool = False) -> None:
        self.effects.append(_PyEffect(kind, tuple(values), what, getattr(node, "lineno", 0), cwd, recursive))

    def unknown(self, what: str, why: str, node: ast.AST) -> None:
        self.add("unknown", [why], what, node)

    def visit_Call(self, node: ast.Call) -> None:
        self.generic_visit(node)
        name = self.qualified(node.func)
        readings = [dict[str, object]()]  # the run-time choices to read the call under
        done = 0
        while readings:
            self.chosen = readings.pop()
            try:
                self.call(node, name)
            except _Choice as choice:
                if done + len(readings) + len(choice.values) > MAX_ALTERNATIVES:
                    self.unknown(name or ast.unparse(node.func)[:60],
                                 f"its arguments take more than {MAX_ALTERNATIVES} combinations of values chosen at run time",
                                 node)
                    break
                readings.extend({**self.chosen, choice.name: value} for value in reversed(choice.values))
                continue
            except _Unknown as unknown:
                self.unknown(name or ast.unparse(node.func)[:60], f"its argument {unknown} is only known at run time",
                             node)
                break
            finally:
                self.chosen = {}
            done += 1

    def call(self, node: ast.Call, name: str | None) -> None:
        keywords = {k.arg: k.value for k in node.keywords if k.arg}
        first = node.args[0] if node.args else keywords.get("args")
        if name in _PY_CONSOLES:
            self.unknown(name, "it opens a console that runs what is typed into it, which the hook cannot see", node)
            return
        if name in _PY_RUN_ARGV_OR_SHELL or name in _PY_RUN_SHELL:
            if first is None:
                return
            cwd = self.text(keywords["cwd"]) if "cwd" in keywords else None
            shell = name in _PY_RUN_SHELL or ("shell" in keywords and self.value(keywords["shell"]) is True)
            if "shell" in keywords and not isinstance(keywords["shell"], ast.Constant):
                raise _Unknown("`shell=`")
            if name == "asyncio.create_subprocess_exec":
                self.add("run", [self.text(argument) for argument in node.args], name, node, cwd=cwd)
                return
            found = self.value(first)
            if shell:
                command = found if isinstance(found, str) else " ".join(self.argv(first)) if isinstance(
                    found, list) else self.text(first)
                self.add("shell", [command], name, node, cwd=cwd)
            else:
                self.add("run", self.argv(first), name, node, cwd=cwd)
            return
        if name and _PY_EXEC.match(name):
            # os.execvp(file, argv), os.execl(path, arg0, *args), os.spawnl(mode, path, arg0, ...);
            # the *e variants end with the environment.
            arguments = node.args[1:] if "spawn" in name else list(node.args)
            if name.endswith("e") and arguments:
                arguments = arguments[:-1]
            if not arguments:
                return
            program = self.text(arguments[0])
            rest = arguments[1:]
            if rest and isinstance(rest[0], ast.List | ast.Tuple | ast.Name):
                argv = [program, *self.argv(rest[0])[1:]]
            else:
                argv = [program, *(self.text(a) for a in rest[1:])]
            self.add("run", argv, name, node)
            return
        if name in _PY_DELETE:
            if first is not None:
                self.add("delete", [self.text(first)], name, node, recursive=_PY_DELETE[name])
            return
        if name in _PY_MOVE and len(node.args) >= 2:
            self.add("move", [self.text(node.args[0]), self.text(node.args[1])], name, node)
            return
        if name in _PY_COPY and len(node.args) >= 2:
            self.add("write", [self.text(node.args[1])], name, node)
            return
        if name in _PY_OPEN and first is not None:
            mode_node = node.args[1] if len(node.args) > 1 else keywords.get("mode")
            mode = self.value(mode_node) if mode_node is not None else "r"
            if not isinstance(mode, str):
                raise _Unknown("the mode")
            if set(mode) & set("wax+"):
                self.add("write", [self.text(first)], name, node)
            return
        if name in _PY_CODE and first is not None:
            code = self.value(first)
            if not isinstance(code, str):
                raise _Unknown("the code")
            self.add("python", [code], name, node)
            return
        if isinstance(node.func, ast.Attribute):
            self.method(node, node.func)

    def method(self, node: ast.Call, func: ast.Attribute) -> None:
        method = func.attr
        if method not in _PATH_WRITE | _PATH_DELETE | _PATH_MOVE | {"open"}:
            return
        try:
            receiver = self.value(func.value)
        except _Unknown:
            # `.write_text`, `.write_bytes`, `.unlink`, `.rmdir` are pathlib's: on a path only
            # known at run time they cannot be checked. `.rename`, `.replace`, `.open`, `.touch`
            # have other meanings too (str.replace, DataFrame.rename): left alone.
            if method in ("write_text", "write_bytes", "unlink", "rmdir"):
                raise
            return
        if not isinstance(receiver, _PyPath):
            return
        what = f"Path.{method}"
        if method in _PATH_WRITE:
            self.add("write", [receiver.value], what, node)
        elif method in _PATH_DELETE:
            self.add("delete", [receiver.value], what, node, recursive=False)
        elif method in _PATH_MOVE and node.args:
            self.add("move", [receiver.value, self.text(node.args[0])], what, node)
        elif method == "open":
            mode_node = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "mode"), None)
            mode = self.value(mode_node) if mode_node is not None else "r"
            if isinstance(mode, str) and set(mode) & set("wax+"):
                self.add("write", [receiver.value], what, node)


def _targets(node: ast.AST) -> Iterable[ast.AST]:
    if isinstance(node, ast.For | ast.comprehension):
        yield node.target
    elif isinstance(node, ast.withitem) and node.optional_vars is not None:
        yield node.optional_vars
    elif isinstance(node, ast.NamedExpr):
        yield node.target


def _raise(why: str) -> str:
    raise _Unknown(why)


def _hashable(value: object) -> bool:
    return isinstance(value, str | bytes | int | float | bool | _PyPath) or value is None


def python_effects(code: str) -> list[_PyEffect] | str:
    """The effects of a Python program, or why it cannot be read."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError) as error:
        return f"the Python program cannot be parsed ({type(error).__name__}: {error})"[:300]
    except RecursionError:
        return "the Python program nests too deeply to parse"
    reader = _PythonReader(tree)
    reader.visit(tree)
    return reader.effects


#: Python calls that read what is typed into the terminal, and consoles that run it.
_PY_READS_INPUT = frozenset({"input", "sys.stdin", "fileinput.input", "os.read"})
_PY_CONSOLES = frozenset({"code.interact", "code.InteractiveConsole", "pdb.set_trace", "breakpoint",
                          "IPython.embed", "IPython.start_ipython", "ptpython.embed"})


def python_reads_input(code: str) -> str | None:
    """How a Python program reads and runs what is typed into its terminal (``input()`` given to
    code it cannot check, a console such as ``code.interact()``), or None."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError):
        return None
    reader = _PythonReader(tree)
    reads: str | None = None
    for node in ast.walk(tree):
        name = reader.qualified(node.func) if isinstance(node, ast.Call) else (
            reader.qualified(node) if isinstance(node, ast.Attribute) else None)
        if name in _PY_CONSOLES:
            return f"{name}()"
        if name is not None and reads is None and (name in _PY_READS_INPUT or name.startswith("sys.stdin.")):
            reads = f"{name}()" if isinstance(node, ast.Call) else name
    if reads is None:
        return None
    effects = python_effects(code)
    runs = isinstance(effects, str) or any(effect.kind == "unknown" for effect in effects)
    return reads if runs else None


# --- Perl, Node, Ruby, awk: string literals given to known calls ---------------------------

#: How each language's program reads its standard input (the terminal, when nothing redirects it).
_READS_INPUT = {
    "perl": re.compile(r"<\s*(?:STDIN)?\s*>|<<>>|\bSTDIN\b|\breadline\b"),
    "ruby": re.compile(r"(?<![.\w])(?:gets|readline|readlines)\b|\bSTDIN\b|\$stdin\b|\bARGF\b|\$<"),
    "node": re.compile(r"process\.stdin|readFileSync\s*\(\s*(?:0|['\"]/dev/stdin['\"])|\breadline\b"),
}


def program_reads_input(code: str, language: str) -> str | None:
    """What in a Perl/Node/Ruby program reads the terminal, when the program also runs code or
    commands it cannot check (``eval <STDIN>``); else None."""
    pattern = _READS_INPUT.get(language)
    found = pattern.search(code) if pattern is not None else None
    if found is None or not any(effect.effect == "unknown" for effect in program_effects(code, language)):
        return None
    return found.group(0)



@dataclass(frozen=True, slots=True)
class _Pattern:
    """A call in a language's program: the regular expression that finds it (its literal
    arguments follow the match) and what it does: shell (a command string; several literals
    are an argv), write, delete, move (source, destination), write_second (copy: the second
    literal is written)."""

    find: str
    effect: str
    recursive: bool = False
    needs: str = ""  # the call is only this when the program mentions this (a module name)
    first_only: bool = False  # only the first argument is a path (the data written follows)


#: What each interpreter's calls do (knowledge as data). Patterns are matched against the
#: program with its string literals in place; the literals after the match are the arguments.
_CALLS: dict[str, tuple[_Pattern, ...]] = {
    "perl": (
        _Pattern(r"\b(?:system|exec)\b\s*\(?\s*", "shell"),
        _Pattern(r"\beval\b\s*(?![\s{])\(?\s*", "code"),  # eval STRING (not the eval { } block)
        _Pattern(r"\bunlink\b\s*\(?\s*", "delete"),
        _Pattern(r"\brmdir\b\s*\(?\s*", "delete"),
        _Pattern(r"\b(?:rmtree|remove_tree)\b\s*\(?\s*", "delete", recursive=True),
        _Pattern(r"\brename\b\s*\(?\s*", "move"),
        _Pattern(r"\bopen\b\s*\(?\s*(?:my\s+)?[\$\w]+\s*,\s*", "perl_open"),
    ),
    "node": (
        _Pattern(r"\b(?:execSync|execFileSync|spawnSync)\s*\(\s*", "shell"),
        _Pattern(r"(?<![.\w])eval\s*\(\s*|\bnew\s+Function\s*\(\s*|\brunIn(?:This|New)?Context\s*\(\s*", "code"),
        _Pattern(r"(?<![.\w])(?:exec|execFile|spawn)\s*\(\s*", "shell", needs="child_process"),
        _Pattern(r"\b(?:writeFileSync|appendFileSync|createWriteStream|writeFile|appendFile|truncateSync)\s*\(\s*",
                 "write", first_only=True),
        _Pattern(r"\b(?:copyFileSync|cpSync|copyFile)\s*\(\s*", "write_second"),
        _Pattern(r"\b(?:rmSync|rmdirSync)\s*\(\s*", "delete", recursive=True, first_only=True),
        _Pattern(r"\bunlinkSync\s*\(\s*", "delete", first_only=True),
        _Pattern(r"(?<![\w])(?:fs|fsp|promises)\.(?:rm|rmdir)\s*\(\s*", "delete", recursive=True, first_only=True),
        _Pattern(r"(?<![\w])(?:fs|fsp|promises)\.unlink\s*\(\s*", "delete", first_only=True),
        _Pattern(r"\b(?:renameSync|(?:fs|fsp|promises)\.rename)\s*\(\s*", "move"),
    ),
    "ruby": (
        _Pattern(r"(?<![.\w])(?:system|exec|spawn)\b\s*\(?\s*", "shell"),
        _Pattern(r"(?<![\w])(?:eval|instance_eval|class_eval|module_eval)\b\s*\(?\s*(?![\s{]|do\b)", "code"),
        _Pattern(r"\b(?:IO\.popen|Open3\.\w+)\b\s*\(?\s*", "shell"),
        _Pattern(r"\b(?:File|IO)\.(?:write|binwrite)\b\s*\(?\s*", "write", first_only=True),
        _Pattern(r"\bFile\.open\b\s*\(?\s*", "ruby_open"),
        _Pattern(r"\bFileUtils\.(?:touch|mkdir_p)\b\s*\(?\s*", "write"),
        _Pattern(r"\bFileUtils\.(?:cp|cp_r|copy|install)\b\s*\(?\s*", "write_second"),
        _Pattern(r"\bFileUtils\.(?:rm_rf|rm_r|remove_dir|remove_entry|rmtree)\b\s*\(?\s*", "delete",
                 recursive=True),
        _Pattern(r"\b(?:File\.(?:delete|unlink)|FileUtils\.(?:rm|rm_f|remove)|Dir\.(?:rmdir|delete|unlink))\b"
                 r"\s*\(?\s*", "delete"),
        _Pattern(r"\b(?:File\.rename|FileUtils\.(?:mv|move))\b\s*\(?\s*", "move"),
    ),
    "awk": (
        _Pattern(r"\bsystem\s*\(\s*", "shell"),
        _Pattern(r"\|\s*", "awk_pipe"),
        _Pattern(r"(?<![<>=!])>>?\s*", "awk_redirect"),
    ),
}
#: Commands quoted inside a program: perl and ruby backticks and qx//, %x().
_BACKTICKS = {"perl": re.compile(r"`([^`]*)`|\bqx\s*([{(\[<|/!])"), "ruby": re.compile(r"`([^`]*)`|%x([{(\[<|!])")}


def _literals_after(code: str, start: int, language: str, *, first_only: bool = False
                    ) -> tuple[list[str | None], bool]:
    """The comma-separated literals after ``start`` (a call's arguments; node's ``[...]`` argv
    lists are flattened), and whether anything that is not a literal is among them (awk: a
    concatenation with a field or a variable). With ``first_only``, only the first argument
    counts (a file name; the data written after it does not matter)."""
    values: list[str | None] = []
    i = start
    while True:
        rest = code[i:].lstrip(" \t")
        i += len(code[i:]) - len(rest)
        if language == "node" and rest[:1] in ("[", "]"):
            i += 1
            rest = code[i:].lstrip(" \t")
            if rest[:1] == ",":
                i += len(code[i:]) - len(rest) + 1
            continue
        literal = _string_at(code, i, language)
        if literal is None:
            first = rest[:1]
            ends = first in ("", ")", ";", "}", "\n") or (language == "perl" and rest.startswith(("or ", "||")))
            # `system($cmd)`, `"rm " $1`: something other than a literal is given.
            return values, not ends
        value = literal.value
        i = literal.end
        rest = code[i:].lstrip(" \t")
        while language == "awk" and rest[:1] == '"':
            # awk concatenates adjacent strings: "rm " "-rf x" is one string
            following = _string_at(code, i, language)
            if following is None:
                break
            value = None if value is None or following.value is None else value + following.value
            i = following.end
            rest = code[i:].lstrip(" \t")
        values.append(value)
        if first_only:
            return values, False
        if rest[:1] == ",":
            i += len(code[i:]) - len(rest) + 1
            continue
        if language == "node" and rest[:1] == "]":
            continue
        dynamic = bool(rest) and rest[0] not in ")};\n" and not (
            language == "perl" and rest.startswith(("or ", "||", "and ", "&&"))) and not (
            language == "ruby" and rest.startswith(("do", "{", "if ", "unless ", "rescue")))
        if language == "awk":
            dynamic = bool(rest) and rest[0] not in ")};\n|" and not rest.startswith(("else", ">"))
        return values, dynamic


@dataclass(frozen=True, slots=True)
class _Found:
    effect: str
    values: tuple[str, ...]
    what: str
    recursive: bool = False
    why: str = ""  # for "unknown": what is only known at run time


def program_effects(code: str, language: str) -> list[_Found]:
    """What a Perl/Node/Ruby/awk program runs and changes, as far as its literals say."""
    found: list[_Found] = []
    masked = _mask_strings(code, language)
    for pattern in _CALLS[language]:
        if pattern.needs and pattern.needs not in code:
            continue
        for match in re.finditer(pattern.find, masked):
            what = code[match.start():match.end()].strip(" \t(")
            if pattern.effect == "awk_redirect" and not re.search(r"\b(?:print|printf)\b[^;{}]*$",
                                                                  masked[:match.start()]):
                continue
            if pattern.effect == "awk_pipe" and not re.search(r"\b(?:print|printf)\b[^;{}]*$", masked[:match.start()]):
                # "cmd" | getline: the command is the literal before the pipe
                before = re.search(r"(\"(?:[^\"\\]|\\.)*\")\s*$", code[:match.start()])
                if before and re.match(r"\s*getline", code[match.end():]):
                    literal = _string_at(code, before.start(1), language)
                    if literal is not None and literal.value is not None:
                        found.append(_Found("shell", (literal.value,), "getline"))
                    continue
                if re.match(r"\s*getline", code[match.end():]):
                    found.append(_Found("unknown", (), "getline", why="the command piped to getline"))
                continue
            values, dynamic = _literals_after(code, match.end(), language, first_only=pattern.first_only)
            effect = pattern.effect
            if effect == "perl_open":
                effect, values = _perl_open(values)
                if effect == "":
                    continue
            elif effect == "ruby_open":
                if len(values) >= 2 and values[1] is not None and set(values[1]) & set("wa+"):
                    effect, values = "write", values[:1]
                elif len(values) >= 2 and values[1] is None:
                    dynamic = True
                else:
                    continue
            elif effect in ("awk_pipe", "awk_redirect"):
                effect = "shell" if effect == "awk_pipe" else "write"
            if dynamic or not values or any(v is None for v in values):
                found.append(_Found("unknown", (), what, why=f"the argument of `{what}`"))
                continue
            found.append(_Found(effect, tuple(v for v in values if v is not None), what, pattern.recursive))
    backticks = _BACKTICKS.get(language)
    if backticks is not None:
        for match in backticks.finditer(code):
            if match.group(1) is not None:
                body: str | None = match.group(1)
            else:
                opener = match.group(2)
                close = code.find(_CLOSERS.get(opener, opener), match.end())
                body = code[match.end():close] if close >= 0 else None
            if body is None or _interpolates(body, language):
                found.append(_Found("unknown", (), "backticks", why="a command in backticks"))
            else:
                found.append(_Found("shell", (body,), "backticks"))
    return found


def _perl_open(values: list[str | None]) -> tuple[str, list[str | None]]:
    """perl's open: '>' file / '>file' write, '|-' cmd / 'cmd |' run."""
    if not values or values[0] is None:
        return "shell", [None]
    mode = values[0].strip()
    if mode in (">", ">>", "+>", "+<", ">:utf8", ">:raw", ">>:utf8") and len(values) > 1:
        return "write", values[1:2]
    if mode in ("|-", "-|") and len(values) > 1:
        return "shell", values[1:]
    if mode.startswith((">>", ">", "+>")):
        return "write", [mode.lstrip("+>").strip()]
    if mode.endswith("|") or mode.startswith("|"):
        return "shell", [mode.strip("|").strip()]
    return "", []


def _mask_strings(code: str, language: str) -> str:
    """``code`` with the inside of string literals blanked (same length), so a pattern never
    matches words inside a string."""
    out = list(code)
    for i, literal in string_literals(code, language):
        for j in range(i + 1, literal.end - 1):
            out[j] = " "
    return "".join(out)


class _Inline(_Inside):
    """Interpreters' programs analyzed as what they run and change."""

    def python_program(self, call: _Call, code: str, where: str, *, cwd_ctx: _Ctx | None = None) -> None:
        """Analyze a Python program's effects as if they were typed as commands."""
        if not self.spend_lines(call, code, where):
            return
        effects = python_effects(code)
        if isinstance(effects, str):
            self.fail(f"cannot check {where}: {effects}", call.part)
            return
        ctx = cwd_ctx or call.ctx
        self.note_names(python_names(code, PY_MODELLED) or [], ctx, where)
        for effect in effects:
            label = f"{where} (line {effect.line}, {effect.what})" if effect.line else f"{where} ({effect.what})"
            if effect.kind == "unknown":
                self.fail(f"cannot check {label}: {effect.values[0]}", call.part)
            elif effect.kind == "python":
                inner = self.inner_ctx(call, ctx.cwd, env=ctx.env)
                if inner is not None:
                    self.python_program(_Call(call.words, call.env, inner, call.part, call.kept), effect.values[0],
                                        label)
            else:
                self.effect(call, ctx, effect.kind, effect.values, label, recursive=effect.recursive,
                            cwd=effect.cwd, via=effect.what)

    def note_names(self, names: Sequence[Named], ctx: _Ctx, where: str) -> None:
        """Keep the strings a program names and may do more than read, with the folder it runs
        in, for the hook's self-protection (:mod:`.named`)."""
        cwd = str(ctx.cwd) if ctx.cwd is not None else None
        self.named += [Named(name.value, name.prefix, cwd, where) for name in names]

    def effect(self, call: _Call, ctx: _Ctx, kind: str, values: Sequence[str], label: str, *, recursive: bool,
               via: str, cwd: str | None = None) -> None:
        """One effect found in a program: a command (argv or shell) analyzed as typed, or a
        file changed."""
        if any(TEMPORARY in value for value in [*values, cwd or ""]):
            if kind in ("run", "shell"):
                self.fail(f"cannot check {label}: it names a temporary directory only known at run time", call.part)
            return  # a write or a delete under the program's own temporary directory
        directory = ctx.cwd
        if cwd is not None:
            directory = self.resolve_dir(ctx, cwd)
        if kind in ("run", "shell"):
            inner = self.inner_ctx(call, directory, env=ctx.env)
            if inner is None:
                return
            text = values[0] if kind == "shell" else shlex.join(values)
            if not values or not text.strip():
                return
            with self.reading_inside(label):
                self.analyze_text(text, inner, call.part)
            return
        here = ctx.copy()
        here.cwd = directory
        place = _Call([_Word.literal(call.name)], ctx.env, here, call.part)
        words = [_Word.literal(v) for v in values]
        with self.reading_inside(label):
            if kind == "delete":
                self.delete_paths(place, words, recursive=recursive, via=via)
            elif kind == "write":
                self.write_paths(place, words, via=via)
            elif kind == "write_second" and len(words) >= 2:
                self.write_paths(place, words[1:2], via=via)
            elif kind == "move" and len(words) >= 2:
                self.delete_paths(place, words[:1], recursive=True, via=via, extra={"moved": True})
                self.write_paths(place, words[1:2], via=via)

    def other_program(self, call: _Call, code: str, language: str, where: str) -> None:
        """A Perl/Node/Ruby/awk program: the commands and paths its literals name."""
        if not self.spend_lines(call, code, where):
            return
        self.note_names(program_names(code, language), call.ctx, where)
        for found in program_effects(code, language):
            label = f"{where} ({found.what})"
            if found.effect == "unknown":
                self.fail(f"cannot check {label}: {found.why} is only known at run time", call.part)
            elif found.effect == "code":  # eval of a literal: the same language's program
                for text in found.values:
                    self.other_program(call, text, language, label)
            elif found.effect == "shell" and len(found.values) > 1:
                self.effect(call, call.ctx, "run", found.values, label, recursive=False, via=found.what)
            else:
                self.effect(call, call.ctx, found.effect, found.values, label, recursive=found.recursive,
                            via=found.what)

    def interpreter_e(self, call: _Call) -> None:
        """``perl -e``, ``node -e``, ``ruby -e`` (and ``-E``, ``--eval``, ``-p``, ``--print``):
        the program is read, then the program's session rules apply as before (``perl -pi``
        edits its files; a program on a pipe is only known at run time)."""
        key = call.name.rsplit("/", 1)[-1].lower()
        language = "node" if key.startswith("node") else key
        options = {"perl": ("-e", "-E"), "ruby": ("-e",), "node": ("-e", "--eval", "-p", "--print")}[language]
        valued = _SESSIONS[_canonical_key(key)].valued
        words = call.args
        index = 0
        while index < len(words):
            value = words[index].value
            if value is None or value == "--" or not value.startswith("-") or value == "-":
                break  # the script file (and its own arguments) or a word only known at run time
            code: str | None = None
            name = value.partition("=")[0]
            if name in options and "=" in value and value.startswith("--"):
                code = value.partition("=")[2]
            elif value in options or (language != "node" and not value.startswith("--")
                                      and value[-1:] in "eE" and set(value[1:]) <= set("nlpaiwsEe0")):
                following = words[index + 1] if index + 1 < len(words) else None
                index += 1
                if following is None:
                    break
                if following.value is None:
                    self.fail(f"`{call.name} {value}` runs a program only known at run time", call.part)
                else:
                    code = following.value
            elif value in valued:
                index += 1  # the option's value
            if code is not None:
                reads = program_reads_input(code, language) if self.typed_input and call.ctx.stdin == "tty" else None
                if reads is not None:
                    self.typed_session(call, f"`{call.name} {value}` runs a program that reads what is typed into "
                                             f"it ({reads}) and runs code it cannot check")
                    return
                self.other_program(call, code, language, f"the {language} program of `{call.name}`")
            index += 1
        self.session(call, _canonical_key(key))

    def awk(self, call: _Call) -> None:
        """awk: its program's ``system()`` calls, pipes and redirections (``-f FILE`` programs
        are read when they are workspace files); with gawk's ``-i inplace`` the files it reads
        are rewritten, so they are written."""
        words = call.args
        index = 0
        program: str | None = None
        from_file = False
        in_place = False
        while index < len(words):
            value = words[index].value
            if value is None:
                self.fail(f"`{call.name}` has an argument only known at run time ({words[index].text})", call.part)
                return
            library, taken = _awk_library(words, index)
            if library is not None:
                if library.removesuffix(".awk") != "inplace":
                    # a library from AWKPATH is awk code the hook does not see
                    self.fail(f"`{call.name}` loads the awk library `{library}`, which StateWise does not read",
                              call.part)
                    return
                in_place = True
                index += taken
                continue
            if value in ("-f", "--file") and index + 1 < len(words):
                from_file = True
                path = self.workspace_file(call, words[index + 1].value or "\0")
                if path is None:  # not a workspace file: left as before, like a script elsewhere
                    index += 2
                    continue
                text = self.read_inside(call, path, f"the awk program {path.name}")
                if text is None:
                    return
                self.other_program(call, text, "awk", f"the awk program {path.name}")
                index += 2
                continue
            if value in ("-v", "-F", "--assign", "--field-separator") and index + 1 < len(words):
                index += 2
                continue
            if value.startswith("-") and value != "-":
                index += 1
                continue
            program = value
            break
        if program is not None and not from_file:
            self.other_program(call, program, "awk", f"the awk program of `{call.name}`")
        if in_place:
            # the operands after the program: files, except `var=value` assignments and stdin
            files = words[index + (0 if from_file else 1):]
            self.write_paths(call, [w for w in files if w.value != "-" and "=" not in (w.value or "=")],
                             via=f"{call.name} -i inplace")
        self.unknown(call)


def _awk_library(words: list[_Word], index: int) -> tuple[str | None, int]:
    """The library gawk's ``-i``/``--include`` at ``index`` loads (``-i inplace``, ``-iinplace``,
    ``--include=inplace``) and how many words it takes; (None, 0) for any other word."""
    value = words[index].value or ""
    if value in ("-i", "--include"):
        return (words[index + 1].value or "", 2) if index + 1 < len(words) else (None, 0)
    if value.startswith("--include="):
        return value.partition("=")[2], 1
    if value.startswith("-i") and not value.startswith("--"):
        return value[2:], 1
    return None, 0


def _canonical_key(key: str) -> str:
    return "nodejs" if key == "nodejs" else "node" if key.startswith("node") else key
