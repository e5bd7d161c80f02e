"""The runtime versions a project declares, to hold a memory file's version claims against.

A line "Python 3.10" or "Node 20" in a memory file speaks of the project, not of the
interpreter that happens to be on this machine: it is compared with what the project
declares (``requires-python`` in pyproject.toml, ``.python-version``, ``.nvmrc``,
``.node-version``, ``engines.node`` in package.json, ``.tool-versions``). A claim inside a
declared range holds ("oldest supported version 3.10" against ``>=3.10``); one outside every
declaration is contradicted, with the declaration as evidence; a project that declares
nothing leaves the claim unresolved. Read-only file reads, nothing is run.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

__all__ = ["Declaration", "declared_versions", "judge_version"]


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


def declared_versions(root: Path, runtime: str) -> list[Declaration]:
    """What ``root`` declares for ``runtime`` ("python" or "node")."""
    found: list[Declaration] = []
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
        if len(fields) >= 2 and fields[0] in ({"python"} if runtime == "python" else {"nodejs", "node"}):
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
