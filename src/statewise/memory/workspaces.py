"""The packages of a Node workspace, for memory lines that run a script in one of them.

A workspace lists its packages in package.json ``workspaces`` (or ``workspaces.packages``) and
in pnpm-workspace.yaml ``packages``, as folder patterns. ``pnpm --filter NAME test`` (``-F``)
runs the test script of the package named NAME (or ``@scope/NAME``, pnpm lets the scope be
left out; or ``./folder``), so the script must be in that package's package.json. Read-only:
file reads and the tree's file index.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from statewise.memory.paths import TreeIndex

__all__ = ["filtered_package", "workspace_manifests"]


def workspace_manifests(root: Path, tree: TreeIndex) -> list[str]:
    """The package.json of every workspace package, from the root, in the order declared."""
    patterns: list[str] = []
    try:
        workspaces = json.loads((root / "package.json").read_text(encoding="utf-8")).get("workspaces")
    except (OSError, ValueError, AttributeError):
        workspaces = None
    if isinstance(workspaces, dict):
        workspaces = workspaces.get("packages")
    if isinstance(workspaces, list):
        patterns += [p for p in workspaces if isinstance(p, str)]
    try:
        pnpm = yaml.safe_load((root / "pnpm-workspace.yaml").read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        pnpm = None
    if isinstance(pnpm, dict) and isinstance(pnpm.get("packages"), list):
        patterns += [p for p in pnpm["packages"] if isinstance(p, str)]
    manifests: list[str] = []
    for pattern in patterns:
        if not pattern.startswith("!"):
            manifests += [m for m in tree.matching(pattern.rstrip("/") + "/package.json") if m not in manifests]
    return manifests


def filtered_package(root: Path, tree: TreeIndex, selector: str) -> Path | None:
    """The folder of the one workspace package ``selector`` (a ``--filter`` value) names; None
    when it names none, several, or a pattern (``@scope/*``, ``...``: not one package)."""
    if any(mark in selector for mark in "*{}[]^!") or selector.endswith("..."):
        return None
    if selector.startswith("./"):
        folder = root / selector.removeprefix("./").rstrip("/")
        return folder if (folder / "package.json").is_file() else None
    found: list[Path] = []
    for manifest in workspace_manifests(root, tree):
        try:
            name = json.loads((root / manifest).read_text(encoding="utf-8")).get("name")
        except (OSError, ValueError, AttributeError):
            continue
        unscoped = name.split("/", 1)[-1] if isinstance(name, str) and name.startswith("@") else None
        if isinstance(name, str) and selector in (name, unscoped):
            found.append((root / manifest).parent)
    return found[0] if len(found) == 1 else None
