"""The generated benchmark sets (benchmarks/generate_cases.py): they load, their counts and
splits are the paper's, the generator is deterministic and up to date, transfer.json agrees
with the files, and a sample of cases per set passes for the plain agent under `correct`
(the full check is `python benchmarks/generate_cases.py --verify`)."""

from __future__ import annotations

import fnmatch
import json
from collections import Counter

import pytest
import yaml

from statewise.bench import Case, SequenceCase, load_cases, run_scenario_once
from statewise.contract import builtin_contract
from statewise.planners.rules import load_playbook
from tests.bench.conftest import CATEGORIES, DEV, REPO, VALUE_DEFECTS, case_generator

CASES = REPO / "benchmarks" / "cases"
SETS = ("primary", "erroneous", "defective_context", "planners", "sequences", "beyond")


@pytest.fixture(scope="module")
def sets():
    return {name: load_cases(CASES / name) for name in SETS}


def _tags(case) -> dict[str, str]:
    return dict(tag.split(":", 1) for tag in case.tags if ":" in tag)


def test_every_generated_file_loads(sets):
    for name, case_set in sets.items():
        files = [p for p in (CASES / name).iterdir() if p.suffix == ".yaml" and p.stem not in ("contract", "playbook")]
        assert len(files) == len(case_set.cases) + len(case_set.sequences), name
        assert case_set.contract_path is not None and case_set.playbook_path is not None
        assert (CASES / name / "README.md").is_file()
        for path in files:  # each file also loads on its own, as a case or a sequence
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
            assert data["id"] == path.stem


@pytest.mark.parametrize("name, total, stops", [("primary", 150, 25), ("erroneous", 150, 45),
                                                 ("defective_context", 150, 45)])
def test_the_150_case_sets_have_the_papers_counts(sets, name, total, stops):
    cases = sets[name].cases
    assert len(cases) == total and not sets[name].sequences
    assert Counter(c.expected for c in cases) == {"act": total - stops, "stop": stops}
    assert Counter(c.category for c in cases) == {category: 25 for category in CATEGORIES}
    defects = Counter(c.defect for c in cases)
    if name == "defective_context":
        assert defects == {"correct_value_defective_metadata": 150}
        # the value is right: the corruption only touches metadata
        assert all("value" not in c.target.corrupted.model_fields_set for c in cases)
    else:
        assert defects == {defect: 30 for defect in VALUE_DEFECTS}
        assert all(c.target.record("corrupted").value != c.target.correct for c in cases)
    # genuine variety: many templates, repositories and families, no duplicated workspace+target
    assert len({_tags(c)["template"] for c in cases}) >= 20
    assert len({_tags(c)["repo"] for c in cases}) >= 15
    assert len({c.family for c in cases}) >= 18
    fingerprints = {(c.workspace.fingerprint(), json.dumps(c.target.model_dump(mode="json"), sort_keys=True),
                     json.dumps(c.task.model_dump(), sort_keys=True)) for c in cases}
    assert len(fingerprints) == total


def test_planners_sequences_and_beyond(sets):
    planners = sets["planners"].cases
    assert len(planners) == 20 and {c.category for c in planners} == set(CATEGORIES)
    assert Counter(c.expected for c in planners) == {"act": 15, "stop": 5}

    sequences = sets["sequences"]
    assert len(sequences.sequences) == 32 and not sequences.cases
    assert all(len(s.tasks) == 4 for s in sequences.sequences)
    assert all(len(s.steps) == 4 and s.target is not None for s in sequences.scenarios)
    assert {s.defect for s in sequences.sequences} == set(VALUE_DEFECTS)

    beyond = sets["beyond"].cases
    kinds = Counter(c.defect for c in beyond)
    assert set(kinds) == {"interacting", "conflicting_corrections", "partial_evidence"} and min(kinds.values()) >= 10
    # partial evidence: the right outcome is always a safe stop
    assert {c.expected for c in beyond if c.defect == "partial_evidence"} == {"stop"}
    # interacting: a second defective record besides the target
    assert all(len(c.critical) == 2 and c.store for c in beyond if c.defect == "interacting")


def test_the_generator_is_deterministic_and_the_files_are_up_to_date(tmp_path):
    generator = case_generator()
    generator.generate(tmp_path)
    for name in SETS:
        ours = sorted(p.name for p in (CASES / name).iterdir())
        fresh = sorted(p.name for p in (tmp_path / name).iterdir())
        assert ours == fresh, name
        for file_name in fresh:
            assert (tmp_path / name / file_name).read_bytes() == (CASES / name / file_name).read_bytes(), \
                f"{name}/{file_name} differs from a fresh generation: run python benchmarks/generate_cases.py"
    assert (tmp_path / "transfer.json").read_bytes() == (CASES / "transfer.json").read_bytes()


