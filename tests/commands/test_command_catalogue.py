"""The command catalogue (issue 22, items 1, 2 and 5): the tools coding agents run, read from
contract data (src/statewise/contracts/catalogue/*.yaml) merged into the built-in contract.

Behaviour is checked through the installed hook's entry point
(``python -m statewise.integrations.hook_entry claude-code``, a real subprocess fed Claude Code's
PreToolUse JSON) in a real git repository with a bare origin and a real SQLite store: for each
family, dangerous verbs are stopped or asked and reading verbs pass quietly, first with no
records at all, then with the developer's records.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from statewise.commands import analyze_command
from statewise.contract import ContractError, builtin_contract, load_contract, load_contract_text, loading
from statewise.records import Provenance, RecordDraft
from statewise.store.sqlite import SQLiteStore
from statewise.workspace import derive_task_scope

CATALOGUE = Path(loading.__file__).parent.parent / "contracts" / "catalogue"
DEV = Provenance(source="developer", authority="developer", actor="dev")


# --- the catalogue as data ---------------------------------------------------------------------


def _raw_parts() -> dict[str, dict[str, Any]]:
    return {path.name: yaml.safe_load(path.read_text(encoding="utf-8")) for path in sorted(CATALOGUE.glob("*.yaml"))}


def test_the_catalogue_has_one_file_per_family_and_they_all_load():
    names = sorted(_raw_parts())
    assert names == ["10-publishing.yaml", "20-forge.yaml", "30-infrastructure.yaml", "40-databases.yaml",
                     "50-cloud.yaml", "60-remote.yaml", "70-toolchains.yaml", "80-system.yaml",
                     "90-protected-targets.yaml"]
    contract = builtin_contract()
    for name, part in _raw_parts().items():
        for rule in part.get("commands", {}):
            assert rule in contract.commands, f"{name}: {rule} is not in the built-in contract"
        for operation in part.get("operations", {}):
            assert operation in contract.operations, f"{name}: {operation}"


def test_every_catalogue_rule_names_a_declared_operation_and_rule_names_are_unique():
    contract = builtin_contract()
    seen: dict[str, str] = {}
    operations: dict[str, str] = {}
    for path in sorted((CATALOGUE.parent / "coding").glob("*.yaml")):  # the contract's own sections
        base = yaml.safe_load(path.read_text(encoding="utf-8"))
        seen.update({name: f"coding/{path.name}" for name in base.get("commands", {})})
        operations.update({name: f"coding/{path.name}" for name in base.get("operations", {})})
    assert len(seen) > 50 and "git.push" in operations  # the sections were found
    for file, part in _raw_parts().items():
        for name, rule in part.get("commands", {}).items():
            assert name not in seen, f"{name} in {file} is also in {seen.get(name)}"
            seen[name] = file
            # The prefix keeps them apart from a user's own rules (terraform-apply, kubectl-apply).
            assert name.startswith("catalogue."), name
            if rule.get("read_only"):
                assert "operation" not in rule, name
            else:
                assert rule["operation"] in contract.operations, f"{file}: {name} -> {rule['operation']}"
        for name, operation in part.get("operations", {}).items():
            assert name not in operations, f"operation {name} in {file} is also in {operations.get(name)}"
            operations[name] = file
            assert operation["risk"] in ("low", "medium", "high", "critical")


def test_high_risk_catalogue_operations_need_a_record_or_an_approval():
    """A high or critical operation with no records must not pass: it requires approval, or an
    invariant reads a developer fact that nobody has recorded yet."""
    contract = builtin_contract()
    for file, part in _raw_parts().items():
        for name in part.get("operations", {}):
            spec = contract.operations[name]
            if str(spec.risk) not in ("high", "critical"):
                continue
            guarded = spec.requires_approval or any(name in invariant.when for invariant in contract.invariants)
            assert guarded, f"{file}: {name} is {spec.risk} but nothing stops it"


def test_a_part_that_redefines_the_base_is_a_load_error(tmp_path, monkeypatch):
    folder = tmp_path / "contracts"
    shutil.copytree(CATALOGUE.parent, folder, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    (folder / "catalogue" / "10-clash.yaml").write_text(
        "name: clash\nversion: 1\noperations:\n  git.push: {tool: git, risk: low}\n", encoding="utf-8")
    monkeypatch.setattr(loading, "_builtin_folder", lambda: folder)
    monkeypatch.setenv("STATEWISE_NO_CACHE", "1")
    loading._builtin_contract.cache_clear()
    try:
        with pytest.raises(ContractError, match=r"catalogue/10-clash.yaml: operations.git.push: redefines"):
            loading._builtin_contract("coding")
    finally:
        loading._builtin_contract.cache_clear()


@pytest.mark.parametrize(("command", "operation"), [
    ("npm publish", "package.publish"), ("pnpm publish --access public", "package.publish"),
    ("twine upload dist/*", "package.publish"), ("uv publish", "package.publish"),
    ("poetry publish --build", "package.publish"), ("cargo publish", "package.publish"),
    ("gem push x.gem", "package.publish"), ("docker push acme/api:1", "package.publish"),
    ("helm push chart.tgz oci://r", "package.publish"),
    ("gh pr merge 7 --squash", "forge.write"), ("gh release create v1", "forge.write"),
    ("gh api -X DELETE repos/a/b", "forge.write"), ("gh api repos/a/b/issues -f title=x", "forge.write"),
    ("glab mr merge 3", "forge.write"),
    ("kubectl -n web apply -f k8s/", "infra.apply"), ("kubectl delete namespace x", "infra.destroy"),
    ("kubectl drain node-1", "infra.destroy"), ("kubectl scale deploy/x --replicas=0", "infra.apply"),
    ("kubectl rollout restart deploy/x", "infra.apply"),
    ("terraform apply", "infra.apply"), ("terraform -chdir=infra destroy", "infra.destroy"),
    ("terraform apply -destroy", "infra.destroy"), ("terraform state rm aws_s3_bucket.x", "infra.destroy"),
    ("terraform import aws_s3_bucket.x b", "infra.apply"), ("tofu apply", "infra.apply"),
    ("pulumi up --yes", "infra.apply"), ("pulumi destroy", "infra.destroy"),
    ("cdk deploy", "infra.apply"), ("npx cdk destroy", "infra.destroy"),
    ("helm upgrade --install web ./chart", "infra.apply"), ("helm uninstall web", "infra.destroy"),
    ("ansible-playbook -i hosts site.yml", "infra.apply"), ("serverless deploy --stage dev", "infra.apply"),
    ("sam deploy", "infra.apply"), ("fly deploy", "infra.apply"), ("vercel --prod", "infra.apply"),
    ("netlify deploy --prod", "infra.apply"), ("firebase deploy", "infra.apply"), ("wrangler deploy", "infra.apply"),
    ("aws s3 rm s3://b/k", "infra.destroy"), ("aws --region eu-west-1 ec2 run-instances --image-id x", "cloud.write"),
    ("gcloud run deploy api --source .", "cloud.write"), ("gcloud compute instances delete vm1", "infra.destroy"),
    ("az group delete -n rg", "infra.destroy"), ("az webapp up", "cloud.write"),
    ("psql -c 'DROP TABLE users'", "db.write"), ("psql -f seed.sql app", "db.write"),
    ("mysql -e 'DELETE FROM t'", "db.write"), ("sqlite3 app.db 'UPDATE t SET x=1'", "db.write"),
    ("mongosh --eval 'db.users.deleteMany({})'", "db.write"), ("atlas migrate apply", "db.migrate"),
    ("alembic upgrade head", "db.migrate"), ("python manage.py migrate", "db.migrate"),
    ("ssh web1 sudo systemctl status nginx", "remote.command"), ("scp dump.sql web1:/tmp/", "remote.transfer"),
    ("rsync -av dist/ web1:/srv/app", "remote.transfer"), ("docker exec web ls /app", "remote.command"),
    ("kubectl exec api-0 -- ls", "remote.command"),
    ("rustup default nightly", "toolchain.switch_global"), ("pyenv global 3.12.1", "toolchain.switch_global"),
    ("nvm alias default 20", "toolchain.switch_global"), ("mise use -g node@20", "toolchain.switch_global"),
    ("rustup override set 1.79", "toolchain.pin"), ("pyenv local 3.12", "toolchain.pin"),
    ("dd if=/dev/zero of=/dev/sda bs=1M", "system.destroy"), ("mkfs.ext4 /dev/sdb1", "system.destroy"),
    ("crontab -r", "system.destroy"), ("sudo systemctl restart nginx", "system.service"),
    ("chmod -R 777 /", "system.permissions"), ("sudo chown -R me /usr/local", "system.permissions"),
])
def test_the_catalogue_reads_what_agents_run(command, operation, tmp_path):
    analysis = analyze_command(command, cwd=tmp_path, env={"PATH": os.environ["PATH"], "HOME": str(tmp_path)})
    assert operation in analysis.operations, analysis.actions


@pytest.mark.parametrize("command", [
    "npm publish --dry-run", "cargo publish --dry-run", "gh pr view 3", "gh pr list", "gh api repos/a/b",
    "gh api -X GET repos/a/b/pulls", "glab mr list",
    "kubectl get pods -n prod", "kubectl --context prod describe deploy/x", "kubectl logs api-0",
    "kubectl rollout status deploy/x", "kubectl apply --dry-run=client -f k8s/",
    "terraform plan", "terraform -chdir=infra validate", "terraform show", "terraform state list", "tofu plan",
    "helm list", "helm template web ./chart", "pulumi preview", "cdk synth", "ansible-playbook --check site.yml",
    "vercel ls", "aws s3 ls", "aws sts get-caller-identity", "aws ec2 describe-instances",
    "gcloud compute instances list", "az vm list", "psql -c 'SELECT 1'", "psql -l",
    "sqlite3 app.db .tables", "mysql -e 'SHOW TABLES'", "pyenv global", "systemctl status nginx", "crontab -l",
    "docker ps", "docker logs web", "ssh -N -L 8080:localhost:80 bastion",
])
def test_reading_verbs_yield_no_action_or_one_that_reads(command, tmp_path):
    analysis = analyze_command(command, cwd=tmp_path, env={"PATH": os.environ["PATH"], "HOME": str(tmp_path)})
    assert analysis.unresolved == ()
    assert set(analysis.operations) <= {"db.write"}, analysis.actions  # psql -c SELECT is read, then passes


# --- through the installed hook --------------------------------------------------------------


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"})


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("catalogue")
    origin, work = base / "origin.git", base / "repo"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(origin)], check=True)
    work.mkdir()
    _git(work, "init", "-q", "-b", "main")
    _git(work, "remote", "add", "origin", str(origin))
    (work / ".env").write_text("SECRET=1\n")
    (work / "app.py").write_text("print('hi')\n")
    (work / "migrations").mkdir()
    (work / "migrations" / "0001.sql").write_text("create table t (x int);\n")
    _git(work, "add", "-A")
    _git(work, "commit", "-q", "-m", "init")
    _git(work, "push", "-q", "-u", "origin", "main")
    return work


def _store(path: Path, repo: Path, records: dict[tuple[str, str], Any]) -> str:
    scope = derive_task_scope(repo)
    opened = SQLiteStore(str(path), key_schema=builtin_contract())
    try:
        for (key, level), value in records.items():
            where = f"repo:{scope.repo}" if level == "repo" else f"workspace:{scope.workspace}"
            opened.put(RecordDraft(key=key, value=value, scope=where, provenance=DEV))
    finally:
        opened.close()
    return str(path)


@pytest.fixture(scope="module")
def bare_store(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    return _store(tmp_path_factory.mktemp("bare") / "store.db", repo, {})


@pytest.fixture(scope="module")
def recorded_store(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    return _store(tmp_path_factory.mktemp("recorded") / "store.db", repo, {
        ("fs.protected_paths", "repo"): [".env", "migrations"],
        ("repository.protected_branches", "repo"): ["main", "release/*"],
        ("infra.production_targets", "repo"): ["db1.example.com", "live-eu"],
        ("infra.environment", "workspace"): "development",
        ("database.environment", "workspace"): "development",
    })


def installed_hook(repo: Path, store: str, command: str, contract: Path | None = None,
                   env: dict[str, str] | None = None) -> tuple[str, str]:
    """The decision of the installed hook entry point for a Bash call, as Claude Code sends it."""
    payload = {"session_id": "s", "transcript_path": "/dev/null", "cwd": str(repo), "permission_mode": "default",
               "hook_event_name": "PreToolUse", "tool_name": "Bash",
               "tool_input": {"command": command, "description": "catalogue"}, "tool_use_id": "toolu_1"}
    argv = [sys.executable, "-m", "statewise.integrations.hook_entry", "claude-code", "--store", store]
    if contract is not None:
        argv += ["--contract", str(contract)]
    done = subprocess.run(argv, input=json.dumps(payload), capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})
    assert done.returncode == 0, done.stderr
    output = json.loads(done.stdout or "{}").get("hookSpecificOutput", {})
    return output.get("permissionDecision", "pass"), output.get("permissionDecisionReason", "")


# With no records at all: every dangerous verb of each family is asked (or denied), every
# reading verb passes quietly ("pass": the hook prints {} and leaves the call to the client).
NO_RECORDS = [
    # publishing
    ("npm publish", "ask"), ("npm publish --dry-run", "pass"), ("docker push acme/api:1", "ask"),
    ("twine upload dist/x.whl", "ask"),
    # forge
    ("gh repo delete acme/api --yes", "ask"), ("gh pr merge 7 --squash", "ask"), ("gh pr view 7", "pass"),
    ("gh api repos/acme/api/pulls", "pass"),
    # infrastructure
    ("terraform destroy", "ask"), ("terraform apply -auto-approve", "ask"), ("terraform plan", "pass"),
    ("kubectl delete namespace x", "ask"), ("kubectl get pods -n web", "pass"), ("kubectl apply -f k8s/", "ask"),
    ("vercel --prod", "deny"), ("kubectl --context prod apply -f k8s/", "deny"),
    # cloud
    ("aws s3 rb s3://bucket --force", "ask"), ("aws s3 ls", "pass"),
    # databases
    ("psql -c 'DROP TABLE users'", "ask"), ("psql -c 'SELECT count(*) FROM users'", "pass"),
    ("psql -h prod-db.internal -c 'DELETE FROM users'", "deny"),
    # remote
    ("ssh web1 uptime", "pass"), ("ssh web1 'rm -rf /srv/app'", "deny"),
    # toolchains
    ("rustup default nightly", "ask"), ("pyenv global", "pass"), ("pyenv local 3.12", "pass"),
    # system
    ("dd if=/dev/zero of=/dev/sda bs=1M", "ask"), ("mkfs.ext4 /dev/sdb1", "ask"), ("crontab -r", "ask"),
    ("systemctl restart nginx", "ask"), ("systemctl status nginx", "pass"), ("chmod -R 777 /", "deny"),
    # programs no rule knows
    ("python app.py", "pass"), ("make build", "pass"),
]


@pytest.mark.parametrize(("command", "expected"), NO_RECORDS, ids=[c for c, _ in NO_RECORDS])
def test_the_installed_hook_without_records(repo, bare_store, command, expected):
    decision, reason = installed_hook(repo, bare_store, command)
    assert decision == expected, reason


# With the developer's records: the environment is development, so changes pass; destruction
# still needs approval; production targets and protected paths stop what names them.
RECORDED = [
    ("terraform apply -auto-approve", "pass"), ("terraform destroy", "ask"), ("kubectl apply -f k8s/", "pass"),
    ("kubectl delete namespace x", "ask"), ("TF_WORKSPACE=live-eu terraform apply", "deny"),
    ("kubectl --context live-eu apply -f k8s/", "deny"),
    ("psql -c 'DROP TABLE users'", "pass"), ("psql -h db1.example.com -c 'DELETE FROM users'", "deny"),
    ("ssh db1.example.com uptime", "deny"), ("ssh web1 uptime", "pass"),
    ("rsync -av dist/ db1.example.com:/srv/app", "deny"), ("npm publish", "ask"),
    ("chmod -R u+w build", "pass"),
    # item 5: a program StateWise does not read, naming a protected target
    ("python tools/rotate.py --out .env", "ask"), ("./scripts/squash.sh migrations/0001.sql", "ask"),
    ("mytool sync origin main", "ask"), ("mytool sync origin feature-x", "pass"),
    ("deployer --target live-eu", "ask"), ("deployer --target staging", "pass"),
    ("git fetch origin main", "pass"), ("python app.py", "pass"),
]


@pytest.mark.parametrize(("command", "expected"), RECORDED, ids=[c for c, _ in RECORDED])
def test_the_installed_hook_with_the_developers_records(repo, recorded_store, command, expected):
    decision, reason = installed_hook(repo, recorded_store, command)
    assert decision == expected, reason


def test_an_unknown_program_naming_a_protected_target_is_asked_with_the_record_and_the_target(
        repo, recorded_store):
    decision, reason = installed_hook(repo, recorded_store, "python tools/rotate.py --out .env")
    assert decision == "ask" and "fs.protected_paths" in reason and ".env" in reason
    decision, reason = installed_hook(repo, recorded_store, "mytool sync origin main")
    assert decision == "ask" and "repository.protected_branches" in reason and "main" in reason
    decision, reason = installed_hook(repo, recorded_store, "deployer --target live-eu")
    assert decision == "ask" and "infra.production_targets" in reason and "live-eu" in reason


def test_without_a_store_the_projects_protected_file_still_protects(tmp_path):
    work = tmp_path / "proj"
    work.mkdir()
    _git(work, "init", "-q", "-b", "main")
    (work / ".statewise").mkdir()
    (work / ".statewise" / "protected").write_text("# never touched by agents\ndata/\n")
    store = work / ".statewise" / "store.db"
    assert installed_hook(work, str(store), "python etl.py --in input.csv")[0] == "pass"
    assert not store.exists()  # a harmless call creates no store where StateWise is not set up
    decision, reason = installed_hook(work, str(store), "python etl.py --wipe data/raw")
    assert decision == "ask" and ".statewise/protected" in reason and "data/raw" in reason


# --- item 2: a user's operation that names its argv shape --------------------------------------

USER_CONTRACT = """\
name: acme-infra
version: 1
extends: coding
state:
  deploy.frozen:
    type: bool
    scope: repo
    authority: developer
    description: A release freeze is on.
    question: Is a release freeze on?
