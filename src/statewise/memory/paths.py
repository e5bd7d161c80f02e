"""Resolve a path a memory file names the way a careful reader would, and find evidence.

A name in a memory file is relative to the context its line gives: the folder a section's
heading names, the memory file's own folder, then the repository root; a bare or
partial name (``config.py``, ``src/index.ts`` under a package's section or in a tree
listing) is found when some file or folder of the tree ends with it. A name that git
ignores is build output or local state a fresh checkout lacks: *generated*, never wrong.
A name no context holds is *defective* only with evidence: it existed when the memory file
was already there and a commit since removed it (with the new path when git's rename
detection knows it). Without that it is only *stale?*: nothing shows it was ever right.

Read-only: ``git`` runs with argv lists and a timeout, and a failing call is no evidence.
"""

from __future__ import annotations

import posixpath
import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["PathFinding", "TreeIndex"]

_GIT_TIMEOUT = 20.0
FOUND, GENERATED, REMOVED, MOVED, UNKNOWN = "found", "generated", "removed", "moved", "unknown"
# one JavaScript or TypeScript module written as ES module or CommonJS: the name a line gives may
# have the other flavour's extension
_MODULE_FLAVOURS = {"ts": ("mts", "cts"), "mts": ("ts",), "cts": ("ts",), "js": ("mjs", "cjs"), "mjs": ("js",),
                    "cjs": ("js",)}


@dataclass(frozen=True, slots=True)
class PathFinding:
    """What the tree says about one name: ``found`` (at ``where``), ``generated``,
    ``removed`` (by ``commit``, renamed to ``renamed_to`` when known) or ``unknown``."""

    kind: str
    where: str = ""
    commit: str = ""
    subject: str = ""
    renamed_to: str = ""

    @property
    def detail(self) -> str:
        if self.kind == FOUND:
            return f"exists as {self.where or '.'}"
        if self.kind == GENERATED:
            return f"{self.where} is git-ignored (build output or local state a fresh checkout lacks)"
        if self.kind == MOVED:
            return f"no such path; the tree has it at {self.where}"
        if self.kind == REMOVED:
            moved = f", renamed to {self.renamed_to}" if self.renamed_to else ""
            return f"{self.where} was removed in {self.commit} ({self.subject}){moved}"
        return "no file or folder of the tree has this name, and git's history since the memory file shows no removal"


def _git(root: Path, *args: str, stdin: str | None = None, ok: tuple[int, ...] = (0,)) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, input=stdin,
                              timeout=_GIT_TIMEOUT, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode in ok else None


