"""Add StateWise's hooks to an agent's settings file, and take them out again.

Installing is idempotent and keeps every hook already there; uninstalling removes only the
entries whose command is a ``statewise hook`` command. A settings file that is not valid JSON
is reported and left untouched; a new file is written to a temporary name and renamed, so a
crash never leaves a half-written settings file.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from statewise.errors import InputError

__all__ = ["AGENTS", "AgentHooks", "install_hooks", "settings_path", "uninstall_hooks"]

#: Every command StateWise installs starts with this, which is how uninstall finds its own.
COMMAND_PREFIX = "statewise hook"


@dataclass(frozen=True, slots=True)
class AgentHooks:
    """Where an agent keeps its hooks and which events and tools StateWise listens to."""

    name: str
    project_file: str  # relative to the project root
    user_file: str  # relative to the home directory
    pre_event: str
    post_event: str
    pre_matcher: str
    post_matcher: str

    def entries(self, command: str) -> dict[str, dict[str, Any]]:
        return {
            self.pre_event: {"matcher": self.pre_matcher,
                             "hooks": [{"type": "command", "command": command, "timeout": 60}]},
            self.post_event: {"matcher": self.post_matcher,
                              "hooks": [{"type": "command", "command": f"{command} --event post-tool-use",
                                         "timeout": 30}]},
        }


AGENTS = {
    "claude-code": AgentHooks(
        name="claude-code", project_file=".claude/settings.json", user_file=".claude/settings.json",
        pre_event="PreToolUse", post_event="PostToolUse",
        pre_matcher="Bash|Write|Edit|MultiEdit|NotebookEdit", post_matcher="Bash",
    ),
    "codex": AgentHooks(
        name="codex", project_file=".codex/hooks.json", user_file=".codex/hooks.json",
        pre_event="PreToolUse", post_event="PostToolUse", pre_matcher="Bash|apply_patch", post_matcher="Bash",
    ),
    "gemini": AgentHooks(
        name="gemini", project_file=".gemini/settings.json", user_file=".gemini/settings.json",
        pre_event="BeforeTool", post_event="AfterTool",
        pre_matcher="run_shell_command|write_file|replace", post_matcher="run_shell_command",
    ),
}


def _agent(name: str) -> AgentHooks:
    try:
        return AGENTS[name]
    except KeyError:
        raise InputError(f"unknown agent {name!r}; expected one of {', '.join(AGENTS)}") from None


def settings_path(agent: str, *, project: str | Path | None = None, user: bool = False) -> Path:
    """The settings file for ``agent``: the project's (default) or the user's."""
    spec = _agent(agent)
    if user:
        return Path.home() / spec.user_file
    return Path(project or os.getcwd()) / spec.project_file


def _load(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "{}")
    except json.JSONDecodeError as error:
        raise InputError(f"{path}: not valid JSON (line {error.lineno}, column {error.colno}); left untouched") from None
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected a JSON object at the top; left untouched")
    hooks = data.get("hooks", {})
    if not isinstance(hooks, dict):
        raise InputError(f"{path}: 'hooks' must be an object; left untouched")
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            raise InputError(f"{path}: hooks.{event} must be a list; left untouched")
    return data


def _write(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(data, out, indent=2)
            out.write("\n")
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _is_ours(hook: Any) -> bool:
    return isinstance(hook, dict) and str(hook.get("command", "")).startswith(COMMAND_PREFIX)


def install_hooks(agent: str, *, project: str | Path | None = None, user: bool = False,
                  command: str | None = None) -> tuple[Path, bool]:
    """Add the pre- and post-tool hooks. Returns (settings file, whether it changed)."""
    spec = _agent(agent)
    path = settings_path(agent, project=project, user=user)
    data = _load(path)
    hooks = data.setdefault("hooks", {})
    changed = False
    for event, entry in spec.entries(command or f"{COMMAND_PREFIX} {agent}").items():
        groups = hooks.setdefault(event, [])
        if entry not in groups:
            # Replace an older StateWise entry for this event instead of stacking a second one.
            kept = [g for g in groups if not (isinstance(g, dict) and any(_is_ours(h) for h in g.get("hooks", [])))]
            hooks[event] = [*kept, entry]
            changed = True
    if changed:
        _write(path, data)
    return path, changed


def uninstall_hooks(agent: str, *, project: str | Path | None = None, user: bool = False) -> tuple[Path, int]:
    """Remove StateWise's hook entries only. Returns (settings file, entries removed)."""
    _agent(agent)
    path = settings_path(agent, project=project, user=user)
    if not path.exists():
        return path, 0
    data = _load(path)
    hooks = data.get("hooks", {})
    removed = 0
    for event in list(hooks):
        kept_groups = []
        for group in hooks[event]:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                remaining = [h for h in group["hooks"] if not _is_ours(h)]
                removed += len(group["hooks"]) - len(remaining)
                if not remaining:
                    continue
                group = {**group, "hooks": remaining}
            kept_groups.append(group)
        if kept_groups:
            hooks[event] = kept_groups
        else:
            del hooks[event]
    if removed:
        _write(path, data)
    return path, removed
