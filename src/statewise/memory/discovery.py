"""Which memory files each agent loads for a workspace, and what authority and scope they carry.

The lists follow each agent's own documentation (docs/memory.md cites them):

* Claude Code: ``CLAUDE.md`` and ``.claude/CLAUDE.md`` in the working directory and every
  parent up to (not including) ``/``; ``.claude/rules/*.md``; ``CLAUDE.local.md``; nested
  ``CLAUDE.md`` files in subdirectories (loaded on demand); ``~/.claude/CLAUDE.md`` and
  ``~/.claude/rules/*.md``; the auto memory under ``~/.claude/projects/<project>/memory/``
  (``MEMORY.md``'s first 200 lines at start, topic files on demand).
* Codex: ``$CODEX_HOME`` (``~/.codex``) ``AGENTS.override.md`` or else ``AGENTS.md``; then
  one file per directory from the project root down, ``AGENTS.override.md`` before
  ``AGENTS.md``.
* Gemini CLI: ``~/.gemini/GEMINI.md``; ``GEMINI.md`` in the workspace, its parents and its
  subdirectories (just in time).
* Cursor: ``.cursor/rules/*.mdc`` (and ``*.md``) and the legacy ``.cursorrules``.

Authority comes from where a file lives: a file in the repository (committed or not) and a
user-level file are the developer's; Claude's auto memory is the agent's own inference.
Scope comes from location: a file at the repository root applies to the repository, a
nested one to its subtree (``workspace:<dir>``), a parent directory's to that directory's
tree, a user-level file to that user.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from statewise.records import Authority, SourceKind
from statewise.scopes import TaskScope
from statewise.workspace import derive_task_scope, git_listing, git_output

__all__ = ["AUTO_MEMORY_START_LINES", "MemoryFile", "claude_project_folder", "discover_memory_files"]

#: Claude Code loads only the first 200 lines of the auto memory's MEMORY.md at start.
AUTO_MEMORY_START_LINES = 200

# Names looked for in each directory of the repository, and which agent reads them.
# Longest first: .claude/CLAUDE.md must not be taken for a CLAUDE.md in a ".claude" directory.
_IN_TREE: tuple[tuple[str, str], ...] = (
    (".claude/CLAUDE.md", "claude"),
    ("CLAUDE.md", "claude"),
    ("CLAUDE.local.md", "claude"),
    ("AGENTS.override.md", "codex"),
    ("AGENTS.md", "codex"),
    ("GEMINI.md", "gemini"),
)
_RULE_DIRS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    (".claude/rules", "claude", (".md",)),
    (".cursor/rules", "cursor", (".mdc", ".md")),
)
# Parent directories above the repository: Claude Code and Gemini CLI read these (Codex stops
# at the project root).
_IN_PARENTS: tuple[tuple[str, str], ...] = (
    ("CLAUDE.md", "claude"),
    (".claude/CLAUDE.md", "claude"),
    ("CLAUDE.local.md", "claude"),
    ("GEMINI.md", "gemini"),
)
# Directories a tree walk never enters (outside git, where ls-files cannot tell us).
_SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", ".tox", "dist", "build",
                        ".statewise", ".mypy_cache", ".pytest_cache"})
_MAX_WALK_FILES = 20000


@dataclass(frozen=True, slots=True)
class MemoryFile:
    """One memory file an agent loads, with the provenance its records inherit.

    ``base`` is the directory its relative paths and commands mean (the file's own
    directory, or the repository root for ``.claude/`` and ``.cursor/`` files and user-level
    and auto-memory files); ``blob`` is the git blob id at ``HEAD`` when the file is committed.
    ``max_lines`` limits how much of it the agent loads at session start.
    """

    path: Path
    agent: str
    kind: str  # project, nested, parent, local, rules, user, auto
    authority: Authority
    source: SourceKind
    scope: str
    base: Path
    relpath: str  # as shown in reports: relative to the repository root, or ~/...
    blob: str | None = None
    max_lines: int | None = None

    @property
    def committed(self) -> bool:
        return self.blob is not None


def claude_project_folder(root: str | Path) -> str:
    """The folder name Claude Code gives a project under ``~/.claude/projects/``: the path
    with every character other than a letter or digit replaced by ``-``."""
    return re.sub(r"[^A-Za-z0-9]", "-", str(root))


def _repository_files(root: Path, in_git: bool) -> list[str]:
    """Paths (relative, POSIX) of the files in the tree: git's view when it is a checkout."""
    if in_git:
        listed = git_listing(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard", timeout=20)
        if listed is not None:
            return sorted(set(listed))
    found: list[str] = []
    for directory, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS)
        rel = Path(directory).relative_to(root)
        for name in files:
            found.append((rel / name).as_posix())
            if len(found) >= _MAX_WALK_FILES:
                return sorted(found)
    return sorted(found)


