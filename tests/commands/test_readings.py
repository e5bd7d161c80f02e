"""Readings (issue 10 item 6): what the built-in readers (git, pip, npm, the file tools) report
is mapped to operations by the contract's ``commands:`` rules, and a contract adds its own
operations beside them, through the hook, with no Python change.

Real git repositories with a real bare origin and a second remote, a contract file that
extends the built-in one, a SQLite store, and Claude Code's PreToolUse JSON sent to
``run_hook``.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from statewise.commands import UNRESOLVED, analyze_command
from statewise.commands.rules import CommandRules
from statewise.contract import ContractError, builtin_contract, load_contract, load_contract_text
from statewise.contract.readings import READINGS
from statewise.integrations.hooks import run_hook
from statewise.sandbox import git
from tests.commands.test_contract_commands import hook

EXTENSION = """\
name: release
version: 1
extends: coding
operations:
  deploy.run:
    tool: deploy
    risk: critical
    slots:
      remote: {type: string}
      branch: {type: string}
      script: {type: string}
      command: {type: string}
  release.tag:
    tool: git
    risk: high
    slots:
      tag: {type: string, required: true}
      command: {type: string}
commands:
  # A push to the heroku remote deploys: however the remote is chosen (named, or a bare push
  # whose upstream is heroku), the git reader reports it, and this rule adds deploy.run.
  heroku-deploy:
    reading: git.push
    when: {remote: heroku}
    operation: deploy.run
  script-deploy:
    reading: npm.run_script
    when: {script: "deploy|deploy:*"}
    operation: deploy.run
  # git tag is a program the normalizer reads itself (it is unguarded there): this rule adds
  # release.tag beside that reading.
  git-tag:
    program: git
    subcommand: [tag]
    operation: release.tag
    flags: {-a: {}, -s: {}, -m: {value: true}}
    positionals: [tag]
invariants:
  - name: deploys_go_through_the_pipeline
    when: action.operation == "deploy.run"
    check: "false"
    message: Deploys go through the release pipeline, not an agent's push.
  - name: release_tags_are_versions
    when: action.operation == "release.tag"
    check: action.args.tag.matches("^v[0-9]+[.][0-9]+[.][0-9]+$")
    message: Release tags are semantic versions (v1.2.3).
