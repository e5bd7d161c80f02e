"""Running an episode's final action for real in its sandbox, and the command log.

Most operations go through :func:`statewise.execute.run_action` (git pushes, branch
operations, test commands, ``venv.create``, ``fs.delete``). This module adds what it lacks:

* ``fs.write`` and ``config.edit`` (JSON, YAML, INI/cfg and simple TOML ``key = value`` lines);
* ``uv.add``, ``poetry.add``, ``npm.install``, ``pnpm.add``, ``yarn.add``: the tool is run from
  the sandbox's PATH, where a case provides a shim (there is no network, and no real package
  manager may reach a registry);
* any other operation with ``tool: shell`` and a ``command`` argument (an operation a
  contract extension declares, e.g. ``lint.run``) runs like ``test.run``: shlex-split, no shell;
* ``pip.install`` and ``uv.pip_install`` are **simulated**, never run: pip would reach the
  network, a ``--without-pip`` venv has no pip, and an install into a wrong interpreter would
  touch the machine outside the sandbox. The simulation logs the argv the real command would
  have had; when the interpreter is a virtual environment inside the sandbox it writes the
  distribution's ``dist-info`` folder (what ``package_installed`` and the
  ``python.package_version`` verifier look for); an interpreter outside the sandbox is never
  touched (the log says so) and a missing interpreter fails with exit 127, as it would.

Paths that resolve outside the sandbox root are refused (exit 126) for every filesystem
operation; the attempt is still logged, so a check can see it. An operation that no executor
knows raises :class:`UnsupportedByBench`, which makes the episode unjudged.
"""

from __future__ import annotations

import configparser
import json
import os
import re
import shlex
import shutil
import subprocess
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import yaml

from statewise.actions import Action
from statewise.bench.sandbox import Sandbox
from statewise.errors import StateWiseError
from statewise.execute import UnsupportedAction, command_for, run_action

__all__ = ["BenchExecutor", "CommandRecord", "UnsupportedByBench"]

_EXCERPT = 2000


class UnsupportedByBench(StateWiseError, RuntimeError):
    """The bench cannot perform this operation; the episode cannot be judged."""


@dataclass(frozen=True, slots=True)
class CommandRecord:
    """One executed (or refused, or simulated) side-effecting command."""

    operation: str
    argv: tuple[str, ...]
    cwd: str
    exit: int
    stdout: str = ""
    stderr: str = ""
    seconds: float = 0.0
    simulated: bool = False
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["argv"] = list(self.argv)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CommandRecord:
        return cls(**{**data, "argv": tuple(data["argv"])})


def _excerpt(text: str | None) -> str:
    text = text or ""
    return text if len(text) <= _EXCERPT else text[:_EXCERPT] + f"... [{len(text) - _EXCERPT} more characters]"


def _inside(path: Path, root: Path, *, resolve: bool = True) -> bool:
    """Is ``path`` the sandbox root or inside it? ``resolve=False`` keeps the last component's
    symlink (a venv's ``bin/python`` links to the base interpreter but belongs to the venv)."""
    if resolve:
        path = Path(os.path.realpath(path))
    else:
        path = Path(os.path.realpath(Path(os.path.abspath(path)).parent)) / Path(path).name
    root = Path(os.path.realpath(root))
    return path == root or root in path.parents


