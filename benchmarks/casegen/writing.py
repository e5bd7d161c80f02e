"""Transfer units (RQ6), writing the sets and their READMEs, and verifying them with the plain agent.

Part of benchmarks/generate_cases.py (split for size; the script documents the whole)."""

from __future__ import annotations

import json
import shutil
from collections import Counter, defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from casegen.base import (
    CASES,
    CATEGORIES,
    DEFECT_CODE,
    DEV,
    DEV_REPOSITORIES,
    SEED,
    SET_NAMES,
    VALUE_DEFECTS,
    dev_case_maps,
)
from casegen.sets import (
    DEFECTIVE_CONTEXT,
    ERRONEOUS,
    PRIMARY,
    build_beyond,
    build_planner_set,
    build_sequences,
    build_single_set,
)
from casegen.specs import TEMPLATES
from casegen.texts import CONTRACT_YAML, PLAYBOOK_YAML

# =========================================================================================
# Transfer (RQ6): interface units of the dev set and, per primary case, seen or unseen
# =========================================================================================


def base_key(key: str) -> str:
    return key.split("[", 1)[0]


def dev_units(dev_dir: Path = DEV) -> dict[str, list]:
    """Repositories, operations, state types and state-action pairs the dev set encountered.
    State types are every key a dev case mentions (target, store, intent, critical); the
    state-action pairs pair each critical key with the case's operation."""
    case_repositories, case_operations = dev_case_maps(dev_dir)
    repos, operations, keys, pairs = set(), set(), set(), set()
    for path in sorted(dev_dir.glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        if data.get("kind") == "sequence" or "id" not in data or path.name in ("playbook.yaml", "contract.yaml"):
            continue
        case_id = data["id"]
        repos.add(case_repositories[case_id])
        operation = case_operations[case_id]
        operations.add(operation)
        mentioned = [data["target"]["key"], *(r["key"] for r in data.get("store", [])),
                     *data.get("developer", {}).get("intent", {}), *data.get("critical", [])]
        keys.update(base_key(k) for k in mentioned)
        pairs.update((base_key(k), operation) for k in data.get("critical", []))
    return {"repositories": sorted(repos), "operations": sorted(operations), "state_types": sorted(keys),
            "state_actions": sorted([list(p) for p in pairs])}


def case_units(case: dict) -> dict[str, Any]:
    tags = dict(tag.split(":", 1) for tag in case["tags"] if ":" in tag)
    operation = tags["op"]
    keys = sorted({base_key(k) for k in case["critical"]})
    return {"repository": tags["repo"], "operation": operation, "state_types": keys,
            "state_actions": [[k, operation] for k in keys]}


def transfer_record(cases: list[dict], dev: dict[str, list], dev_dir: Path = DEV) -> dict[str, Any]:
    case_repositories, case_operations = dev_case_maps(dev_dir)
    seen_pairs = {tuple(p) for p in dev["state_actions"]}
    per_case = {}
    for case in cases:
        units = case_units(case)
        new = {
            "repository": units["repository"] not in dev["repositories"],
            "operation": units["operation"] not in dev["operations"],
            "state_type": any(k not in dev["state_types"] for k in units["state_types"]),
            "state_action": any(tuple(p) not in seen_pairs for p in units["state_actions"]),
        }
        per_case[case["id"]] = {**units, "unseen": new, "any_unseen": any(new.values()),
                                "fully_unseen": all(new.values())}
    values = list(per_case.values())
    new_units = {
        "repositories": sorted({v["repository"] for v in values} - set(dev["repositories"])),
        "operations": sorted({v["operation"] for v in values} - set(dev["operations"])),
        "state_types": sorted({k for v in values for k in v["state_types"]} - set(dev["state_types"])),
        "state_actions": sorted([list(p) for p in {tuple(p) for v in values for p in v["state_actions"]} - seen_pairs]),
    }
    summary = {
        "cases": len(values),
        "seen": sum(not v["any_unseen"] for v in values),
        "any_unseen": sum(v["any_unseen"] for v in values),
        "fully_unseen": sum(v["fully_unseen"] for v in values),
        **{f"new_{dim}": sum(v["unseen"][dim] for v in values) for dim in
           ("repository", "operation", "state_type", "state_action")},
    }
    return {
        "format": "statewise-transfer/1",
        "description": (
            "RQ6 split of the primary set against the development set (benchmarks/cases/dev). Units: the "
            "repository (a named workspace layout; the dev cases' layouts are listed in dev_case_repositories), the "
            "tool operation the case is about (what its correct outcome runs, or for a safe stop the operation the "
            "task asks for), the state types (base keys of the case's decision-critical records) and the "
            "state-action pairs (state type, operation). A dimension is unseen for a case when any of its units "
            "there is new; fully unseen when all four are."),
        "dev": dev,
        "dev_case_repositories": dict(sorted(case_repositories.items())),
        "dev_case_operations": dict(sorted(case_operations.items())),
        "new_in_primary": new_units,
        "summary": summary,
        "cases": per_case,
    }


# =========================================================================================
# Writing the sets
# =========================================================================================


class _Dumper(yaml.SafeDumper):
    """Block style, except for short collections of plain scalars (kept on one line); text
    with newlines (file contents) as literal blocks."""


def _simple(value: Any) -> bool:
    leaves = value.values() if isinstance(value, dict) else value
    return all(isinstance(v, (str, int, float, bool)) or v is None for v in leaves) and not any(
        isinstance(v, str) and "\n" in v for v in leaves) and len(json.dumps(value)) <= 90


def _str(dumper: yaml.SafeDumper, value: str) -> Any:
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|" if "\n" in value else None)


def _dict(dumper: yaml.SafeDumper, value: dict) -> Any:
    return dumper.represent_mapping("tag:yaml.org,2002:map", value.items(), flow_style=_simple(value))


def _list(dumper: yaml.SafeDumper, value: list) -> Any:
    return dumper.represent_sequence("tag:yaml.org,2002:seq", value, flow_style=_simple(value))


_Dumper.add_representer(str, _str)
_Dumper.add_representer(dict, _dict)
_Dumper.add_representer(list, _list)


def dump(data: Any) -> str:
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=110)


