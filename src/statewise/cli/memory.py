"""``statewise memory import/check/context``: the agents' memory files (docs/memory.md).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from statewise import __version__
from statewise.cli.context import (
    Context,
    SentenceGroup,
    console,
    emit_json,
    handled,
    project_option,
)
from statewise.errors import InputError

# --- memory files (statewise memory import/check/context; docs/memory.md) -----------------------



@click.group(cls=SentenceGroup)
def memory() -> None:
    """Import and check the agents' memory files (CLAUDE.md, AGENTS.md, GEMINI.md, ...)."""


_memory_options = [
    project_option("cwd", help="The workspace (default: here)."),
    click.option("--home", type=click.Path(file_okay=False),
                 help="Where user-level and auto-memory files live (default: $HOME)."),
    click.option("--agent", "agents", multiple=True, type=click.Choice(["claude", "codex", "gemini", "cursor"]),
                 help="Only this agent's files (repeatable; default: all)."),
]


def _with_memory_options(command: Callable[..., Any]) -> Callable[..., Any]:
    for option in reversed(_memory_options):
        command = option(command)
    return command


@memory.command("import")
@_with_memory_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
@handled
def memory_import(obj: Context, cwd: str | None, home: str | None, agents: tuple[str, ...], as_json: bool) -> None:
    """Turn the memory files each agent loads into typed records (idempotent; edits supersede, removals retract)."""
    from statewise.memory import import_memory

    workspace = Path(cwd or os.getcwd()).resolve()
    report = import_memory(workspace, obj.store, obj.contract, home=home, agents=agents or None)
    if as_json:
        emit_json({"files": [{"file": f.relpath, "agent": f.agent, "kind": f.kind, "authority": f.authority.value,
                               "scope": f.scope, "blob": f.blob} for f in report.files],
                    "items": [{"action": i.action, "key": i.key, "scope": i.scope, "value": i.value, "file": i.file,
                               "line": i.line, "record_id": i.record_id, "detail": i.detail} for i in report.items],
                    "summary": report.summary})
        return
    for file in report.files:
        blob = f" blob {file.blob[:12]}" if file.blob else " (not committed)"
        console.print(f"{file.relpath}: {file.agent} {file.kind}, {file.authority.value}, {file.scope}{blob}",
                      highlight=False, markup=False)
    for item in report.items:
        if item.action != "unchanged":
            console.print(f"  {item.action}: {item.file}:{item.line} {item.key} = {json.dumps(item.value)}"
                          + (f" ({item.detail})" if item.detail else ""), highlight=False, markup=False, soft_wrap=True)
    console.print(", ".join(f"{value} {name}" for name, value in report.summary.items()), highlight=False, markup=False)


@memory.command("check")
@_with_memory_options
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--sarif", "sarif_path", type=click.Path(dir_okay=False), help="Also write a SARIF 2.1.0 log here.")
@click.option("--no-store", is_flag=True, help="Only check: do not import into or record verdicts in the store.")
@click.option("--strict", is_flag=True, help="Exit non-zero for unresolved facts too.")
@click.option("--verbose", "-v", is_flag=True, help="Also list the valid facts.")
@click.option("--diff", "show_diff", is_flag=True, help="Print the proposed corrections as unified diffs.")
@click.option("--apply", "apply_fixes", is_flag=True,
              help="Write the corrections as the project's write-back policy allows (never, ask, auto).")
@click.option("--yes", is_flag=True, help="With --apply: approve every edit (otherwise asked on a terminal).")
@click.pass_obj
@handled
def memory_check(obj: Context, cwd: str | None, home: str | None, agents: tuple[str, ...], as_json: bool,
                 sarif_path: str | None, no_store: bool, strict: bool, verbose: bool, show_diff: bool,
                 apply_fixes: bool, yes: bool) -> None:
    """Verify every fact in the memory files against the live workspace; exit 1 when one is defective."""
    from statewise.memory import (
        apply_edits,
        check_memory,
        import_memory,
        propose_edits,
        read_policy,
        render_human,
        to_json,
        to_sarif,
    )
    from statewise.workspace import git_output

    workspace = Path(cwd or os.getcwd()).resolve()
    store = None
    if not no_store:
        store = obj.store
        import_memory(workspace, store, obj.contract, home=home, agents=agents or None)
    report = check_memory(workspace, obj.contract, store=store, home=home, agents=agents or None)
    if sarif_path:
        Path(sarif_path).write_text(json.dumps(to_sarif(report, version=__version__), indent=2) + "\n",
                                    encoding="utf-8")
    edits = propose_edits(report) if (show_diff or apply_fixes) else []
    results = []
    if apply_fixes:
        try:
            policy = read_policy(git_output(workspace, "rev-parse", "--show-toplevel") or workspace)
        except ValueError as error:
            raise InputError(str(error)) from None

        def approve(edit: Any) -> bool:
            if yes:
                return True
            if not sys.stdin.isatty():
                return False
            click.echo(edit.diff(), err=True)
            return click.confirm(f"Write this correction into {edit.file.relpath}?", default=False, err=True)

        results = apply_edits(edits, policy, store=store, approve=approve)
    if as_json:
        data = to_json(report)
        if show_diff or apply_fixes:
            data["edits"] = [{"file": e.file.relpath, "line": e.line, "old": e.old, "new": e.new, "diff": e.diff()}
                             for e in edits]
            data["applied"] = [{"file": r.edit.file.relpath, "line": r.edit.line, "applied": r.applied,
                                "reason": r.reason} for r in results]
        emit_json(data)
    else:
        click.echo(render_human(report, verbose=verbose))
        if show_diff:
            for edit in edits:
                click.echo(edit.diff(), nl=False)
        for result in results:
            state = "applied" if result.applied else "not applied"
            click.echo(f"{result.edit.file.relpath}:{result.edit.line}: {state} ({result.reason})")
    if not report.ok or (strict and report.summary["unresolved"]):
        sys.exit(1)


@memory.command("context")
@project_option("cwd", help="The workspace (default: here).")
@click.option("--home", type=click.Path(file_okay=False), help="Where user-level files live (default: $HOME).")
@click.option("--budget", type=click.IntRange(min=1), default=None, help="Token budget (default: 400).")
@click.option("--no-check", is_flag=True, help="Report only what the store already knows; verify nothing.")
@click.option("--stats", is_flag=True, help="Also print its size (bytes, estimated tokens) and time to stderr.")
@click.pass_obj
@handled
def memory_context(obj: Context, cwd: str | None, home: str | None, budget: int | None, no_check: bool,
                   stats: bool) -> None:
    """Print the note a starting session gets: wrong lines, corrections, facts and whether each was re-checked."""
    import time

    from statewise.memory import DEFAULT_TOKEN_BUDGET, estimate_tokens, session_context

    workspace = Path(cwd or os.getcwd()).resolve()
    started = time.monotonic()
    text = session_context(workspace, obj.store_location, budget or DEFAULT_TOKEN_BUDGET, contract=obj.contract,
                           home=home, check=not no_check)
    elapsed = time.monotonic() - started
    click.echo(text)
    if stats:
        click.echo(f"{len(text.encode('utf-8'))} bytes, {estimate_tokens(text)} estimated tokens "
                   f"(budget {budget or DEFAULT_TOKEN_BUDGET}), {len(text.splitlines())} lines, {elapsed:.2f} s",
                   err=True)