"""


@pytest.fixture
def project(tmp_path: Path) -> dict[str, Path]:
    repo = tmp_path / "repo"
    for remote in ("origin", "heroku"):
        subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(tmp_path / f"{remote}.git")], check=True)
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "remote", "add", "origin", str(tmp_path / "origin.git"))
    git(repo, "remote", "add", "heroku", str(tmp_path / "heroku.git"))
    (repo / "package.json").write_text(json.dumps({"name": "app", "scripts": {
        "build": "echo build", "deploy": "echo deploy", "deploy:staging": "echo staging"}}))
    (repo / "package-lock.json").write_text("{}\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    git(repo, "push", "-q", "-u", "origin", "main")
    git(repo, "switch", "-q", "-c", "feature")
    contract = tmp_path / "release.yaml"
    contract.write_text(EXTENSION)
    return {"repo": repo, "contract": contract, "store": tmp_path / "store.db"}


def test_the_builtin_contract_maps_every_reading_to_its_operation():
    contract = builtin_contract("coding")
    mapped = {rule.reading: rule.operation for rule in contract.commands.values() if rule.reading is not None}
    assert set(mapped) == set(READINGS)
    for reading, operation in mapped.items():
        assert operation in contract.operations, reading
    # what the readers report takes the operation's tool and risk from the contract
    analysis = analyze_command("git push --force origin main", cwd="/")
    assert [(a.operation, a.tool, a.risk) for a in analysis.actions] == [("git.push", "git", "high")]


def test_a_push_to_the_heroku_remote_is_also_a_deploy_however_the_remote_is_chosen(project):
    contract = load_contract(project["contract"])

    def ops(command: str) -> tuple[str, ...]:
        return analyze_command(command, cwd=project["repo"], contract=contract).operations
    assert ops("git push heroku feature:main") == ("git.push", "deploy.run")
    assert ops("git push origin feature") == ("git.push",)
    assert ops("git -C . push heroku HEAD:main") == ("git.push", "deploy.run")
    # A bare push goes to the branch's upstream: with heroku as the upstream, it is a deploy.
    git(project["repo"], "config", "branch.feature.remote", "heroku")
    git(project["repo"], "config", "branch.feature.merge", "refs/heads/feature")
    assert ops("git push") == ("git.push", "deploy.run")
    deploy = [a for a in analyze_command("git push", cwd=project["repo"], contract=contract).actions
              if a.operation == "deploy.run"][0]
    assert deploy.args["remote"] == "heroku" and deploy.args["branch"] == "feature" and deploy.risk == "critical"
    # Without the extension the same push is only a git.push.
    assert analyze_command("git push", cwd=project["repo"]).operations == ("git.push",)


def test_the_hook_denies_the_deploy_and_lets_the_feature_push_run(project):
    decision, reason = hook(project, "git push heroku feature")
    assert decision == "deny" and "deploys_go_through_the_pipeline" in reason
    decision, reason = hook(project, "git push -u origin feature")
    assert decision == "allow", reason


def test_a_package_json_deploy_script_is_a_deploy(project):
    contract = load_contract(project["contract"])
    assert analyze_command("npm run deploy:staging", cwd=project["repo"], contract=contract).operations == (
        "npm.run_script", "deploy.run")
    assert analyze_command("npm run build", cwd=project["repo"], contract=contract).operations == (
        "npm.run_script",)
    assert hook(project, "npm run deploy")[0] == "deny"
    decision, reason = hook(project, "npm run build")
    assert decision == "allow", reason


def test_a_rule_for_a_program_the_normalizer_reads_adds_its_operation_beside(project):
    contract = load_contract(project["contract"])
    tag = analyze_command("git -C . tag v1.2.3", cwd=project["repo"], contract=contract)
    assert tag.operations == ("release.tag",) and tag.actions[0].args["tag"] == "v1.2.3"
    assert analyze_command("git tag v1.2.3", cwd=project["repo"]).operations == ()  # unguarded without it
    assert hook(project, "git tag nightly")[0] == "deny"
    assert hook(project, "git tag -a nightly -m 'a tag'")[0] == "deny"
    assert hook(project, "git tag --sort=v:refname")[0] == "deny"  # an option the rule does not declare
    decision, reason = hook(project, "git tag v1.2.3")
    assert decision == "allow", reason
    # The built-in reading of other git commands is untouched, and still there beside the rule.
    assert analyze_command("git status", cwd=project["repo"], contract=contract).read_only
    assert analyze_command("git push --force origin main", cwd=project["repo"], contract=contract
                           ).operations == ("git.push",)
    assert hook(project, "git status")[0] == "allow"


def test_reading_rules_are_checked_against_the_catalogue():
    base = "name: x\nversion: 1\nextends: coding\n"
    with pytest.raises(ContractError, match=r"commands\.r\.reading.*'git\.pull' is not a reading"):
        load_contract_text(base + "commands:\n  r: {reading: git.pull, operation: git.push}\n")
    with pytest.raises(ContractError, match=r"commands\.r\.when\.colour.*git\.push has no fact 'colour'"):
        load_contract_text(base + "commands:\n  r: {reading: git.push, when: {colour: red}, operation: git.push}\n")
    with pytest.raises(ContractError, match=r"commands\.r\.flags.*use when"):
        load_contract_text(base + "commands:\n  r: {reading: git.push, flags: {-f: {}}, operation: git.push}\n")
    with pytest.raises(ContractError, match="either a program or a reading"):
        load_contract_text(base + "commands:\n  r: {reading: git.push, program: git, operation: git.push}\n")
    with pytest.raises(ContractError, match="either a program or a reading"):
        load_contract_text(base + "commands:\n  r: {operation: git.push}\n")
    with pytest.raises(ContractError, match=r"commands\.r\.operation.*required for a reading rule"):
        load_contract_text(base + "commands:\n  r: {reading: git.push}\n")
    with pytest.raises(ContractError, match=r"commands\.r\.when.*only a reading rule"):
        load_contract_text(base + "commands:\n  r: {program: tf, when: {a: b}, operation: git.push}\n")


def test_when_matches_values_lists_patterns_and_absent_flags(tmp_path):
    contract = load_contract_text("""\
name: x
version: 1
extends: coding
commands:
  forced: {reading: git.push, when: {force: true}, operation: git.branch_delete}
  plain: {reading: git.push, when: {force: false, remote: [up, "prod*"]}, operation: git.rebase}