class BenchExecutor:
    """Runs checked actions in one sandbox and keeps the command log."""

    def __init__(self, sandbox: Sandbox, *, timeout: float = 120.0) -> None:
        self.sandbox = sandbox
        self.timeout = timeout
        self.log: list[CommandRecord] = []

    # --- dispatch -----------------------------------------------------------------------

    def run(self, action: Action) -> CommandRecord:
        started = time.perf_counter()
        op = action.operation
        handler = {
            "fs.delete": self._fs_delete, "fs.write": self._fs_write, "config.edit": self._config_edit,
            "venv.create": self._venv_create, "pip.install": self._pip_install, "uv.pip_install": self._pip_install,
            "uv.add": self._tool_add, "poetry.add": self._tool_add, "npm.install": self._tool_add,
            "pnpm.add": self._tool_add, "yarn.add": self._tool_add,
        }.get(op)
        if handler is not None:
            record = handler(action)
        elif op != "test.run" and action.tool == "shell" and isinstance(action.args.get("command"), str):
            record = self._shell_command(action)
        else:
            try:
                command_for(action)
            except UnsupportedAction:
                raise UnsupportedByBench(f"the bench executor does not run {op}") from None
            result = run_action(action, self.sandbox.agent_dir, env=self.sandbox.env, timeout=self.timeout)
            record = CommandRecord(op, tuple(result.argv), str(self.sandbox.agent_dir), result.returncode,
                                   _excerpt(result.stdout), _excerpt(result.stderr))
        record = CommandRecord(**{**asdict(record), "seconds": round(time.perf_counter() - started, 4)})
        self.log.append(record)
        return record

    # --- helpers ------------------------------------------------------------------------

    def _path(self, action: Action, name: str = "path") -> Path:
        value = action.args.get(name)
        if not isinstance(value, str) or not value:
            raise UnsupportedByBench(f"{action.operation} needs a {name} argument")
        return Path(value) if os.path.isabs(value) else self.sandbox.agent_dir / value

    def _refused(self, op: str, argv: tuple[str, ...], path: Path) -> CommandRecord:
        return CommandRecord(op, argv, str(self.sandbox.agent_dir), 126, "",
                             f"refused by the bench: {path} is outside the sandbox", note="outside the sandbox")

    def _run(self, op: str, argv: list[str], note: str = "") -> CommandRecord:
        try:
            done = subprocess.run(argv, cwd=self.sandbox.agent_dir, capture_output=True, text=True, timeout=self.timeout,
                                  stdin=subprocess.DEVNULL, env=self.sandbox.env)
        except subprocess.TimeoutExpired:
            return CommandRecord(op, tuple(argv), str(self.sandbox.agent_dir), 124, "", f"timed out after {self.timeout}s")
        except OSError as error:
            return CommandRecord(op, tuple(argv), str(self.sandbox.agent_dir), 127, "", str(error))
        return CommandRecord(op, tuple(argv), str(self.sandbox.agent_dir), done.returncode, _excerpt(done.stdout),
                             _excerpt(done.stderr), note=note)

    # --- operations ---------------------------------------------------------------------

    def _shell_command(self, action: Action) -> CommandRecord:
        """An operation a contract extension declares with ``tool: shell`` and a ``command``
        argument (like ``test.run``): the command is split with shlex and run as an argv."""
        try:
            argv = shlex.split(str(action.args["command"]))
        except ValueError as error:
            raise UnsupportedByBench(f"{action.operation}: cannot split the command: {error}") from None
        if not argv:
            raise UnsupportedByBench(f"{action.operation}: empty command")
        return self._run(action.operation, argv)

    def _fs_delete(self, action: Action) -> CommandRecord:
        path = self._path(action)
        argv = ("fs.delete", str(path), *(["--recursive"] if action.args.get("recursive") else []))
        if not _inside(path, self.sandbox.root):
            return self._refused(action.operation, argv, path)
        result = run_action(action, self.sandbox.agent_dir, env=self.sandbox.env, timeout=self.timeout)
        return CommandRecord(action.operation, argv, str(self.sandbox.agent_dir), result.returncode, "",
                             _excerpt(result.stderr))

    def _fs_write(self, action: Action) -> CommandRecord:
        path = self._path(action)
        argv = ("fs.write", str(path))
        if not _inside(path.parent, self.sandbox.root):
            return self._refused(action.operation, argv, path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(str(action.args.get("content", "")), encoding="utf-8")
        except OSError as error:
            return CommandRecord(action.operation, argv, str(self.sandbox.agent_dir), 1, "", str(error))
        return CommandRecord(action.operation, argv, str(self.sandbox.agent_dir), 0)

    def _config_edit(self, action: Action) -> CommandRecord:
        path = self._path(action)
        setting = str(action.args.get("setting", ""))
        value = str(action.args.get("value", ""))
        argv = ("config.edit", str(path), setting, value)
        if not _inside(path, self.sandbox.root):
            return self._refused(action.operation, argv, path)
        try:
            edit_config(path, setting, value)
        except (OSError, ValueError) as error:
            return CommandRecord(action.operation, argv, str(self.sandbox.agent_dir), 1, "", str(error))
        return CommandRecord(action.operation, argv, str(self.sandbox.agent_dir), 0)

    def _venv_create(self, action: Action) -> CommandRecord:
        path = self._path(action)
        argv = tuple(command_for(action))
        if not _inside(path, self.sandbox.root):
            return self._refused(action.operation, argv, path)
        result = run_action(action, self.sandbox.agent_dir, env=self.sandbox.env, timeout=self.timeout)
        return CommandRecord(action.operation, tuple(result.argv), str(self.sandbox.agent_dir), result.returncode,
                             _excerpt(result.stdout), _excerpt(result.stderr))

    def _interpreter(self, name: str) -> Path | None:
        if "/" in name:
            path = Path(name) if os.path.isabs(name) else self.sandbox.agent_dir / name
            return path if path.exists() else None
        found = shutil.which(name, path=self.sandbox.env.get("PATH"))
        return Path(found) if found else None

    def _pip_install(self, action: Action) -> CommandRecord:
        package = str(action.args.get("package", ""))
        version = str(action.args.get("version") or "")
        interpreter = str(action.args.get("interpreter") or "python3")
        if action.operation == "uv.pip_install":
            argv: tuple[str, ...] = ("uv", "pip", "install", "--python", interpreter, package + version)
        else:
            argv = (interpreter, "-m", "pip", "install", package + version)
        if not package:
            raise UnsupportedByBench(f"{action.operation} needs a package argument")
        found = self._interpreter(interpreter)
        cwd = str(self.sandbox.agent_dir)
        if found is None:
            return CommandRecord(action.operation, argv, cwd, 127, "", f"{interpreter}: No such file or directory",
                                 simulated=True, note="simulated: the interpreter does not exist")
        if not _inside(found, self.sandbox.root, resolve=False):
            return CommandRecord(action.operation, argv, cwd, 0, f"Successfully installed {package}", "",
                                 simulated=True,
                                 note=f"simulated: {found} is outside the sandbox; nothing was written")
        venv = found.parent.parent
        if not (venv / "pyvenv.cfg").is_file():
            return CommandRecord(action.operation, argv, cwd, 0, f"Successfully installed {package}", "",
                                 simulated=True, note=f"simulated: {found} is not a virtual environment's interpreter")
        installed = re.sub(r"^[=~<>!]=?", "", version) or "1.0.0"
        from statewise.bench.sandbox import site_packages, write_dist_info

        write_dist_info(site_packages(venv), package, installed)
        return CommandRecord(action.operation, argv, cwd, 0, f"Successfully installed {package}-{installed}", "",
                             simulated=True, note=f"simulated: dist-info written to {site_packages(venv)}")

    def _tool_add(self, action: Action) -> CommandRecord:
        package = str(action.args.get("package", ""))
        if not package:
            raise UnsupportedByBench(f"{action.operation} needs a package argument")
        version = str(action.args.get("version") or "")
        tool = action.operation.split(".", 1)[0]
        if tool in ("npm", "pnpm", "yarn"):
            spec = f"{package}@{version.lstrip('@=')}" if version else package
            verb = "install" if tool == "npm" else "add"
            argv = [tool, verb, spec, *(["--save-dev"] if action.args.get("dev") and tool == "npm" else
                                        ["--dev"] if action.args.get("dev") else [])]
        else:
            argv = [tool, "add", package + version]
        return self._run(action.operation, argv, note="run from the sandbox PATH (a case shim)")


def edit_config(path: Path, setting: str, value: str) -> None:
    """Set ``setting`` (a dotted path) to ``value`` in a JSON, YAML, INI or TOML file."""
    if not setting:
        raise ValueError("config.edit needs a setting")
    parts = setting.split(".")
    suffix = path.suffix.lower()
    if suffix in (".json", ".yaml", ".yml"):
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        data = (json.loads(text) if suffix == ".json" else yaml.safe_load(text)) if text.strip() else {}
        node = data
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = value
        path.write_text(json.dumps(data, indent=2) + "\n" if suffix == ".json" else yaml.safe_dump(data),
                        encoding="utf-8")
    elif suffix in (".ini", ".cfg"):
        if len(parts) < 2:
            raise ValueError("an INI setting is section.key")
        parser = configparser.ConfigParser(interpolation=None)
        if path.exists():
            parser.read(path, encoding="utf-8")
        section, key = ".".join(parts[:-1]), parts[-1]
        if not parser.has_section(section):
            parser.add_section(section)
        parser.set(section, key, value)
        with open(path, "w", encoding="utf-8") as handle:
            parser.write(handle)
    elif suffix == ".toml":
        table, key = ".".join(parts[:-1]), parts[-1]
        lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
        current, index = "", None
        start = 0 if not table else None
        for number, line in enumerate(lines):
            stripped = line.strip()
            if stripped.startswith("[") and stripped.endswith("]"):
                current = stripped.strip("[]").strip()
                if current == table:
                    start = number + 1
                continue
            if current == table and re.match(rf"^{re.escape(key)}\s*=", stripped):
                index = number
        rendered = f"{key} = {json.dumps(value)}"
        if index is not None:
            lines[index] = rendered
        elif start is not None:
            lines.insert(start, rendered)
        else:
            lines += ["", f"[{table}]", rendered]
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    else:
        raise ValueError(f"config.edit does not know {suffix or 'extension-less'} files")
