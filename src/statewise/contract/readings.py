"""What the shell normalizer's built-in readers report, for the contract's ``reading`` rules.

Some programs need logic before anyone can say what a command does: where a bare ``git push``
goes (push.default, upstreams, refspecs, config set earlier in the same command), which
interpreter and index a ``pip install`` uses, whether ``npm run x`` is a package.json script.
:mod:`statewise.commands` reads those commands and reports a **reading**: a name and
the facts it established (``git.push`` with ``remote``, ``branch``, ``force`` ...). Which
operation a reading is, with what risk, is the contract's: a ``commands:`` rule with
``reading:`` maps it (the built-in coding contract maps each one, and a contract adds its own
rules beside those, ``git.push`` with ``remote: heroku`` as ``deploy.run``). A reading no rule
maps is unresolved, never unguarded.

This module is the catalogue the contract is checked against: every reading a reader can
report, the programs it comes from and the facts it may carry (a rule's ``when`` may only
test those). See docs/shell.md ("Readings").
"""

from __future__ import annotations

import types
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["READINGS", "Reading"]


@dataclass(frozen=True, slots=True)
class Reading:
    """One kind of reading: the programs that report it, the facts it may carry, and what it is."""

    programs: tuple[str, ...]
    facts: tuple[str, ...]
    description: str


_WHERE = ("cwd", "work_tree")  # a git working-tree operation run elsewhere than the workspace
_PATH = ("path", "inside_workspace", "via", "link_path", "recursive", "moved", "filter", "worktree",
         "into_directory", "first_of_many", "append", "attributes", "destroys_content", "remove",
         "root", "orphan", "no_preserve_root", "edits")
_PYTHON_INSTALL = ("package", "version", "interpreter", "index", "extra_index", "find_links", "no_index",
                   "editable", "requirements_file", "user", "target_dir", "venv", "dev", "group")
_NODE_INSTALL = ("package", "version", "dev", "global", "prefix")

READINGS: Mapping[str, Reading] = types.MappingProxyType({
    "git.push": Reading(("git",), ("remote", "branch", "source", "force", "delete", "set_upstream", "ref_kind",
                                   "all", "mirror", "prune", "tags"),
                        "one destination of a git push: the remote, the branch (or ref) it writes, the local source"),
    "git.checkout": Reading(("git",), ("branch", "create", "start_point", "force", "detach", "orphan",
                                       "remote_tracking"),
                            "git checkout of a branch or commit (-b/-B create it)"),
    "git.switch": Reading(("git",), ("branch", "create", "start_point", "force", "detach", "orphan"),
                          "git switch to a branch (-c/-C create it)"),
    "git.branch_create": Reading(("git",), ("name", "start_point", "force", "worktree"),
                                 "a branch created or reset: git branch, -m/-c, worktree add -b, update-ref"),
    "git.branch_delete": Reading(("git",), ("branch", "force", "renamed_to", "remote", "remote_tracking"),
                                 "a branch deleted: git branch -d/-D, -m (the old name), update-ref -d"),
    "git.restore": Reading(("git",), ("paths", "source", "discard_all", "via"),
                           "uncommitted changes discarded: git restore, checkout -- paths, checkout -f"),
    "git.reset_hard": Reading(("git",), ("ref", "mode", *_WHERE), "git reset --hard/--merge/--keep"),
    "git.clean": Reading(("git",), ("directories", "ignored", "only_ignored", "paths", *_WHERE),
                         "git clean -f: untracked files removed"),
    "git.rebase": Reading(("git",), ("onto", "branch", "interactive", "root"), "git rebase of a branch"),
    "git.stash_untracked": Reading(("git",), ("directories", "ignored", "paths", *_WHERE),
                                   "git stash -u/-a: untracked (and ignored) files taken out of the work tree"),
    "git.tree_update": Reading(("git",), ("via", "ref", "compare", *_WHERE),
                               "tracked files replaced by another commit's: git merge, pull, cherry-pick, revert, "
                               "stash, stash pop/apply"),
    "fs.delete": Reading(("rm", "rmdir", "unlink", "shred", "trash", "rimraf", "find", "mv", "git", "rsync",
                          "gzip", "zip"), _PATH, "a path deleted (rm, find -delete, mv's source, git rm ...)"),
    "fs.write": Reading(("*",), _PATH, "a path written (redirects, cp, tee, sed -i, curl -o ...)"),
    "pip.install": Reading(("pip", "python"), _PYTHON_INSTALL, "pip install, python -m pip install"),
    "uv.pip_install": Reading(("uv",), _PYTHON_INSTALL, "uv pip install"),
    "uv.add": Reading(("uv",), _PYTHON_INSTALL, "uv add"),
    "poetry.add": Reading(("poetry",), _PYTHON_INSTALL, "poetry add"),
    "pdm.add": Reading(("pdm",), _PYTHON_INSTALL, "pdm add"),
    "pipenv.install": Reading(("pipenv",), _PYTHON_INSTALL, "pipenv install"),
    "conda.install": Reading(("conda", "mamba"), _PYTHON_INSTALL, "conda/mamba install"),
    "npm.install": Reading(("npm",), _NODE_INSTALL, "npm install/i/add of a package"),
    "pnpm.add": Reading(("pnpm",), _NODE_INSTALL, "pnpm add/install of a package"),
    "yarn.add": Reading(("yarn",), _NODE_INSTALL, "yarn add, yarn global add"),
    "bun.add": Reading(("bun",), _NODE_INSTALL, "bun add/install of a package"),
    "npm.run_script": Reading(("npm",), ("script", "command"), "npm run <script> in the workspace"),
    "pnpm.run_script": Reading(("pnpm",), ("script", "command"), "pnpm run <script> in the workspace"),
    "venv.create": Reading(("python", "uv", "virtualenv"), ("path", "interpreter", "inside_workspace", "clear"),
                           "a virtual environment created"),
    "test.run": Reading(("npm", "pnpm", "yarn", "bun", "make", "python", "uv"), ("command", "cwd", "path"),
                        "the project's tests run through a package manager, make or python -m"),
    "db.migrate": Reading(("npm", "pnpm", "yarn", "bun", "make", "python"), ("command", "framework", "cwd"),
                          "a migration run through a package manager or make script (npm run migrate)"),
})
