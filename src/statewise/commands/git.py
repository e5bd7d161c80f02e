"""git: where a push goes, what a checkout, reset or clean discards, which refs move."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from statewise.commands.files import _Files
from statewise.commands.git_forms import _GIT_MESSAGE_EDITORS, _git_listing, _git_opens_editor, _ref_name
from statewise.commands.git_trees import _TREE_UPDATES, _GitTrees
from statewise.commands.reading import _Reading
from statewise.commands.tables import (
    _DANGEROUS_GIT_CONFIG,
    _GIT_READ_ONLY_ARGS,
    _GIT_SESSIONS,
    _GIT_UNGUARDED,
    _NO_OP_EDITORS,
    _PUSH_CONFIG,
    _PUSH_SECTIONS,
    _TRUE_WORDS,
)
from statewise.commands.words import _Call, _Ctx, _parse, _Repo, _Spec, _Word


class _Git(_GitTrees, _Reading, _Files):
    """git's subcommands: push destinations, discarded changes, moved refs, configuration."""

    def git(self, call: _Call) -> None:
        repo = _Repo(call.ctx.cwd, call.env.get("GIT_DIR"), call.env.get("GIT_WORK_TREE"))
        if (repo.git_dir and "\0" in repo.git_dir) or (repo.work_tree and "\0" in repo.work_tree):
            self.fail("GIT_DIR or GIT_WORK_TREE is only known at run time", call.part)
            return
        words = call.args
        i = 0
        while i < len(words):
            value = words[i].value
            nxt = words[i + 1].value if i + 1 < len(words) else None
            if value is None:
                self.fail(f"git: `{words[i].text}` is only known at run time ({words[i].why})", call.part)
                return
            if value == "-C":
                if nxt is None:
                    self.fail("the directory of `git -C` is only known at run time", call.part)
                    return
                if nxt:
                    repo.cwd = self.resolve_dir(_Ctx(repo.cwd, {}), nxt)
                i += 2
                continue
            if value in ("-c", "--config-env") or value.startswith("--config-env="):
                setting = value.partition("=")[2] if value.startswith("--config-env=") else nxt
                if setting is None:
                    self.fail(f"the setting of `git {value}` is only known at run time", call.part)
                    return
                key, equals, setting_value = setting.partition("=")
                if _DANGEROUS_GIT_CONFIG.match(key) or value != "-c":
                    self.fail(f"`git -c {key}` can run commands or redirect git", call.part)
                    return
                repo.config[key.lower()] = setting_value if equals else "true"
                i += 1 if value.startswith("--config-env=") else 2
                continue
            matched = False
            for option, attr in (("--git-dir", "git_dir"), ("--work-tree", "work_tree"), ("--namespace", None)):
                if value == option or value.startswith(option + "="):
                    given = value.partition("=")[2] if "=" in value else nxt
                    if given is None:
                        self.fail(f"the value of `git {option}` is only known at run time", call.part)
                        return
                    if attr:
                        resolved = self.resolve_dir(_Ctx(repo.cwd, {}), given)
                        setattr(repo, attr, str(resolved) if resolved else None)
                    i += 1 if "=" in value else 2
                    matched = True
                    break
            if matched:
                continue
            if value in ("--no-pager", "-p", "--paginate", "-P", "--bare", "--no-replace-objects", "--literal-pathspecs",
                         "--glob-pathspecs", "--noglob-pathspecs", "--icase-pathspecs", "--no-optional-locks",
                         "--no-advice", "--no-lazy-fetch"):
                i += 1
                continue
            if value in ("--version", "--help", "-h", "-v", "--html-path", "--man-path", "--info-path", "--exec-path"):
                return
            if value.startswith("-"):
                self.fail(f"git: unknown global option {value}", call.part)
                return
            break
        if i >= len(words):
            return
        if "git" in self.rules.own_programs or "git" in self.rules.shapes:
            self.beside(call, words[i:])  # the contract's own git rules, after git's global options
        sub = words[i].value or ""
        rest = words[i + 1:]
        if repo.cwd != call.ctx.cwd:  # git -C: paths on its command line are relative to that directory
            ctx = call.ctx.copy()
            ctx.cwd = repo.cwd
            call = _Call(call.words, call.env, ctx, call.part, call.kept, call.program)
        handler = _GIT_HANDLERS.get(sub)
        if handler is not None:
            failures = len(self.unresolved)
            handler(self, call, repo, rest)
            if sub in ("checkout", "switch", "rebase") and len(self.unresolved) > failures:
                self.set_head(repo, None)  # where HEAD ends up is not known either
        elif sub in _GIT_READ_ONLY_ARGS:
            self.git_read_only(call, repo, sub, rest)
        elif sub in _GIT_SESSIONS:
            self.git_session(call, sub, rest)
        elif sub in _GIT_UNGUARDED:
            if (sub in _GIT_MESSAGE_EDITORS and _git_opens_editor(sub, [w.value for w in rest])
                    and not self.git_editor_does_nothing(call, repo)):
                self.interactive(call, f"an editor for the {sub} message")
                return
            if sub == "submodule" and rest and rest[0].value == "foreach":
                self.git_foreach(call, rest[1:])
                return
            if sub == "bisect" and rest and rest[0].value == "run":
                if len(rest) > 1:
                    self.dispatch(_Call(rest[1:], call.env, call.ctx, call.part))
                return
            if self.git_history_pruned(call, sub, [w.value for w in rest]):
                return
            if sub in ("stash", "reflog") and self.git_log_like(call, repo, sub, rest):
                return
            if sub == "stash" and self.git_stash_untracked(call, repo, rest):
                self.git_tree_update(call, repo, sub, rest)  # it also puts HEAD's tracked files back
                return
            if sub in _TREE_UPDATES and self.git_tree_update(call, repo, sub, rest):
                return
            if sub == "bundle" and rest and rest[0].value == "create":
                files = [w for w in rest[1:] if (w.value or "x")[:1] != "-"]
                self.write_paths(call, files[:1], via="git bundle create")
                return
            if sub == "remote" and not _git_listing(sub, [w.value for w in rest]):
                self.push_config_unknown(repo, f"git remote {rest[0].value if rest else ''}".strip())
            if _git_listing(sub, [w.value for w in rest]):
                return
            self.unguard(call.part)
        else:
            self.fail(f"`git {sub}` is not a git command StateWise knows (a git alias can run anything)", call.part)

    def git_editor_does_nothing(self, call: _Call, repo: _Repo, *, todo_list: bool = False) -> bool:
        """Whether the editor git would start is one that does nothing (``true``, ``:``), so no
        session opens: git's own order, GIT_SEQUENCE_EDITOR and sequence.editor first for a
        rebase todo list, then GIT_EDITOR, core.editor, VISUAL, EDITOR. Claude Code runs its
        Bash tool with GIT_EDITOR=true (docs/integrations.md), so there `git commit` without -m
        and `git rebase -i --autosquash` open nothing."""
        def setting(variable: str, config: str | None) -> str | None:
            value = call.env.get(variable)
            if value is None and config is not None:
                value = self.git_config(repo, config)
            return value

        sources: list[tuple[str, str | None]] = [("GIT_SEQUENCE_EDITOR", "sequence.editor")] if todo_list else []
        sources += [("GIT_EDITOR", "core.editor"), ("VISUAL", None), ("EDITOR", None)]
        for variable, config in sources:
            value = setting(variable, config)
            if value is not None:
                return value.strip() in _NO_OP_EDITORS
        return False  # git's default editor, vi

    def git_session(self, call: _Call, sub: str, words: list[_Word]) -> None:
        """difftool/mergetool with -x run that command; otherwise they open a tool on the terminal."""
        values = [w.value for w in words]
        if "--tool-help" in values:
            return
        for index, value in enumerate(values):
            body = None
            if value in ("-x", "--extcmd") and index + 1 < len(words):
                body = words[index + 1]
            elif value is not None and value.startswith("--extcmd="):
                body = _Word.literal(value.partition("=")[2])
            elif value is not None and value.startswith("-x") and len(value) > 2:
                body = _Word.literal(value[2:])
            if body is not None:
                if body.value is None:
                    self.fail(f"the command of `git {sub} -x` is only known at run time", call.part)
                    return
                inner = call.ctx.copy()
                inner.depth += 1
                self.analyze_text(body.value, inner, call.part)
                return
        self.interactive(call, _GIT_SESSIONS[sub])

    def git_log_like(self, call: _Call, repo: _Repo, sub: str, words: list[_Word]) -> bool:
        """``git stash show`` and ``git reflog [show]`` take git log's options (--output=F too)."""
        first = words[0].value if words else None
        if sub == "stash" and first in ("list", "show"):
            self.git_read_only(call, repo, "log", words[1:])
            return True
        if sub == "reflog" and (first is None or first == "show" or first.startswith("-")):
            self.git_read_only(call, repo, "log", words[1:] if first == "show" else words)
            return True
        return False

    def git_config_command(self, call: _Call, repo: _Repo, words: list[_Word]) -> None:
        """``git config``: reads are read-only; writes of settings that decide where a push goes are
        simulated for the rest of the call; settings that run commands are unresolved."""
        values = [w.value for w in words]
        if any(v is None for v in values):
            self.fail("`git config` with arguments only known at run time", call.part)
            return
        args = [v for v in values if v is not None]
        scopes = {"--local", "--global", "--system", "--worktree", "--includes", "--no-includes", "-z", "--null",
                  "--name-only", "--show-origin", "--show-scope", "--bool", "--int", "--bool-or-int", "--path",
                  "--expiry-date", "--all", "--append", "--fixed-value"}
        valued = {"--type", "--default", "--blob", "--value", "--comment", "--url"}
        file: str | None = None
        rest: list[str] = []
        mode = None
        i = 0
        while i < len(args):
            value = args[i]
            if value in ("-f", "--file") and i + 1 < len(args):
                file, i = args[i + 1], i + 2
                continue
            if value.startswith("--file="):
                file = value.partition("=")[2]
            elif value in valued and i + 1 < len(args):
                i += 1
            elif value.startswith(tuple(v + "=" for v in valued)) or value in scopes:
                pass
            elif value.startswith("-") and mode is None:
                mode = value
            else:
                rest.append(value)
            i += 1
        subcommands = {"list": "-l", "get": "--get", "set": "set", "unset": "--unset", "edit": "-e",
                       "rename-section": "--rename-section", "remove-section": "--remove-section"}
        if mode is None and rest and rest[0] in subcommands:
            mode, rest = subcommands[rest[0]], rest[1:]
            if mode == "set" and "--append" in args:
                mode = "--add"
            elif mode == "--unset" and "--all" in args:
                mode = "--unset-all"
        reading = mode in ("-l", "--list", "--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color",
                           "--get-colorbool") or (mode is None and len(rest) < 2)
        if reading:
            return
        if mode in ("-e", "--edit"):
            self.interactive(call, "an editor on the git configuration")
            return
        if file is not None:
            self.write_paths(call, [_Word.literal(file)], via="git config --file")
            self.push_config_unknown(repo, "git config --file")
            return
        if mode in ("--rename-section", "--remove-section"):
            if rest and _PUSH_SECTIONS.match(rest[0]):
                self.push_config_unknown(repo, f"git config {mode} {rest[0]}")
            self.unguard(call.part)
            return
        if not rest:
            self.fail(f"git config {mode}: the setting is not given", call.part)
            return
        key = rest[0]
        if mode is not None and mode not in ("set", "--add", "--unset", "--unset-all", "--replace-all"):
            self.fail(f"git config: unknown option {mode}", call.part)
            return
        if _DANGEROUS_GIT_CONFIG.match(key):
            self.fail(f"`git config {key}` sets a git setting that runs commands or redirects git", call.part)
            return
        if _PUSH_CONFIG.match(key):
            overlay = self.push_overlay(repo)
            current = self.git_config_all(repo, key)
            if mode in ("--unset", "--unset-all"):
                overlay[key.lower()] = []
            elif mode == "--add":
                overlay[key.lower()] = [*(current or []), rest[1] if len(rest) > 1 else ""]
            else:
                overlay[key.lower()] = [rest[1] if len(rest) > 1 else ""]
        elif _PUSH_SECTIONS.match(key) and key.lower().startswith(("remote.", "url.")):
            self.push_config_unknown(repo, f"git config {key}")
        self.unguard(call.part)

    def push_overlay(self, repo: _Repo) -> dict[str, list[str]]:
        return self.config_overlay.setdefault(self.repo_key(repo), {})

    def push_config_unknown(self, repo: _Repo, why: str) -> None:
        self.config_unknown.setdefault(self.repo_key(repo), why)

    def git_config_all(self, repo: _Repo, name: str) -> list[str] | None:
        """Every value of a multi-valued setting, after what earlier parts of the call set."""
        if name.lower() in repo.config:
            return [repo.config[name.lower()]]
        overlay = self.config_overlay.get(self.repo_key(repo), {})
        if name.lower() in overlay:
            return overlay[name.lower()]
        out = self.git_query(repo, "config", "--get-all", name)
        return out.splitlines() if out else None

    def git_where(self, call: _Call, repo: _Repo) -> dict[str, Any]:
        """Where a working-tree operation runs, when that is not the workspace itself."""
        where: dict[str, Any] = {}
        if repo.cwd is not None:
            top = self.git_query(repo, "rev-parse", "--show-toplevel")
            path, _ = self.represent(os.path.realpath(top) if top else str(repo.cwd))
            if path != ".":
                where["cwd"] = path
        if repo.work_tree:
            where["work_tree"] = self.represent(repo.work_tree)[0]
        return where

    def git_foreach(self, call: _Call, words: list[_Word]) -> None:
        words = [w for w in words if w.value not in ("--recursive", "-q", "--quiet")]
        values = [w.value for w in words]
        if not words or any(v is None for v in values):
            self.fail("`git submodule foreach` runs a command only known at run time", call.part)
            return
        inner = call.ctx.copy()
        inner.depth += 1
        self.analyze_text(" ".join(v for v in values if v is not None), inner, call.part)

    def git_args_static(self, call: _Call, sub: str, words: Sequence[_Word]) -> bool:
        for word in words:
            if word.value is None:
                self.fail(f"`git {sub}` argument `{word.text}` is only known at run time ({word.why})", call.part)
                return False
        return True

    def git_push(self, call: _Call, repo: _Repo, words: list[_Word]) -> None:
        spec = _Spec.of(
            flags="-f --force --force-if-includes --no-force-if-includes --no-force-with-lease -u --set-upstream "
                  "-d --delete --all --branches --mirror --tags --follow-tags --no-follow-tags -n --dry-run "
                  "--porcelain -q --quiet -v --verbose --progress --no-progress --no-verify --verify --atomic "
                  "--no-atomic --thin --no-thin --prune --no-signed -4 --ipv4 -6 --ipv6 --no-recurse-submodules "
                  "--no-prune",
            valued="-o --push-option --repo --receive-pack --exec",
            optional="--force-with-lease --signed --recurse-submodules")
        parsed = _parse(words, spec)
        if not self.parsed_ok(call, parsed, "git push"):
            return
        if not self.git_args_static(call, "push", parsed.positionals):
            return
        if parsed.has("--receive-pack", "--exec"):
            self.fail("`git push --receive-pack/--exec` runs a command", call.part)
            return
        if parsed.has("-n", "--dry-run"):
            return
        if repo.cwd is None:
            self.fail("git push runs in a directory that is not known", call.part)
            return
        changed = self.config_unknown.get(self.repo_key(repo))
        if changed:
            self.fail(f"git push: an earlier part of the command ({changed}) changes settings that decide where "
                      "the push goes", call.part)
            return
        force = parsed.has("-f", "--force", "--force-with-lease", "--force-if-includes")
        set_upstream = parsed.has("-u", "--set-upstream") or None
        delete = parsed.has("-d", "--delete")
        positionals = [w.value or "" for w in parsed.positionals]
        remote = parsed.value("--repo") or (positionals[0] if positionals else None)
        refspecs = positionals[1:] if not parsed.has("--repo") else positionals
        # "git push origin tag v1" names refs/tags/v1
        joined: list[str] = []
        k = 0
        while k < len(refspecs):
            if refspecs[k] == "tag" and k + 1 < len(refspecs):
                joined.append(f"refs/tags/{refspecs[k + 1]}")
                k += 2
            else:
                joined.append(refspecs[k])
                k += 1
        refspecs = joined
        head, why = self.head(repo)
        if remote is None:
            if head is None:
                self.fail(f"git push without a remote: {why}", call.part)
                return
            remote = (self.git_config(repo, f"branch.{head}.pushRemote") or self.git_config(repo, "remote.pushDefault")
                      or self.git_config(repo, f"branch.{head}.remote") or "origin")
        common = {"remote": remote, "set_upstream": set_upstream}

        def push(branch: str, source: str | None, *, forced: bool = False, deleting: bool = False,
                 **extra: Any) -> None:
            args = {**common, "branch": branch, "source": source, "force": True if (force or forced) else None,
                    "delete": True if deleting else None, **extra}
            self.emit(call, "git.push", args, target=f"{remote}/{branch}",
                      reason=f"git push to {remote}/{branch}")

        mirror = parsed.has("--mirror") or (not refspecs and not parsed.has("--all", "--branches", "--tags") and (
            self.git_config(repo, f"remote.{remote}.mirror") or "").lower() in _TRUE_WORDS)
        if mirror and not parsed.has("--mirror"):
            parsed.options.append(("--mirror", None))  # remote.<name>.mirror: a bare push mirrors
        everything = parsed.has("--all", "--branches", "--mirror")
        if everything:
            branches = self.refs(repo, "refs/heads/")
            if branches is None:
                self.fail("git push --all/--mirror: the local branches cannot be listed", call.part)
                return
            for branch in branches:
                push(branch, branch, forced=parsed.has("--mirror"), all=True if not parsed.has("--mirror") else None,
                     mirror=True if parsed.has("--mirror") else None)
        if parsed.has("--mirror", "--prune"):
            local = set(self.refs(repo, "refs/heads/") or [])
            tracking = self.refs(repo, f"refs/remotes/{remote}/")
            if tracking is None:
                self.fail("git push --mirror/--prune: the remote branches cannot be listed", call.part)
            for branch in tracking or []:
                if branch not in local:
                    push(branch, None, deleting=True, prune=True)
        if parsed.has("--tags"):
            push("refs/tags/*", None, tags=True)
        if not refspecs and (everything or parsed.has("--tags")):
            return
        if not refspecs:
            configured = self.git_config_all(repo, f"remote.{remote}.push")
            if configured:
                refspecs = configured
            else:
                if head is None:
                    self.fail(f"git push without a refspec: {why}", call.part)
                    return
                mode = (self.git_config(repo, "push.default") or "simple").lower()
                if mode == "nothing":
                    return
                if mode == "matching":
                    tracked = set(self.refs(repo, f"refs/remotes/{remote}/") or [])
                    for branch in self.refs(repo, "refs/heads/") or []:
                        if branch in tracked:
                            push(branch, branch)
                    return
                branch = head
                if mode in ("upstream", "tracking"):
                    merge = self.git_config(repo, f"branch.{head}.merge")
                    if not merge:
                        self.fail(f"git push (push.default={mode}): {head} has no upstream", call.part)
                        return
                    branch = merge.removeprefix("refs/heads/")
                push(branch, head)
                if set_upstream:
                    self.set_upstream(repo, head, remote, branch)
                return
        for refspec in refspecs:
            forced = refspec.startswith("+")
            spec_text = refspec[1:] if forced else refspec
            if "*" in spec_text:
                self.fail(f"git push: the wildcard refspec `{refspec}` is not enumerated", call.part)
                continue
            source, colon, destination = spec_text.partition(":")
            if delete and not colon:
                destination, source, colon = source, "", ":"
            if colon and not source:
                name, kind = _ref_name(destination)
                push(name, None, deleting=True, ref_kind=kind)
                continue
            if not colon:
                if source in ("HEAD", "@"):
                    if head is None:
                        self.fail(f"git push {source}: {why}", call.part)
                        continue
                    destination = head
                elif source.startswith("refs/"):
                    destination = source
                elif self.tag_exists(repo, source) and not self.branch_exists(repo, source):
                    destination = f"refs/tags/{source}"
                else:
                    destination = source
            if destination in ("HEAD", "@") or not destination:
                self.fail(f"git push: the destination of `{refspec}` is not a branch name", call.part)
                continue
            name, kind = _ref_name(destination)
            push(name, source or None, forced=forced, ref_kind=kind)
            if set_upstream and kind is None:
                pushed = head if source in ("HEAD", "@", "") else source.removeprefix("refs/heads/")
                if pushed:
                    self.set_upstream(repo, pushed, remote, name)

    def set_upstream(self, repo: _Repo, branch: str, remote: str, merge: str) -> None:
        """What `git push -u`, `git branch -u` and tracking checkouts record for later pushes."""
        overlay = self.push_overlay(repo)
        overlay[f"branch.{branch}.remote".lower()] = [remote]
        overlay[f"branch.{branch}.merge".lower()] = [f"refs/heads/{merge}"]

    def tracking(self, repo: _Repo, branch: str, start: str | None) -> None:
        """A branch created from a remote-tracking branch tracks it (branch.autoSetupMerge)."""
        if not start or "/" not in start:
            return
        if self.git_query(repo, "rev-parse", "--verify", "--quiet", f"refs/remotes/{start}") is not None:
            remote, _, merge = start.partition("/")
            self.set_upstream(repo, branch, remote, merge)

    def git_checkout(self, call: _Call, repo: _Repo, words: list[_Word]) -> None:
        spec = _Spec.of(
            flags="-q --quiet -f --force -m --merge --detach --no-track --guess --no-guess --overlay --no-overlay "
                  "--progress --no-progress --ignore-skip-worktree-bits --ignore-other-worktrees "
                  "--no-recurse-submodules -p --patch --ours --theirs -2 -3 -l --pathspec-file-nul",
            valued="-b -B --orphan --pathspec-from-file",
            optional="-t --track --conflict --recurse-submodules")
        parsed = _parse(words, spec)
        if not self.parsed_ok(call, parsed, "git checkout"):
            return
        if not self.git_args_static(call, "checkout", parsed.positionals):
            return
        dashdash = any(w.value == "--" for w in words)
        positionals = [w.value or "" for w in parsed.positionals]
        create = parsed.value("-b", "-B", "--orphan")
        before = positionals
        paths: list[str] = []
        if dashdash:
            index = [w.value for w in words].index("--")
            after = {id(w) for w in words[index + 1:]}
            paths = [w.value or "" for w in parsed.positionals if id(w) in after]
            before = [w.value or "" for w in parsed.positionals if id(w) not in after]
        force = parsed.has("-f", "--force") or None
        if create is not None:
            start = before[0] if before else None
            if force:
                self.discard_changes(call, "git checkout --force")
            self.emit(call, "git.checkout", {"branch": create, "create": True, "start_point": start,
                                              "force": True if parsed.has("-B") else force,
                                              "orphan": True if parsed.has("--orphan") else None},
                      target=create, reason=f"git checkout -b {create}")
            self.set_head(repo, create)
            self.tracking(repo, create, start)
            if paths:
                self.git_restore_action(call, before[:1], paths)
            return
        if dashdash or parsed.has("--pathspec-from-file", "-p", "--patch", "--ours", "--theirs") or len(before) > 1:
            source = before[0] if before and (dashdash or len(before) > 1) else None
            self.git_restore_action(call, [source] if source else [], paths or before[1:] or before)
            return
        if parsed.has("--detach"):
            target = before[0] if before else "HEAD"
            if force:
                self.discard_changes(call, "git checkout --force")
            self.emit(call, "git.checkout", {"branch": target, "detach": True, "force": force},
                      target=target, reason=f"git checkout --detach {target}")
            self.set_head(repo, None)
            return
        if not before:
            if force:
                self.discard_changes(call, "git checkout --force")
            return  # otherwise it reports the state of the working tree
        target = before[0]
        if target == "-":
            previous = self.git_query(repo, "rev-parse", "--abbrev-ref", "@{-1}")
            if not previous:
                self.fail("git checkout -: the previous branch is not known", call.part)
                return
            target = previous
        if force:
            self.discard_changes(call, "git checkout --force")
        if parsed.has("-t", "--track") and "/" in target and not self.branch_exists(repo, target):
            local = target.split("/", 1)[1]
            self.tracking(repo, local, target)
            self.emit(call, "git.checkout", {"branch": local, "create": True, "start_point": target, "force": force},
                      target=local, reason=f"git checkout --track {target}")
            self.set_head(repo, local)
            return
        is_branch = self.branch_exists(repo, target)
        if not is_branch and repo.cwd is not None and (repo.cwd / target).exists():
            self.git_restore_action(call, [], [target])
            return
        self.emit(call, "git.checkout", {"branch": target, "force": force}, target=target,
                  reason=f"git checkout {target}")
        remote_branch = self.git_query(repo, "rev-parse", "--verify", "--quiet", f"refs/remotes/origin/{target}")
        self.set_head(repo, target if is_branch or remote_branch else None)

    def discard_changes(self, call: _Call, via: str) -> None:
        """checkout --force, switch --discard-changes: uncommitted work is thrown away, as with
        git reset --hard. It is a git.restore of the whole tree (undeclared: the gate stops it)."""
        self.emit(call, "git.restore", {"paths": ["."], "discard_all": True, "via": via}, target=".",
                  reason=f"{via} discards every uncommitted change")

    def git_restore_action(self, call: _Call, source: list[str], paths: list[str]) -> None:
        shown = [self.represent(a)[0] if (a := self.absolute(call.ctx, p, follow=False)) else p for p in paths] or ["."]
        self.emit(call, "git.restore", {"paths": shown, "source": source[0] if source else None},
                  target=" ".join(shown), reason="discards uncommitted changes to " + ", ".join(shown))

    def git_restore(self, call: _Call, repo: _Repo, words: list[_Word]) -> None:
        spec = _Spec.of(flags="-S --staged -W --worktree -q --quiet -p --patch --ours --theirs -m --merge "
                              "--ignore-unmerged --overlay --no-overlay --progress --no-progress "
                              "--ignore-skip-worktree-bits --no-recurse-submodules --pathspec-file-nul",
                        valued="-s --source --pathspec-from-file", optional="--conflict --recurse-submodules")
        parsed = _parse(words, spec)
        if not self.parsed_ok(call, parsed, "git restore"):
            return
        if not self.git_args_static(call, "restore", parsed.positionals):
            return
        if parsed.has("-S", "--staged") and not parsed.has("-W", "--worktree"):
            self.unguard(call.part)  # only the index
            return
        source = parsed.value("-s", "--source")
        self.git_restore_action(call, [source] if source else [], [w.value or "" for w in parsed.positionals])

    def git_switch(self, call: _Call, repo: _Repo, words: list[_Word]) -> None:
        spec = _Spec.of(
            flags="-d --detach -f --force --discard-changes -m --merge -q --quiet --progress --no-progress --no-track "
                  "--guess --no-guess --ignore-other-worktrees --no-recurse-submodules",
            valued="-c -C --create --force-create --orphan",
            optional="-t --track --conflict --recurse-submodules")
        parsed = _parse(words, spec)
        if not self.parsed_ok(call, parsed, "git switch"):
            return
        if not self.git_args_static(call, "switch", parsed.positionals):
            return
        positionals = [w.value or "" for w in parsed.positionals]
        create = parsed.value("-c", "-C", "--create", "--force-create", "--orphan")
        force = parsed.has("-f", "--force", "--discard-changes") or None
        if force:
            self.discard_changes(call, "git switch --discard-changes")
        if create is not None:
            self.tracking(repo, create, positionals[0] if positionals else None)
            self.emit(call, "git.switch", {"branch": create, "create": True,
                                            "start_point": positionals[0] if positionals else None,
                                            "force": True if parsed.has("-C", "--force-create") else force,
                                            "orphan": True if parsed.has("--orphan") else None},
                      target=create, reason=f"git switch -c {create}")
            self.set_head(repo, create)
            return
        if not positionals:
            if parsed.has("-d", "--detach"):
                self.emit(call, "git.switch", {"branch": "HEAD", "detach": True}, target="HEAD")
                self.set_head(repo, None)
                return
            self.fail("git switch without a branch", call.part)
            return
        target = positionals[0]
        if target == "-":
            previous = self.git_query(repo, "rev-parse", "--abbrev-ref", "@{-1}")
            if not previous:
                self.fail("git switch -: the previous branch is not known", call.part)
                return
            target = previous
        detach = parsed.has("-d", "--detach")
        self.emit(call, "git.switch", {"branch": target, "force": force, "detach": True if detach else None},
                  target=target, reason=f"git switch {target}")
        self.set_head(repo, None if detach else target)

    def git_branch(self, call: _Call, repo: _Repo, words: list[_Word]) -> None:
        spec = _Spec.of(
            flags="-d -D --delete -f --force -r --remotes -a --all -l --list -v -vv --verbose -q --quiet -m -M --move "
                  "-c -C --copy --show-current --no-track -i --ignore-case --no-column --no-color --no-abbrev "
                  "--create-reflog --edit-description --unset-upstream --omit-empty --recurse-submodules",
            valued="-u --set-upstream-to --contains --no-contains --merged --no-merged --points-at --sort --format",
            optional="-t --track --column --color --abbrev")
        parsed = _parse(words, spec)
        if not self.parsed_ok(call, parsed, "git branch"):
            return
        if not self.git_args_static(call, "branch", parsed.positionals):
            return
        names = [w.value or "" for w in parsed.positionals]
        force = parsed.has("-f", "--force")
        remote_tracking = parsed.has("-r", "--remotes")
        if names and not remote_tracking and self.branch_elsewhere(call, repo, parsed, names):
            return
        if parsed.has("-d", "-D", "--delete"):
            for name in names:
                self.emit(call, "git.branch_delete",
                          {"branch": name, "force": True if (parsed.has("-D") or force) else None,
                           "remote_tracking": True if remote_tracking else None},
                          target=name, reason=f"git branch -d {name}")
            return
        if parsed.has("-m", "-M", "--move", "-c", "-C", "--copy"):
            head, why = self.head(repo)
            if len(names) == 1:
                if head is None:
                    self.fail(f"git branch -m: {why}", call.part)
                    return
                old, new = head, names[0]
            elif len(names) >= 2:
                old, new = names[0], names[1]
            else:
                return
            if parsed.has("-m", "-M", "--move"):
                self.emit(call, "git.branch_delete", {"branch": old, "force": True if parsed.has("-M") or force else None,
                                                       "renamed_to": new},
                          target=old, reason=f"git branch -m renames {old} to {new}")
                if old == head:
                    self.set_head(repo, new)
            self.emit(call, "git.branch_create", {"name": new, "start_point": old,
                                                   "force": True if parsed.has("-M", "-C") or force else None},
                      target=new, reason=f"git branch creates {new}")
            return
        if parsed.has("-u", "--set-upstream-to", "--unset-upstream", "--edit-description"):
            upstream = parsed.value("-u", "--set-upstream-to")
            branch = names[0] if names else self.head(repo)[0]
            if parsed.has("--unset-upstream") and branch:
                overlay = self.push_overlay(repo)
                overlay[f"branch.{branch}.merge".lower()] = []
                overlay[f"branch.{branch}.remote".lower()] = []
            elif upstream and branch and "/" in upstream:
                remote, _, merge = upstream.partition("/")
                self.set_upstream(repo, branch, remote, merge)
            elif upstream:
                self.push_config_unknown(repo, "git branch --set-upstream-to")
            self.unguard(call.part)
            return
        listing = parsed.has("-l", "--list", "-a", "--all", "-r", "--remotes", "-v", "-vv", "--verbose",
                             "--show-current", "--contains", "--no-contains", "--merged", "--no-merged",
                             "--points-at", "--sort", "--format")
        if listing or not names:
            return
        self.emit(call, "git.branch_create", {"name": names[0], "start_point": names[1] if len(names) > 1 else None,
                                               "force": True if force else None},
                  target=names[0], reason=f"git branch {names[0]}")

    def git_history_pruned(self, call: _Call, sub: str, values: list[str | None]) -> bool:
        """``git reflog expire/delete``, ``git prune`` and ``git gc --prune=...`` destroy the only
        copy of what a reset, a rebase or a branch delete left behind (issue 25): stopped, with
        the reason, for the developer to run themself."""
        what = None
        if sub == "reflog" and values[:1] in (["expire"], ["delete"]):
            what = f"`git reflog {values[0]}` deletes reflog entries"
        elif sub == "prune" and not {"-n", "--dry-run"} & set(values):
            what = "`git prune` deletes unreachable commits"
        elif sub == "gc" and any(v is None or v == "--prune" or v.startswith("--prune=") for v in values):
            what = "`git gc --prune` deletes unreachable commits"
        if what is None:
            return False
        self.fail(f"{what}: the reflog and unreachable commits are what recovers work that a reset, a rebase "
                  "or a branch delete left behind; the developer runs this themself", call.part)
        return True

    def branch_elsewhere(self, call: _Call, repo: _Repo, parsed: Any, names: list[str]) -> bool:
        """``git -C ../other.git branch ...`` that creates, moves or deletes a branch there: pushes."""
        if parsed.has("-l", "--list", "-a", "--all", "-v", "-vv", "--verbose", "--show-current", "--contains",
                      "--no-contains", "--merged", "--no-merged", "--points-at", "--sort", "--format", "-u",
                      "--set-upstream-to", "--unset-upstream", "--edit-description"):
            return False
        if self.repository_elsewhere(repo) is None:
            return False
        if parsed.has("-d", "-D", "--delete"):
            for name in names:
                self.ref_write_elsewhere(call, repo, name, None, deleting=True, via="git branch -d")
        elif parsed.has("-m", "-M", "--move", "-c", "-C", "--copy"):
            old, new = (names[0], names[1]) if len(names) >= 2 else ("HEAD", names[0])
            self.ref_write_elsewhere(call, repo, new, old, deleting=False, via="git branch -m/-c")
            if parsed.has("-m", "-M", "--move") and old != "HEAD":
                self.ref_write_elsewhere(call, repo, old, None, deleting=True, via="git branch -m")
        else:
            self.ref_write_elsewhere(call, repo, names[0], names[1] if len(names) > 1 else "HEAD", deleting=False,
                                     via="git branch", force=parsed.has("-f", "--force"))
        return True

    def git_reset(self, call: _Call, repo: _Repo, words: list[_Word]) -> None:
        spec = _Spec.of(flags="--hard --soft --mixed --keep --merge -q --quiet -p --patch -N --intent-to-add "
                              "--no-refresh --refresh --no-recurse-submodules --pathspec-file-nul",
                        valued="--pathspec-from-file", optional="--recurse-submodules")
        parsed = _parse(words, spec)
        if not self.parsed_ok(call, parsed, "git reset"):
            return
        if not parsed.has("--hard", "--merge", "--keep"):
            self.unguard(call.part)
            return
        if not self.git_args_static(call, "reset", parsed.positionals):
            return
        ref = parsed.positionals[0].value if parsed.positionals else "HEAD"
        mode = None if parsed.has("--hard") else "merge" if parsed.has("--merge") else "keep"
        self.emit(call, "git.reset_hard", {"ref": ref, "mode": mode, **self.git_where(call, repo)}, target=ref,
                  reason=f"git reset --hard {ref}")

    def git_clean(self, call: _Call, repo: _Repo, words: list[_Word]) -> None:
        spec = _Spec.of(flags="-d -f --force -x -X -n --dry-run -q --quiet -i --interactive",
                        valued="-e --exclude")
        parsed = _parse(words, spec)
        if not self.parsed_ok(call, parsed, "git clean"):
            return
        if parsed.has("-n", "--dry-run"):
            return
        if not self.git_args_static(call, "clean", parsed.positionals):
            return
        paths = []
        for word in parsed.positionals:
            absolute = self.absolute(call.ctx, word.value or "", follow=False)
            paths.append(self.represent(absolute)[0] if absolute else word.value or "")
        self.emit(call, "git.clean", {"directories": parsed.has("-d"), "ignored": parsed.has("-x", "-X"),
                                       "only_ignored": True if parsed.has("-X") else None,
                                       "paths": paths or None, **self.git_where(call, repo)},
                  target=" ".join(paths) or None, reason="git clean removes untracked files")

    def git_rebase(self, call: _Call, repo: _Repo, words: list[_Word]) -> None:
        spec = _Spec.of(
            flags="-i --interactive --autosquash --no-autosquash --autostash --no-autostash --keep-base --root -f "
                  "--force-rebase --no-ff --fork-point --no-fork-point -m --merge --apply -q --quiet -v --verbose "
                  "--stat -n --no-stat --no-verify --verify --signoff --committer-date-is-author-date "
                  "--reset-author-date --ignore-date --ignore-whitespace --reapply-cherry-picks "
                  "--no-reapply-cherry-picks --update-refs --no-update-refs -k --keep-empty --no-keep-empty "
                  "--rerere-autoupdate --no-rerere-autoupdate -r --no-rebase-merges --no-gpg-sign --continue "
                  "--abort --skip --quit --edit-todo --show-current-patch",
            valued="--onto -s --strategy -X --strategy-option -x --exec --whitespace",
            optional="--rebase-merges --gpg-sign -S --empty -C")
        parsed = _parse(words, spec)
        if not self.parsed_ok(call, parsed, "git rebase"):
            return
        for body in parsed.values("-x", "--exec"):
            if body is None:
                self.fail("the command of `git rebase --exec` is only known at run time", call.part)
                return
            inner = call.ctx.copy()
            inner.depth += 1
            self.analyze_text(body, inner, call.part)
        if parsed.has("--edit-todo") or (parsed.has("-i", "--interactive") and not parsed.has(
                "--continue", "--abort", "--skip", "--quit", "--show-current-patch")
                and not self.git_editor_does_nothing(call, repo, todo_list=True)):
            self.interactive(call, "an editor on the rebase todo list (GIT_SEQUENCE_EDITOR=: takes the list "
                                   "as generated, e.g. for --autosquash)")
        if parsed.has("--continue", "--abort", "--skip", "--quit", "--edit-todo", "--show-current-patch"):
            self.unguard(call.part)
            return
        if not self.git_args_static(call, "rebase", parsed.positionals):
            return
        positionals = [w.value or "" for w in parsed.positionals]
        upstream = positionals[0] if positionals and not parsed.has("--root") else None
        branch = positionals[1] if len(positionals) > 1 else (positionals[0] if parsed.has("--root") and positionals
                                                               else None)
        onto = parsed.value("--onto") or upstream
        if onto is None and parsed.has("--root"):
            onto = "--root"
        if onto is None:
            _, why = self.head(repo)
            found = self.git_query(repo, "rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{upstream}")
            if not found:
                self.fail(f"git rebase without an upstream: the current branch has none ({why or 'no upstream'})",
                          call.part)
                return
            onto = found
        if branch is None:
            branch, _ = self.head(repo)
        else:
            self.set_head(repo, branch)
        self.emit(call, "git.rebase", {"onto": onto, "branch": branch,
                                        "interactive": True if parsed.has("-i", "--interactive") else None,
                                        "root": True if parsed.has("--root") else None},
                  target=onto, reason=f"git rebase onto {onto}")

    def git_worktree(self, call: _Call, repo: _Repo, words: list[_Word]) -> None:
        if not words or words[0].value is None:
            self.fail("git worktree without a static subcommand", call.part)
            return
        sub = words[0].value
        rest = words[1:]
        if sub == "list":
            return
        if sub == "add":
            spec = _Spec.of(flags="-f --force --detach --checkout --no-checkout --lock --guess-remote "
                                  "--no-guess-remote --track --no-track --orphan -q --quiet --relative-paths "
                                  "--no-relative-paths",
                            valued="-b -B --reason")
            parsed = _parse(rest, spec)
            if not self.parsed_ok(call, parsed, "git worktree add"):
                return
            if not parsed.positionals or not self.git_args_static(call, "worktree add", parsed.positionals):
                return
            path_word = parsed.positionals[0]
            commit = parsed.positionals[1].value if len(parsed.positionals) > 1 else None
            self.write_paths(call, [path_word], via="git worktree add", extra={"worktree": True})
            new = parsed.value("-b", "-B")
            if new is None and commit is None and not parsed.has("--detach"):
                candidate = (path_word.value or "").rstrip("/").rsplit("/", 1)[-1]
                if candidate and not self.branch_exists(repo, candidate):
                    new = candidate
            if new is not None:
                self.emit(call, "git.branch_create", {"name": new, "start_point": commit,
                                                       "force": True if parsed.has("-B") else None, "worktree": True},
                          target=new, reason=f"git worktree add creates branch {new}")
            return
        if sub == "remove":
            paths = [w for w in rest if (w.value or "x")[:1] != "-"]
            self.delete_paths(call, paths, recursive=True, via="git worktree remove")
            return
        if sub == "move":
            paths = [w for w in rest if (w.value or "x")[:1] != "-"]
            if len(paths) == 2:
                self.delete_paths(call, paths[:1], recursive=True, via="git worktree move")
                self.write_paths(call, paths[1:], via="git worktree move", extra={"worktree": True})
            return
        if sub in ("prune", "lock", "unlock", "repair"):
            self.unguard(call.part)
            return
        self.fail(f"git worktree {sub} is not known", call.part)

    def git_rm(self, call: _Call, repo: _Repo, words: list[_Word]) -> None:
        spec = _Spec.of(flags="-r -f --force -n --dry-run -q --quiet --cached --ignore-unmatch --sparse "
                              "--pathspec-file-nul",
                        valued="--pathspec-from-file")
        parsed = _parse(words, spec)
        if not self.parsed_ok(call, parsed, "git rm"):
            return
        if parsed.has("-n", "--dry-run", "--cached"):
            if parsed.has("--cached"):
                self.unguard(call.part)
            return
        if parsed.has("--pathspec-from-file"):
            self.fail("git rm --pathspec-from-file: the paths are read at run time", call.part)
            return
        self.delete_paths(call, parsed.positionals, recursive=parsed.has("-r"), via="git rm")

    def git_mv(self, call: _Call, repo: _Repo, words: list[_Word]) -> None:
        self.move(call, words, via="git mv", spec=_Spec.of(flags="-f --force -k -n --dry-run -v --verbose --sparse"))

    def git_update_ref(self, call: _Call, repo: _Repo, words: list[_Word]) -> None:
        values = [w.value for w in words]
        if any(v is None for v in values) or "--stdin" in values:
            self.fail("git update-ref with refs only known at run time", call.part)
            return
        plain = [v for v in values if v is not None and not v.startswith("-")]
        deleting = "-d" in values
        if not plain:
            return
        ref = plain[0]
        if not ref.startswith("refs/heads/"):
            self.unguard(call.part)
            return
        name = ref.removeprefix("refs/heads/")
        if self.ref_write_elsewhere(call, repo, name, plain[1] if len(plain) > 1 and not deleting else None,
                                    deleting=deleting, via="git update-ref"):
            return
        if deleting:
            self.emit(call, "git.branch_delete", {"branch": name, "force": True}, target=name,
                      reason=f"git update-ref -d {ref}")
        else:
            self.emit(call, "git.branch_create", {"name": name, "start_point": plain[1] if len(plain) > 1 else None,
                                                   "force": True}, target=name, reason=f"git update-ref {ref}")

    def ref_write_elsewhere(self, call: _Call, repo: _Repo, branch: str, source: str | None, *, deleting: bool,
                            via: str, force: bool = True) -> bool:
        """A branch moved or deleted in another repository than the workspace's own (``git
        --git-dir=../origin.git update-ref``, ``git -C ../origin.git branch -f``) is a push into
        it, with no fast-forward check: reported as the forced push it is (issue 25)."""
        top = self.repository_elsewhere(repo)
        if top is None:
            return False
        facts: dict[str, Any] = {"remote": top, "branch": branch, "force": True if force else None, "via": via}
        if deleting:
            facts["delete"] = True
        elif source is not None:
            facts["source"] = source
        self.emit(call, "git.push", facts, target=f"{top}/{branch}",
                  reason=f"{via} moves {branch} in another repository ({top}), as a push would")
        return True

    def repository_elsewhere(self, repo: _Repo) -> str | None:
        """The repository ``repo`` addresses when it is not the workspace's own, else None."""
        theirs = self.git_query(repo, "rev-parse", "--path-format=absolute", "--git-common-dir")
        if theirs is None:
            return None  # not a repository (yet): git refuses, or it is made in this same command
        ours = self.git_query(_Repo(self.workspace), "rev-parse", "--path-format=absolute", "--git-common-dir")
        if ours is not None and os.path.realpath(ours) == os.path.realpath(theirs):
            return None
        top = os.path.realpath(theirs)
        return os.path.dirname(top) if os.path.basename(top) == ".git" else top

    # -- files --


_GIT_HANDLERS: dict[str, Callable[[_Git, _Call, _Repo, list[_Word]], None]] = {
    "push": _Git.git_push,
    "apply": lambda self, call, repo, rest: self.git_apply(call, repo, rest),
    "checkout": _Git.git_checkout,
    "switch": _Git.git_switch,
    "restore": _Git.git_restore,
    "branch": _Git.git_branch,
    "reset": _Git.git_reset,
    "clean": _Git.git_clean,
    "rebase": _Git.git_rebase,
    "worktree": _Git.git_worktree,
    "rm": _Git.git_rm,
    "mv": _Git.git_mv,
    "update-ref": _Git.git_update_ref,
    "config": _Git.git_config_command,
}
