"""The normalizer's shared state and results: emitted actions, paths, read-only git queries."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from statewise.actions import Action
from statewise.commands.named import Named
from statewise.commands.rules import CommandRules
from statewise.commands.words import _UNKNOWN_HEAD, _Call, _Ctx, _Parsed, _Repo, _Spec, _Word
from statewise.contract import Contract

#: The operation of an action the normalizer could not read with confidence. No contract
#: declares it, so the gate always stops it.
UNRESOLVED = "shell.unresolved"
#: The operation of a database migration (not declared by the built-in contract yet).
DB_MIGRATE = "db.migrate"

#: How deep ``sh -c`` bodies (and bodies of ``watch``, ``trap``, ``alias`` ...) are parsed again.
MAX_DEPTH = 4
#: A glob that expands to more paths than this is not enumerated; it is unresolved.
MAX_GLOB = 256
#: Seconds allowed for each read-only git query.
GIT_TIMEOUT = 3.0



# --- the result ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ShellAnalysis:
    """What a shell command would do, as far as StateWise guards it.

    ``actions`` holds one normalized action per guarded effect, in command order, preceded by
    one ``shell.unresolved`` action per entry of ``unresolved``. ``unguarded`` lists the
    simple commands that were parsed but map to no contract operation (the hook lets them
    run: StateWise guards what the contract declares). ``read_only`` is true only when the
    command has no action, nothing unresolved and nothing unguarded.
    """

    command: str
    actions: tuple[Action, ...]
    unresolved: tuple[str, ...] = ()
    unguarded: tuple[str, ...] = ()
    read_only: bool = False
    #: With ``typed_input``: the parts that start a program reading what is later typed into the
    #: terminal (an interpreter, a shell, an editor), each worded; the hook asks at their start.
    sessions: tuple[str, ...] = ()
    #: The strings the programs the command runs name (``python -c``, ``node -e``, a workspace
    #: script) where StateWise cannot show the program only reads them (:mod:`.named`): the
    #: hook's self-protection denies one that names a protected path.
    named: tuple[Named, ...] = ()

    @property
    def operations(self) -> tuple[str, ...]:
        """The operation of each action, in order."""
        return tuple(action.operation for action in self.actions)

    def first(self, operation: str) -> Action | None:
        """The first action with this operation, or None."""
        return next((a for a in self.actions if a.operation == operation), None)




class _Base:
    """The analyzer's state and what every part of it shares: results, paths, git queries."""
    def __init__(self, command: str, workspace: Path, env: Mapping[str, str],
                 rules: CommandRules | None = None, contract: Contract | None = None) -> None:
        self.command = command
        self.contract = contract  # whose operations give the risk of what is emitted
        # the contract's commands: section, then the built-in coding contract's
        self.rules = rules if rules is not None else CommandRules.of(contract, workspace)
        self.workspace = workspace
        self.base_env = dict(env)
        self.actions: list[Action] = []
        self.unresolved: list[tuple[str, str]] = []
        self.unguarded: list[str] = []
        # Whether the client can type into a running command later (Codex's write_stdin, with no
        # hook call): a program reading its terminal is then a session to ask about, not a fail.
        self.typed_input = False
        self.sessions: list[tuple[str, str]] = []
        self.named: list[Named] = []  # strings programs name and may do more than read (named.py)
        self.declared_calls: list[_Call] = []  # the calls the command rules already classified
        self.heads: dict[str, str] = {}
        self.git_cache: dict[tuple[Any, ...], str | None] = {}
        # git settings that earlier parts of the call set (repository -> setting -> values), and
        # repositories whose push settings an earlier part changed in a way that is not simulated.
        self.config_overlay: dict[str, dict[str, list[str]]] = {}
        self.config_unknown: dict[str, str] = {}
        self.links: dict[str, str | None] = {}  # resolved path -> the path as written, when symlinks differ

    # -- results --

    def emit(self, call: _Call, reading: str, facts: Mapping[str, Any], *, target: str | None = None,
             reason: str = "") -> None:
        """Record what a built-in reader established about ``call``: the action of every
        ``commands:`` rule that maps ``reading`` (statewise.contract.readings), or, when no
        rule maps it, an unresolved part (a reading is never unguarded for want of a rule)."""
        clean = {k: v for k, v in facts.items() if v is not None}
        matches = self.rules.map_reading(reading, clean)
        if not matches:
            self.fail(f"{reason or reading}: StateWise reads this as {reading}, which no command rule of the "
                      f"contract maps to an operation (add a rule with `reading: {reading}`)", call.part)
            return
        self.actions += [match.action(target=target, reason=reason) for match in matches]

    def fail(self, reason: str, part: str) -> None:
        if (reason, part) not in self.unresolved:
            self.unresolved.append((reason, part))

    def typed_session(self, call: _Call, what: str) -> None:
        """``call`` starts a program that reads and runs what is typed into its terminal later,
        which no hook sees (with :attr:`typed_input` only)."""
        if (what, call.part) not in self.sessions:
            self.sessions.append((what, call.part))

    def unguard(self, part: str) -> None:
        if part not in self.unguarded:
            self.unguarded.append(part)

    def parsed_ok(self, call: _Call, parsed: _Parsed, what: str) -> bool:
        """False (with the reason recorded) if the options were not understood or an option's
        value is only known at run time."""
        if parsed.error:
            self.fail(f"{what}: {parsed.error}", call.part)
            return False
        if parsed.dynamic:
            self.fail(f"{what}: the value of {', '.join(parsed.dynamic)} is only known at run time", call.part)
            return False
        return True

    def probe(self, call: _Call) -> _Base:
        """Classify ``call`` on the side, without recording it here."""
        other = type(self)(self.command, self.workspace, self.base_env, self.rules, self.contract)
        other.heads = self.heads
        other.git_cache = self.git_cache
        other.config_overlay = self.config_overlay
        other.config_unknown = self.config_unknown
        other.dispatch(call)
        return other

    # -- parsing and walking --

    def resolve_dir(self, ctx: _Ctx, value: str) -> Path | None:
        if "\0" in value:
            return None
        if not value.startswith("/") and ctx.cwd is None:
            return None
        joined = os.path.join(str(ctx.cwd) if ctx.cwd else "/", value)
        return Path(os.path.realpath(joined))

    def absolute(self, ctx: _Ctx, value: str, *, follow: bool) -> str | None:
        """``value`` made absolute against the context's directory. Symlinks in the parent are
        resolved; the last component only with ``follow`` (writes follow a final symlink,
        deleting one does not, unless written with a trailing slash)."""
        if "\0" in value or (not value.startswith("/") and ctx.cwd is None):
            return None
        joined = os.path.join(str(ctx.cwd) if ctx.cwd else "/", value)
        trailing = value.endswith("/")
        stripped = joined.rstrip("/") or "/"
        last = os.path.basename(stripped)
        if follow or trailing or last in ("", ".", "..") or stripped == "/":
            return os.path.realpath(stripped)
        return os.path.join(os.path.realpath(os.path.dirname(stripped)), last)

    def represent(self, absolute: str) -> tuple[str, bool]:
        root = str(self.workspace)
        if absolute == root:
            return ".", True
        if absolute.startswith(root.rstrip("/") + "/"):
            return os.path.relpath(absolute, root), True
        return absolute, False

    def expand(self, call: _Call, word: _Word, *, follow: bool) -> list[tuple[str, bool]] | None:
        """The paths a word names (globs expanded as bash would), workspace-relative where
        inside the workspace; None (and an unresolved reason) if that cannot be known."""
        if word.value is None:
            self.fail(f"the path `{word.text}` of `{call.name}` is only known at run time ({word.why})", call.part)
            return None
        values = [word.value]
        if word.has_glob:
            pattern = word.glob_pattern
            if not pattern.startswith("/"):
                if call.ctx.cwd is None:
                    self.fail(f"the glob `{word.text}` is relative to a directory that is not known", call.part)
                    return None
                pattern = os.path.join(glob.escape(str(call.ctx.cwd)), pattern)
            matches = sorted(glob.glob(pattern))
            if len(matches) > MAX_GLOB:
                self.fail(f"the glob `{word.text}` matches more than {MAX_GLOB} paths", call.part)
                return None
            if matches:
                values = matches
        found = []
        for value in values:
            if value == "":
                continue
            absolute = self.absolute(call.ctx, value, follow=follow)
            if absolute is None:
                self.fail(f"the path `{word.text}` is relative to a directory that is not known", call.part)
                return None
            found.append(self.represent(absolute))
            self.links[found[-1][0]] = self.link_name(call.ctx, value, found[-1][0])
        return found

    def link_name(self, ctx: _Ctx, value: str, path: str) -> str | None:
        """The path as written (``..`` folded, symlinks not followed) when symlinks make it name
        another file: writing ``config/prod.yaml`` through a symlinked ``config`` still changes
        what the developer protects as ``config/prod.yaml``."""
        joined = os.path.normpath(os.path.join(str(ctx.cwd) if ctx.cwd else "/", value))
        lexical = self.represent(joined)[0]
        return lexical if lexical != path else None

    def delete_paths(self, call: _Call, words: Iterable[_Word], *, recursive: bool, via: str,
                     extra: Mapping[str, Any] | None = None) -> None:
        for word in words:
            for path, inside in self.expand(call, word, follow=False) or ():
                self.emit(call, "fs.delete", {"path": path, "recursive": recursive, "inside_workspace": inside,
                                              "via": via, "link_path": self.links.get(path), **(extra or {})},
                          target=path, reason=f"{via} deletes {path}")

    def write_paths(self, call: _Call, words: Iterable[_Word], *, via: str,
                    extra: Mapping[str, Any] | None = None) -> None:
        for word in words:
            if word.value is None and word.text.startswith((">(", "<(")) and word.why == "a process substitution":
                continue  # `tee >(wc -c)`: a pipe into a command, which is analyzed itself
            for path, inside in self.expand(call, word, follow=True) or ():
                self.emit(call, "fs.write", {"path": path, "inside_workspace": inside, "via": via,
                                             "link_path": self.links.get(path), **(extra or {})},
                          target=path, reason=f"{via} writes {path}")

    def which(self, call: _Call, name: str) -> str | None:
        """The absolute path of a program as the command would find it, or None."""
        if "/" in name:
            return self.absolute(call.ctx, name, follow=False)
        path = self.search_path(call)
        if path is None:
            return None
        found = shutil.which(name, path=path)
        return os.path.normpath(found) if found else None

    def search_path(self, call: _Call) -> str | None:
        """The command's PATH with relative entries made absolute against its directory, or
        None when it is not known."""
        path = call.env.get("PATH", os.defpath)
        if not call.ctx.path_known or "\0" in path:
            return None
        entries = []
        for entry in path.split(os.pathsep):
            entry = entry or "."
            if not entry.startswith("/"):
                if call.ctx.cwd is None:
                    return None
                entry = os.path.join(str(call.ctx.cwd), entry)
            entries.append(entry)
        return os.pathsep.join(entries)

    def cwd_arg(self, call: _Call) -> str | None:
        if call.ctx.cwd is None:
            return None
        path, _ = self.represent(str(call.ctx.cwd))
        return None if path == "." else path

    # -- git plumbing (read-only) --

    def git_query(self, repo: _Repo, *args: str) -> str | None:
        if repo.cwd is None or not repo.cwd.is_dir():
            return None
        key = (str(repo.cwd), repo.git_dir, repo.work_tree, args)
        if key in self.git_cache:
            return self.git_cache[key]
        argv = ["git"]
        if repo.git_dir:
            argv.append(f"--git-dir={repo.git_dir}")
        if repo.work_tree:
            argv.append(f"--work-tree={repo.work_tree}")
        argv.extend(args)
        environment = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
        for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
            environment.pop(name, None)
        try:
            done = subprocess.run(argv, cwd=repo.cwd, capture_output=True, text=True, timeout=GIT_TIMEOUT,
                                  stdin=subprocess.DEVNULL, env=environment, check=False)
            result = done.stdout.strip() if done.returncode == 0 else None
        except (OSError, subprocess.TimeoutExpired):
            result = None
        self.git_cache[key] = result
        return result

    def git_config(self, repo: _Repo, name: str) -> str | None:
        if name.lower() in repo.config:
            return repo.config[name.lower()]
        overlay = self.config_overlay.get(self.repo_key(repo), {})
        if name.lower() in overlay:
            return overlay[name.lower()][-1] if overlay[name.lower()] else None
        return self.git_query(repo, "config", "--get", name)

    def repo_key(self, repo: _Repo) -> str:
        top = self.git_query(repo, "rev-parse", "--show-toplevel") if repo.cwd else None
        return top or repo.git_dir or str(repo.cwd)

    def head(self, repo: _Repo) -> tuple[str | None, str]:
        """The current branch, or None and why it is not known."""
        if repo.cwd is None:
            return None, "the directory git runs in is not known"
        key = self.repo_key(repo)
        if key in self.heads:
            branch = self.heads[key]
            if branch == _UNKNOWN_HEAD:
                return None, "an earlier part of the command changes the current branch to one that is not known"
            return branch, ""
        symbolic = self.git_query(repo, "symbolic-ref", "--quiet", "--short", "HEAD")
        if symbolic:
            return symbolic, ""
        if self.git_query(repo, "rev-parse", "--git-dir") is None:
            return None, f"{repo.cwd} is not a git repository"
        return None, "HEAD is detached"

    def set_head(self, repo: _Repo, branch: str | None) -> None:
        if repo.cwd is not None:
            self.heads[self.repo_key(repo)] = branch if branch else _UNKNOWN_HEAD

    def branch_exists(self, repo: _Repo, name: str) -> bool:
        return self.git_query(repo, "show-ref", "--verify", "--quiet", f"refs/heads/{name}") is not None

    def tag_exists(self, repo: _Repo, name: str) -> bool:
        return self.git_query(repo, "show-ref", "--verify", "--quiet", f"refs/tags/{name}") is not None

    def refs(self, repo: _Repo, prefix: str) -> list[str] | None:
        out = self.git_query(repo, "for-each-ref", "--format=%(refname)", prefix)
        if out is None:
            return None
        return [line[len(prefix):] for line in out.splitlines() if line.startswith(prefix) and line != prefix + "HEAD"]

    # -- shells and wrappers --

    # Provided by the other parts of the analyzer (shell.walk, shell.wrappers, shell.tools,
    # shell.analyzer); declared here so each part type-checks on its own.

    def analyze_text(self, text: str, ctx: _Ctx, part: str) -> None:
        raise NotImplementedError  # provided by the walk part

    def container(self, call: _Call) -> None:
        raise NotImplementedError  # provided by the tools part

    def dispatch(self, call: _Call) -> None:
        raise NotImplementedError  # provided by the analyzer part

    def beside(self, call: _Call, args: Sequence[_Word], *, own_only: bool = True) -> None:
        raise NotImplementedError  # provided by the analyzer part

    def generic_add(self, call: _Call, operation: str, tool: str) -> None:
        raise NotImplementedError  # provided by the tools part

    def interactive(self, call: _Call, what: str) -> None:
        raise NotImplementedError  # provided by the tools part

    def output_options(self, call: _Call) -> None:
        raise NotImplementedError  # provided by the tools part

    def setup_py(self, call: _Call, rest: list[str | None]) -> bool:
        raise NotImplementedError

    def python_module(self, call: _Call, module: str, rest: Sequence[_Word], *, interpreter: str | None) -> None:
        raise NotImplementedError  # provided by the tools part

    def read_only_builtin(self, call: _Call, key: str) -> None:
        raise NotImplementedError  # provided by the tools part

    def read_only_program(self, call: _Call, key: str) -> None:
        raise NotImplementedError  # provided by the tools part

    def runner(self, call: _Call, skip: int, spec: _Spec, *, chdir: tuple[str, ...] = ()) -> None:
        raise NotImplementedError  # provided by the wrappers part

    def session(self, call: _Call, key: str) -> None:
        raise NotImplementedError  # provided by the tools part

    def set_env(self, env: dict[str, str], name: str, value: str | None, part: str, ctx: _Ctx) -> None:
        raise NotImplementedError  # provided by the walk part

    def shell(self, call: _Call) -> None:
        raise NotImplementedError  # provided by the wrappers part

    def unknown(self, call: _Call) -> None:
        raise NotImplementedError  # provided by the analyzer part

    def declared(self, call: _Call) -> bool:
        raise NotImplementedError  # provided by the analyzer part

    # Reading inside what a command runs (recipes, scripts, inline programs).

    def make_recipes(self, call: _Call, options: dict[str, list[str | None]], targets: list[str],
                     assignments: dict[str, str]) -> None:
        raise NotImplementedError  # provided by the recipes part

    def package_scripts(self, call: _Call, tool: str, script: str, *, workspaces: list[str] | None = None,
                        every_workspace: bool = False, if_present: bool = False, arguments: str = "") -> bool:
        raise NotImplementedError  # provided by the recipes part

    def package_script_call(self, call: _Call, inner: _Call, tool: str, sub: str, rest: list[_Word],
                            parsed: _Parsed) -> None:
        raise NotImplementedError  # provided by the recipes part

    def python_program(self, call: _Call, code: str, where: str, *, cwd_ctx: _Ctx | None = None) -> None:
        raise NotImplementedError  # provided by the inline part

    def python_script(self, call: _Call, path: Path) -> None:
        raise NotImplementedError  # provided by the scripts part

    def workspace_file(self, call: _Call, value: str) -> Path | None:
        raise NotImplementedError  # provided by the inside part

    def tar_extract(self, call: _Call, archive: _Word | None, directory: str | None, strip: int) -> None:
        raise NotImplementedError  # provided by the unpack part

    def git_where(self, call: _Call, repo: _Repo) -> dict[str, Any]:
        raise NotImplementedError  # provided by the git part

    def git_apply(self, call: _Call, repo: _Repo, rest: list[_Word]) -> None:
        raise NotImplementedError  # provided by the unpack part

    def shell_script(self, call: _Call, word: _Word) -> bool:
        raise NotImplementedError  # provided by the scripts part

    def sourced_script(self, call: _Call, word: _Word) -> bool:
        raise NotImplementedError  # provided by the scripts part