def _glob_regex(pattern: str) -> re.Pattern[str]:
    """A glob as a regex over tree paths: ``**`` any number of folders, ``*`` and ``?`` within
    one, ``{a,b}`` either name (as shells and test runners expand it)."""
    segments = posixpath.normpath(pattern).split("/")
    parts = []
    for index, segment in enumerate(segments):
        if segment == "**":
            parts.append(".+" if index == len(segments) - 1 else "(?:[^/]+/)*")
            continue
        text, depth = "", 0
        for c in segment:
            if c == "{":
                depth += 1
                text += "(?:"
            elif c == "}" and depth:
                depth -= 1
                text += ")"
            elif c == "," and depth:
                text += "|"
            else:
                text += "[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c)
        if depth:  # an unclosed brace is a literal name, not a choice
            text = "".join("[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c) for c in segment)
        parts.append(text + ("" if index == len(segments) - 1 else "/"))
    return re.compile("".join(parts))


def _clean(name: str) -> str:
    return name.strip().strip("`'\"").rstrip("/").removeprefix("./")


class TreeIndex:
    """The files and folders of one repository, read once per check run."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._entries: set[str] | None = None
        self._by_base: dict[str, list[str]] = {}
        self._ignored: dict[str, bool] = {}
        self._removed: dict[str, dict[str, tuple[str, str]]] = {}
        self._added: dict[str, str] = {}  # a memory file -> the commit that added it ("" when none)
        # history walks: the commits each covers (None: the whole history), and its removals
        # (full id, short id, subject, paths), newest first
        self._walks: list[tuple[frozenset[str] | None, list[tuple[str, str, str, list[str]]]]] = []
        self._ever: dict[str, tuple[str, str]] | None = None  # removals over the whole history
        self._listed_at: dict[str, list[str]] = {}  # a commit -> its files (git ls-tree)
        self._inside: bool | None = None  # whether root is inside a git work tree (git grep's mode)
        self._grepped: dict[tuple[str, tuple[str, ...], tuple[str, ...]], list[tuple[str, str]]] = {}

    def _load(self) -> set[str]:
        if self._entries is None:
            listing = _git(self.root, "ls-files", "-z", "--cached", "--others", "--exclude-standard") or ""
            entries: set[str] = set()
            for path in listing.split("\0"):
                while path and path not in entries:
                    entries.add(path)
                    path = posixpath.dirname(path)
            self._entries = entries
            # Nearest the root first, then by name: a set's order changes with the hash seed, and
            # which same-named entry a finding names ("exists as ...") must not change from run to run.
            for entry in sorted(entries, key=lambda path: (path.count("/"), path)):
                self._by_base.setdefault(posixpath.basename(entry), []).append(entry)
        return self._entries

    def relative(self, folder: Path) -> str:
        """``folder`` relative to the root ("" for the root itself; "" too when outside it)."""
        try:
            rel = folder.resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return ""
        return "" if rel == "." else rel

    def exists(self, rel: str) -> bool:
        rel = posixpath.normpath(rel) if rel else "."
        if rel in (".", ""):
            return True
        return rel in self._load() or (self.root / rel).exists()

    def locate(self, name: str, folders: Sequence[str], *, anywhere: bool = True) -> PathFinding | None:
        """Where ``name`` resolves: in the first context folder that holds it, else (``anywhere``)
        anywhere in the tree as a suffix; None when nowhere."""
        name = _clean(name)
        if not name:
            return None
        for folder in folders:
            candidate = posixpath.normpath(posixpath.join(folder, name)) if folder else posixpath.normpath(name)
            if candidate.startswith("../"):
                continue
            if self.exists(candidate):
                return PathFinding(FOUND, candidate)
        if not anywhere:
            return None
        tail = posixpath.normpath(name).lstrip("./")
        self._load()
        for entry in self._by_base.get(posixpath.basename(tail), []):
            if entry == tail or entry.endswith("/" + tail):
                return PathFinding(FOUND, entry)
        return None

    def ignored(self, name: str, folders: Sequence[str]) -> str:
        """The first candidate of ``name`` that git ignores ("" when none is)."""
        candidates = [c for c in (posixpath.normpath(posixpath.join(folder, _clean(name))) for folder in folders)
                      if not c.startswith("../")]
        unknown = [c for c in dict.fromkeys(candidates) if c not in self._ignored]
        if unknown:
            # a folder pattern (dist/) matches only a folder: a name that is absent is asked
            # for as itself and as a folder (its child); one git call for every candidate
            asked = [path for c in unknown for path in (c, f"{c}/_")]
            answer = _git(self.root, "check-ignore", "--no-index", "--stdin", "-z", stdin="\0".join(asked) + "\0",
                          ok=(0, 1))
            listed = set((answer or "").split("\0")) - {""}
            for candidate in unknown:
                self._ignored[candidate] = candidate in listed or f"{candidate}/_" in listed
        return next((c for c in candidates if self._ignored[c]), "")

    def removal(self, name: str, folders: Sequence[str], since_file: str, *, exact: bool = False
                ) -> PathFinding | None:
        """The commit that removed a candidate of ``name`` since ``since_file`` (a memory file
        of the tree) was added, and its new path when git detects the rename; None when
        history shows none. ``exact``: only the name in a context folder, not a removed path
        that merely ends with it."""
        removed = self._removed_since(since_file)
        for folder in folders:
            candidate = posixpath.normpath(posixpath.join(folder, _clean(name)))
            if candidate.startswith("../") or candidate not in removed:
                continue
            commit, subject = removed[candidate]
            return PathFinding(REMOVED, candidate, commit, subject[:80], self._renamed(commit, candidate))
        if exact:
            return None
        # a bare or partial name, as found paths are matched: a removed path that ends with it
        tail = posixpath.normpath(_clean(name)).lstrip("./")
        for path, (commit, subject) in removed.items():
            if tail and path.endswith("/" + tail):
                return PathFinding(REMOVED, path, commit, subject[:80], self._renamed(commit, path))
        return None

    def folder_removal(self, name: str, folders: Sequence[str], since_file: str) -> PathFinding | None:
        """The commit that removed a folder a candidate of ``name`` lies in (``cookbook/03_agents``
        for ``cookbook/03_agents/basic.py``) since ``since_file`` was added, the nearest such folder
        first; None when no folder of the name's path was removed (or the name has no folder part)."""
        clean = posixpath.normpath(_clean(name)) if _clean(name) else ""
        if "/" not in clean:
            return None
        removed = self._removed_since(since_file)
        for folder in folders:
            parent = posixpath.dirname(posixpath.normpath(posixpath.join(folder, clean)) if folder else clean)
            while parent and not parent.startswith("..") and not self.exists(parent):
                if parent in removed:
                    commit, subject = removed[parent]
                    return PathFinding(REMOVED, parent, commit, subject[:80], self._renamed(commit, parent))
                parent = posixpath.dirname(parent)
        return None

    def removal_before(self, name: str, folders: Sequence[str]) -> PathFinding | None:
        """The commit that removed a candidate of ``name`` at any time, for a name with a folder
        part only (``internal/llm/prompt``: a memory file may be written after the code it names
        was removed); a bare name (``config.py``) is too common to blame on an old removal.
        None when the history shows none (or the name is bare)."""
        clean = posixpath.normpath(_clean(name)) if _clean(name) else ""
        if "/" not in clean:
            return None
        removed = self._removed_ever()
        for folder in folders:
            candidate = posixpath.normpath(posixpath.join(folder, clean)) if folder else clean
            if candidate.startswith("../") or candidate not in removed:
                continue
            commit, subject = removed[candidate]
            return PathFinding(REMOVED, candidate, commit, subject[:80], self._renamed(commit, candidate))
        return None

    def _removed_ever(self) -> dict[str, tuple[str, str]]:
        """Every file (and folder of one) the whole history removed and the tree lacks, with the
        most recent commit that removed it: one walk per repository, only when asked."""
        if self._ever is None:
            removed: dict[str, tuple[str, str]] = {}
            walk = self._walk("")
            self._walks.append((None, walk))  # it covers every range a memory file asks about later
            for _full, commit, subject, paths in walk:  # newest first
                for path in paths:
                    while path and path not in removed:
                        removed[path] = (commit, subject.rstrip())
                        path = posixpath.dirname(path)
            live = self._load()
            self._ever = {path: found for path, found in removed.items() if path not in live}
        return self._ever

    def _walk(self, revisions: str) -> list[tuple[str, str, str, list[str]]]:
        """The commits of ``revisions`` (the whole history when empty) that removed files:
        (full id, short id, subject, paths), newest first."""
        log = _git(self.root, "log", "--no-renames", "--diff-filter=D", "--name-only", "--format=%x00%H %h %s",
                   *([revisions] if revisions else [])) or ""
        walk = []
        for chunk in log.split("\0"):
            head, _, files = chunk.partition("\n")
            if not head.strip():
                continue
            full, _, rest = head.partition(" ")
            commit, _, subject = rest.partition(" ")
            walk.append((full, commit, subject, files.splitlines()))
        return walk

    def relocated(self, name: str, folders: Sequence[str]) -> PathFinding | None:
        """The one place the tree holds a name that is absent where the line puts it: the same
        last part, deeper under the same folder (``src/tools/`` when the tree has only
        ``src/fastmcp/tools/``). None when the name has no folder part, that folder is not in
        the tree, or more than one entry fits (nothing says which one the line meant)."""
        clean = _clean(name)
        if "/" not in clean:
            return None
        self._load()
        fits: dict[str, str] = {}  # the entry -> the context folder it was found from (nearest first)
        for folder in folders:
            candidate = posixpath.normpath(posixpath.join(folder, clean))
            parent, last = posixpath.split(candidate)
            if candidate.startswith("../") or parent in ("", ".") or not self.exists(parent):
                continue
            for entry in self._by_base.get(last, []):
                if entry.startswith(parent + "/") and entry != candidate:
                    fits.setdefault(entry, folder)
        if len(fits) != 1:
            return None
        entry, folder = next(iter(fits.items()))
        said = entry[len(folder) + 1:] if folder and entry.startswith(folder + "/") else entry
        return PathFinding(MOVED, entry, renamed_to=said + ("/" if name.rstrip().endswith("/") else ""))

    def misnamed(self, name: str, folders: Sequence[str]) -> PathFinding | None:
        """A name that no commit ever had, beside one the tree has that differs only by a plural
        ``s`` (``test/`` when the tree has ``tests/``): the line misnames that entry. Only in a
        context folder the tree has; None otherwise."""
        clean = posixpath.normpath(_clean(name)) if _clean(name) else ""
        if not clean or clean.startswith("."):
            return None
        ever = self._removed_ever()
        for folder in folders:
            candidate = posixpath.normpath(posixpath.join(folder, clean)) if folder else clean
            parent, last = posixpath.split(candidate)
            if candidate.startswith("../") or (parent and not self.exists(parent)) or candidate in ever:
                continue
            if self.exists(candidate) or len(last) < 3:
                return None
            for other in (last + "s", last[:-1] if last.endswith("s") else ""):
                sibling = posixpath.join(parent, other) if parent and other else other
                if sibling and self.exists(sibling) and sibling not in ever:
                    said = sibling[len(folder) + 1:] if folder and sibling.startswith(folder + "/") else sibling
                    return PathFinding(MOVED, sibling, renamed_to=said + ("/" if name.rstrip().endswith("/") else ""))
        return None

    def respelled(self, name: str, folders: Sequence[str]) -> PathFinding | None:
        """A file name no commit ever had that names one entry of the tree another way: its
        hyphens as folders (``data-fetcher.ts`` for ``data/fetcher.ts``), its stem as a folder
        with an index module (``prompt.ts`` for ``prompt/index.ts``, ``jobs.py`` for
        ``jobs/__init__.py``), or the same module in another module flavour (``dev.ts`` for
        ``dev.mts``), found as a name is (from a context folder, else as the tail of a
        path). None unless exactly one entry fits."""
        clean = posixpath.normpath(_clean(name)) if _clean(name) else ""
        folder, last = posixpath.split(clean)
        stem, dot, ext = last.rpartition(".")
        if not clean or clean.startswith(".") or not dot or not stem or not ext.isalnum():
            return None
        ever = self._removed_ever()
        if any(posixpath.normpath(posixpath.join(f, clean)) in ever for f in folders):
            return None  # a name the history had: a removal, not a misspelling
        variants = [posixpath.join(folder, stem.replace("-", "/") + dot + ext)] if "-" in stem.strip("-") else []
        variants += [posixpath.join(folder, stem, index) for index in ((f"index.{ext}",) if ext != "py"
                                                                       else ("__init__.py",))]
        variants += [posixpath.join(folder, f"{stem}.{other}") for other in _MODULE_FLAVOURS.get(ext, ())]
        self._load()
        fits: dict[str, str] = {}  # the entry -> the spelling that found it
        for variant in variants:
            for entry in self._by_base.get(posixpath.basename(variant), []):
                if entry == variant or entry.endswith("/" + variant):
                    fits.setdefault(entry, variant)
        if len(fits) != 1:
            return None
        entry, variant = next(iter(fits.items()))
        return PathFinding(MOVED, entry, renamed_to=variant)

    def glob_matches(self, pattern: str, folders: Sequence[str], *, anywhere: bool = False) -> PathFinding | None:
        """The first file or folder of the tree that glob ``pattern`` matches (``*`` and ``?``
        within one folder, ``**`` across folders) from a context folder, or with ``anywhere``
        below any folder (a name some path ends with, as :meth:`locate` finds names); None when
        none does."""
        entries = self._load()
        bases = [*folders, "**"] if anywhere else list(folders)
        for folder in bases:
            matcher = _glob_regex(posixpath.join(folder, _clean(pattern)) if folder else _clean(pattern))
            hit = next((entry for entry in sorted(entries) if matcher.fullmatch(entry)), None)
            if hit is not None:
                return PathFinding(FOUND, hit)
        return None

    def matching(self, pattern: str) -> list[str]:
        """Every file or folder of the tree glob ``pattern`` matches, sorted."""
        matcher = _glob_regex(_clean(pattern))
        return sorted(entry for entry in self._load() if matcher.fullmatch(entry))

    def matching_at(self, commit: str, pattern: str) -> list[str]:
        """Every file of ``commit``'s tree (and folder of one) glob ``pattern`` matches, sorted."""
        if commit not in self._listed_at:
            listing = _git(self.root, "ls-tree", "-r", "-z", "--name-only", commit) or ""
            entries: set[str] = set()
            for path in listing.split("\0"):
                while path and path not in entries:
                    entries.add(path)
                    path = posixpath.dirname(path)
            self._listed_at[commit] = sorted(entries)
        matcher = _glob_regex(_clean(pattern))
        return [entry for entry in self._listed_at[commit] if matcher.fullmatch(entry)]

    def grep(self, patterns: Sequence[str], pathspecs: Sequence[str], commit: str = "") -> list[tuple[str, str]]:
        """The lines (file, text) of the working tree, or of ``commit``, among ``pathspecs`` where
        one of the extended regexes ``patterns`` matches, case-insensitively: ``git grep``, one
        call. Outside a repository the folder's files are searched; a failing call finds nothing."""
        slot = (commit, tuple(patterns), tuple(pathspecs))
        if slot not in self._grepped:
            expressions = [arg for pattern in patterns for arg in ("-e", pattern)]
            if self._inside is None:  # asked once per run, not once per tool searched
                self._inside = _git(self.root, "rev-parse", "--is-inside-work-tree") is not None
            inside = self._inside
            found = _git(self.root, "grep", "-n", "-z", "-I", "-i", "-E", *([] if inside else ["--no-index"]),
                         *expressions, *([commit] if commit else []), "--", *pathspecs, ok=(0, 1)) or ""
            prefix = f"{commit}:" if commit else ""
            hits = []
            for row in found.splitlines():
                name, _, rest = row.partition("\0")
                hits.append((name.removeprefix(prefix), rest.partition("\0")[2]))
            self._grepped[slot] = hits
        return self._grepped[slot]

    def glob_removal(self, pattern: str, folders: Sequence[str], since_file: str) -> PathFinding | None:
        """The commit that removed the last path glob ``pattern`` matched (from a context
        folder) since ``since_file`` was added; None when history shows none."""
        removed = self._removed_since(since_file)
        for folder in [*folders, "**"]:  # last, below any folder: as removal() matches a name's tail
            matcher = _glob_regex(posixpath.join(folder, _clean(pattern)) if folder else _clean(pattern))
            for path, (commit, subject) in removed.items():
                if matcher.fullmatch(path):
                    return PathFinding(REMOVED, path, commit, subject[:80])
        return None

    def _removed_since(self, since_file: str) -> dict[str, tuple[str, str]]:
        """Every file (and folder of one) removed since ``since_file`` was added, with the most
        recent commit that removed it.

        One walk of the history serves every memory file whose range it covers (a nested
        file added after the root one needs no walk of its own, nor does any file once the
        whole history was walked for :meth:`_removed_ever`): each file's range is listed with
        ``git rev-list`` (no diffs), and only a range no earlier walk covers is walked."""
        if since_file in self._removed:
            return self._removed[since_file]
        removed: dict[str, tuple[str, str]] = {}
        if since_file not in self._added:
            self.note_memory_files([since_file])
        first = self._added.get(since_file, "")
        span = self._span(first) if first else None
        if span is not None:
            revisions, commits = span
            walk = next((w for c, w in self._walks if c is None or commits <= c), None)
            if walk is None:
                walk = self._walk(revisions)
                self._walks.append((commits, walk))
            for full, commit, subject, paths in walk:  # newest first, as git log gives them
                if full not in commits:
                    continue
                for path in paths:
                    while path and path not in removed:
                        removed[path] = (commit, subject)
                        path = posixpath.dirname(path)
        live = self._load()
        self._removed[since_file] = {path: found for path, found in removed.items() if path not in live}
        return self._removed[since_file]

    def added_commit(self, memory_file: str) -> str:
        """The commit that added ``memory_file`` ("" when the history has none)."""
        if memory_file not in self._added:
            self.note_memory_files([memory_file])
        return self._added.get(memory_file, "")

    def read(self, rel: str) -> str | None:
        """The text of ``rel`` in the work tree (None when it is not a readable file)."""
        try:
            return (self.root / rel).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None

    def file_at(self, commit: str, rel: str) -> str | None:
        """The text of ``rel`` at ``commit`` (None when it had no such file)."""
        return _git(self.root, "show", f"{commit}:{posixpath.normpath(rel)}")

    def note_memory_files(self, files: Sequence[str]) -> None:
        """Find the commit that added each of ``files`` (paths relative to the root), all in one
        walk of the history: the oldest commit that added it, as ``git log --diff-filter=A``
        lists it."""
        wanted = [f for f in dict.fromkeys(files) if f and f not in self._added]
        if not wanted:
            return
        log = _git(self.root, "log", "--diff-filter=A", "--name-only", "--format=%x00%H", "--", *wanted) or ""
        for file in wanted:
            self._added[file] = ""
        for chunk in log.split("\0"):
            commit, _, names = chunk.partition("\n")
            for name in names.splitlines():
                if name in self._added and commit.strip():
                    self._added[name] = commit.strip()  # newest first: the last one seen is the oldest
        return

    def _span(self, first: str) -> tuple[str, frozenset[str]] | None:
        """The commits since ``first`` (itself included unless it is a root commit), as a
        revision range and a set."""
        for revisions in (f"{first}~1..HEAD", f"{first}..HEAD"):
            listed = _git(self.root, "rev-list", revisions)
            if listed is not None:  # first~1 fails on a root commit: then first..HEAD
                return revisions, frozenset(listed.split())
        return None

    def _renamed(self, commit: str, old: str) -> str:
        shown = _git(self.root, "show", "-M", "--name-status", "--format=", commit) or ""
        for row in shown.splitlines():
            parts = row.split("\t")
            if len(parts) == 3 and parts[0].startswith("R"):
                if parts[1] == old:
                    return parts[2]
                if parts[1].startswith(old + "/"):
                    # a folder moved: its new name is the common move of its files
                    suffix = parts[1][len(old):]
                    if parts[2].endswith(suffix):
                        return parts[2][: len(parts[2]) - len(suffix)]
        return ""
