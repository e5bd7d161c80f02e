"""Commands recognized from the contract (issue 10 item 6): a contract extension's
``commands:`` rules make the shell normalizer, and so the hook, guard a new tool.

Everything runs for real: a git repository with a bare origin, a contract file that extends
the built-in one, a SQLite store, and Claude Code's PreToolUse JSON sent to ``run_hook``.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from statewise.commands import UNRESOLVED, analyze_command
from statewise.contract import ContractError, load_contract, load_contract_text
from statewise.integrations.hooks import run_hook

EXTENSION = """\
name: infra
version: 1
extends: coding
operations:
  terraform.apply:
    tool: terraform
    description: Apply a Terraform plan to the selected workspace.
    risk: high
    slots:
      workspace:
        type: string
        depends_on: ["env.var[TF_WORKSPACE]"]
      auto_approve: {type: bool}
      var_file: {type: string}
      vars: {type: list}
      plan: {type: string}
      command: {type: string}
  kubectl.apply:
    tool: kubectl
    risk: high
    slots:
      file: {type: string, required: true}
      namespace: {type: string}
      command: {type: string}
  deploy.run:
    tool: deploy
    risk: critical
    slots:
      environment: {type: string, required: true}
      command: {type: string}
commands:
  terraform-apply:
    program: terraform
    subcommand: [apply]
    operation: terraform.apply
    flags:
      -auto-approve: {slot: auto_approve}
      -var-file: {value: true, slot: var_file}
      -var: {value: true, slot: vars, repeat: true}
      -input: {value: true}
    positionals: [plan]
    env: {TF_WORKSPACE: workspace}
    slots: {workspace: default}
  kubectl-apply:
    program: kubectl
    subcommand: [apply]
    operation: kubectl.apply
    flags:
      -f: {value: true, slot: file}
      --filename: {value: true, slot: file}
      -n: {value: true, slot: namespace}
      --namespace: {value: true, slot: namespace}
  deploy:
    program: ./deploy.sh
    operation: deploy.run
    positionals: [environment]
invariants:
  # What the command itself selects (TF_WORKSPACE=... on the command line, or the agent's
  # environment) and what the environment verifier observes: both must not be production.
  - name: no_terraform_apply_in_production
    when: action.operation == "terraform.apply"
    check: action.args.workspace != "production" && state["env.var[TF_WORKSPACE]"] != "production"
    message: Terraform is never applied to the production workspace by an agent.
  - name: no_deploy_to_production
    when: action.operation == "deploy.run"
    check: action.args.environment != "prod"
    message: Production deploys go through the release pipeline.