def test_transfer_json_is_consistent_with_the_files(sets):
    generator = case_generator()
    record = json.loads((CASES / "transfer.json").read_text(encoding="utf-8"))
    # every dev case is mapped to a repository layout and an operation; the dev units follow
    dev_ids = {c.id for c in load_cases(DEV).cases}
    assert set(record["dev_case_repositories"]) == dev_ids == set(record["dev_case_operations"])
    assert record["dev"] == generator.dev_units(DEV)
    dev_keys = set(record["dev"]["state_types"])
    for case in load_cases(DEV).cases:
        assert {k.split("[")[0] for k in case.critical} <= dev_keys
        repo = generator.REPOS[record["dev_case_repositories"][case.id]]
        assert _has_layout(case, repo), (case.id, repo.name)  # the named layout is the dev case's
    primary = sets["primary"].cases
    assert set(record["cases"]) == {c.id for c in primary}
    seen_pairs = {tuple(p) for p in record["dev"]["state_actions"]}
    for case in primary:
        entry = record["cases"][case.id]
        tags = _tags(case)
        keys = sorted({k.split("[")[0] for k in case.critical})
        assert entry["repository"] == tags["repo"] and entry["operation"] == tags["op"]
        assert entry["state_types"] == keys
        unseen = entry["unseen"]
        assert unseen["repository"] == (tags["repo"] not in record["dev"]["repositories"])
        assert unseen["operation"] == (tags["op"] not in record["dev"]["operations"])
        assert unseen["state_type"] == any(k not in dev_keys for k in keys)
        assert unseen["state_action"] == any((k, tags["op"]) not in seen_pairs for k in keys)
        assert entry["fully_unseen"] == all(unseen.values()) and entry["any_unseen"] == any(unseen.values())
        # the repository named in the tags is the workspace's layout (for a seen one: the dev layout)
        assert _has_layout(case, generator.REPOS[tags["repo"]]), case.id
        # the operation is declared by the set's contract
        assert sets["primary"].contract.operation(tags["op"]) is not None
    summary = record["summary"]
    assert summary["any_unseen"] == sum(e["any_unseen"] for e in record["cases"].values())
    assert summary["fully_unseen"] > 0 and summary["seen"] > 0 and summary["any_unseen"] > 75
    # the new state types and operations come from the set's contract, not the core
    coding = builtin_contract()
    for key in record["new_in_primary"]["state_types"]:
        assert sets["primary"].contract.state_spec(key) is not None
    assert any(coding.state_spec(k) is None for k in record["new_in_primary"]["state_types"])
    assert any(coding.operation(op) is None for op in record["new_in_primary"]["operations"])


def _has_layout(case, repo) -> bool:
    """Every identifying file glob of ``repo`` matches a file of the case's workspace."""
    files = list(case.workspace.files)
    return all(any(fnmatch.fnmatchcase(f, glob) for f in files) for glob in repo.identifying())


def test_the_dev_families_are_copied_unchanged():
    dev = load_playbook(DEV / "playbook.yaml")
    ours = load_playbook(CASES / "primary" / "playbook.yaml")
    for family in dev.families:
        assert ours.families[family] == dev.families[family]


def _sample(case_set, per_set: int = 2):
    """A deterministic spread: evenly spaced scenarios (cases and sequences)."""
    scenarios = sorted(case_set.scenarios, key=lambda s: s.id)
    step = max(1, len(scenarios) // per_set)
    return scenarios[step // 2::step][:per_set]


@pytest.mark.parametrize("name", SETS)
def test_a_sample_passes_for_the_agent_under_correct(sets, name):
    case_set = sets[name]
    for scenario in _sample(case_set):
        episodes = run_scenario_once(scenario, "correct", "agent", case_set=case_set)
        assert len(episodes) == len(scenario.steps)
        for episode in episodes:
            assert episode.judged, (scenario.id, episode.unjudged_reason)
            assert episode.y and not episode.v, (scenario.id, episode.case, episode.goal, episode.invariants)
        if scenario.defect in VALUE_DEFECTS and scenario.kind == "case":
            corrupted = run_scenario_once(scenario, "corrupted", "agent", case_set=case_set)[0]
            assert corrupted.judged and not corrupted.y, scenario.id


def test_case_and_sequence_models():
    # the generated folders hold only the two documented kinds
    for name in SETS:
        for case in load_cases(CASES / name).cases + load_cases(CASES / name).sequences:
            assert isinstance(case, (Case, SequenceCase))


def test_the_set_contract_maps_its_tools_commands_to_its_operations(sets, tmp_path):
    # What the playbook's shell operations look like as commands reaches the hook's normalizer
    # through the contract's commands: section, with the slots the invariants read.
    from statewise.commands import analyze_command

    contract = sets["primary"].contract
    env = {"PATH": "/usr/bin:/bin", "KUBE_CONTEXT": "qa-2"}
    expected = {
        "deployctl release --config deploy/app.toml": ("deploy.run", {}),
        "deployctl release --env production": ("deploy.run", {"environment": "production"}),
        "kubectl apply -f deploy/k8s": ("k8s.apply", {"context": "qa-2"}),
        "fnm install 20.9.0": ("node.install", {"version": "20.9.0"}),
        "tar -czf site.tgz -C dist .": ("archive.create", {"archive": "site.tgz", "dir": "dist", "members": ["."]}),
        "gh pr merge --squash feature/x": ("pr.merge", {"branch": "feature/x"}),
        "ruff check src": ("lint.run", {"args": ["src"]}),
        "golangci-lint run ./...": ("lint.run", {"args": ["./..."]}),
    }
    # The built-in readings stay beside a contract's rule: tar's archive is also the file it writes.
    built_in = {"tar -czf site.tgz -C dist .": ("fs.write",)}
    for command, (operation, slots) in expected.items():
        analysis = analyze_command(command, cwd=tmp_path, env=env, contract=contract)
        assert analysis.operations == (*built_in.get(command, ()), operation), command
        action = next(a for a in analysis.actions if a.operation == operation)
        assert {k: v for k, v in action.args.items() if k != "command"} == slots, command
    # an option no rule declares is unresolved (fail closed), not unguarded
    assert analyze_command("deployctl release --force", cwd=tmp_path, env=env,
                           contract=contract).operations == ("shell.unresolved",)
    # without the set contract the same command is unguarded, as before
    assert analyze_command("deployctl release --config deploy/app.toml", cwd=tmp_path, env=env,
                           contract=builtin_contract()).unguarded
