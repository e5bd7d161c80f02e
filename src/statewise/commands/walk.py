"""The bash-grammar walk (tree-sitter): every simple command a command string contains."""

from __future__ import annotations

import functools
import itertools
import re
from typing import Any

from statewise.commands.base import MAX_DEPTH, _Base
from statewise.commands.heredocs import hoist_heredocs
from statewise.commands.rules import DYNAMIC
from statewise.commands.tables import _DANGEROUS_ENV, _DEV_FILES, _EDITOR_ENV, _INDEX_ENV, _NO_OP_EDITORS
from statewise.commands.words import (
    _REDIRECTS,
    _SEPARATOR_GAP,
    _STATEMENTS,
    _Call,
    _Ctx,
    _evaluate,
    _first_broken,
    _has_expansion,
    _iter_type,
    _node_text,
    _parser,
    _redirect_streams,
    _Word,
)

# A `pwd` the command defines for itself (a function or an alias) prints what it likes.
_OWN_PWD = re.compile(r"\bpwd\s*\(\s*\)|\bfunction\s+pwd\b|\balias\s+pwd\b")


class _Walk(_Base):
    """The bash-grammar walk: statements, words, redirects, simple commands."""

    def analyze_text(self, text: str, ctx: _Ctx, part: str) -> None:
        if ctx.depth > MAX_DEPTH:
            self.fail(f"shell bodies nested deeper than {MAX_DEPTH} levels", part)
            return
        source = text.encode("utf-8", "surrogateescape")
        tree = _parser().parse(source)
        if tree.root_node.has_error:
            # Valid bash the grammar rejects around here-documents (two on one line, a pipe
            # after a redirect after one): read with the bodies as here-strings, as bash reads them.
            hoisted = hoist_heredocs(text)
            if hoisted is not None:
                rewritten = hoisted.encode("utf-8", "surrogateescape")
                second = _parser().parse(rewritten)
                if not second.root_node.has_error:
                    source, tree = rewritten, second
        if tree.root_node.has_error:
            broken = _first_broken(tree.root_node)
            where = _node_text(broken, source).strip() if broken is not None else ""
            what = f"is missing `{broken.type}`" if broken is not None and broken.is_missing else \
                f"cannot parse `{where[:200]}`" if where else "cannot parse the command"
            self.fail(f"the shell grammar {what}", part if ctx.depth else text)
        self.walk(tree.root_node, source, ctx)

    def walk(self, node: Any, source: bytes, ctx: _Ctx) -> None:
        kind = node.type
        if node.is_error or node.is_missing or kind == "ERROR":
            return  # reported once, before the walk (analyze_text)
        if kind == "command":
            self.simple_command(node, source, ctx)
        elif kind == "redirected_statement":
            body = outer = node.child_by_field_name("body")
            while body is not None and body.type == "list" and body.named_children:
                # tree-sitter-bash hangs the redirect of `cd config && echo x > f` on the whole
                # list; bash gives it to the last command, after the `cd` (issue 25: `pushd
                # config >/dev/null && : > prod.yaml` wrote config/prod.yaml unseen).
                *first, body = body.named_children
                for child in first:
                    self.walk(child, source, ctx)
            streams = (ctx.stdin, ctx.stdout, ctx.stdin_text)
            for child in node.children:
                if child.type in _REDIRECTS:
                    self.redirect(child, source, ctx)
                    _redirect_streams(child, source, ctx)
                elif body is not None and child.id in (body.id, outer.id):
                    continue
                elif child.is_named:
                    self.walk(child, source, ctx)
            if body is not None:
                self.walk(body, source, ctx)
            ctx.stdin, ctx.stdout, ctx.stdin_text = streams
        elif kind in ("variable_assignment", "variable_assignments", "declaration_command"):
            self.assignments(node, source, ctx)
        elif kind in ("subshell", "function_definition"):
            inner = ctx.copy()
            for child in node.named_children:
                self.walk(child, source, inner)
        elif kind == "pipeline":
            stages = [c for c in node.named_children if c.type not in _REDIRECTS]
            for child in node.named_children:
                inner = ctx.copy()
                if child.type not in _REDIRECTS:
                    index = next(i for i, stage in enumerate(stages) if stage.id == child.id)
                    inner.stdin = "pipe" if index > 0 else ctx.stdin
                    inner.stdout = "pipe" if index < len(stages) - 1 else ctx.stdout
                    if index > 0:
                        # what a plain `echo` of static words prints is known (xargs reads it)
                        inner.stdin_text = _echoed(stages[index - 1], source, ctx.env)
                self.walk(child, source, inner)
        elif kind in _STATEMENTS:
            for child in node.named_children:
                self.walk(child, source, ctx)
        elif kind in _REDIRECTS:
            self.redirect(node, source, ctx)
        elif kind in ("comment", "heredoc_start", "heredoc_end", "variable_name", "word"):
            return
        elif kind in ("command_substitution", "process_substitution"):
            inner = ctx.copy()
            for child in node.named_children:
                self.walk(child, source, inner)
        else:
            self.scan(node, source, ctx)

    def scan(self, node: Any, source: bytes, ctx: _Ctx) -> None:
        """Find what runs inside a word, an expression or a heredoc: substitutions."""
        if node.is_error or node.is_missing or node.type == "ERROR":
            self.walk(node, source, ctx)
            return
        if node.type in ("command_substitution", "process_substitution"):
            self.walk(node, source, ctx)
            return
        if node.type in _STATEMENTS:
            self.walk(node, source, ctx)
            return
        for child in node.children:
            self.scan(child, source, ctx)

    def assignments(self, node: Any, source: bytes, ctx: _Ctx) -> None:
        part = _node_text(node, source)
        self.scan_children(node, source, ctx)
        # `X=1; ...`: the statement is the assignment itself; `export X=1`, `X=1 Y=2`: its children.
        # (A prefix assignment `X=1 cmd`, or one inside `export`, is scanned too: its parent says so.)
        statement = node.type == "variable_assignment" and (
            node.parent is None or node.parent.type not in ("command", "declaration_command", "variable_assignments"))
        own = [node] if statement else list(_iter_type(node, "variable_assignment"))
        for assignment in own:
            name_node = assignment.child_by_field_name("name")
            value_node = assignment.child_by_field_name("value")
            name = _node_text(name_node, source) if name_node is not None else ""
            value = _evaluate(value_node, source, ctx.env, self.working_directory(ctx)).value if value_node is not None else ""
            self.set_env(ctx.env, name, value, part, ctx)

    def working_directory(self, ctx: _Ctx) -> str | None:
        """The directory ``$PWD`` and ``$(pwd)`` print at this point: the walk's cwd (bash's own
        value, kept by ``cd``), unless the command sets PWD itself, defines a ``pwd`` of its
        own, or went somewhere the walk cannot follow."""
        if ctx.cwd is None or ctx.env.get("PWD") != self.base_env.get("PWD") or self.defines_own_pwd:
            return None
        return str(ctx.cwd)

    @functools.cached_property
    def defines_own_pwd(self) -> bool:
        """Whether the command defines a ``pwd`` of its own: searched once per command, not per
        word (a script read inside a call can be thousands of lines)."""
        return _OWN_PWD.search(self.command) is not None

    def scan_children(self, node: Any, source: bytes, ctx: _Ctx) -> None:
        for child in node.children:
            self.scan(child, source, ctx)

    def set_env(self, env: dict[str, str], name: str, value: str | None, part: str, ctx: _Ctx) -> None:
        if _DANGEROUS_ENV.match(name) and not (name in _EDITOR_ENV and value in _NO_OP_EDITORS):
            self.fail(f"setting {name} makes later commands run code StateWise cannot see", part)
        if value is None:
            env.pop(name, None)
            if name in ("PATH", "HOME", "GIT_DIR", "GIT_WORK_TREE", "VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT") or \
                    name in _INDEX_ENV or name in self.rules.env_vars:
                env[name] = DYNAMIC  # known to be set, to a value only known at run time
            return
        env[name] = value

    def redirect(self, node: Any, source: bytes, ctx: _Ctx) -> None:
        part = _node_text(node, source)
        if node.type == "heredoc_redirect":
            # The grammar nests what follows the heredoc's start on its line (`| sh`, `&& rm x`,
            # `> file`) inside the redirect: walk all of it.
            for child in node.children:
                if child.type in _REDIRECTS:
                    self.redirect(child, source, ctx)
                elif child.type == "heredoc_body":
                    self.scan(child, source, ctx)
                elif child.type in ("heredoc_start", "heredoc_end", "heredoc_content"):
                    continue
                elif child.type == "pipeline":
                    # `cat <<EOF | python -`: the stages after the heredoc's line read a pipe; from
                    # a plain `cat` of a static here-document, the here-document itself.
                    inner = ctx.copy()
                    inner.stdin = "here" if self.cat_of_static_heredoc(node, source) else "pipe"
                    self.walk(child, source, inner)
                elif child.is_named or child.is_error or child.is_missing:
                    self.walk(child, source, ctx)
            return
        if node.type == "herestring_redirect":
            self.scan_children(node, source, ctx)
            return
        operator = next((c.type for c in node.children if not c.is_named), "")
        destination = node.child_by_field_name("destination")
        if destination is None:
            named = [c for c in node.named_children if c.type != "file_descriptor"]
            destination = named[-1] if named else None
        if destination is None:
            return
        self.scan(destination, source, ctx)
        word = _evaluate(destination, source, ctx.env, self.working_directory(ctx))
        writes = operator in (">", ">>", "&>", "&>>", ">|", "<>")
        if operator in (">&", "&>") and word.value is not None and (word.value.isdigit() or word.value == "-"):
            writes = False
        elif operator == ">&":
            writes = True
        if not writes:
            return
        if word.value is not None and _DEV_FILES.match(word.value):
            return
        self.write_paths(_Call([_Word.literal("redirect"), word], ctx.env, ctx, part), [word], via="redirect")

    def cat_of_static_heredoc(self, redirect: Any, source: bytes) -> bool:
        """Whether ``redirect`` (a heredoc_redirect) feeds a plain ``cat`` a here-document
        with no expansions, so what cat prints is known from the command."""
        statement = redirect.parent
        body = statement.child_by_field_name("body") if statement is not None else None
        if body is None or body.type != "command" or _node_text(body, source).strip() not in ("cat", "cat -"):
            return False
        return not any(_has_expansion(c) for c in redirect.children if c.type == "heredoc_body")

    # -- simple commands --

    def simple_command(self, node: Any, source: bytes, ctx: _Ctx) -> None:
        part = _node_text(node, source)
        children = list(node.children)
        for before, after in itertools.pairwise(children):
            gap = source[before.end_byte:after.start_byte].decode("utf-8", "replace").replace("\\\n", "")
            if not _SEPARATOR_GAP.match(gap):
                self.fail(f"the shell grammar and bash may split `{part.strip()}` differently", part)
                return
        env = dict(ctx.env)
        words: list[_Word] = []
        streams = (ctx.stdin, ctx.stdout, ctx.stdin_text)
        for child in children:
            if child.type in _REDIRECTS:
                _redirect_streams(child, source, ctx)
        call_ctx_streams = (ctx.stdin, ctx.stdout, ctx.stdin_text)
        ctx.stdin, ctx.stdout, ctx.stdin_text = streams
        for index, child in enumerate(children):
            field_name = node.field_name_for_child(index)
            if child.type == "variable_assignment":
                self.scan(child, source, ctx)
                name_node = child.child_by_field_name("name")
                value_node = child.child_by_field_name("value")
                value = _evaluate(value_node, source, ctx.env, self.working_directory(ctx)).value if value_node is not None else ""
                self.set_env(env, _node_text(name_node, source) if name_node is not None else "", value, part, ctx)
            elif child.type in _REDIRECTS:
                self.redirect(child, source, ctx)
            elif field_name == "name":
                self.scan(child, source, ctx)
                inner = child.named_children[0] if child.named_children else child
                words.append(_evaluate(inner, source, ctx.env, self.working_directory(ctx)))
            elif field_name == "argument" or (child.is_named and child.type != "comment"):
                self.scan(child, source, ctx)
                words.append(_evaluate(child, source, ctx.env, self.working_directory(ctx)))
        if not words:
            ctx.env.update(env)
            return
        ctx.stdin, ctx.stdout, ctx.stdin_text = call_ctx_streams
        try:
            self.dispatch(_Call(words, env, ctx, part))
        finally:
            ctx.stdin, ctx.stdout, ctx.stdin_text = streams


def _echoed(node: Any, source: bytes, env: dict[str, str]) -> str | None:
    """What ``node`` prints when it is a plain ``echo`` of static words (no redirect, no glob,
    no option but ``-n``), or None."""
    if node.type != "command" or any(c.type in _REDIRECTS or c.type == "variable_assignment" for c in node.children):
        return None
    words = [_evaluate(c.named_children[0] if c.type == "command_name" and c.named_children else c, source, env)
             for c in node.named_children if c.type != "comment"]
    if not words or words[0].value != "echo" or any(w.value is None or w.has_glob for w in words):
        return None
    values = [w.value or "" for w in words[1:]]
    while values and values[0] == "-n":
        values = values[1:]
    if values and values[0].startswith("-"):
        return None  # -e / -E: escapes, not read here
    return " ".join(values) + "\n"
