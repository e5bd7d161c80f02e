"""Project conventions as the repository declares them: its test command and package manager.

Both read only files at the top of the workspace; nothing is run.
"""

from __future__ import annotations

import configparser
import json
import re
import shlex
import tomllib
from pathlib import Path
from typing import Any

from statewise.verifiers.base import Adapter, Observation, VerifierArgumentError, VerifierRequest

__all__ = ["PackageManager", "TestCommand"]

_MAX_BYTES = 2 * 1024 * 1024
_NPM_DEFAULT_TEST = 'echo "Error: no test specified" && exit 1'
# A make rule whose targets include "test" (but not a "test := value" assignment).
_MAKE_TEST_TARGET = re.compile(r"^(?:[^\s:#=]+[ \t]+)*test(?:[ \t]+[^\s:#=]+)*[ \t]*::?(?!=)", re.MULTILINE)


class _Unreadable(Exception):
    """A file that exists but cannot be read or parsed: nothing can be decided."""


def _read(path: Path, *, strict: bool = True) -> str | None:
    try:
        with open(path, "rb") as handle:
            raw = handle.read(_MAX_BYTES + 1)
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None
    except OSError as error:
        raise _Unreadable(f"cannot read {path}: {error.strerror or error}") from None
    if len(raw) > _MAX_BYTES:
        raise _Unreadable(f"{path} is larger than {_MAX_BYTES} bytes")
    if not strict:
        # Only searched for a target name: a stray Latin-1 comment must not hide it.
        return raw.decode("utf-8-sig", errors="replace")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise _Unreadable(f"{path} is not UTF-8 text ({error.reason} at byte {error.start})") from None


def _toml(path: Path) -> dict[str, Any] | None:
    text = _read(path)
    if text is None:
        return None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise _Unreadable(f"{path} is not valid TOML: {error}") from None


def _json(path: Path) -> Any:
    text = _read(path)
    if text is None:
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise _Unreadable(f"{path} is not valid JSON: {error}") from None


def _ini(path: Path) -> configparser.ConfigParser | None:
    text = _read(path)
    if text is None:
        return None
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.Error as error:
        raise _Unreadable(f"{path} is not valid INI: {str(error).splitlines()[0]}") from None
    return parser


def _table(document: dict[str, Any] | None, *names: str) -> Any:
    node: Any = document
    for name in names:
        if not isinstance(node, dict) or name not in node:
            return None
        node = node[name]
    return node


class TestCommand(Adapter):
    """``project.test_command`` (string): the test command the repository declares.

    Precedence (the first that applies wins):

    1. ``pyproject.toml`` ``[tool.statewise] test-command`` (a string, or a list joined
       with shell quoting);
    2. ``tox.ini`` with a ``[tox]`` or ``[testenv...]`` section, or ``[tool.tox]`` in
       ``pyproject.toml`` -> ``tox``;
    3. ``package.json`` ``scripts.test`` (other than npm's placeholder) -> ``npm test``;
    4. a ``Makefile``/``makefile``/``GNUmakefile`` with a ``test:`` rule -> ``make test``;
    5. pytest configuration -- ``pytest.ini``, ``[tool.pytest.ini_options]`` (or
       ``[tool.pytest]``) in ``pyproject.toml``, ``[tool:pytest]`` in ``setup.cfg``,
       ``[pytest]`` in ``tox.ini`` -> ``pytest``.

    ABSENT when none applies; UNAVAILABLE when a file that must be consulted cannot be parsed.
    """

    __test__ = False  # not a pytest test class
    name = "project.test_command"

    def _observe(self, request: VerifierRequest) -> Observation:
        root = self.workspace(request)
        try:
            return self._detect(root)
        except _Unreadable as error:
            return Observation.unavailable(str(error))

    def _detect(self, root: Path) -> Observation:
        pyproject = _toml(root / "pyproject.toml")
        declared = _table(pyproject, "tool", "statewise", "test-command")
        if declared is None:
            declared = _table(pyproject, "tool", "statewise", "test_command")
        if declared is not None:
            if isinstance(declared, list) and declared and all(isinstance(item, str) for item in declared):
                declared = shlex.join(declared)
            if not isinstance(declared, str) or not declared.strip():
                raise _Unreadable(
                    f"{root / 'pyproject.toml'}: [tool.statewise] test-command must be a string or list of strings"
                )
            return Observation.of(
                declared.strip(),
                f"{root / 'pyproject.toml'} declares [tool.statewise] test-command",
                str(root / "pyproject.toml"),
            )
        tox = _ini(root / "tox.ini")
        if tox is not None and any(s == "tox" or s.startswith("testenv") for s in tox.sections()):
            return Observation.of("tox", f"{root / 'tox.ini'} configures tox", str(root / "tox.ini"))
        if _table(pyproject, "tool", "tox") is not None:
            return Observation.of("tox", f"{root / 'pyproject.toml'} has [tool.tox]", str(root / "pyproject.toml"))
        package = _json(root / "package.json")
        script = _table(package, "scripts", "test") if isinstance(package, dict) else None
        if isinstance(script, str) and script.strip() and script.strip() != _NPM_DEFAULT_TEST:
            return Observation.of(
                "npm test",
                f"{root / 'package.json'} has scripts.test ({script.strip()[:80]})",
                str(root / "package.json"),
            )
        for name in ("GNUmakefile", "makefile", "Makefile"):
            text = _read(root / name, strict=False)
            if text is not None and _MAKE_TEST_TARGET.search(text):
                return Observation.of("make test", f"{root / name} has a test target", str(root / name))
        if (root / "pytest.ini").is_file():
            return Observation.of("pytest", f"{root / 'pytest.ini'} configures pytest", str(root / "pytest.ini"))
        if _table(pyproject, "tool", "pytest") is not None:
            table = (
                "[tool.pytest.ini_options]"
                if _table(pyproject, "tool", "pytest", "ini_options") is not None
                else "[tool.pytest]"
            )
            return Observation.of("pytest", f"{root / 'pyproject.toml'} has {table}", str(root / "pyproject.toml"))
        setup_cfg = _ini(root / "setup.cfg")
        if setup_cfg is not None and setup_cfg.has_section("tool:pytest"):
            return Observation.of("pytest", f"{root / 'setup.cfg'} has [tool:pytest]", str(root / "setup.cfg"))
        if tox is not None and tox.has_section("pytest"):
            return Observation.of("pytest", f"{root / 'tox.ini'} has [pytest]", str(root / "tox.ini"))
        return Observation.absent(
            f"{root} declares no test command ([tool.statewise], tox, package.json scripts.test, "
            "a Makefile test target or pytest configuration)"
        )