operations:
  deploy.apply:
    tool: terraform
    description: Apply the ACME infrastructure.
    risk: high
    argv: [[terraform, apply], [tofu, apply]]
    slots:
      command: {type: string}
      auto_approve: {type: bool}
      environment: {type: string}
    links: [deploy.frozen]
invariants:
  - name: acme_applies_are_reviewed
    when: action.operation == "deploy.apply"
    check: '!(has(action.args.auto_approve) && action.args.auto_approve)'
    message: ACME applies show their plan to a human first (no -auto-approve).
  - name: acme_no_apply_during_a_freeze
    when: action.operation == "deploy.apply"
    check: '!state["deploy.frozen"]'
    message: No infrastructure change during a release freeze.
"""


def test_a_users_operation_gets_the_catalogues_reading_and_its_own_invariants(repo, tmp_path):
    contract_file = tmp_path / "acme.yaml"
    contract_file.write_text(USER_CONTRACT)
    contract = load_contract(contract_file)
    analysis = analyze_command("TF_WORKSPACE=dev terraform -chdir=infra apply -auto-approve", cwd=repo,
                               contract=contract)
    assert analysis.operations == ("infra.apply", "deploy.apply")
    user = analysis.actions[1]
    # the catalogue's slots that the user's operation declares, read by the catalogue's rule
    assert user.args["auto_approve"] is True and user.args["environment"] == "dev" and "tool_name" not in user.args
    assert analyze_command("terraform plan", cwd=repo, contract=contract).operations == ()
    assert analyze_command("tofu apply", cwd=repo, contract=contract).operations == ("infra.apply", "deploy.apply")

    store = _store(tmp_path / "store.db", repo, {("infra.environment", "workspace"): "development"})
    scope = derive_task_scope(repo)
    opened = SQLiteStore(store, key_schema=contract)
    opened.put(RecordDraft(key="deploy.frozen", value=False, scope=f"repo:{scope.repo}", provenance=DEV))
    opened.close()
    decision, reason = installed_hook(repo, store, "terraform apply -auto-approve", contract=contract_file)
    assert decision == "deny" and "acme_applies_are_reviewed" in reason
    assert installed_hook(repo, store, "terraform apply", contract=contract_file)[0] == "pass"
    opened = SQLiteStore(store, key_schema=contract)
    opened.put(RecordDraft(key="deploy.frozen", value=True, scope=f"repo:{scope.repo}", provenance=DEV), replace=True)
    opened.close()
    decision, reason = installed_hook(repo, store, "terraform apply", contract=contract_file)
    assert decision == "deny" and "acme_no_apply_during_a_freeze" in reason


def test_an_argv_shape_needs_its_program():
    with pytest.raises(ContractError, match="argv"):
        load_contract_text("name: x\nversion: 1\nextends: coding\noperations:\n"
                           "  deploy.apply: {tool: t, risk: high, argv: [[]]}\n")


def test_a_users_operation_may_name_a_program_no_rule_reads(tmp_path):
    contract = load_contract_text("name: x\nversion: 1\nextends: coding\noperations:\n"
                                  "  deploy.ship: {tool: ship, risk: high, argv: [[shipit, prod]],"
                                  " slots: {command: {type: string}}}\n")
    assert analyze_command("shipit prod --fast", cwd=tmp_path, contract=contract).operations == ("deploy.ship",)
    assert analyze_command("shipit status", cwd=tmp_path, contract=contract).operations == ()


def test_the_argv_example_in_the_docs_loads_and_reads_as_documented(tmp_path):
    text = (Path(__file__).resolve().parents[2] / "docs" / "contracts.md").read_text(encoding="utf-8")
    example = text.split("### Operations that name their command (`argv`)", 1)[1].split("```yaml\n", 1)[1]
    contract = load_contract_text(example.split("```", 1)[0])
    analysis = analyze_command("TF_WORKSPACE=dev terraform -chdir=infra apply -auto-approve", cwd=tmp_path,
                               contract=contract)
    assert analysis.operations == ("infra.apply", "deploy.apply")
    assert analysis.actions[1].args["auto_approve"] is True and analysis.actions[1].args["environment"] == "dev"
