"""Issue 22, the open-world set's remaining forms, through the installed hook: xargs fed by an
``echo`` (also inside ``bash -c``), a command ssh runs remotely that only the developer's
approval guards (``sudo systemctl restart``), and a database shell whose URL or ``-h`` places the
database on this machine.

Each command goes through the wrapper ``statewise install`` writes, as Claude Code runs it (a real
subprocess fed the PreToolUse JSON), in a real repository with a bare origin that protects
``main``, and a store holding the developer's ``fs.protected_paths`` (``.env``, ``migrations``)
and, where said, ``infra.production_targets``.
"""

from __future__ import annotations

import pytest

from statewise.contract import builtin_contract
from statewise.records import RecordDraft
from statewise.store.sqlite import SQLiteStore
from statewise.workspace import derive_task_scope
from tests.integrations.installed import DEVELOPER, Project, make_project


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Project:
    made = make_project(tmp_path_factory.mktemp("open-world"), protected=[".env", "migrations"])
    store = SQLiteStore(str(made.work / ".statewise" / "store.db"), key_schema=builtin_contract())
    try:
        store.put(RecordDraft(key="infra.production_targets", value=["ledger-1.acme.internal"],
                              scope=f"repo:{derive_task_scope(made.work).repo}", provenance=DEVELOPER))
    finally:
        store.close()
    return made


# -- xargs reading what an echo prints --

@pytest.mark.parametrize("command", [
    "echo build | xargs rm -rf",
    "bash -c 'echo build | xargs rm -rf'",
    "echo build dist | xargs -n1 rm -rf",
    "echo src/app.py | xargs cat",
])
def test_xargs_fed_by_an_echo_of_ordinary_paths_passes(project, command):
    answer = project.bash(command)
    assert answer.decision == "defer", answer.reason


@pytest.mark.parametrize("command", [
    "echo migrations | xargs rm -rf",
    "bash -c 'echo migrations | xargs rm -rf'",
    "echo build migrations | xargs -n1 rm -rf",
])
def test_xargs_fed_by_an_echo_of_a_protected_path_is_the_delete_it_makes(project, command):
    answer = project.bash(command)
    assert answer.decision == "deny", answer.reason
    assert "no_delete_of_protected_path" in answer.reason and "fs.delete migrations" in answer.reason


@pytest.mark.parametrize("command", [
    "find . -name '*.pyc' | xargs rm",  # the paths are only known when find runs
    "echo \"$DIRS\" | xargs rm -rf",  # an expansion
    "echo build | xargs -I{} rm -rf {}/cache",  # -I substitutes: not read here
    "echo 'a b' | xargs -0 rm",
])
def test_xargs_whose_input_is_not_a_static_echo_stays_cannot_check(project, command):
    answer = project.bash(command)
    assert answer.decision == "deny", answer.reason
    assert "cannot check" in answer.reason


# -- ssh running what only the developer's approval guards --

@pytest.mark.parametrize("command", [
    "ssh deploy@stg-ledger-1.acme.internal sudo systemctl restart ledger",
    "ssh ops@batch-3 sudo reboot",
])
def test_a_remote_service_action_is_asked_naming_the_host(project, command):
    answer = project.bash(command)
    assert answer.decision == "ask", answer.reason
    assert "system.service" in answer.reason and command.split()[1] in answer.reason


def test_an_approval_ask_names_the_record_its_target_comes_from(project):
    # The host the agent types is a stored record's value: the ask says which record, so the
    # developer can tell a wrong one (issue 22, item 5).
    store = SQLiteStore(str(project.work / ".statewise" / "store.db"), key_schema=builtin_contract())
    try:
        record = store.put(RecordDraft(key="env.var[DEPLOY_HOST]", value="stg-ledger-3.acme.internal",
                                       scope=f"workspace:{project.work}", provenance=DEVELOPER))
    finally:
        store.close()
    answer = project.bash("ssh deploy@stg-ledger-3.acme.internal sudo systemctl restart ledger")
    assert answer.decision == "ask", answer.reason
    assert "stg-ledger-3.acme.internal is the value of env.var[DEPLOY_HOST]" in answer.reason
    assert record.id in answer.reason
    # a bench or a client reading questions from "(record ID: KEY = VALUE in SCOPE)" finds none here
    assert "(record " not in answer.reason


