"""Markdown link targets in memory files: ``[FAQ](docs/FAQ.md)`` names a file by its path from
the memory file's folder (from the root when it starts with ``/``), the way a Markdown viewer
follows it, so no other context folder stands in for it.

A target the tree has holds; a git-ignored one is generated. A missing target is wrong only with
evidence: a commit removed it since the memory file was added, or the file it names is in the
tree at another place (a link to ``FAQ.md`` when the tree has ``devdocs/FAQ.md``, or one that
climbs above the repository root to a file the root holds). Otherwise it is unknown (``stale?``
to the check). URLs, anchors, placeholders and names with neither an extension nor a trailing
slash (a docs site's routes) are not targets. Read-only: git runs through
:class:`TreeIndex`.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from statewise.memory.extract import MemoryFact, MemoryLine
from statewise.memory.paths import FOUND, GENERATED, MOVED, REMOVED, UNKNOWN, TreeIndex
from statewise.values import ValueType

__all__ = ["LINK_KEY", "LinkFinding", "judge_link", "link_facts"]

LINK_KEY = "fs.link_target["  # fs.link_target[docs/FAQ.md] = the memory file's folder
# [text](target) or ![alt](target), the target without a title or an anchor
_LINK = re.compile(r"!?\[[^\]\n]*\]\(\s*(?P<target>[^)\s#?]+)(?:#[^)\s]*)?(?:\s+\"[^\"]*\")?\s*\)")
_NOT_A_PATH = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|//)|[<>{}*$%]", re.I)  # a URL, mailto:, a placeholder
# a file (a name with an extension) or a folder (a trailing slash): a docs site's route
# (`/v3/concepts/flows`) names a page the site builds, not a path of the tree
_A_FILE_OR_FOLDER = re.compile(r"\.[A-Za-z0-9]{1,8}$|/$")
_CODE_SPAN = re.compile(r"`[^`]*`")


@dataclass(frozen=True, slots=True)
class LinkFinding:
    """What the tree says about one link target: ``found``, ``generated``, ``removed`` (by a
    commit), ``moved`` (the file it names is at ``where``) or ``unknown``."""

    kind: str
    path: str
    where: str = ""
    detail: str = ""


def link_facts(line: MemoryLine) -> tuple[MemoryFact, ...]:
    """The relative link targets ``line`` gives, as ``fs.link_target[TARGET]`` facts (none in a
    user's own memory file, none inside a code span)."""
    if line.file.kind in ("user", "auto", "parent"):
        return ()
    targets = [m.group("target") for m in _LINK.finditer(_CODE_SPAN.sub("", line.text))]
    return tuple(MemoryFact(key=f"{LINK_KEY}{target}]", value=True, value_type=ValueType.BOOL, scope=line.file.scope,
                            rule="link_target")
                 for target in dict.fromkeys(targets)
                 if not _NOT_A_PATH.search(target) and _A_FILE_OR_FOLDER.search(target))


def judge_link(tree: TreeIndex, target: str, folder: str, since_file: str) -> LinkFinding:
    """``target`` followed from ``folder`` (the memory file's folder, from the root), against the
    tree and the history since ``since_file`` (the memory file's path from the root) was added."""
    joined = target[1:] if target.startswith("/") else posixpath.join(folder, target) if folder else target
    path = posixpath.normpath(joined)
    if path.startswith("../") or path == "..":
        inside = path.lstrip("./")
        found = tree.locate(inside, [""], anywhere=False) if inside else None
        if found is not None:  # the link climbs out of the repository to a file the root holds
            return LinkFinding(MOVED, path, found.where, f"{target} leaves the repository from "
                               f"{folder or 'the root'}; the tree has {found.where}")
        return LinkFinding(UNKNOWN, path, detail=f"{target} leaves the repository from {folder or 'the root'}")
    if tree.exists(path):
        return LinkFinding(FOUND, path, path, f"exists as {path}")
    if tree.ignored(path, [""]):
        return LinkFinding(GENERATED, path, path, f"{path} is git-ignored: build output or local state")
    removed = tree.removal(path, [""], since_file, exact=True)
    if removed is not None:
        return LinkFinding(REMOVED, path, removed.renamed_to, removed.detail)
    elsewhere = tree.locate(posixpath.basename(path), [], anywhere=True)
    if elsewhere is not None:  # the named file is in the tree, not where the link points
        return LinkFinding(MOVED, path, elsewhere.where, f"no {path}; the tree has {elsewhere.where}")
    return LinkFinding(UNKNOWN, path, detail=f"no {path} in the tree, and no commit since the memory file was added "
                                             "removed it")