_LOCKS = (
    ("uv.lock", "uv", "python"),
    ("poetry.lock", "poetry", "python"),
    ("pnpm-lock.yaml", "pnpm", "node"),
    ("yarn.lock", "yarn", "node"),
    ("package-lock.json", "npm", "node"),
    ("npm-shrinkwrap.json", "npm", "node"),
)
_PIP_FILES = ("requirements.txt", "pyproject.toml", "setup.py", "setup.cfg")


class PackageManager(Adapter):
    """``project.package_manager`` (enum): the package manager the project uses.

    Lock files first, in this order: ``uv.lock`` -> uv, ``poetry.lock`` -> poetry,
    ``pnpm-lock.yaml`` -> pnpm, ``yarn.lock`` -> yarn, ``package-lock.json`` (or
    ``npm-shrinkwrap.json``) -> npm. Then ``[tool.poetry]`` in ``pyproject.toml`` -> poetry;
    ``package.json``'s ``packageManager`` field (``pnpm@9.1.0`` -> pnpm); ``package.json``
    -> npm; ``requirements.txt``, ``pyproject.toml``, ``setup.py`` or ``setup.cfg`` -> pip.
    ``ecosystem: python`` or ``node`` restricts the search to one ecosystem (a repository
    with both keeps the first match otherwise; the detail names everything found).
    ABSENT when nothing is found.
    """

    name = "project.package_manager"
    args = frozenset({"ecosystem"})

    def _observe(self, request: VerifierRequest) -> Observation:
        ecosystem = self.text_arg(request, "ecosystem")
        if ecosystem not in (None, "python", "node"):
            raise VerifierArgumentError(f"ecosystem must be python or node, not {ecosystem!r}")
        root = self.workspace(request)
        try:
            found = self._evidence(root)
        except _Unreadable as error:
            return Observation.unavailable(str(error))
        chosen = [item for item in found if ecosystem is None or item[2] == ecosystem]
        if not chosen:
            where = f" for {ecosystem}" if ecosystem else ""
            return Observation.absent(f"{root} has no lock or manifest file{where} that names a package manager")
        manager, why, _ = chosen[0]
        others = sorted({f"{m} ({w})" for m, w, _ in chosen[1:] if m != manager})
        also = f"; also found {', '.join(others)}" if others else ""
        return Observation.of(manager, f"{root}: {why}{also}", str(root / why.split(" ", 1)[0]))

    @staticmethod
    def _evidence(root: Path) -> list[tuple[str, str, str]]:
        found: list[tuple[str, str, str]] = []
        for file, manager, ecosystem in _LOCKS:
            if (root / file).is_file():
                found.append((manager, f"{file} is present", ecosystem))
        pyproject = _toml(root / "pyproject.toml") if (root / "pyproject.toml").is_file() else None
        if _table(pyproject, "tool", "poetry") is not None:
            found.append(("poetry", "pyproject.toml has [tool.poetry]", "python"))
        if (root / "package.json").is_file():
            package = _json(root / "package.json")
            declared = package.get("packageManager") if isinstance(package, dict) else None
            if isinstance(declared, str) and declared.split("@", 1)[0] in ("npm", "pnpm", "yarn"):
                found.append((declared.split("@", 1)[0], f"package.json declares packageManager {declared}", "node"))
            found.append(("npm", "package.json is present", "node"))
        for file in _PIP_FILES:
            if (root / file).is_file():
                found.append(("pip", f"{file} is present", "python"))
        return found
