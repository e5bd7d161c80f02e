"""Reading inside what a command runs: the bounds, the files, and the bookkeeping shared by
Makefile/package.json/just recipes (:mod:`.recipes`), workspace scripts (:mod:`.scripts`) and
interpreters' inline programs (:mod:`.inline`).

What a recipe, a script or an inline program runs is analyzed as if the agent had typed it, in
the directory and environment it would run in, so a ``make clean`` whose recipe is ``rm -rf
migrations`` is checked as that ``rm``. Reading is bounded (nesting depth, the size of one file,
the lines read in one call): what cannot be read within the bound is "cannot check"
(``shell.unresolved``), never "safe".
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from statewise.actions import Action
from statewise.commands.base import MAX_DEPTH, _Base
from statewise.commands.words import _Call, _Ctx, _Repo

#: The largest file (a Makefile, a package.json, a script) read to see what it runs.
MAX_INSIDE_BYTES = 256 * 1024
#: The most lines read from recipes, scripts and programs in one hook call.
MAX_INSIDE_LINES = 20_000
#: The name of a shell variable standing for a value only known when a recipe runs (a make
#: ``$(shell ...)``, a just backtick): ``${__statewise_dynamic_NAME}`` is a run-time value to
#: the shell analyzer, and an action whose arguments still hold it (single-quoted) becomes
#: "cannot check".
DYNAMIC_MARK = "__statewise_dynamic_"

#: A test run inside a recipe is the project's own test command (make test, npm test); the
#: command the agent typed is what the test-command invariant judges, so it is not repeated.
_NOT_REPEATED_INSIDE = frozenset({"test.run"})


class _Inside(_Base):
    """Reading files a command runs, within bounds, and analyzing what they contain."""

    inside_lines: int = 0  # lines read so far in this call (all files)

    def read_inside(self, call: _Call, path: Path, what: str) -> str | None:
        """The text of ``path`` (a Makefile, a script ...) if it can be read within the bounds;
        None, with "cannot check" recorded, otherwise."""
        try:
            size = path.stat().st_size
        except OSError as error:
            self.fail(f"cannot check {what}: {path} cannot be read ({error.strerror or type(error).__name__})",
                      call.part)
            return None
        if size > MAX_INSIDE_BYTES:
            self.fail(f"cannot check {what}: {path} is larger than {MAX_INSIDE_BYTES // 1024} KB, the bound for "
                      "reading what a command runs", call.part)
            return None
        try:
            text = path.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError) as error:
            self.fail(f"cannot check {what}: {path} cannot be read as text ({type(error).__name__})", call.part)
            return None
        if not self.spend_lines(call, text, what):
            return None
        return text

    def spend_lines(self, call: _Call, text: str, what: str) -> bool:
        """Count ``text`` against the per-call bound; False (and "cannot check") past it."""
        self.inside_lines += text.count("\n") + 1
        if self.inside_lines > MAX_INSIDE_LINES:
            self.fail(f"cannot check {what}: reading it passes the bound of {MAX_INSIDE_LINES} lines read from "
                      "recipes, scripts and programs in one call", call.part)
            return False
        return True

    def inner_ctx(self, call: _Call, cwd: Path | None, *, env: dict[str, str] | None = None) -> _Ctx | None:
        """A fresh shell context one level deeper, or None (and "cannot check") past the depth bound."""
        if call.ctx.depth + 1 > MAX_DEPTH:
            self.fail(f"cannot check what `{call.name}` runs: recipes and scripts nested deeper than {MAX_DEPTH} "
                      "levels", call.part)
            return None
        ctx = call.ctx.copy()
        ctx.cwd = cwd
        ctx.env = dict(call.env if env is None else env)
        ctx.depth += 1
        ctx.stdin_text = None
        return ctx

    @contextmanager
    def reading_inside(self, where: str, typed: str | None = None) -> Iterator[None]:
        """Analyze what runs inside ``where`` (``make clean`` (Makefile:12)): what is found is
        said to come from there, a test run is not repeated, and an action whose arguments hold
        a value only known at run time becomes "cannot check".

        ``typed`` is the project command that runs the recipe (``yarn lint``, ``make lint``):
        an action found inside that carries its ``command`` is checked as that command, the
        one a developer records and types (``project.lint_command = "yarn lint"``), with the
        recipe's own line kept in ``runs``; nested recipes keep the outermost command."""
        actions, unresolved = len(self.actions), len(self.unresolved)
        yield
        found: list[Action] = []
        for action in self.actions[actions:]:
            if action.operation in _NOT_REPEATED_INSIDE:
                continue
            if _holds_dynamic(action.args):
                self.fail(f"cannot check {where}: {action.reason or action.operation} names a value only known "
                          "when it runs", where)
                continue
            # `inside` names the recipe, script or program it came from: the hook's message shows it.
            args = action.args if "inside" in action.args else {**action.args, "inside": where}
            if typed and isinstance(args.get("command"), str) and args["command"] != typed:
                args = {**args, "command": typed, "runs": args.get("runs", args["command"])}
            found.append(action.model_copy(update={"reason": f"{where} runs this: {action.reason}".strip(),
                                                   "args": args}))
        del self.actions[actions:]
        self.actions.extend(found)
        self.unresolved[unresolved:] = [(f"{where}: {reason}", part) for reason, part in self.unresolved[unresolved:]]

    def workspace_file(self, call: _Call, value: str) -> Path | None:
        """The file ``value`` names, when it is a regular file of the workspace (or of the
        repository the command runs in): the scripts StateWise reads. None otherwise."""
        if "\0" in value or call.ctx.cwd is None:
            return None
        expanded = os.path.expanduser(value) if value.startswith("~") else value
        absolute = Path(os.path.realpath(os.path.join(str(call.ctx.cwd), expanded)))
        if not absolute.is_file():
            return None
        roots = [str(self.workspace)]
        if not _within(absolute, roots[0]):
            top = self.git_query(_Repo(call.ctx.cwd), "rev-parse", "--show-toplevel")
            if not top or not _within(absolute, os.path.realpath(top)):
                return None
        return absolute


def _within(path: Path, root: str) -> bool:
    text = str(path)
    return text == root or text.startswith(root.rstrip("/") + "/")


def _holds_dynamic(value: object) -> bool:
    if isinstance(value, str):
        return DYNAMIC_MARK in value
    if isinstance(value, dict):
        return any(_holds_dynamic(v) for v in value.values())
    if isinstance(value, list | tuple):
        return any(_holds_dynamic(v) for v in value)
    return False
