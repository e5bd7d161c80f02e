"""Project conventions as the repository declares them: its test command and package manager.

Both read only files at the top of the workspace; nothing is run.
"""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from statewise.verifiers.base import Adapter, Observation, VerifierArgumentError, VerifierRequest

if TYPE_CHECKING:
    import configparser

__all__ = ["MANIFEST_FILES", "PROTECTED_PATHS_FILE", "DeclaredBuildDir", "ManifestEntry", "PackageManager",
           "ProtectedPaths", "TestCommand", "TestEntryPoints", "manifest_names"]

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
    import configparser  # only setup.cfg and tox.ini need it, and only when they exist

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
    ("pdm.lock", "pdm", "python"),
    ("pnpm-lock.yaml", "pnpm", "node"),
    ("yarn.lock", "yarn", "node"),
    ("bun.lockb", "bun", "node"),
    ("bun.lock", "bun", "node"),
    ("package-lock.json", "npm", "node"),
    ("npm-shrinkwrap.json", "npm", "node"),
)
# A bare pyproject.toml is not here: pip, uv, pdm and poetry 2 all read a PEP 621 [project]
# table, so it does not say which of them the project uses (a `uv init` project has no lock
# until its first `uv add`/`uv sync`).
_PIP_FILES = ("requirements.txt", "setup.py", "setup.cfg")
# Tool tables that name the manager outright.
_TOOL_TABLES = (("uv", "uv"), ("poetry", "poetry"), ("pdm", "pdm"))