def table(header: list[str], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _expected(case: dict) -> str:
    """A case's expectation (a sequence's: its first task's)."""
    return case.get("expected") or case["tasks"][0]["expected"]


def distribution_tables(cases: list[dict]) -> str:
    defects = sorted({c["defect"] for c in cases}, key=lambda d: list(DEFECT_CODE).index(d))
    rows = []
    for category in CATEGORIES:
        mine = [c for c in cases if c.get("category") == category]
        if not mine:
            continue
        rows.append([category, len(mine), sum(_expected(c) == "act" for c in mine),
                     sum(_expected(c) == "stop" for c in mine)]
                    + [sum(c["defect"] == d for c in mine) for d in defects])
    rows.append(["**total**", len(cases), sum(_expected(c) == "act" for c in cases),
                 sum(_expected(c) == "stop" for c in cases)]
                + [sum(c["defect"] == d for c in cases) for d in defects])
    out = table(["category", "cases", "act" if "tasks" not in cases[0] else "T1 act",
                 "stop" if "tasks" not in cases[0] else "T1 stop", *defects], rows)
    by_template = Counter(dict(tag.split(":", 1) for tag in c["tags"] if ":" in tag)["template"] for c in cases)
    by_repo = Counter(dict(tag.split(":", 1) for tag in c["tags"] if ":" in tag)["repo"] for c in cases)
    by_variant = Counter(dict(tag.split(":", 1) for tag in c["tags"] if ":" in tag)["variant"] for c in cases)
    families = Counter(t["family"] for c in cases for t in (c.get("tasks") or [c]))
    out += "\n\nTemplates (task family x category x key; see `TEMPLATES` in the generator):\n\n"
    out += table(["template", "category", "family", "key", "cases"],
                 [[t, TEMPLATES[t].category if t in TEMPLATES else "-", TEMPLATES[t].family if t in TEMPLATES else "-",
                   f"`{TEMPLATES[t].key}`" if t in TEMPLATES else "-", k] for t, k in sorted(by_template.items())])
    out += "\n\nPlaybook families: " + ", ".join(f"{f} ({k})" for f, k in sorted(families.items())) + "."
    out += "\n\nRepositories: " + ", ".join(f"{r} ({k}{', seen in dev' if r in DEV_REPOSITORIES.values() else ''})"
                                            for r, k in sorted(by_repo.items())) + "."
    out += "\n\nCorruption variants: " + ", ".join(f"{v} ({k})" for v, k in sorted(by_variant.items())) + "."
    return out


SET_DESCRIPTIONS = {
    "primary": """The paper's primary evaluation set (section 5.1): 150 executable cases, 125 that require an
operation and 25 that require a safe stop, 25 per category and 30 per value defect (wrong_value,
stale_value, over_generalized, conflict, scope_mismatch; 5 per category x defect cell, one of each
corruption variant). Used for RQ1-RQ4 and, with `../transfer.json`, for the seen/unseen split of
RQ6.""",
    "erroneous": """The additional set with *erroneous target values* (section 5.1): 150 cases, 105 act + 45 stop,
25 per category and 30 per value defect. Same template library and corruption construction as the
primary set, drawn with another seed, with more safe-stop tasks.""",
    "defective_context": """The additional set where the target value is *correct* but its freshness, provenance, scope
or supporting context is defective (defect `correct_value_defective_metadata`): 150 cases, 105 act
+ 45 stop. The right behaviour is to confirm the value and act (or stop where the task requires
a stop), never to "repair" a correct value. The plain agent acts on the (correct) value, so it
succeeds under both `correct` and `corrupted`; a guard that blocks or rewrites here costs
correctness. Variants: stale-timestamp (older than the key's TTL), agent-inferred, imported,
global-scope (the right value stored globally) and conflicting-context (a newer-than-the-corrupted
record at a broader scope says something else; in the `correct` condition it is older than the
target).""",
    "planners": """The cross-planner set (section 5.1, "the same cross-model case set"): 20 cases, 15 act + 5 stop,
one per listed template across the six categories, the five value defects in turn. Task texts
are self-contained so that model planners (`--planner openai:MODEL`, `anthropic:MODEL`,
`noisy:P`) can be compared with the rule planner on the same cases.""",
    "sequences": """32 four-task sequences for cross-task persistence (RQ5). T1 meets the corrupted target record
and can trigger a repair; T2-T4 depend on the same record. Between tasks the runner rebuilds the
workspace from its template and resets the conversation; only the store carries over. Sixteen
sequence templates (two sequences each), the five value defects in turn.""",
    "beyond": """Cases beyond the paper's stated limitations (section 6): two interacting defective records
(`interacting`: the target plus a second record that is defective in every condition but only
matters once the target is wrong), conflicting corrections (`conflicting_corrections`: two recent,
verified-looking corrections of one key disagree; the key's authority decides), and partial
evidence (`partial_evidence`: the verifying tool sleeps past its timeout, answers only in part or
cannot reach its service; the correct record says the action must not happen, so the only right
outcome in every condition is a safe stop, never an action on an unresolved premise).""",
}


def readme(set_name: str, cases: list[dict], sequences: list[dict] | None = None) -> str:
    items = sequences if sequences is not None else cases
    parts = [f"# {set_name}/", "", ("*Generated by `benchmarks/generate_cases.py`; do not edit by hand: change the "
             "generator and run `python benchmarks/generate_cases.py`.*"), "", SET_DESCRIPTIONS[set_name], ""]
    parts += ["## How it was generated", "",
              ("Each case comes from a *template* (one task family in one category over one state key, with a "
              "table of rows: values, branches, packages, and whether the correct outcome is to act or to stop), a "
              "named *repository* layout (seven taken from the dev cases, eleven new) and a *corruption variant* "
              "(how the corrupted target differs from the correct one). The generator walks a fixed allocation and "
              "draws templates, rows and repositories round-robin from tables shuffled once with a fixed seed "
              f"({SEED}), so regenerating gives byte-identical files. Every case builds a real sandbox (a git "
              "repository whose bare origin's hook enforces protection, files, shims for every tool any condition "
              "may run, environment variables, venvs) and is judged from what happens there. `contract.yaml` and "
              "`playbook.yaml` here add the keys, verifier bindings, operations, invariants and rule-planner "
              "families the cases need beyond the built-in contract (the dev set's `overwrite_branch` and "
              "`delete_remote_branch` are copied unchanged)."), "",
              ("Checked by `python benchmarks/generate_cases.py --verify`: the plain `agent` succeeds under `correct` "
              "for every case (every task of every sequence), and for value defects it fails under `corrupted`."), ""]
    parts += ["## Distribution", "", distribution_tables(items), ""]
    restrictive = [c for c in items if "restrictive" in c.get("tags", [])]
    if restrictive:
        parts += [f"**Restrictive cases.** {len(restrictive)} of the act cases are *restrictive*: the corrupted value "
                  "makes the plain agent refuse a needed operation (a spurious stop: a branch remembered as protected, "
                  "a path remembered as protected, a production context or deploy target, a withdrawn force-push "
                  "permission, an interpreter remembered outside the workspace) instead of running a wrong or unsafe "
                  "one. They are a fixed quota per category (`Allocation.restrictive`), tagged `restrictive`, so "
                  "results can be read with and without them: a guard that only examines side-effecting proposals "
                  "never sees these records. " + ", ".join(sorted(c["id"] for c in restrictive)) + ".", ""]
    if set_name == "primary":
        record = transfer_record(cases, dev_units())
        summary = record["summary"]
        parts += ["## Transfer (RQ6)", "",
                  (f"`../transfer.json` records, per case, whether its repository, operation, state types and "
                  f"state-action pairs were seen in `dev/`. Of {summary['cases']} cases, {summary['seen']} are fully "
                  f"seen, {summary['any_unseen']} contain some unseen unit and {summary['fully_unseen']} are fully "
                  f"unseen (new repository: {summary['new_repository']}, new operation: {summary['new_operation']}, "
                  f"new state type: {summary['new_state_type']}, new state-action pair: {summary['new_state_action']}"
                  "). New units:"), ""]
        for dim, units in record["new_in_primary"].items():
            shown = ", ".join(f"`{u if isinstance(u, str) else u[0] + ' x ' + u[1]}`" for u in units)
            parts += [f"* {dim} ({len(units)}): {shown}"]
        parts += [""]
    if sequences is not None:
        steps = Counter((t["family"], t["expected"]) for s in sequences for t in s["tasks"])
        parts += ["Tasks per family and expectation: " + ", ".join(f"{f}/{e} ({k})" for (f, e), k in
                                                                   sorted(steps.items())) + ".", ""]
    parts += ["## Corruption variants", "", {"defective_context": CONTEXT_DOC, "beyond": BEYOND_DOC}.get(
        set_name, VARIANT_DOC), ""]
    return "\n".join(parts)


# A line ending in a backslash goes on in the next one: each table row stays one line in the
# set's README.md, and is wrapped only here.
CONTEXT_DOC = """The corrupted target keeps the correct value; one of five variants, in turn within every
category:

| variant | how the corrupted record differs |
|---|---|
| stale-timestamp | observed three times the key's TTL ago (keys without a TTL get `imported` instead) |
| agent-inferred | source agent_inference, authority agent |
| imported | source import |
| global-scope | stored at global scope (the value is right here, but was generalized) |
| conflicting-context | older than a record at a broader scope that says something else; in the \
`correct` condition the target is the newer of the two |

The plain agent acts on the value, so it succeeds in both conditions; what is measured is
whether a guard confirms a correct value (and acts) instead of blocking or rewriting it."""

BEYOND_DOC = """| kind | cases | design |
|---|---|---|
| interacting | 12 | The target (varied by condition) plus a second record that is defective in \
*every* condition (a withdrawn force-push permission past its TTL or inferred by the agent; a \
stale protected-path list; a stale system interpreter). With the target correct the second record \
does not matter; with both wrong the agent acts unsafely. Both keys are `critical`. |
| conflicting_corrections | 10 | Two recent corrections of one key, both stamped verified, \
disagree: the target (the most specific, varied by condition) and an earlier correction at a \
broader scope. The wrong correction comes from another authority (a hook correcting a developer's \
setting, a developer correcting a machine fact) or from the key's own authority (a teammate, an \
observation made in another checkout), and is either the newer or the older one (variant tags \
`other-authority-*` / `own-authority-*`, `*-wrong-newer` / `*-right-newer`). |
| partial_evidence | 12 | The correct record says the action must not happen (a release freeze, a \
locked production, checks not passed); the corrupted one says it may. The verifier bound to the \
key is a script in the workspace that sleeps past its 2 s timeout, prints part of the answer and \
fails, or cannot reach its service. Every condition requires a safe stop: an action on a premise \
that could not be established is never right. |"""


VARIANT_DOC = """For value defects each (category, defect) cell has five cases, one per variant:

| defect | variants (how the corrupted target was made) |
|---|---|
| wrong_value | agent-guess (agent inference), imported, wrong-authority (a developer stating a \
machine fact, or a teammate stating another developer's setting), agent-guess-older, \
misread-output (a tool output parsed wrongly; for developer-owned keys an import) |
| stale_value | the key's own source, aged 3x, 10x and 1.5x the key's TTL; changed-within-ttl (the \
world changed after a fresh observation); imported-stale. Keys without a TTL get calendar ages |
| over_generalized | stored globally (own source, agent, older, imported) or one level too broad |
| scope_mismatch | one level broader (own, agent, imported, older) or a sibling scope that still \
applies (another worktree's interpreter at repo level; a teammate's setting at repo level) |
| conflict | the target is wrong (older, inside its TTL) and a newer record at a broader scope \
says the right value (own source, tool output, or the wrong authority) |

Some variants leave nothing for reliability checks to find (changed-within-ttl, misread-output, a
sibling scope from the key's own authority, a teammate's statement): they are in the set because
such records occur, not because any method should or should not catch them."""


def write_set(folder: Path, set_name: str, files: list[dict], sequences: list[dict] | None = None) -> None:
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    (folder / "contract.yaml").write_text(CONTRACT_YAML, encoding="utf-8")
    (folder / "playbook.yaml").write_text(PLAYBOOK_YAML, encoding="utf-8")
    for data in files + (sequences or []):
        (folder / f"{data['id']}.yaml").write_text(dump(data), encoding="utf-8")
    (folder / "README.md").write_text(readme(set_name, files, sequences), encoding="utf-8")


def generate(out: Path = CASES, dev_dir: Path = DEV) -> dict[str, int]:
    """Write every generated set under ``out`` (and transfer.json); return the file counts."""
    out.mkdir(parents=True, exist_ok=True)
    primary = build_single_set("primary", PRIMARY, SEED)
    sets = {
        "primary": (primary, None),
        "erroneous": (build_single_set("erroneous", ERRONEOUS, SEED + 1), None),
        "defective_context": (build_single_set("defective_context", DEFECTIVE_CONTEXT, SEED + 2), None),
        "planners": (build_planner_set(SEED + 3), None),
        "sequences": ([], build_sequences(SEED + 4)),
        "beyond": (build_beyond(), None),
    }
    for name, (cases, sequences) in sets.items():
        write_set(out / name, name, cases, sequences)
    write_transfer(primary, out, dev_dir)
    return {name: len(cases) + len(sequences or []) for name, (cases, sequences) in sets.items()}


def write_transfer(primary: list[dict] | None = None, out: Path = CASES, dev_dir: Path = DEV) -> dict[str, Any]:
    """Write ``out/transfer.json`` (the RQ6 split of the primary set against ``dev_dir``) alone,
    without rewriting any set; return the record."""
    if primary is None:
        primary = build_single_set("primary", PRIMARY, SEED)
    record = transfer_record(primary, dev_units(dev_dir), dev_dir)
    (out / "transfer.json").write_text(json.dumps(record, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    return record


# =========================================================================================
# Verification: the plain agent on every case
# =========================================================================================

VALUE_DEFECT_SET = frozenset(VALUE_DEFECTS)


def verify(cases_dir: Path = CASES, sets: Iterable[str] = SET_NAMES, jobs: int = 2) -> list[str]:
    """Run the plain agent under `correct` (and `corrupted`) on every case and sequence of
    ``sets``; return the problems: a judged-false or unjudged correct episode, or a value
    defect whose corruption does not make the agent fail."""
    from statewise.bench import run_bench

    sets = list(sets)
    result = run_bench(cases_dir, sets=sets, methods=("agent",), conditions=("correct", "corrupted"), jobs=jobs,
                       progress=False)
    problems = []
    corrupted_ok: dict[tuple[str, str], list[bool]] = defaultdict(list)
    for episode in result.episodes:
        where = f"{episode.set}/{episode.sequence + '/' if episode.sequence else ''}{episode.case}"
        if not episode.judged:
            problems.append(f"{where} [{episode.condition}]: unjudged: {episode.unjudged_reason}")
            continue
        if episode.condition == "correct" and not episode.y:
            failed = [c["detail"] for c in episode.goal + episode.invariants if not c["passed"]]
            problems.append(f"{where}: the agent fails under correct: {'; '.join(failed)}")
        if episode.condition == "corrupted":
            corrupted_ok[(episode.set, episode.sequence or episode.case)].append(episode.y)
            if episode.defect in VALUE_DEFECT_SET and episode.sequence is None and episode.y:
                problems.append(f"{where}: the corrupted value does not matter (the agent still succeeds)")
            if episode.defect == "correct_value_defective_metadata" and not episode.y:
                problems.append(f"{where}: the value is correct, yet the agent fails under corrupted")
    for (set_name, sequence), outcomes in corrupted_ok.items():
        if len(outcomes) > 1 and outcomes[0]:
            problems.append(f"{set_name}/{sequence}: T1 of the sequence succeeds under corrupted")
    return problems


