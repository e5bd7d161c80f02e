"""The case format: loading YAML and JSON, errors that name the file and the field, the schema."""

from __future__ import annotations

import json

import pytest

from statewise.bench import CaseError, load_case, load_cases
from statewise.bench.case import SCHEMA_PATH, case_schema, schema_text
from statewise.errors import InputError
from tests.bench.conftest import DEV, minimal_case, write_case


def test_the_saved_schema_is_the_generated_one():
    assert SCHEMA_PATH.read_text(encoding="utf-8") == schema_text(), \
        "run: python -m statewise.bench.schema"
    schema = case_schema()
    assert set(schema["discriminator"]["mapping"]) == {"case", "sequence"}


def test_a_case_loads_from_yaml_and_from_json(tmp_path):
    from_yaml = load_case(write_case(tmp_path / "y", minimal_case()))
    from_json = load_case(write_case(tmp_path / "j", minimal_case(), as_json=True))
    assert from_yaml == from_json
    assert from_yaml.kind == "case" and from_yaml.target.record("corrupted").value is False
    assert from_yaml.target.record("removed") is None
    corrupted = from_yaml.target.record("corrupted")
    assert corrupted.source.value == "developer" and corrupted.age == "40d"
    assert corrupted.scope == "repo:{repo}@main"  # placeholders are filled when the sandbox exists


@pytest.mark.parametrize(("changes", "field", "expected"), [
    ({"category": "gitpolicy"}, "category", "'runtime_env'"),
    ({"expected": "maybe"}, "expected", "'act' or 'stop'"),
    ({"goal": [{"kind": "remote_ref_unchangd", "branch": "main"}]}, "goal[0]", "unknown check kind"),
    ({"goal": [{"kind": "remote_ref_unchanged"}]}, "goal[0].branch", "required"),
    ({"invariants": [{"kind": "no_command_matching", "regex": "(unclosed"}]}, "invariants[0].regex",
     "regular expression"),
    ({"goal": []}, "goal", "at least 1"),
    ({"bogus": 1}, "bogus", "unknown field"),
    ({"workspace": {"files": {"../escape.txt": "x"}}}, "workspace.files", "inside the workspace"),
    ({"workspace": {"shims": {"tox": {"version": "4.0", "exit": 1}}}}, "workspace.shims.tox", "not both"),
    ({"target": {"key": "repository.protected", "correct": True, "corrupted": {"age": "forty days"}}},
     "target.corrupted.age", "should match pattern"),
    ({"target": {"key": "Repository", "correct": True, "corrupted": {"value": 1}}}, "target.key",
     "dotted lower-case"),
    ({"target": {"key": "repository.protected", "correct": True, "corrupted": {}}}, "target.corrupted",
     "changes the value or some metadata"),
    ({"id": "Has Spaces"}, "id", "should match pattern"),
])
def test_a_malformed_case_names_the_file_the_field_and_what_was_expected(tmp_path, changes, field, expected):
    path = write_case(tmp_path, minimal_case(**changes), name="broken.yaml")
    with pytest.raises(CaseError) as caught:
        load_case(path)
    error = caught.value
    assert isinstance(error, InputError)
    assert error.source == str(path) and error.field == field, str(error)
    assert expected in error.problem, str(error)
    assert str(error).startswith(f"{path}: {field}: ")


def test_unparseable_files_name_the_line(tmp_path):
    bad_yaml = tmp_path / "bad.yaml"
    bad_yaml.write_text("id: x\ntask: [unclosed\n", encoding="utf-8")
    with pytest.raises(CaseError, match=r"bad\.yaml: line \d+, column \d+: not valid YAML"):
        load_case(bad_yaml)
    bad_json = tmp_path / "bad.json"
    bad_json.write_text("{\"id\": ", encoding="utf-8")
    with pytest.raises(CaseError, match=r"bad\.json: line 1, column \d+: not valid JSON"):
        load_case(bad_json)
    listing = tmp_path / "list.yaml"
    listing.write_text("- 1\n", encoding="utf-8")
    with pytest.raises(CaseError, match="one mapping"):
        load_case(listing)


def test_a_set_checks_families_keys_and_duplicate_ids(tmp_path):
    write_case(tmp_path / "a", minimal_case(family="deploy"))
    with pytest.raises(CaseError, match="family: unknown playbook family 'deploy'"):
        load_cases(tmp_path / "a")
    write_case(tmp_path / "b", minimal_case(developer={"intent": {"project.nonexistent": "x"}}))
    with pytest.raises(CaseError, match=r"developer\.intent\.project\.nonexistent: .*not a key"):
        load_cases(tmp_path / "b")
    write_case(tmp_path / "c", minimal_case(), name="one.yaml")
    write_case(tmp_path / "c", minimal_case(), name="two.yaml")
    with pytest.raises(CaseError, match="id: 'push-small' is also the id of"):
        load_cases(tmp_path / "c")


def test_sequences_resolve_case_ids_and_inline_tasks(tmp_path):
    write_case(tmp_path, minimal_case())
    inline = {"id": "again", "family": "push_changes", "task": {"text": "push more"}, "expected": "act",
              "goal": [{"kind": "remote_branch_exists", "pattern": "agent/*", "new": True}]}
    write_case(tmp_path, {"kind": "sequence", "id": "seq", "title": "two pushes", "tasks": ["push-small", inline]})
    case_set = load_cases(tmp_path)
    [sequence] = [s for s in case_set.scenarios if s.kind == "sequence"]
    assert [s.id for s in sequence.steps] == ["push-small", "again"]
    assert sequence.target.key == "repository.protected" and sequence.workspace.git.diverged
    write_case(tmp_path, {"kind": "sequence", "id": "seq", "title": "x", "tasks": ["nope", inline]})
    with pytest.raises(CaseError, match=r"tasks\[0\]: no case 'nope'"):
        load_cases(tmp_path)


def test_the_dev_set_loads_with_its_playbook_extension(dev_set):
    assert len(dev_set.cases) >= 10 and dev_set.playbook_path is not None
    assert {"overwrite_branch", "delete_remote_branch", "push_changes"} <= set(dev_set.playbook.families)
    assert {c.category for c in dev_set.cases} == {
        "runtime_env", "other_env", "filesystem", "git_policy", "config_build", "user_settings"}
    assert {c.expected for c in dev_set.cases} == {"act", "stop"}
    assert any(s.kind == "sequence" for s in dev_set.scenarios)
    for path in DEV.glob("*.yaml"):
        if path.name not in ("playbook.yaml", "contract.yaml"):
            json.dumps(load_case(path).model_dump(mode="json"))


def test_docs_list_every_check_kind_and_method():
    from statewise.bench import CHECKS, METHODS
    from tests.bench.conftest import REPO

    text = (REPO / "docs" / "cases.md").read_text(encoding="utf-8")
    assert [kind for kind in CHECKS if f"| `{kind}` |" not in text] == []
    assert [name for name in METHODS if f"`{name}`" not in text] == []


def test_a_critical_key_the_contract_does_not_declare_is_refused_naming_case_and_field(tmp_path):
    write_case(tmp_path / "a", minimal_case(critical=["repository.protected", "no.such_key"]))
    with pytest.raises(CaseError) as caught:
        load_cases(tmp_path / "a")
    message = str(caught.value)
    assert caught.value.field == "critical[1]"
    assert "case 'push-small'" in message and "'no.such_key' is not a key" in message
    write_case(tmp_path / "b", minimal_case(critical=["env.var[KUBE_CONTEXT]"]))
    assert load_cases(tmp_path / "b").cases[0].critical == ["env.var[KUBE_CONTEXT]"]