"""


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
                          env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
                               "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}).stdout


@pytest.fixture
def project(tmp_path: Path) -> dict[str, Path]:
    origin = tmp_path / "origin.git"
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(origin)], check=True)
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "remote", "add", "origin", str(origin))
    (repo / "main.tf").write_text('resource "null_resource" "x" {}\n')
    deploy = repo / "deploy.sh"
    deploy.write_text("#!/bin/sh\necho deploying \"$1\"\n")
    deploy.chmod(0o755)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "init")
    git(repo, "push", "-q", "-u", "origin", "main")
    contract = tmp_path / "infra.yaml"
    contract.write_text(EXTENSION)
    return {"repo": repo, "contract": contract, "store": tmp_path / "store.db"}


def hook(project: dict[str, Path], command: str, cwd: Path | None = None) -> tuple[str | None, str]:
    payload = {"session_id": "s", "transcript_path": "/dev/null", "cwd": str(cwd or project["repo"]),
               "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Bash",
               "tool_input": {"command": command, "description": "infra work"}, "tool_use_id": "t1"}
    result = run_hook("claude-code", json.dumps(payload), store_location=str(project["store"]),
                      contract_path=str(project["contract"]), on_pass="allow")
    output = json.loads(result.stdout).get("hookSpecificOutput", {})
    return output.get("permissionDecision"), output.get("permissionDecisionReason", "")


def test_terraform_apply_is_denied_in_the_production_workspace(project, monkeypatch):
    monkeypatch.setenv("TF_WORKSPACE", "production")
    decision, reason = hook(project, "terraform apply -auto-approve")
    assert decision == "deny"
    assert "no_terraform_apply_in_production" in reason or "production" in reason


def test_terraform_apply_is_allowed_in_another_workspace(project, monkeypatch):
    monkeypatch.setenv("TF_WORKSPACE", "staging")
    decision, reason = hook(project, "terraform apply -auto-approve -var-file=staging.tfvars")
    assert decision == "allow", reason


def test_the_workspace_the_command_itself_selects_is_the_one_checked(project, monkeypatch):
    # The agent's environment says staging; the command line says production.
    monkeypatch.setenv("TF_WORKSPACE", "staging")
    assert hook(project, "TF_WORKSPACE=production terraform apply")[0] == "deny"
    assert hook(project, "env TF_WORKSPACE=production terraform apply -auto-approve")[0] == "deny"
    assert hook(project, "cd . && sudo -E TF_WORKSPACE=production terraform apply")[0] == "deny"
    assert hook(project, "sh -c 'TF_WORKSPACE=production terraform apply'")[0] == "deny"
    assert hook(project, "timeout 600 env TF_WORKSPACE=production terraform apply")[0] == "deny"
    assert hook(project, "export TF_WORKSPACE=production; terraform apply")[0] == "deny"


def test_a_declared_command_with_an_undeclared_option_is_denied_as_unresolved(project, monkeypatch):
    monkeypatch.setenv("TF_WORKSPACE", "staging")
    decision, reason = hook(project, "terraform apply -destroy")
    assert decision == "deny"
    assert "-destroy" in reason and "not one the contract's command rule terraform-apply declares" in reason
    # Options before the subcommand: which subcommand runs is not guessed.
    decision, reason = hook(project, "terraform -chdir=infra apply")
    assert decision == "deny" and "before the subcommand" in reason
    # A value only known at run time.
    assert hook(project, 'TF_WORKSPACE="$(cat ws)" terraform apply')[0] == "deny"
    assert hook(project, "terraform apply $PLAN")[0] == "deny"


def test_an_undeclared_subcommand_of_a_declared_program_still_runs(project, monkeypatch):
    monkeypatch.setenv("TF_WORKSPACE", "production")
    decision, _ = hook(project, "terraform plan")
    assert decision == "allow"


def test_kubectl_apply_and_a_project_script_are_guarded(project, monkeypatch):
    monkeypatch.setenv("TF_WORKSPACE", "staging")
    analysis = analyze_command("kubectl apply -f deploy.yaml -n web", cwd=project["repo"],
                               contract=load_contract(project["contract"]))
    assert analysis.operations == ("kubectl.apply",)
    assert analysis.actions[0].args["file"] == "deploy.yaml" and analysis.actions[0].args["namespace"] == "web"
    assert analysis.actions[0].risk == "high"
    assert hook(project, "kubectl apply -f deploy.yaml")[0] == "allow"
    assert hook(project, "kubectl apply -f deploy.yaml --prune")[0] == "deny"
    assert hook(project, "./deploy.sh prod")[0] == "deny"
    assert hook(project, "./deploy.sh staging")[0] == "allow"
    # The same file reached from a subdirectory, and by its absolute path.
    sub = project["repo"] / "sub"
    sub.mkdir()
    assert hook(project, "../deploy.sh prod", cwd=sub)[0] == "deny"
    assert hook(project, f"{project['repo'] / 'deploy.sh'} prod")[0] == "deny"
    # Two arguments where the rule names one slot.
    assert hook(project, "./deploy.sh staging extra")[0] == "deny"


def test_without_the_extension_the_catalogue_reads_the_same_commands(project):
    # Issue 22: the built-in command catalogue reads terraform itself (it was unguarded before).
    analysis = analyze_command("terraform apply -auto-approve", cwd=project["repo"])
    assert analysis.operations == ("infra.apply",) and analysis.actions[0].args["auto_approve"] is True
    assert analyze_command("./deploy.sh prod", cwd=project["repo"]).unguarded == ("./deploy.sh prod",)


def test_slots_are_read_from_the_command(project):
    contract = load_contract(project["contract"])
    analysis = analyze_command("TF_WORKSPACE=dev terraform apply -var a=1 -var=b=2 -input false plan.out",
                               cwd=project["repo"], contract=contract, env={"PATH": os.environ["PATH"]})
    action = analysis.actions[0]
    assert action.operation == "terraform.apply" and action.tool == "terraform"
    assert action.args["workspace"] == "dev"
    assert action.args["vars"] == ["a=1", "b=2"]
    assert action.args["plan"] == "plan.out"
    assert "auto_approve" not in action.args
    # Unset in the environment: the fixed slot value stands.
    default = analyze_command("terraform apply", cwd=project["repo"], contract=contract,
                              env={"PATH": os.environ["PATH"]})
    assert default.actions[0].args["workspace"] == "default"
    unknown = analyze_command("terraform apply -lock=false", cwd=project["repo"], contract=contract)
    assert unknown.operations == (UNRESOLVED,)


def test_a_rule_must_name_a_declared_operation_and_its_slots(tmp_path):
    base = "name: x\nversion: 1\nextends: coding\n"
    with pytest.raises(ContractError, match="not an operation declared"):
        load_contract_text(base + "commands:\n  r: {program: tf, operation: tf.apply}\n")
    with pytest.raises(ContractError, match="not a slot of git.push"):
        load_contract_text(base + "commands:\n  r: {program: tf, operation: git.push, positionals: [nope]}\n")
    with pytest.raises(ContractError, match="a flag starts with -"):
        load_contract_text(base + "commands:\n  r: {program: tf, operation: git.push, flags: {x: {}}}\n")
    with pytest.raises(ContractError, match="required"):
        load_contract_text(base + "commands:\n  r: {program: tf}\n")
    with pytest.raises(ContractError, match="read-only rule names no operation"):
        load_contract_text(base + "commands:\n  r: {program: tf, read_only: true, operation: git.push}\n")


LOOSE = """\
name: ops
version: 1
extends: coding
operations:
  db.seed:
    tool: seeder
    risk: high
    slots:
      target: {type: string}
      command: {type: string}
