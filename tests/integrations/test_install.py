"""statewise install / uninstall: idempotent, and never touching other hooks."""

from __future__ import annotations

import json

import pytest

from statewise.errors import InputError
from statewise.integrations.install import AGENTS, install_hooks, settings_path, uninstall_hooks

THEIRS = {"type": "command", "command": "prettier --write", "timeout": 5}


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_install_is_idempotent_and_keeps_other_hooks(agent, tmp_path):
    spec = AGENTS[agent]
    path = settings_path(agent, project=tmp_path)
    path.parent.mkdir(parents=True)
    existing = {"model": "keep-me", "hooks": {spec.pre_event: [{"matcher": "Bash", "hooks": [THEIRS]}],
                                              "Stop": [{"hooks": [THEIRS]}]}}
    path.write_text(json.dumps(existing))

    written, changed = install_hooks(agent, project=tmp_path)
    assert written == path and changed
    once = json.loads(path.read_text())
    assert once["model"] == "keep-me" and once["hooks"]["Stop"] == [{"hooks": [THEIRS]}]
    pre = once["hooks"][spec.pre_event]
    assert pre[0] == {"matcher": "Bash", "hooks": [THEIRS]}
    assert pre[1]["hooks"][0]["command"] == f"statewise hook {agent}"
    assert once["hooks"][spec.post_event][0]["hooks"][0]["command"] == f"statewise hook {agent} --event post-tool-use"

    assert install_hooks(agent, project=tmp_path) == (path, False)
    assert json.loads(path.read_text()) == once

    removed_path, removed = uninstall_hooks(agent, project=tmp_path)
    assert removed == 2
    assert json.loads(path.read_text()) == existing
    assert uninstall_hooks(agent, project=tmp_path)[1] == 0


def test_install_creates_a_missing_settings_file(tmp_path):
    path, changed = install_hooks("claude-code", project=tmp_path)
    assert changed and path == tmp_path / ".claude" / "settings.json"
    assert set(json.loads(path.read_text())["hooks"]) == {"PreToolUse", "PostToolUse"}


def test_a_changed_command_replaces_the_old_entry_instead_of_stacking(tmp_path):
    install_hooks("gemini", project=tmp_path)
    install_hooks("gemini", project=tmp_path, command="statewise hook gemini --store /tmp/s.db")
    before = json.loads(settings_path("gemini", project=tmp_path).read_text())["hooks"]["BeforeTool"]
    assert len(before) == 1 and before[0]["hooks"][0]["command"].endswith("/tmp/s.db")


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '{"hooks": []}', '{"hooks": {"PreToolUse": {}}}'])
def test_malformed_settings_are_reported_and_left_untouched(tmp_path, content):
    path = settings_path("claude-code", project=tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text(content)
    with pytest.raises(InputError) as info:
        install_hooks("claude-code", project=tmp_path)
    assert str(path) in str(info.value)
    assert path.read_text() == content


def test_unknown_agent_is_an_input_error(tmp_path):
    with pytest.raises(InputError):
        install_hooks("cursor", project=tmp_path)