def test_a_remote_service_action_on_a_production_target_is_denied(project):
    answer = project.bash("ssh deploy@ledger-1.acme.internal sudo systemctl restart ledger")
    assert answer.decision == "deny", answer.reason
    assert "no_remote_command_on_production_target" in answer.reason


@pytest.mark.parametrize("command", [
    "ssh deploy@stg-ledger-1.acme.internal rm -rf /srv/ledger/data",  # a delete there: not checked here
    "ssh deploy@stg-ledger-1.acme.internal 'sudo systemctl restart ledger; rm -rf /srv/x'",
])
def test_a_remote_command_with_other_effects_stays_cannot_check(project, command):
    answer = project.bash(command)
    assert answer.decision == "deny", answer.reason
    assert "cannot check" in answer.reason


# -- database shells placing the database on this machine --

@pytest.mark.parametrize("command", [
    "psql postgres://ledger@localhost:5432/ledger_dev -c 'DELETE FROM sessions WHERE expires_at < now()'",
    "psql postgresql://127.0.0.1/app -f seed.sql",
    "psql -h localhost -d app -c 'TRUNCATE jobs'",
    "mysql -h 127.0.0.1 -e 'DELETE FROM jobs' app",
])
def test_a_write_to_a_database_on_this_machine_passes(project, command):
    answer = project.bash(command)
    assert answer.decision == "defer", answer.reason


@pytest.mark.parametrize("command", [
    "psql postgres://ledger@db-prod.acme.internal:5432/ledger -c 'DELETE FROM sessions'",
    "psql 'postgres://localhost/app?host=db.acme.internal' -c 'DELETE FROM sessions'",  # the query names the host
    "psql postgres://u@localhost.example.com/app -c 'DELETE FROM sessions'",
    "psql app -c 'DELETE FROM sessions'",  # no host on the command line: a socket, PGHOST, a service file
])
def test_a_write_to_a_database_the_command_does_not_place_here_is_not_passed(project, command):
    answer = project.bash(command)
    assert answer.decision in ("ask", "deny"), answer.reason
    assert "database" in answer.reason


# -- an unknown program given a configuration file that places it in production --

@pytest.fixture(scope="module")
def configured(project: Project) -> Project:
    (project.work / "deploy").mkdir(exist_ok=True)
    (project.work / "deploy" / "app.toml").write_text('[deploy]\nenvironment = "production"\nhost = "app.example.com"\n')
    (project.work / "deploy" / "qa.toml").write_text('[deploy]\nenvironment = "qa"\nhost = "qa.example.com"\n')
    (project.work / "deploy" / "hosts.yaml").write_text("stage: qa\nhost: ledger-1.acme.internal\n")
    (project.work / "webpack.config.js").write_text("module.exports = { mode: 'production' };\n")
    return project


@pytest.mark.parametrize("command, file, target", [
    ("deployctl release --config deploy/app.toml", "deploy/app.toml", "production"),
    ("deployctl release --config=deploy/app.toml", "deploy/app.toml", "production"),
    ("shipit -f deploy/hosts.yaml", "deploy/hosts.yaml", "ledger-1.acme.internal"),  # infra.production_targets
])
def test_an_unknown_program_whose_config_file_places_it_in_production_is_asked(configured, command, file, target):
    answer = configured.bash(command)
    assert answer.decision == "ask", answer.reason
    assert f'path="{file}"' in answer.reason and f'target="{target}"' in answer.reason


@pytest.mark.parametrize("command", [
    "deployctl release --config deploy/qa.toml",
    "deployctl release",  # no file named: its words name nothing protected
    "webpack --config webpack.config.js",  # a build mode, not an environment
    "deployctl release --config /etc/hosts",  # outside the repository: not read
])
def test_an_unknown_program_with_an_ordinary_config_file_passes(configured, command):
    answer = configured.bash(command)
    assert answer.decision == "defer", answer.reason