""")
    rules = CommandRules.of(contract, tmp_path)
    names = lambda facts: sorted(m.rule for m in rules.map_reading("git.push", facts))  # noqa: E731
    assert names({"remote": "origin", "branch": "main", "force": True}) == ["forced", "git-push"]
    assert names({"remote": "production", "branch": "main"}) == ["git-push", "plain"]
    assert names({"remote": "up", "branch": "main"}) == ["git-push", "plain"]
    assert names({"remote": "origin", "branch": "main"}) == ["git-push"]
    assert rules.map_reading("no.such.reading", {}) == []


def test_pip_behind_a_version_manager_shim_installs_into_the_interpreter_the_shim_selects(tmp_path, monkeypatch):
    # A pyenv-like installation: a shim directory whose scripts exec the manager, and a manager
    # that names the real executable read-only (`pyenv which pip`).
    root = tmp_path / "pyenv"
    install = root / "versions" / "3.11.7" / "bin"
    install.mkdir(parents=True)
    (install / "python3.11").symlink_to("/usr/bin/python3")
    (install / "python3").symlink_to("python3.11")
    (install / "pip").write_text(f"#!{install / 'python3.11'}\nimport sys\n")
    (install / "pip").chmod(0o755)
    (root / "bin").mkdir()
    (root / "bin" / "pyenv").write_text(f'#!/bin/sh\ncommand=$1 name=$2\nshift 2\ncase $command in\n'
                                        f'  which) echo "{install}/$name" ;;\n  exec) exec "{install}/$name" "$@" ;;\n'
                                        '  *) exit 1 ;;\nesac\n')
    (root / "bin" / "pyenv").chmod(0o755)
    shims = root / "shims"
    shims.mkdir()
    for name in ("pip", "python3"):
        (shims / name).write_text(f'#!/usr/bin/env bash\nset -e\nprogram="${{0##*/}}"\nexport PYENV_ROOT="{root}"\n'
                                  f'exec "{root}/bin/pyenv" exec "$program" "$@"\n')
        (shims / name).chmod(0o755)
    project = tmp_path / "project"
    project.mkdir()
    env = {"PATH": f"{shims}:/usr/bin:/bin", "HOME": str(tmp_path)}
    action = analyze_command("pip install requests", cwd=project, env=env).actions[0]
    # The shim is not read as bash, and the interpreter is named as PATH's python3 names it.
    assert action.operation == "pip.install" and action.args["interpreter"] == str(install / "python3")
    # Through the hook, in a project with no venv: the interpreter verifier resolves python3 the
    # same way, so the install is the one the workspace resolves to and runs (it was denied,
    # with the shim read as /usr/bin/bash).
    (project / "pyproject.toml").write_text('[project]\nname = "p"\nversion = "0"\n')
    payload = {"session_id": "s", "cwd": str(project), "hook_event_name": "PreToolUse", "tool_name": "Bash",
               "tool_input": {"command": "pip install requests"}, "tool_use_id": "t1"}
    monkeypatch.setenv("PATH", env["PATH"])
    result = run_hook("claude-code", json.dumps(payload), store_location=str(tmp_path / "store.db"),
                      on_pass="allow")
    assert json.loads(result.stdout)["hookSpecificOutput"]["permissionDecision"] == "allow", result.stdout
    # A manager that cannot say leaves the install unresolved rather than guessing.
    (root / "bin" / "pyenv").write_text("#!/bin/sh\nexit 1\n")
    unresolved = analyze_command("pip install requests", cwd=project, env=env)
    assert UNRESOLVED in unresolved.operations and "interpreter" in unresolved.unresolved[0]


INFRA = """\
name: infra
version: 1
extends: coding
operations:
  infra.change:
    tool: infra
    risk: high
    slots: {path: {type: path}}
commands:
  infra-files:
    reading: fs.write
    when: {path: "infra/*"}
    operation: infra.change
invariants:
  - name: infra_changes_go_through_review
    when: action.operation == "infra.change"
    check: "false"
    message: Infrastructure files change through the review pipeline.
"""


def test_a_file_tool_write_is_the_same_reading_as_a_shell_write(project, tmp_path):
    # An agent's Edit/Write (and a patch) is the fs.write reading too: a contract's rule on it
    # adds its operation beside fs.write, exactly as for `echo x > infra/main.tf`.
    from statewise.commands import file_actions

    path = tmp_path / "infra.yaml"
    path.write_text(INFRA)
    contract = load_contract(path)
    edit = file_actions("Edit", {"file_path": str(project["repo"] / "infra" / "main.tf")}, cwd=project["repo"],
                        contract=contract)
    assert [a.operation for a in edit] == ["fs.write", "infra.change"] and edit[1].risk == "high"
    shell = analyze_command("echo x > infra/main.tf", cwd=project["repo"], contract=contract)
    assert shell.operations == ("fs.write", "infra.change")
    assert [a.operation for a in file_actions("Edit", {"file_path": "src/app.py"}, cwd=project["repo"],
                                              contract=contract)] == ["fs.write"]
    deleted = file_actions("Delete", {"file_path": "notes.txt"}, cwd=project["repo"], reading="fs.delete")
    assert [(a.operation, a.risk) for a in deleted] == [("fs.delete", "high")]
    # Through the hook, as Claude Code sends an Edit.
    payload = {"session_id": "s", "cwd": str(project["repo"]), "hook_event_name": "PreToolUse", "tool_name": "Edit",
               "tool_input": {"file_path": str(project["repo"] / "infra" / "main.tf"), "old_string": "a",
                              "new_string": "b"}, "tool_use_id": "t1"}
    result = run_hook("claude-code", json.dumps(payload), store_location=str(project["store"]),
                      contract_path=str(path), on_pass="allow")
    output = json.loads(result.stdout)["hookSpecificOutput"]
    assert output["permissionDecision"] == "deny" and "infra_changes_go_through_review" in output[
        "permissionDecisionReason"]