class PackageManager(Adapter):
    """``project.package_manager`` (enum): the package manager the project uses.

    Lock files first, in this order: ``uv.lock`` -> uv, ``poetry.lock`` -> poetry,
    ``pdm.lock`` -> pdm, ``pnpm-lock.yaml`` -> pnpm, ``yarn.lock`` -> yarn, ``bun.lockb``
    (or ``bun.lock``) -> bun, ``package-lock.json`` (or ``npm-shrinkwrap.json``) -> npm. Then
    ``[tool.uv]``, ``[tool.poetry]`` or ``[tool.pdm]`` in ``pyproject.toml``;
    ``package.json``'s ``packageManager`` field (``pnpm@9.1.0`` -> pnpm); ``package.json``
    -> npm; ``requirements.txt``, ``setup.py`` or ``setup.cfg`` -> pip. A bare
    ``pyproject.toml`` names no manager (every PEP 621 front end reads it): ABSENT.
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
        for table, manager in _TOOL_TABLES:
            if _table(pyproject, "tool", table) is not None:
                found.append((manager, f"pyproject.toml has [tool.{table}]", "python"))
        if (root / "package.json").is_file():
            package = _json(root / "package.json")
            declared = package.get("packageManager") if isinstance(package, dict) else None
            if isinstance(declared, str) and declared.split("@", 1)[0] in ("npm", "pnpm", "yarn", "bun"):
                found.append((declared.split("@", 1)[0], f"package.json declares packageManager {declared}", "node"))
            found.append(("npm", "package.json is present", "node"))
        for file in _PIP_FILES:
            if (root / file).is_file():
                found.append(("pip", f"{file} is present", "python"))
        return found


# --- every test entry point the project declares -----------------------------------------

# Make/just targets that run tests (the shell normalizer reads `make check` as a test run).
_TEST_TARGETS = ("test", "tests", "check")
_JUST_FILES = ("justfile", "Justfile", ".justfile")
_JUST_RECIPE = re.compile(r"^@?(?P<name>[A-Za-z_][\w-]*)(?:\s+[^:=\n]*)?:(?!=)", re.MULTILINE)
_MAKE_TARGETS = re.compile(r"^(?P<names>[^\s:#=][^:#=\n]*?)[ \t]*::?(?!=)", re.MULTILINE)
_NODE_RUNNERS = ("npm", "pnpm", "yarn", "bun")
_PYTHON_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", "tox.ini", "conftest.py", "pytest.ini")
_PLAIN = re.compile(r"^[\w@./:+-]+$")


def _script_forms(script: str) -> list[str]:
    """The ways an agent runs package.json script ``script`` (npm runs any script; pnpm, yarn
    and bun take the same ``run`` form and, for most names, the bare one)."""
    forms = []
    for runner in _NODE_RUNNERS:
        forms.append(f"{runner} run {script}")
        if runner != "bun":  # `bun test` is bun's own test runner, not the script
            forms.append(f"{runner} {script}")
    if script == "test":
        forms += ["npm t", "npm run-script test"]
    return forms


class TestEntryPoints(Adapter):
    """``project.test_commands`` (list): every test command the project's own files declare.

    Unlike ``project.test_command`` (the one command, by precedence), this lists them all, as
    plain command prefixes an invariant can match a command against: ``[tool.statewise]
    test-command``; ``tox`` (tox.ini, tox.toml or ``[tool.tox]``); ``nox`` (noxfile.py);
    each package.json script named ``test`` or ``test:*`` in the forms npm, pnpm, yarn and
    bun run it, and the program the script runs (``vitest`` for ``vitest run``); ``make`` and
    ``just`` when the Makefile or justfile has a test, tests or check target (the shell
    normalizer calls make a test run only for those targets, and options may come first:
    ``make -j4 test``); ``pytest`` and ``unittest`` in a Python
    project (pytest configuration, conftest.py, or any Python project file: pytest runs
    unconfigured test suites too); ``cargo test`` (Cargo.toml); ``go test`` (go.mod);
    ``bun test`` (bunfig.toml or a bun lock); ``manage.py test`` (manage.py).

    ABSENT when the files declare none; UNAVAILABLE when a file that must be read cannot be
    parsed. Reads at most a dozen small files at the top of the workspace; nothing is run.
    """

    __test__ = False
    name = "project.test_commands"

    def _observe(self, request: VerifierRequest) -> Observation:
        root = self.workspace(request)
        try:
            found = self._detect(root)
        except _Unreadable as error:
            return Observation.unavailable(str(error))
        if not found:
            return Observation.absent(
                f"{root} declares no test command (no [tool.statewise] test-command, tox, nox, package.json test "
                "script, make/just test target, Python, Cargo or Go project file)"
            )
        commands = list(dict.fromkeys(command for command, _ in found))
        sources = ", ".join(dict.fromkeys(source for _, source in found))
        return Observation.of(commands, f"{root} declares test commands in {sources}", str(root))

    @staticmethod
    def _detect(root: Path) -> list[tuple[str, str]]:
        found: list[tuple[str, str]] = []
        pyproject = _toml(root / "pyproject.toml")
        declared = _table(pyproject, "tool", "statewise", "test-command") or _table(
            pyproject, "tool", "statewise", "test_command")
        if isinstance(declared, list) and all(isinstance(item, str) for item in declared):
            declared = shlex.join(declared)
        if isinstance(declared, str) and declared.strip():
            found.append((declared.strip(), "pyproject.toml [tool.statewise]"))
        tox = _ini(root / "tox.ini")
        if (tox is not None and any(s == "tox" or s.startswith("testenv") for s in tox.sections())) or (
                root / "tox.toml").is_file() or _table(pyproject, "tool", "tox") is not None:
            found.append(("tox", "tox configuration"))
        if (root / "noxfile.py").is_file():
            found.append(("nox", "noxfile.py"))
        package = _json(root / "package.json")
        scripts = _table(package, "scripts") if isinstance(package, dict) else None
        if isinstance(scripts, dict):
            for script, body in scripts.items():
                if not (script == "test" or script.startswith("test:")) or not isinstance(body, str):
                    continue
                if script == "test" and body.strip() == _NPM_DEFAULT_TEST:
                    continue
                found += [(form, "package.json scripts") for form in _script_forms(script) if _PLAIN.match(script)]
                words = body.split()
                if words and _PLAIN.match(words[0]) and "/" not in words[0]:
                    found.append((words[0], "package.json scripts"))
        for name in ("GNUmakefile", "makefile", "Makefile"):
            text = _read(root / name)
            if text is None:
                continue
            targets = {t for match in _MAKE_TARGETS.finditer(text) for t in match.group("names").split()}
            # The shell normalizer reads `make` as a test run only for these targets, so the
            # program alone is the entry point (`make -j4 test` puts options before the target).
            if any(t in targets for t in _TEST_TARGETS):
                found.append(("make", f"{name} (a {'/'.join(t for t in _TEST_TARGETS if t in targets)} target)"))
            break
        for name in _JUST_FILES:
            text = _read(root / name)
            if text is None:
                continue
            recipes = {match.group("name") for match in _JUST_RECIPE.finditer(text)}
            if any(t in recipes for t in _TEST_TARGETS):
                found.append(("just", f"{name} (a {'/'.join(t for t in _TEST_TARGETS if t in recipes)} recipe)"))
            break
        if any((root / marker).is_file() for marker in _PYTHON_MARKERS) or (root / "tests").is_dir():
            found += [("pytest", "a Python project"), ("unittest", "a Python project")]
        if (root / "Cargo.toml").is_file():
            found.append(("cargo test", "Cargo.toml"))
        if (root / "go.mod").is_file():
            found.append(("go test", "go.mod"))
        if any((root / name).is_file() for name in ("bunfig.toml", "bun.lockb", "bun.lock")):
            found.append(("bun test", "bun project files"))
        if (root / "manage.py").is_file():
            found.append(("manage.py test", "manage.py"))
        return found


# --- paths the project declares protected --------------------------------------------------

#: The project file that lists paths the agent must never delete or overwrite.
PROTECTED_PATHS_FILE = ".statewise/protected"


def _repository_top(workspace: Path) -> Path:
    """The nearest directory at or above ``workspace`` holding ``.git`` (a directory, or the file
    of a linked worktree), else ``workspace``: the file is the project's, at its root, and the
    contract resolves the paths it lists against the repository root, so a hook running in a
    subdirectory must read the same file (issue 25)."""
    for directory in (workspace, *workspace.parents):
        if (directory / ".git").exists():
            return directory
    return workspace


class ProtectedPaths(Adapter):
    """``fs.declared_protected_paths`` (list): the paths ``.statewise/protected`` lists.

    The file is read at the repository's root. One path per line, relative to the repository
    root (or absolute); blank lines and lines
    starting with ``#`` are ignored. The file is the developer's written declaration,
    committed with the project. ABSENT when there is no such file (nothing is declared
    there: this is not the same as "nothing is protected"); an empty file is the explicit
    declaration that nothing is. CODEOWNERS is not read: it names reviewers, not paths an
    agent may not delete.
    """

    name = "project.protected_paths"

    def _observe(self, request: VerifierRequest) -> Observation:
        root = _repository_top(self.workspace(request))
        path = root / PROTECTED_PATHS_FILE
        try:
            text = _read(path)
        except _Unreadable as error:
            return Observation.unavailable(str(error))
        if text is None:
            return Observation.absent(f"{path} does not exist", str(path))
        paths = []
        for line in text.splitlines():
            entry = line.strip()
            if entry and not entry.startswith("#"):
                paths.append(entry.rstrip("/") or "/")
        return Observation.of(paths, f"{path} lists {len(paths)} protected path(s)", str(path))


# --- the build directory a Makefile declares -------------------------------------------------

#: `BUILD_DIR = bin` (also `:=`, `::=`, `?=`), a trailing slash and comment allowed.
_BUILD_DIR = re.compile(r"^BUILD_DIR[ \t]*(?::{1,3}|\?)?=[ \t]*(\S+?)/?[ \t]*(?:#.*)?$", re.MULTILINE)
#: A plain directory below the workspace: no `.`, `..`, absolute path, hidden directory or variable.
_PLAIN_RELATIVE = re.compile(r"[A-Za-z0-9_][\w-]*(?:\.[\w-]+)*(?:/[A-Za-z0-9_][\w-]*(?:\.[\w-]+)*)*")


class DeclaredBuildDir(Adapter):
    """``fs.declared_build_dir`` (path): the ``BUILD_DIR`` the workspace's Makefile declares.

    The first of ``GNUmakefile``, ``makefile``, ``Makefile`` in the workspace, as make reads
    them. Only a plain directory below the workspace counts (``bin``, ``out/release``); a value
    make computes (``$(OUT)``), ``.``, ``..``, an absolute or a hidden path is not a declaration
    this reads. ABSENT when there is no Makefile, no ``BUILD_DIR`` line, or no such value
    (nothing declared: the rule that reads it then asks as before); UNAVAILABLE when the file
    exists but cannot be read. Read in this process, on every recursive delete.
    """

    name = "project.build_dir"

    def _observe(self, request: VerifierRequest) -> Observation:
        workspace = self.workspace(request)
        for name in MANIFEST_FILES["make"]:
            path = workspace / name
            try:
                text = _read(path)
            except _Unreadable as error:
                return Observation.unavailable(str(error))
            if text is None:
                continue
            match = _BUILD_DIR.search(text)
            if match is None or not _PLAIN_RELATIVE.fullmatch(match.group(1)):
                shown = f" ({match.group(1)!r} is not a plain directory below the workspace)" if match else ""
                return Observation.absent(f"{path} declares no BUILD_DIR{shown}", str(path))
            return Observation.of(match.group(1), f"{path}: BUILD_DIR = {match.group(1)}", str(path))
        return Observation.absent(f"no Makefile in {workspace}")


# --- a name a runner's manifest declares ------------------------------------------------------

#: Manifest kind -> the files that declare its names, in the order the runner reads them.
MANIFEST_FILES = {"npm": ("package.json",), "make": ("GNUmakefile", "makefile", "Makefile"),
                  "just": ("justfile", "Justfile", ".justfile")}
# A make rule's targets (a pattern rule such as %.o or the catch-all % admits every name it
# matches); a just recipe, with parameters and defaults (test *args='' or build target="x":),
# or an alias; an assignment (x := y) is neither.
_MAKE_RULE = re.compile(r"^([^\s:#=.][^:=#]*?)[ \t]*::?(?!=)", re.MULTILINE)
_JUST_NAME = re.compile(r"^@?([A-Za-z_][\w-]*)(?![ \t]*:=)(?:[ \t]+[^\n:]*)?:(?!=)", re.MULTILINE)
_JUST_ALIAS = re.compile(r"^alias[ \t]+([A-Za-z_][\w-]*)[ \t]*:=", re.MULTILINE)


def manifest_names(kind: str, text: str) -> tuple[set[str], list[str]]:
    """The names a manifest of ``kind`` declares, and (make) its pattern rules as regexes."""
    if kind == "npm":
        document = json.loads(text)
        scripts = document.get("scripts") if isinstance(document, dict) else None
        return (set(scripts) if isinstance(scripts, dict) else set()), []
    if kind == "make":
        targets = {name for match in _MAKE_RULE.finditer(text) for name in match.group(1).split()}
        return targets, [re.escape(t).replace("%", ".+") for t in targets if "%" in t]
    return set(_JUST_NAME.findall(text)) | set(_JUST_ALIAS.findall(text)), []


class ManifestEntry(Adapter):
    """``npm.script_exists`` / ``make.target_exists`` / ``just.recipe_exists`` (bool): whether
    the workspace's manifest of ``kind`` (``npm``: ``package.json`` scripts; ``make``: the
    first of ``GNUmakefile``, ``makefile``, ``Makefile``; ``just``: the first of ``justfile``,
    ``Justfile``, ``.justfile``) declares ``name``.

    Read in this process (a runner's manifest is a file; starting an interpreter to read it
    cost a tenth of a second per name). False when the workspace has no such manifest (no
    runner there knows the name); UNAVAILABLE when it exists but cannot be read or parsed.
    """

    name = "project.manifest_entry"
    args = frozenset({"kind", "name"})
    required = frozenset({"kind", "name"})

    def _observe(self, request: VerifierRequest) -> Observation:
        kind = self.text_arg(request, "kind")
        wanted = self.text_arg(request, "name")
        if kind not in MANIFEST_FILES:
            raise VerifierArgumentError(f"kind must be one of {', '.join(MANIFEST_FILES)}, not {kind!r}")
        root = self.workspace(request)
        present = [root / file for file in MANIFEST_FILES[kind] if (root / file).is_file()]
        if not present:
            return Observation.of(False, f"{root} has no {' or '.join(MANIFEST_FILES[kind])}")
        path = present[0]
        try:
            text = _read(path, strict=kind == "npm")
            if text is None:
                return Observation.of(False, f"{path} does not exist")
            names, patterns = manifest_names(kind, text.replace("\r\n", "\n").replace("\r", "\n"))
        except _Unreadable as error:
            return Observation.unavailable(str(error))
        except json.JSONDecodeError as error:
            return Observation.unavailable(f"{path} is not valid JSON: {error}")
        if wanted in names:
            return Observation.of(True, f"{path.name} declares {wanted}", str(path))
        matched = next((p for p in patterns if re.fullmatch(p, str(wanted))), None)
        if matched is not None:
            return Observation.of(True, f"{path.name} has a pattern rule that matches {wanted}", str(path))
        return Observation.of(False, f"{path.name} declares no {wanted}", str(path))