def _committed_blobs(root: Path, relpaths: Iterable[str]) -> dict[str, str]:
    paths = list(relpaths)
    if not paths:
        return {}
    blobs: dict[str, str] = {}
    for entry in git_listing(root, "ls-tree", "-z", "HEAD", "--", *paths, timeout=20) or []:
        meta, _, path = entry.partition("\t")
        parts = meta.split()
        if len(parts) == 3 and parts[1] == "blob":
            blobs[path] = parts[2]
    return blobs


def _is_file(path: Path) -> bool:
    try:
        return path.is_file() and path.stat().st_size > 0
    except OSError:
        return False


def discover_memory_files(
    workspace: str | Path,
    *,
    home: str | Path | None = None,
    environ: Mapping[str, str] | None = None,
    task: TaskScope | None = None,
    agents: Iterable[str] | None = None,
) -> list[MemoryFile]:
    """Every memory file the agents load for ``workspace``, most general first.

    The order is the agents' load order: user-level files, parent directories (outermost
    first), the repository root, nested directories (shallowest first), then the auto
    memory, so a later file's fact takes precedence over an earlier one in the same scope.
    ``home`` defaults to ``$HOME``; ``agents`` limits the result (claude, codex, gemini, cursor).
    """
    env = os.environ if environ is None else environ
    workspace = Path(workspace).resolve()
    task = task or derive_task_scope(workspace)
    home_dir = Path(home if home is not None else env.get("HOME", str(Path.home()))).resolve()
    top = git_output(workspace, "rev-parse", "--show-toplevel")
    in_git = bool(top)
    root = Path(top).resolve() if top else workspace
    repo_scope = f"repo:{task.repo}" if task.repo else f"workspace:{root}"
    wanted = set(agents) if agents is not None else None
    found: list[MemoryFile] = []

    def add(path: Path, agent: str, kind: str, authority: Authority, source: SourceKind, scope: str,
            base: Path, relpath: str, blob: str | None = None, max_lines: int | None = None) -> None:
        if (wanted is None or agent in wanted) and _is_file(path):
            found.append(MemoryFile(path=path, agent=agent, kind=kind, authority=authority, source=source,
                                    scope=scope, base=base, relpath=relpath, blob=blob, max_lines=max_lines))

    def shown(path: Path) -> str:
        try:
            return "~/" + path.relative_to(home_dir).as_posix()
        except ValueError:
            return str(path)

    # 1. user-level files (apply to this user everywhere)
    if task.user:
        user_scope = f"user:{task.user}"
        dev, src = Authority.DEVELOPER, SourceKind.DEVELOPER
        claude_home = home_dir / ".claude"
        add(claude_home / "CLAUDE.md", "claude", "user", dev, src, user_scope, root, shown(claude_home / "CLAUDE.md"))
        rules = claude_home / "rules"
        if rules.is_dir():
            for rule in sorted(rules.rglob("*.md")):
                add(rule, "claude", "user", dev, src, user_scope, root, shown(rule))
        codex_home = Path(env.get("CODEX_HOME") or home_dir / ".codex")
        for name in ("AGENTS.override.md", "AGENTS.md"):  # only the first non-empty one is read
            if _is_file(codex_home / name):
                add(codex_home / name, "codex", "user", dev, src, user_scope, root, shown(codex_home / name))
                break
        add(home_dir / ".gemini" / "GEMINI.md", "gemini", "user", dev, src, user_scope, root,
            shown(home_dir / ".gemini" / "GEMINI.md"))

    # 2. parent directories above the repository, outermost first (not / itself)
    parents = [p for p in reversed(root.parents) if p != Path(p.anchor)]
    for parent in parents:
        if parent == home_dir:
            continue  # ~/CLAUDE.md is not a Claude location; ~/.claude/CLAUDE.md was read above
        for name, agent in _IN_PARENTS:
            add(parent / name, agent, "parent", Authority.DEVELOPER, SourceKind.DEVELOPER,
                f"workspace:{parent}", parent, str(parent / name))

    # 3. the repository: root first, then nested directories, shallowest first
    files = _repository_files(root, in_git)
    present = set(files)
    candidates: list[tuple[int, str, str, str]] = []  # depth, directory, relpath, agent
    for rel in files:
        name = rel.rsplit("/", 1)[-1]
        for pattern, agent in _IN_TREE:
            if rel == pattern or rel.endswith("/" + pattern):
                owner = rel[: -len(pattern)].rstrip("/")
                candidates.append((owner.count("/") + (1 if owner else 0), owner, rel, agent))
                break
        else:
            for rule_dir, agent, suffixes in _RULE_DIRS:
                marker = rule_dir + "/"
                if (rel.startswith(marker) or f"/{marker}" in rel) and name.endswith(suffixes):
                    owner = rel.split(marker, 1)[0].rstrip("/")
                    candidates.append((owner.count("/") + (1 if owner else 0), owner, rel, agent))
                    break
            else:
                if rel == ".cursorrules":
                    candidates.append((0, "", rel, "cursor"))
    for local in ("CLAUDE.local.md",):  # usually git-ignored, so ls-files does not list it
        if local not in present and _is_file(root / local):
            candidates.append((0, "", local, "claude"))
    candidates.sort(key=lambda item: (item[0], item[1], item[2]))
    # Codex reads at most one file per directory, AGENTS.override.md before AGENTS.md.
    overridden = {c[1] for c in candidates if c[2].endswith("AGENTS.override.md")}
    candidates = [c for c in candidates if not (c[2].endswith("AGENTS.md") and c[1] in overridden)]
    blobs = _committed_blobs(root, [c[2] for c in candidates]) if in_git else {}
    for _, owner, rel, agent in candidates:
        directory = root / owner if owner else root
        scope = repo_scope if not owner else f"workspace:{directory}"
        kind = "local" if rel.endswith("CLAUDE.local.md") else ("rules" if "/rules/" in f"/{rel}" else
                                                                 ("project" if not owner else "nested"))
        add(root / rel, agent, kind, Authority.DEVELOPER, SourceKind.DEVELOPER, scope, directory, rel,
            blob=blobs.get(rel))

    # 4. Claude's auto memory for this project: the agent's own notes
    auto = home_dir / ".claude" / "projects" / claude_project_folder(root) / "memory"
    if auto.is_dir():
        topic = sorted(p for p in auto.glob("*.md") if p.name != "MEMORY.md")
        for path in ([auto / "MEMORY.md"] if (auto / "MEMORY.md").is_file() else []) + topic:
            add(path, "claude", "auto", Authority.AGENT, SourceKind.AGENT_INFERENCE, repo_scope, root,
                shown(path), max_lines=AUTO_MEMORY_START_LINES if path.name == "MEMORY.md" else None)
    return found
