"""The runtime versions a project declares, to hold a memory file's version claims against.

A line "Python 3.10" or "Node 20" in a memory file speaks of the project, not of the
interpreter that happens to be on this machine: it is compared with what the project
declares (``requires-python`` in pyproject.toml, ``.python-version``, ``.nvmrc``,
``.node-version``, ``engines.node`` in package.json, ``.tool-versions``; for Go the ``go``
line of go.mod; for the JVM the bytecode target the Gradle or Maven build sets; for Bun
``packageManager``, ``.bun-version`` and the CI's ``bun-version``). A claim inside a
declared range holds ("oldest supported version 3.10" against ``>=3.10``); one outside every
declaration is contradicted, with the declaration as evidence; a project that declares
nothing leaves the claim unresolved. Read-only file reads, nothing is run.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

__all__ = ["JVM_BUILD_FILES", "PINNED_RUNTIMES", "RANGE_KEY", "WORKFLOW_FILES", "Declaration", "declared_versions",
           "judge_range", "judge_version", "jvm_version", "range_facts"]

#: A range a line says the project supports: ``project.supports_runtime[ruby]`` = ``3.2.0+``.
RANGE_KEY = "project.supports_runtime["
# "Ruby 3.2.0+ required", "**Node Version**: ^18.0.0 || >=20.0.0": a floor (``X+``, ``>=X``,
# ``^X``) or an npm range with ``||``; a bare version ("Node 20") is the contract's rule. Python
# floors are left to the contract's rules too ("3.10+" there is often advice, not the project's).
_RANGE = re.compile(
    r"(?i)(?<![\w.-])(?P<runtime>ruby|node(?:\.?js)?)\**(?:\s+version)?\**\s*(?::|is|>=)?\s*\**\s*"
    r"(?P<range>(?:(?:[\^~]|>=)\s*v?\d+(?:\.\d+){0,2}|v?\d+(?:\.\d+){0,2}\+)"
    r"(?:\s*\|\|\s*(?:[\^~]|>=?)?\s*v?\d+(?:\.\d+){0,2})*)(?![\d.])")
# "Requires Go 1.25+", "JVM (1.8+)", "Java >= 17": a floor (``X+`` or ``>=X``) only; a bare "Go
# 1.22" is too often a feature's version, and "go" a verb
_FLOOR_RANGE = re.compile(
    r"(?i)(?<![\w.-])(?P<runtime>go(?:lang)?|jvm|java|jdk)\**(?:\s+version)?\**\s*(?::|is)?\s*\(?\s*"
    r"(?P<range>>=\s*v?\d+(?:\.\d+){0,2}|v?\d+(?:\.\d+){0,2}\+)(?!\d)")
# "Runtime: Bun 1.2.11": the Bun version the project runs on, a pin (a version, not a floor)
_PINNED = re.compile(r"(?i)(?<![\w.-])(?P<runtime>bun)\**(?:\s+version)?\**\s*(?::|is)?\s*v?"
                     r"(?P<version>\d+\.\d+(?:\.\d+)?)(?![\d+*]|\.\d|\.x)(?!\s*(?:or|and)\s+(?:later|newer|above|higher))")
#: Pinned runtimes: a claim is held to the declared versions as a version, not as a floor.
PINNED_RUNTIMES = frozenset({"bun"})
#: CI workflows, where a Bun version is pinned (``bun-version: 1.2.12`` of setup-bun).
WORKFLOW_FILES = (".github/workflows/*.yml", ".github/workflows/*.yaml")
#: Build files that may set the JVM bytecode target (searched below the root).
JVM_BUILD_FILES = ("**/*.gradle.kts", "**/*.gradle", "**/pom.xml")
# the target a build compiles for: Gradle's jvmTarget, sourceCompatibility/targetCompatibility,
# the compiler's release; Maven's release/target properties
_JVM_TARGET = re.compile(
    r"(?:jvmTarget\s*(?:=|\.set\()\s*(?:JvmTarget\.JVM_|[\"'])|(?:source|target)Compatibility\s*(?:=|\.set\()\s*"
    r"(?:JavaVersion\.VERSION_|[\"'])?|release\s*(?:=|\.set\()\s*|<maven\.compiler\.(?:release|target)>\s*|"
    r"<release>\s*)(?P<version>\d+(?:[._]\d+)?)")
# a toolchain is the JDK the build runs on ("JDK 17+ to build" speaks of it): a JVM floor holds
# when it is the target's or the toolchain's
_JVM_TOOLCHAIN = re.compile(r"(?:jvmToolchain\(\s*|JavaLanguageVersion\.of\(\s*)(?P<version>\d+)")
_GEM_REQUIREMENT = re.compile(r"^(~>|>=|<=|!=|>|<|=)?\s*(\d+(?:\.\d+){0,2})$")


@dataclass(frozen=True, slots=True)
class Declaration:
    """One declared version or range: where it is written and what it admits."""

    source: str
    text: str
    spec: SpecifierSet


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _exact(text: str) -> SpecifierSet | None:
    match = re.match(r"^v?(\d+(?:\.\d+){0,2})", text.strip())
    if not match:
        return None
    return SpecifierSet(f"=={match.group(1)}.*" if match.group(1).count(".") < 2 else f"=={match.group(1)}")


def _node_range(text: str) -> list[SpecifierSet]:
    """An npm semver range as specifier sets (one per ``||`` alternative); [] if unparsed."""
    sets: list[SpecifierSet] = []
    for alternative in text.split("||"):
        parts: list[str] = []
        for token in alternative.split():
            match = re.match(r"^(\^|~|>=|<=|>|<|=)?v?(\d+)(?:\.(\d+|x|\*))?(?:\.(\d+|x|\*))?$", token)
            if not match:
                return []
            op, major, minor, patch = match.groups()
            numbers = [n for n in (major, minor, patch) if n is not None and n not in ("x", "*")]
            version = ".".join(numbers)
            if op == "^":
                parts += [f">={version}", f"<{int(major) + 1}"]
            elif op == "~":
                parts += [f">={version}", f"=={major}.{minor}.*" if minor not in (None, "x", "*") else f"=={major}.*"]
            elif op in (">=", "<=", ">", "<"):
                parts.append(f"{op}{version}")
            else:
                parts.append(f"=={version}.*" if len(numbers) < 3 else f"=={version}")
        try:
            sets.append(SpecifierSet(",".join(parts)))
        except InvalidSpecifier:
            return []
    return sets


def _gem_requirement(text: str) -> SpecifierSet | None:
    """A RubyGems requirement (``>= 2.7.0``, ``~> 3.1``) as a specifier set; None if unparsed."""
    parts = []
    for piece in text.split(","):
        match = _GEM_REQUIREMENT.match(piece.strip())
        if not match:
            return None
        op, version = match.group(1) or "=", match.group(2)
        if op == "~>":  # ~> 3.1 admits 3.x from 3.1; ~> 3.1.2 admits 3.1.x from 3.1.2
            parts += [f">={version}", f"=={version.rsplit('.', 1)[0]}.*" if "." in version else f">={version}"]
        else:
            parts.append(f"{'==' if op == '=' else op}{version}")
    try:
        return SpecifierSet(",".join(parts))
    except InvalidSpecifier:
        return None


def _ruby(root: Path) -> list[Declaration]:
    found: list[Declaration] = []
    for gemspec in sorted(root.glob("*.gemspec")):
        for match in re.finditer(r"required_ruby_version\s*=\s*\[?\s*((?:[\"'][^\"']+[\"']\s*,?\s*)+)", _read(gemspec)):
            requirement = ", ".join(re.findall(r"[\"']([^\"']+)[\"']", match.group(1)))
            spec = _gem_requirement(requirement)
            if spec is not None:
                found.append(Declaration(f"{gemspec.name} required_ruby_version", requirement, spec))
    pinned = _read(root / ".ruby-version").strip().removeprefix("ruby-")
    spec = _exact(pinned) if pinned else None
    if spec is not None:
        found.append(Declaration(".ruby-version", pinned, spec))
    gem = re.search(r"^\s*ruby\s+[\"']([^\"']+)[\"']", _read(root / "Gemfile"), re.M)
    spec = _gem_requirement(gem.group(1)) if gem else None
    if gem and spec is not None:
        found.append(Declaration("Gemfile ruby", gem.group(1), spec))
    return found


def jvm_version(text: str) -> str:
    """A JVM version as one number: ``1.8`` and ``1_8`` are 8 (Java's old naming)."""
    text = text.replace("_", ".")
    return text[2:] if text.startswith("1.") and len(text) > 2 else text


def _jvm(root: Path, build_files: Sequence[str]) -> list[Declaration]:
    targets: list[Declaration] = []
    toolchains: list[Declaration] = []
    for rel in build_files:
        text = _read(root / rel)
        for pattern, into in ((_JVM_TARGET, targets), (_JVM_TOOLCHAIN, toolchains)):
            for match in pattern.finditer(text):
                version = jvm_version(match.group("version"))
                into.append(Declaration(f"{rel}: {match.group(0).strip()}", version, SpecifierSet(f">={version}")))
    return targets + toolchains


def _go(root: Path) -> list[Declaration]:
    # go.mod's ``go`` line is the oldest Go the module builds with
    match = re.search(r"^go\s+(\d+(?:\.\d+){0,2})\s*$", _read(root / "go.mod"), re.M)
    return [Declaration("go.mod go", match.group(1), SpecifierSet(f">={match.group(1)}"))] if match else []


def _bun(root: Path, workflows: Sequence[str]) -> list[Declaration]:
    found: list[Declaration] = []
    try:
        package = json.loads(_read(root / "package.json") or "{}")
    except ValueError:
        package = {}
    manager = package.get("packageManager") if isinstance(package, dict) else None
    pinned = [("package.json packageManager", manager.removeprefix("bun@"))] \
        if isinstance(manager, str) and manager.startswith("bun@") else []
    pinned += [(".bun-version", _read(root / ".bun-version").strip())]
    pinned += [(".tool-versions", line.split()[1]) for line in _read(root / ".tool-versions").splitlines()
               if len(line.split()) >= 2 and line.split()[0] == "bun"]
    pinned += [(f"{rel} bun-version", match.group(1)) for rel in workflows
               for match in re.finditer(r"bun-version:\s*[\"']?(\d+\.\d+(?:\.\d+)?)\b", _read(root / rel))]
    for source, text in pinned:
        spec = _exact(text) if text else None
        if spec is not None:
            found.append(Declaration(source, text, spec))
    engines = package.get("engines") if isinstance(package, dict) else None
    if isinstance(engines, dict) and isinstance(engines.get("bun"), str):
        found += [Declaration("package.json engines.bun", engines["bun"], spec) for spec in _node_range(engines["bun"])]
    return found


def declared_versions(root: Path, runtime: str, build_files: Sequence[str] = ()) -> list[Declaration]:
    """What ``root`` declares for ``runtime`` ("python", "node", "ruby", "go", "jvm" or "bun"; for
    "jvm" the build files to read, for "bun" the CI workflows, relative to ``root``)."""
    if runtime == "go":
        return _go(root)
    if runtime == "jvm":
        return _jvm(root, build_files)
    if runtime == "bun":
        return _bun(root, build_files)
    found: list[Declaration] = _ruby(root) if runtime == "ruby" else []
    if runtime == "python":
        try:
            pyproject = tomllib.loads(_read(root / "pyproject.toml"))
        except tomllib.TOMLDecodeError:
            pyproject = {}
        requires = (pyproject.get("project") or {}).get("requires-python")
        if isinstance(requires, str):
            try:
                found.append(Declaration("pyproject.toml requires-python", requires, SpecifierSet(requires)))
            except InvalidSpecifier:
                pass
        pinned = _read(root / ".python-version").strip().splitlines()
        spec = _exact(pinned[0]) if pinned else None
        if spec is not None:
            found.append(Declaration(".python-version", pinned[0].strip(), spec))
    if runtime == "node":
        for name in (".nvmrc", ".node-version"):
            text = _read(root / name).strip()
            spec = _exact(text) if text else None
            if spec is not None:
                found.append(Declaration(name, text, spec))
        try:
            engines = json.loads(_read(root / "package.json") or "{}").get("engines") or {}
        except (ValueError, AttributeError):
            engines = {}
        if isinstance(engines, dict) and isinstance(engines.get("node"), str):
            for spec in _node_range(engines["node"]):
                found.append(Declaration("package.json engines.node", engines["node"], spec))
    for line in _read(root / ".tool-versions").splitlines():
        fields = line.split()
        names = {"python": {"python"}, "node": {"nodejs", "node"}, "ruby": {"ruby"}}.get(runtime, set())
        if len(fields) >= 2 and fields[0] in names:
            spec = _exact(fields[1])
            if spec is not None:
                found.append(Declaration(".tool-versions", fields[1], spec))
    return found


def judge_version(claimed: str, declarations: list[Declaration]) -> bool | None:
    """Whether a claimed version is admitted by a declaration (True), by none (False), or
    cannot be judged (None: nothing declared, or the claim is not a version)."""
    if not declarations:
        return None
    try:
        version = Version(claimed.removeprefix("v"))
    except InvalidVersion:
        return None
    for declaration in declarations:
        if declaration.spec.contains(version, prereleases=True):
            return True
        # a declared floor ">=3.10" admits the claim "3.10"; a pin "3.12.4" the claim "3.12"
        if any(spec.version.startswith(claimed.removeprefix("v") + ".") or spec.version == claimed.removeprefix("v")
               for spec in declaration.spec):
            return True
    return False


def range_facts(text: str) -> list[tuple[str, str]]:
    """The (runtime, range) pairs ``text`` states as the project's supported range."""
    found = []
    for match in _RANGE.finditer(text):
        runtime = "ruby" if match.group("runtime").lower() == "ruby" else "node"
        found.append((runtime, re.sub(r"\s+", " ", match.group("range").strip())))
    for match in _FLOOR_RANGE.finditer(text):
        runtime = "go" if match.group("runtime").lower().startswith("go") else "jvm"
        found.append((runtime, re.sub(r"\s+", " ", match.group("range").strip())))
    found += [(match.group("runtime").lower(), match.group("version")) for match in _PINNED.finditer(text)]
    return found


def _floor(spec: SpecifierSet, *, pins: bool = True) -> Version | None:
    """The oldest version ``spec`` admits by its lower bound (a pin ``==X`` counts only with ``pins``)."""
    operators = (">=", "~=", ">") + (("==",) if pins else ())
    floors = [Version(s.version.removesuffix(".*")) for s in spec if s.operator in operators]
    return min(floors) if floors else None


def judge_range(claimed: str, declarations: list[Declaration], runtime: str = "") -> bool | None:
    """Whether a claimed range (``3.2.0+``, ``^18.0.0 || >=20.0.0``) starts where the project's
    declared range starts: the oldest version each admits is the same (True), differs (False),
    or cannot be judged (None: nothing declared, or a range not understood). The declared floor
    is read to the claim's precision: "Go 1.25+" holds against go.mod's ``go 1.25.3``."""
    if runtime == "jvm":
        number = jvm_version(claimed.removeprefix(">=").strip().rstrip("+"))
        claimed = f">={number}" if claimed.startswith(">=") else f"{number}+"
    alternatives = _node_range(claimed.replace("+", "").replace(">= ", ">=").replace("^ ", "^")
                               if "+" not in claimed else ">=" + claimed.rstrip("+").removeprefix("v"))
    claimed_floors = [f for f in (_floor(a) for a in alternatives) if f is not None]
    # a pin (.nvmrc 22, .ruby-version) is the version developers run, not the oldest supported
    declared_floors = [f for f in (_floor(d.spec, pins=False) for d in declarations) if f is not None]
    if not claimed_floors or not declared_floors:
        return None
    oldest = min(claimed_floors)

    def same(declared: Version) -> bool:
        return oldest == Version(".".join(str(n) for n in declared.release[: len(oldest.release)]))

    # a JVM build states two floors (the bytecode target, the JDK it builds with): either may be meant
    return any(same(floor) for floor in declared_floors) if runtime == "jvm" else same(min(declared_floors))
