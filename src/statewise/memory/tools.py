"""Which tools a project uses, as its checkout shows them, for memory lines that name one.

A line such as "mypy for type checking", "Use Tailwind CSS for styling" or "auto-formatted on
commit" says the project uses a tool (or some tool of a role). The tools, their roles and
what shows a project uses each (a config file, a dependency, a Makefile or CI step) are data
(``tools.yaml``). A named tool is:

* *found* when some evidence of it is in the tree;
* *gone* when none is left but the tree had some when the memory file was added (git's
  history at that commit): the line was right and the project moved on; the tool of the same
  role the tree shows now, if any, is named as what replaced it;
* *never* when neither the tree nor the commit that added the memory file shows it: nothing
  says the line was ever right, so it is only ``stale?``.

A negation or contrast ("not mypy", "instead of", "migrated from") vetoes the tools of its part
of the sentence, an example ("such as", "like") its whole sentence: "Uses `uv` (NOT pip)" names
uv. Read-only: git runs through :class:`TreeIndex`.
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

__all__ = ["TOOL_KEY", "Tool", "ToolFinding", "ToolIndex", "load_tools", "tool_facts"]

TOOL_KEY = "project.uses_tool["
FOUND, GONE, NEVER = "found", "gone", "never"
_CODE_SPAN = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)")
# the same vetoes as the contract's not-a-statement rule, and words that say the tool is a
# thing of the past or of another project; each speaks of its part of the sentence, examples
# and comparisons of the whole sentence (statewise.memory.clauses)
_NOT_A_CLAIM = re.compile(
    r"(?i)\b(?:no|not|never|don't|do not|doesn't|does not|must not|should not|shouldn't|without|instead of|"
    r"rather than|migrat\w*|replac\w*|switch\w*|formerly|previously|used to|no longer|deprecated|legacy)\b|"
    r"(?P<example>\b(?:for example|for instance|such as|like)\b|\be\.g\.|\bvs\.?(?!\w))")
# a config line that names a tool only to say it is gone ("this repo no longer runs MkDocs")
_GONE_SAYS = re.compile(r"(?i)\bno longer\b|\bnot used\b|\bremoved\b|\breplaced\b|\binstead of\b|\bdeprecated\b|"
                        r"\bmigrat\w*")
# where a tool's name starts: not inside a longer name or path
_WORD_START = r"(?<![\w./@-])"
# where a project's use of a tool shows (never Markdown, never a lock file)
_PATHSPECS = tuple(f":(glob){spec}" for spec in (
    "**/package.json", "**/pyproject.toml", "**/requirements*.txt", "**/requirements/*.txt", "**/setup.cfg",
    "**/setup.py", "**/tox.ini", "**/noxfile.py", "**/Makefile", "**/makefile", "**/GNUmakefile", "**/*.mk",
    "**/justfile", "**/Justfile", "**/.justfile", "**/.pre-commit-config.yaml", "**/lefthook.yml",
    ".github/workflows/*.yml", ".github/workflows/*.yaml", "**/.gitlab-ci.yml", "**/Taskfile.yml",
    "**/Taskfile.yaml", "**/Cargo.toml", "**/docs.json", "**/*.config.js", "**/*.config.ts", "**/*.config.mjs",
    "**/*.config.cjs", "**/turbo.json"))


@dataclass(frozen=True, slots=True)
class Tool:
    """One entry of ``tools.yaml``."""

    name: str
    role: str
    mention: re.Pattern[str]
    span_only: bool
    files: tuple[str, ...]
    content: tuple[str, ...]
    claim: bool  # names a role ("formatted on commit"), not one tool


@dataclass(frozen=True, slots=True)
class ToolFinding:
    """What the tree says about one named tool: ``found``, ``gone`` or ``never``, where the
    evidence is (or was), and the tool of the same role the tree shows now."""

    kind: str
    evidence: str = ""
    then: str = ""  # the commit that added the memory file, when the evidence was there
    replacement: str = ""

    @property
    def detail(self) -> str:
        instead = f"; the tree shows {self.replacement} for the same role" if self.replacement else ""
        if self.kind == FOUND:
            return f"used: {self.evidence}"
        if self.kind == GONE:
            return (f"no evidence left in the tree; when the memory file was added ({self.then[:10]}) "
                    f"{self.evidence} showed it{instead}")
        return f"no evidence in the tree, nor when the memory file was added{instead}"


@lru_cache(maxsize=1)
def load_tools() -> tuple[Tool, ...]:
    """The tools of ``tools.yaml``, in file order."""
    text = resources.files("statewise.memory").joinpath("tools.yaml").read_text(encoding="utf-8")
    tools = []
    for name, spec in (yaml.safe_load(text).get("tools") or {}).items():
        # a tool's name stands as a word, not inside a longer name (jest-dom, types-mypy) nor
        # as a code symbol's package (`uv.Screen`); a role's phrase brings its own boundaries
        mention = re.compile(r"(?i)" + spec["mention"] if spec.get("claim")
                             else r"(?i)" + _WORD_START + r"(?:" + spec["mention"] + r")(?![\w-]|\.\w)")
        tools.append(Tool(name=str(name), role=str(spec["role"]), mention=mention,
                          span_only=bool(spec.get("span_only", False)), files=tuple(spec.get("files") or ()),
                          content=tuple(spec.get("content") or ()), claim=bool(spec.get("claim", False))))
    return tuple(tools)


@lru_cache(maxsize=1)
def _any_mention() -> re.Pattern[str]:
    """Every mention that counts outside code spans, as one pattern: where a tool's own pattern
    matches, this one matches too (the same pattern is one of its alternatives, with the same
    flag), so a line it does not match names none of those tools."""
    words, phrases = [], []
    for tool in load_tools():
        if not tool.span_only:
            pattern = tool.mention.pattern.removeprefix("(?i)")
            if pattern.startswith(_WORD_START):  # tested once per position, not once per tool
                words.append(f"(?:{pattern.removeprefix(_WORD_START)})")
            else:
                phrases.append(f"(?:{pattern})")
    return re.compile("|".join([*phrases, *([_WORD_START + "(?:" + "|".join(words) + ")"] if words else [])]),
                      re.IGNORECASE)


def _tool(name: str) -> Tool | None:
    return next((tool for tool in load_tools() if tool.name == name), None)


def tool_facts(line: MemoryLine) -> tuple[MemoryFact, ...]:
    """The tools ``line`` says the project uses, as ``project.uses_tool[NAME]`` facts (none in the part
    of a sentence a negation, contrast or example speaks of, and none in a user's own memory
    file, which describes a person's habits rather than this project)."""
    if line.file.kind in ("user", "auto", "parent"):
        return ()
    spans = list(_CODE_SPAN.finditer(line.text))
    anywhere = _any_mention().search(line.text) is not None
    if not spans and not anywhere:
        return ()  # most lines: no tool is named, so none is tried one by one
    vetoes = Vetoes.of(line.text, _NOT_A_CLAIM)
    spans = [match for match in spans if not vetoes.covers(match.start(), match.end())]
    facts = []
    for tool in load_tools():
        if tool.span_only:
            named = any(tool.mention.search(span.group(2)) for span in spans)
        else:
            named = anywhere and any(not vetoes.covers(m.start(), m.end()) for m in tool.mention.finditer(line.text))
        if named:
            facts.append(MemoryFact(key=f"{TOOL_KEY}{tool.name}]", value=True, value_type=ValueType.BOOL,
                                    scope=line.file.scope, rule="tool_named"))
    return tuple(facts)


class ToolIndex:
    """Evidence of tools in one repository, now and at past commits, read once per check run."""

    def __init__(self, tree: TreeIndex) -> None:
        self.tree = tree

    def evidence(self, tool: Tool, commit: str = "") -> str:
        """Where the tree (or ``commit``'s tree) shows ``tool`` ("" when nowhere)."""
        for pattern in tool.files:
            hits = self.tree.matching_at(commit, pattern) if commit else self.tree.matching(pattern)
            if hits:
                return hits[0]
        if tool.content:
            # a word: not inside a longer name (jest-dom, types-mypy, @scope/x-mypy)
            words = [f"(^|[^[:alnum:]_/@-])({pattern})($|[^[:alnum:]_-])" for pattern in tool.content]
            for where, text in self.tree.grep(words, _PATHSPECS, commit):
                if not _GONE_SAYS.search(text):
                    return where
        return ""

    def judge(self, name: str, since_file: str) -> ToolFinding | None:
        """The finding on tool ``name`` for a line of memory file ``since_file`` (a path from the
        root); None for a name ``tools.yaml`` does not know."""
        tool = _tool(name)
        if tool is None:
            return None
        now = self.evidence(tool)
        if now:
            return ToolFinding(FOUND, now)
        replacement = next((other.name for other in load_tools()
                            if other.role == tool.role and other.name != tool.name and not other.claim
                            and self.evidence(other)), "")
        added = self.tree.added_commit(since_file)
        then = self.evidence(tool, added) if added else ""
        if then:
            return ToolFinding(GONE, then, added, replacement)
        return ToolFinding(NEVER, replacement=replacement)
