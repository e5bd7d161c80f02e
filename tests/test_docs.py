"""The documentation keeps up with the code: every CLI command is documented."""

from __future__ import annotations

import re
from pathlib import Path

import click

from statewise.cli import main

ROOT = Path(__file__).resolve().parent.parent


def _commands(group: click.Group, prefix: str = "statewise") -> list[str]:
    found = []
    for name, command in sorted(group.commands.items()):
        path = f"{prefix} {name}"
        if isinstance(command, click.Group):
            found.extend(_commands(command, path))
        else:
            found.append(path)
    return found


def test_every_cli_command_has_a_section_in_docs_cli():
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## `([^`]+)`", text, flags=re.MULTILINE)
    documented = set(headings)
    missing = [c for c in _commands(main) if not any(h == c or h.startswith(c + " ") for h in documented)]
    assert missing == [], f"undocumented commands: {missing}"


def test_every_command_has_help_text():
    for path in _commands(main):
        command: click.Command = main
        for part in path.split()[1:]:
            command = command.commands[part]  # type: ignore[attr-defined]
        assert command.help, f"{path} has no help text"


def test_readme_has_exactly_two_quick_start_commands_and_ci_runs_the_test_one():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    quick_start = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"```bash\n(.+?)\n```", quick_start, flags=re.DOTALL)
    assert len(commands) == 2
    # the first runs the main job, the benchmark; the demo stays documented outside the quick start
    assert commands[0].strip() == "python -m pip install -e . && statewise bench"
    rest = readme.replace(quick_start, "")
    assert "statewise demo" in rest and "statewise bench" in quick_start
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert commands[1].strip() in ci


def test_every_mcp_tool_is_documented(tmp_path):
    import anyio

    from statewise.integrations.mcp_server import build_server

    server = build_server(store_location=str(tmp_path / "store.db"))
    names = [tool.name for tool in anyio.run(server.list_tools)]
    text = (ROOT / "docs" / "mcp.md").read_text(encoding="utf-8")
    headings = " ".join(re.findall(r"^### (.+)$", text, flags=re.MULTILINE))
    assert names and [name for name in names if f"`{name}`" not in headings] == []
