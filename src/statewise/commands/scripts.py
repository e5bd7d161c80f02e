"""Workspace scripts: ``bash x.sh``, ``sh x.sh``, ``./x.sh``, ``source x.sh``, ``. x.sh``,
``python3 x.py``: the file's text analyzed as the shell (or Python) program it is.

Only files of the workspace (or of the repository the command runs in) are read: a script
the project keeps is what an agent edits and runs. A script elsewhere (``~/.bashrc``, a
program under ``/usr``) keeps today's reading (unguarded). A script that cannot be read
within the bounds of :mod:`.inside` is "cannot check".
"""

from __future__ import annotations

from pathlib import Path

from statewise.commands.base import MAX_DEPTH
from statewise.commands.inline import _Inline
from statewise.commands.tables import _SHELLS
from statewise.commands.words import _Call, _Word

#: Interpreters whose scripts are read, by the name in a ``#!`` line.
_PYTHONS = ("python", "python3", "python2")


class _Scripts(_Inline):
    """Shell and Python scripts of the workspace, read and analyzed."""

    def shell_script(self, call: _Call, word: _Word) -> bool:
        """``bash x.sh ARGS``: analyze the script's text in a new shell (its ``cd`` and variables
        stay inside it). False when the file is not a workspace script (the caller decides)."""
        path = self.workspace_file(call, word.value or "\0")
        if path is None:
            return False
        text = self.read_inside(call, path, f"the script {word.value}")
        if text is None:
            return True
        ctx = self.inner_ctx(call, call.ctx.cwd)
        if ctx is None:
            return True
        with self.reading_inside(f"`{call.name} {word.value}`"):
            self.analyze_text(text, ctx, call.part)
        return True

    def sourced_script(self, call: _Call, word: _Word) -> bool:
        """``source x.sh`` / ``. x.sh``: the script runs in this shell, so its ``cd``, exports
        and PATH changes carry on to the rest of the command."""
        path = self.workspace_file(call, word.value or "\0")
        if path is None:
            return False
        text = self.read_inside(call, path, f"the script {word.value}")
        if text is None:
            return True
        if call.ctx.depth + 1 > MAX_DEPTH:
            self.fail(f"cannot check `{call.name} {word.value}`: recipes and scripts nested deeper than {MAX_DEPTH} "
                      "levels", call.part)
            return True
        call.ctx.depth += 1
        try:
            with self.reading_inside(f"`{call.name} {word.value}`"):
                self.analyze_text(text, call.ctx, call.part)
        finally:
            call.ctx.depth -= 1
        return True

    def path_program(self, call: _Call) -> bool:
        """``./x.sh``, ``scripts/deploy``: a workspace file run by its path. Its ``#!`` line says
        how it runs: a shell script or a Python program is read; any other is left as before."""
        path = self.workspace_file(call, call.name)
        if path is None:
            return False
        try:
            with path.open("rb") as handle:
                first = handle.readline(256).decode("utf-8", "replace")
        except OSError:
            return False
        interpreter = _shebang(first) or ("sh" if path.suffix in (".sh", ".bash") else "")
        if interpreter in _SHELLS:
            return self.shell_script(call, _Word.literal(call.name))
        if interpreter.startswith(_PYTHONS):
            self.python_script(call, path)
            return True
        return False

    def python_script(self, call: _Call, path: Path) -> None:
        """``python3 x.py`` for a workspace script: its calls read with :mod:`ast`. The modules it
        imports are not followed (docs/shell.md)."""
        text = self.read_inside(call, path, f"the Python script {path.name}")
        if text is None:
            return
        ctx = self.inner_ctx(call, call.ctx.cwd)
        if ctx is None:
            return
        self.inside_lines -= text.count("\n") + 1  # counted by read_inside already
        self.python_program(call, text, f"the Python script {path.name}", cwd_ctx=ctx)


def _shebang(line: str) -> str:
    """The interpreter a ``#!`` line names (``#!/usr/bin/env -S bash -e`` is bash)."""
    if not line.startswith("#!"):
        return ""
    words = line[2:].split()
    if not words:
        return ""
    program = words[0].rsplit("/", 1)[-1]
    if program == "env":
        rest = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
        program = rest[0].rsplit("/", 1)[-1] if rest else ""
    return program