commands:
  seeder-inspect:
    program: seeder
    options: any
    when_any: [--dry-run, --help]
    read_only: true
  seeder-run:
    program: seeder
    subcommand: ["run|apply", "db:*"]
    unless: [["run", "db:status"]]
    operation: db.seed
    options: any
    flags: {--target: {value: true, slot: target}, --batch: {value: true}}
  # The contract's rules come before the built-in ones: this project's pytest is a seeder.
  pytest-seeds:
    program: pytest
    operation: db.seed
    options: any
"""


def test_loose_rules_alternatives_globs_exceptions_and_read_only_forms(project):
    contract = load_contract_text(LOOSE)
    def ops(command: str) -> tuple[str, ...]:
        return analyze_command(command, cwd=project["repo"], contract=contract).operations
    # options: any accepts options the rule does not declare, before and after the subcommand;
    # a declared value-taking option's value is not a word of the subcommand
    run = analyze_command("seeder -v run --batch 9 db:users --target staging", cwd=project["repo"], contract=contract)
    assert run.operations == ("db.seed",) and run.actions[0].args["target"] == "staging"
    assert run.actions[0].args["command"] == "seeder -v run --batch 9 db:users --target staging"
    assert ops("seeder apply db:orders") == ("db.seed",)              # an alternative
    assert ops("seeder run db:status") == ()                         # unless
    assert ops("seeder run db:users --dry-run") == ()                # read_only rule, tried first
    assert ops("seeder run other") == ()                             # the glob does not match
    assert ops("seeder run $TABLE") == (UNRESOLVED,)                 # a word only known at run time
    assert ops("pytest -q") == ("db.seed",)                          # the contract's rule before the built-in
    assert ops("tox -e py311") == ("test.run",)                      # the other built-in rules still apply
    assert analyze_command("pytest -q", cwd=project["repo"]).operations == ("test.run",)


def test_builtin_rules_apply_without_a_contract_and_take_its_risks(project):
    analysis = analyze_command("alembic -c db.ini upgrade head", cwd=project["repo"])
    migrate = [a for a in analysis.actions if a.operation == "db.migrate"]
    assert migrate and migrate[0].args["framework"] == "alembic" and migrate[0].risk == "high"
    assert analyze_command("alembic history", cwd=project["repo"]).operations == ()
    assert analyze_command("goose postgres dsn up", cwd=project["repo"]).operations == ("db.migrate",)
    assert analyze_command("goose postgres dsn status", cwd=project["repo"]).operations == ()
    assert analyze_command("pytest --collect-only -q", cwd=project["repo"]).read_only
