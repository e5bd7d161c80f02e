"""tox environments: what ``tox`` (``tox -e NAME``, ``tox run -e NAME``) runs, read from
``tox.ini`` (or the ``[tox:...]`` sections of ``setup.cfg``).

Each environment's ``commands_pre``, ``commands`` and ``commands_post`` are analyzed as the
commands they are, in the environment's ``changedir`` (default: the ini file's directory).
``{posargs}`` takes the words after ``--`` (or its default), ``{toxinidir}`` the ini file's
directory; any other substitution (``{envdir}``, ``{[section]key}`` ...) is a value only known
when tox runs. The classification of ``tox`` itself (``test.run`` by the contract's rules) is
unchanged: a test run inside is not repeated.
"""

from __future__ import annotations

import configparser
import re
from pathlib import Path

from statewise.commands.inside import DYNAMIC_MARK, _Inside
from statewise.commands.words import _Call

_SUBSTITUTION = re.compile(r"\{([^{}]*)\}")


class _Sessions(_Inside):
    """tox environments read and analyzed."""

    def tox(self, call: _Call) -> None:
        self.tox_commands(call)
        self.unknown(call)  # the contract's rules classify tox itself (test.run)

    def tox_commands(self, call: _Call) -> None:
        words = [w.value for w in call.args]
        if any(v is None for v in words) or call.ctx.cwd is None:
            return  # the rules say what a word only known at run time means for tox itself
        values = [v for v in words if v is not None]
        posargs: list[str] | None = None
        if "--" in values:
            cut = values.index("--")
            values, posargs = values[:cut], values[cut + 1:]
        if any(v in ("-l", "--listenvs", "-a", "--listenvs-all", "--showconfig", "--version", "-h", "--help", "list",
                     "l", "config", "c", "--notest", "--devenv", "quickstart") for v in values):
            return
        names: list[str] = []
        configuration: str | None = None
        for index, value in enumerate(values):
            if value in ("-e", "--env") and index + 1 < len(values):
                names += values[index + 1].split(",")
            elif value.startswith("-e") and len(value) > 2:
                names += value[2:].split(",")
            elif value in ("-c", "--conf") and index + 1 < len(values):
                configuration = values[index + 1]
        directory = call.ctx.cwd
        candidates = [directory / configuration] if configuration else [directory / "tox.ini", directory / "setup.cfg"]
        path = next((p for p in candidates if p.is_file()), None)
        if path is None:
            return
        text = self.read_inside(call, path, f"the tox configuration {path.name}")
        if text is None:
            return
        parser = configparser.RawConfigParser(strict=False, interpolation=None)
        try:
            parser.read_string(text, source=str(path))
        except configparser.Error as error:
            self.fail(f"cannot check `tox`: {path.name} cannot be parsed ({type(error).__name__})", call.part)
            return
        prefix = "tox:" if path.name == "setup.cfg" else ""
        base = f"{prefix}tox" if prefix else "tox"
        if not parser.has_section(base) and not any(s.startswith("testenv") for s in parser.sections()):
            return  # a setup.cfg without tox's sections
        if not names:
            envlist = parser.get(base, "envlist", fallback="") if parser.has_section(base) else ""
            names = [n.strip() for n in re.split(r"[,\n]", envlist) if n.strip()] or ["py"]
        for name in names:
            section = f"testenv:{name}"
            if "{" in name:
                self.fail(f"cannot check `tox -e {name}`: a generative environment name", call.part)
                continue
            for key in ("commands_pre", "commands", "commands_post"):
                setting = _setting(parser, section, key)
                if not setting:
                    continue
                changedir = _setting(parser, section, "changedir")
                where = path.parent / _substitute(changedir, path.parent, posargs) if changedir else path.parent
                self.tox_run(call, setting, path, name, key, where, posargs)

    def tox_run(self, call: _Call, value: str, path: Path, name: str, key: str, where: Path,
                posargs: list[str] | None) -> None:
        lines = value.replace("\\\n", " ").split("\n")
        for line in lines:
            command = _substitute(line.strip(), path.parent, posargs)
            if command.startswith("-"):
                command = command[1:].lstrip()  # tox's "ignore the exit code" prefix
            if not command or command.startswith("#"):
                continue
            ctx = self.inner_ctx(call, where)
            if ctx is None:
                return
            with self.reading_inside(f"`tox -e {name}` ({path.name} {key})"):
                self.analyze_text(command, ctx, call.part)


def _setting(parser: configparser.RawConfigParser, section: str, key: str) -> str | None:
    """An environment's setting: its own section's, else ``[testenv]``'s."""
    for name in (section, "testenv"):
        if parser.has_option(name, key):
            return str(parser.get(name, key))
    return None


def _substitute(text: str, directory: Path, posargs: list[str] | None) -> str:
    def replace(match: re.Match[str]) -> str:
        inner = match.group(1)
        if inner == "toxinidir":
            return str(directory)
        if inner == "posargs" or inner.startswith("posargs:"):
            if posargs is not None:
                return " ".join(posargs)
            return inner.partition(":")[2]
        if inner in ("/", ":"):
            return "/" if inner == "/" else ":"
        return "${" + DYNAMIC_MARK + re.sub(r"\W", "_", inner)[:30] + "}"

    return _SUBSTITUTION.sub(replace, text)
