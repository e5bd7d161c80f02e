"""Names a project's manifests declare (dependencies, Cargo features, Go module paths), for
memory lines that name one.

"Dependencies: `json_rpc_handler` ~> 0.1", "- **Tinypool** - Worker threading" under a
Dependencies heading, "- `loader` - Template loading" under a Features heading, a Go module
path in a code span ("ADK Go (`example.org/kit`)"): each says a manifest of the project
(package.json, a gemspec, a Gemfile, Cargo.toml, pyproject.toml, requirements files, go.mod)
declares the name. How a line names one and where a manifest declares one are data
(``manifests.yaml``). A named dependency, feature or module is:

* valid when a manifest of the tree declares it;
* defective when none does now but one did when the memory file was added (git's history at
  that commit): the line was right and the project dropped the name;
* unresolved otherwise: a name no manifest ever declared is more likely written another way
  (a product name, "Chai/Expect") than stale, so it is not held against the line.

A negation or contrast vetoes the names of its part of the sentence, an example its whole
sentence (:mod:`statewise.memory.clauses`). Read-only: git runs through :class:`TreeIndex`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

import yaml

from statewise.memory.clauses import Vetoes
from statewise.memory.extract import MemoryFact, MemoryLine
from statewise.memory.paths import TreeIndex
from statewise.values import ValueType

__all__ = ["DECLARED_KEY", "Mention", "declared_facts", "judge_declared", "load_mentions"]

DECLARED_KEY = "project.declares_"  # project.declares_dependency[NAME], _feature[NAME], _module[PATH]
# the same vetoes as the contract's not-a-statement rule; an example speaks of its whole sentence
_NOT_A_CLAIM = re.compile(
    r"(?i)\b(?:no|not|never|don't|do not|doesn't|does not|must not|should not|shouldn't|without|instead of|"
    r"rather than|formerly|previously|used to|no longer|deprecated|removed)\b|"
    r"(?P<example>\b(?:for example|for instance|such as)\b|\be\.g\.)")


@dataclass(frozen=True, slots=True)
class Mention:
    """One way a line names a declared name (an entry of ``manifests.yaml``'s ``mentions``)."""

    kind: str
    pattern: re.Pattern[str]
    heading: re.Pattern[str] | None
    line: re.Pattern[str] | None


@lru_cache(maxsize=1)
def _data() -> dict[str, object]:
    text = resources.files("statewise.memory").joinpath("manifests.yaml").read_text(encoding="utf-8")
    data = yaml.safe_load(text)
    return data if isinstance(data, dict) else {}


@lru_cache(maxsize=1)
def load_mentions() -> tuple[Mention, ...]:
    """The mentions of ``manifests.yaml``, in file order."""
    found = []
    for spec in _data().get("mentions") or []:  # type: ignore[attr-defined]
        found.append(Mention(kind=str(spec["kind"]), pattern=re.compile(spec["pattern"]),
                             heading=re.compile(spec["heading"]) if spec.get("heading") else None,
                             line=re.compile(spec["line"]) if spec.get("line") else None))
    return tuple(found)


def _declarations(kind: str) -> tuple[tuple[tuple[str, ...], str], ...]:
    entries = (_data().get("declares") or {}).get(kind) or []  # type: ignore[attr-defined]
    return tuple((tuple(entry["files"]), str(entry["pattern"])) for entry in entries)


def declared_facts(line: MemoryLine) -> tuple[MemoryFact, ...]:
    """The names ``line`` says the project's manifests declare, as
    ``project.declares_<kind>[NAME]`` facts (none in a user's own memory file, which speaks of
    a person's habits rather than this project, and none in a vetoed part of a sentence)."""
    if line.file.kind in ("user", "auto", "parent"):
        return ()
    vetoes: Vetoes | None = None
    facts: dict[str, MemoryFact] = {}
    for mention in load_mentions():
        if mention.heading is not None and not mention.heading.search(line.heading):
            continue
        if mention.line is not None and not mention.line.search(line.text):
            continue
        for match in mention.pattern.finditer(line.text):
            if vetoes is None:
                vetoes = Vetoes.of(line.text, _NOT_A_CLAIM)
            if vetoes.covers(match.start(), match.end()):
                continue
            key = f"{DECLARED_KEY}{mention.kind}[{match.group('name')}]"
            facts.setdefault(key, MemoryFact(key=key, value=True, value_type=ValueType.BOOL, scope=line.file.scope,
                                             rule=f"declared_{mention.kind}"))
    return tuple(facts.values())


def _where(tree: TreeIndex, kind: str, name: str, commit: str = "") -> str:
    """The manifest (of the tree, or of ``commit``'s tree) that declares ``name`` ("" when none)."""
    for files, pattern in _declarations(kind):
        spec = pattern.replace("{name}", re.escape(name).replace("\\-", "-"))
        hits = tree.grep([spec], tuple(f":(glob){glob}" for glob in files), commit)
        if hits:
            return hits[0][0]
    return ""


def judge_declared(tree: TreeIndex, key: str, since_file: str) -> tuple[bool | None, str]:
    """(valid, defective or unknown as True, False, None; the evidence) for a
    ``project.declares_<kind>[NAME]`` fact of memory file ``since_file`` (a path from the root)."""
    kind = key[len(DECLARED_KEY): key.index("[")]
    name = key[key.index("[") + 1: -1]
    now = _where(tree, kind, name)
    if now:
        return True, f"{now} declares {kind} {name}"
    added = tree.added_commit(since_file)
    then = _where(tree, kind, name, added) if added else ""
    if then:
        return False, (f"no manifest declares {kind} {name}; when the memory file was added ({added[:10]}) "
                       f"{then} did")
    return None, f"no manifest declares {kind} {name}, now or when the memory file was added"
