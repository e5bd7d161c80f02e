"""git commands that change which files the work tree holds without naming them: a stash that
takes untracked files away (``git stash -u``/``-a``), and merges, pulls, cherry-picks, reverts,
stashes and ``read-tree -u`` that bring another commit's version of tracked files. Each becomes an
action saying how git itself can list what it changes, which the self-protection asks
(:mod:`statewise.integrations.protect`, read-only ``git clean -n`` and ``git diff --name-only``).
"""

from __future__ import annotations

from statewise.commands.base import _Base
from statewise.commands.words import _Call, _Repo, _Word


class _GitTrees(_Base):
    """The git part's readings of stashes and tree updates."""

    def git_stash_untracked(self, call: _Call, repo: _Repo, words: list[_Word]) -> bool:
        """``git stash [push|save] -u|-a``: the untracked files (and with ``-a`` the ignored
        ones) leave the work tree as ``git clean -d [-x]`` would take them, until the stash is
        applied. False for any other stash (changes to tracked files only: unguarded)."""
        values = [w.value for w in words]
        saving = bool(values) and values[0] == "save"  # `save`'s other words are its message
        if values and values[0] in ("push", "save"):
            values = values[1:]
        elif values and values[0] is not None and not values[0].startswith("-"):
            return False  # list, show, pop, apply, drop, branch, clear, create, store
        untracked = ignored = False
        paths: list[str] = []
        index = 0
        while index < len(values):
            value = values[index]
            if value is None:
                self.fail("`git stash` with arguments only known at run time", call.part)
                return True
            if value == "--":
                paths = [v or "" for v in values[index + 1:]]
                break
            if value in ("-m", "--message", "--pathspec-from-file"):
                index += 2
                continue
            if value in ("-u", "--include-untracked"):
                untracked = True
            elif value in ("-a", "--all"):
                untracked = ignored = True
            elif value.startswith("-") and not value.startswith("--"):
                letters, message, attached = value[1:].partition("m")  # -m's message ends a bundle
                untracked = untracked or "u" in letters or "a" in letters
                ignored = ignored or "a" in letters
                if message and not attached:
                    index += 1  # `-um MESSAGE`: the next word is the message
            elif not value.startswith("-"):
                if not saving:
                    paths = [v or "" for v in values[index:]]  # `git stash push -u PATH...`
                break
            index += 1
        if not untracked:
            return False
        self.emit(call, "git.stash_untracked", {"directories": True, "ignored": ignored, "paths": paths or None,
                                                 **self.git_where(call, repo)},
                  target=" ".join(paths) or None,
                  reason=f"git stash {'-a' if ignored else '-u'} takes untracked files out of the work tree")
        return True

    def git_tree_update(self, call: _Call, repo: _Repo, sub: str, words: list[_Word]) -> bool:
        """``git merge/pull/cherry-pick/revert``, ``git stash [push]``, ``stash pop/apply`` and
        ``git read-tree -u``:
        tracked files replaced by another commit's version, one ``git.tree_update`` per commit
        brought in, with how git can list what it changes (``compare``: ``merge_base`` for
        HEAD...REF, ``parent`` for REF^ against REF, ``range`` for A..B, ``worktree`` for the
        work tree against REF). False for a form that brings nothing in (a listing, --abort,
        --continue, stash drop/show/list ...), left as before."""
        values = [w.value for w in words]
        if any(v is None for v in values):
            return False  # left as before: git's own arguments only known at run time are rare here
        args = [v for v in values if v is not None]
        if sub == "stash":
            first = args[0] if args else "push"
            if first in ("pop", "apply"):
                refs, compare = [next((a for a in args[1:] if not a.startswith("-")), "stash@{0}")], "parent"
            elif first in ("push", "save") or first.startswith("-"):
                if any(a in ("-p", "--patch") for a in args):
                    return False  # an interactive selection: what it resets is chosen on the terminal
                refs, compare = ["HEAD"], "worktree"
            else:
                return False
        elif sub == "read-tree":
            trees = [a for a in args if not a.startswith("-")]
            if "-u" not in args or not trees:
                return False  # the index only: the work tree is not touched
            refs, compare = trees[-1:], "worktree"
        else:
            if any(a in _TREE_UPDATE_STOPS for a in args):
                return False
            refs, index = [], 0
            while index < len(args):
                arg = args[index]
                if arg == "--":
                    refs += args[index + 1:]
                    break
                if arg in _TREE_UPDATE_VALUED:
                    index += 2
                    continue
                if not arg.startswith("-"):
                    refs.append(arg)
                index += 1
            if sub == "pull":
                # `pull . B` merges the local B; `pull REMOTE B` what REMOTE/B tracks (stale until fetched)
                refs = [("/".join(refs[:2]) if refs[0] != "." else refs[1]) if len(refs) >= 2 else "@{upstream}"]
                compare = "merge_base"
            elif sub == "merge":
                refs, compare = refs or ["@{upstream}"], "merge_base"
            else:  # cherry-pick, revert: each commit's own changes (a range: its ends)
                compare = "parent"
        for ref in refs:
            kind = "range" if ".." in ref and compare == "parent" else compare
            self.emit(call, "git.tree_update", {"via": f"git {sub}", "ref": ref, "compare": kind,
                                                 **self.git_where(call, repo)},
                      target=ref, reason=f"git {sub} brings {ref}'s version of tracked files into the work tree")
        return True


#: git commands that bring another commit's version of tracked files into the work tree.
_TREE_UPDATES = frozenset({"merge", "pull", "cherry-pick", "revert", "stash", "read-tree"})
#: Their forms that bring nothing new in (or only what an earlier call began).
_TREE_UPDATE_STOPS = frozenset({"--abort", "--continue", "--quit", "--skip", "-h", "--help"})
#: Their options that take the next word as a value.
_TREE_UPDATE_VALUED = frozenset({"-m", "-F", "--file", "-s", "--strategy", "-X", "--strategy-option", "--into-name",
                                 "--cleanup", "--mainline", "--depth", "--deepen", "--shallow-since",
                                 "--shallow-exclude", "--upload-pack", "-j", "--jobs", "--recurse-submodules",
                                 "--log", "--signoff-by", "-o", "--server-option"})
