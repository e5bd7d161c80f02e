"""Turn the lines of a memory file into typed facts, declaratively, from the contract.

Every rule of the contract's ``memory:`` section is a regular expression bound to a key. A
``line`` rule matches a whole line; a ``code`` rule matches each code span of a line and
each line of a fenced block, optionally only under a heading that matches ``heading``.
Extraction is deterministic (same text, same facts, in order) and never guesses: a fact
whose key cannot be filled, whose key is not declared, or whose value does not type-check
is dropped, and a line with no fact is kept as untyped text.
"""

from __future__ import annotations

import hashlib
import posixpath
import re
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from statewise.contract import Contract, MemoryRule
from statewise.errors import StateWiseError
from statewise.limits import MAX_MEMORY_FILE_BYTES, read_capped
from statewise.memory.clauses import Vetoes
from statewise.memory.discovery import MemoryFile
from statewise.records import check_key
from statewise.scopes import Scope
from statewise.values import ValueType, check_value

__all__ = ["MemoryFact", "MemoryLine", "extract_file", "extract_text", "line_digest"]

_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)")
_MARKUP_ONLY = re.compile(r"^\s*(?:[-*_=]{3,}|\|?(?:\s*:?-{2,}:?\s*\|)+\s*:?-*:?\s*\|?)\s*$")
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_MAX_LINE = 2000  # a longer line is kept as text; nothing that long is a fact
_FENCED_CD = re.compile(r"^(?:\$\s+)?cd\s+(?P<dir>[\w./@-]+)$")
# A tree listing (`tree`'s output, drawn by hand): a branch glyph, then the entry's name; a
# listing's root is a lone folder name above its entries.
_TREE_ENTRY = re.compile(r"^(?P<indent>[\s│┃|]*)(?:[├└┣┗]|[|`+])[─━-]+\s*(?P<name>[^\s#]+)")
_TREE_ROOT = re.compile(r"^(?P<name>\.?/?|[\w@.-]*[A-Za-z][\w@./-]*/)\s*(?:#.*)?$")
_NOT_A_NAME = re.compile(r"[*?<>{}$]|\.\.\.|…")


def line_digest(text: str) -> str:
    """The content hash that identifies a line across re-imports (sha256 of the stripped text)."""
    return hashlib.sha256(text.strip().encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class MemoryFact:
    """One typed fact a line states: ``key`` = ``value`` in ``scope``, found by ``rule``."""

    key: str
    value: Any
    value_type: ValueType
    scope: str
    rule: str


@dataclass(frozen=True, slots=True)
class MemoryLine:
    """One content line of a memory file (1-based ``number``), with the facts it states."""

    file: MemoryFile
    number: int
    text: str
    digest: str
    heading: str
    facts: tuple[MemoryFact, ...]
    context: tuple[str, ...] = ()  # folders the text gives the line's names (a tree listing's root)

    @property
    def typed(self) -> bool:
        return bool(self.facts)


def _fill(template: str, groups: dict[str, str]) -> str | None:
    missing = False

    def one(match: re.Match[str]) -> str:
        nonlocal missing
        value = groups.get(match.group(1))
        if not value:
            missing = True
            return ""
        return value

    filled = _PLACEHOLDER.sub(one, template)
    return None if missing else filled


def _fact(contract: Contract, rule: MemoryRule, match: re.Match[str], scope: str,
          repo: str | None) -> MemoryFact | None:
    groups = {name: value for name, value in match.groupdict().items() if value is not None}
    key = _fill(rule.key, groups)
    if key is None:
        return None
    try:
        check_key(key)
    except StateWiseError:
        return None  # e.g. a qualifier with a space: not a key, so not a fact
    key_type = contract.key_type(key)
    if key_type is None:
        return None
    value = rule.value if rule.value is not None else groups.get("value")
    if isinstance(value, str):
        value = value.strip()
    if value is None or value == "":
        return None
    try:
        check_value(value, key_type.value_type, choices=key_type.choices, key=key)
    except (ValueError, StateWiseError):
        return None
    branch = groups.get("branch")
    if branch:
        if not repo:
            return None  # a branch fact needs the repository it belongs to
        try:
            scope = str(Scope.repo(repo, branch))
        except StateWiseError:
            return None
    return MemoryFact(key=key, value=value, value_type=key_type.value_type, scope=scope, rule=rule.name)


def _applies(rule: MemoryRule, heading: str, text: str, span: tuple[int, int] | None = None,
             vetoes: dict[str, Vetoes] | None = None) -> bool:
    """Whether ``rule`` reads this line (or the code span at ``span`` of it): under a heading it
    names, and not vetoed by ``unless`` (for a span, only the part of the sentence a veto word
    speaks of: :mod:`statewise.memory.clauses`)."""
    if rule.heading is not None and not re.search(rule.heading, heading):
        return False
    if rule.unless is None:
        return True
    if span is None or vetoes is None:
        return not re.search(rule.unless, text)
    if rule.unless not in vetoes:
        vetoes[rule.unless] = Vetoes.of(text, rule.unless)
    return not vetoes[rule.unless].covers(*span)


def _frontmatter_end(lines: list[str]) -> int:
    """Index of the first line after a leading ``---`` YAML block (Cursor's .mdc files)."""
    if lines and lines[0].strip() == "---":
        for index in range(1, min(len(lines), 200)):
            if lines[index].strip() == "---":
                return index + 1
    return 0


def extract_text(text: str, file: MemoryFile, contract: Contract, *, repo: str | None = None) -> list[MemoryLine]:
    """The content lines of ``text`` (the content of ``file``) with their typed facts.

    Headings, fence markers, front matter, rules (``---``) and blank lines are structure,
    not content, and are not returned. ``repo`` is the repository identity branch-level
    facts are placed in.
    """
    rules = contract.memory.rules
    line_rules = [r for r in rules if r.line is not None]
    code_rules = [r for r in rules if r.code is not None]
    raw_lines = text.splitlines()
    if file.max_lines is not None:
        raw_lines = raw_lines[: file.max_lines]
    start = _frontmatter_end(raw_lines)
    heading = ""
    fence: str | None = None
    fence_dir: str | None = None  # where a `cd` earlier in the same fenced block moved to
    tree_root: str | None = None  # the root a tree listing in this block names ("" for none)
    tree_stack: list[tuple[int, str]] = []  # the listing's open folders: (column, name)
    result: list[MemoryLine] = []
    for index in range(start, len(raw_lines)):
        raw = raw_lines[index]
        stripped = raw.strip()
        fence_match = _FENCE.match(raw)
        if fence is not None:
            if fence_match and fence_match.group(1)[0] == fence[0] and len(fence_match.group(1)) >= len(fence):
                fence = fence_dir = tree_root = None
                tree_stack = []
                continue
            if not stripped:
                continue
        else:
            if fence_match:
                fence = fence_match.group(1)
                tree_root, tree_stack = None, []
                continue
            if not stripped or _MARKUP_ONLY.match(raw):
                continue
            heading_match = _HEADING.match(raw)
            if heading_match:
                heading = heading_match.group(2)
                continue
        facts: list[MemoryFact] = []
        consumed: set[str] = set()
        context: tuple[str, ...] = ()
        if len(raw) <= _MAX_LINE:
            if fence is None:
                for rule in line_rules:
                    if not _applies(rule, heading, raw):
                        continue
                    for match in re.finditer(rule.line or "", raw):
                        fact = _fact(contract, rule, match, file.scope, repo)
                        if fact is not None:
                            facts.append(fact)
                            consumed.add(str(fact.value))
                codes: list[tuple[str, tuple[int, int] | None]] = [
                    (m.group(2).strip(), (m.start(), m.end())) for m in _CODE_SPAN.finditer(raw)]
            else:
                # A fenced line is one command, run where an earlier `cd` in the block moved to;
                # a comment is not a command.
                codes = [] if stripped.startswith("#") else [(stripped, None)]
                entry = _TREE_ENTRY.match(raw)
                if entry is None and not tree_stack and tree_root is None:
                    root = _TREE_ROOT.match(stripped)
                    if root is not None and "/" in stripped:
                        tree_root = root.group("name").strip("/").removeprefix("./").removeprefix(".")
                if entry is not None:
                    # a name in a listing is relative to the folders above it, then the root
                    column, name = len(entry.group("indent")), entry.group("name")
                    tree_stack = [(c, n) for c, n in tree_stack if c < column] + [(column, name.rstrip("/"))]
                    named = "/".join(n for _, n in tree_stack) + ("/" if name.endswith("/") else "")
                    codes = [] if _NOT_A_NAME.search(named) else [(named, None)]
                    context = (tree_root,) if tree_root else ()
                    if tree_root is None:
                        tree_root = ""
                cd = _FENCED_CD.match(stripped)
                if cd:
                    moved = posixpath.normpath(posixpath.join(fence_dir or ".", cd.group("dir")))
                    fence_dir = None if moved == "." else moved
                elif fence_dir and codes:
                    codes = [(f"cd {fence_dir} && {stripped.removeprefix('$').strip()}", None)]
            vetoes: dict[str, Vetoes] = {}
            for code, span in codes:
                if code in consumed:
                    continue
                for rule in code_rules:
                    if not _applies(rule, heading, raw, span, vetoes):
                        continue
                    code_match = re.search(rule.code or "", code)
                    fact = _fact(contract, rule, code_match, file.scope, repo) if code_match else None
                    if fact is not None:
                        facts.append(fact)
                        break
        unique: dict[tuple[str, str, str], MemoryFact] = {}
        for fact in facts:
            # a line may state several values of one key ("`pnpm test:a` or `pnpm test:b`"): each
            # is a claim a reader would check; the importer keeps the first as the key's record
            unique.setdefault((fact.key, fact.scope, repr(fact.value)), fact)
        result.append(MemoryLine(file=file, number=index + 1, text=raw.rstrip(), digest=line_digest(raw),
                                 heading=heading, facts=tuple(unique.values()), context=context))
    return result


# `statewise memory check` imports, then checks: both read every memory file. The lines of a
# text are the same for the same file, contract and repository (extraction is deterministic),
# so the last few are kept, keyed by the text's digest; the contract is held so its id stays
# its own.
_EXTRACTED: OrderedDict[tuple[MemoryFile, int, str | None, str], tuple[Contract, tuple[MemoryLine, ...]]] = (
    OrderedDict())
_EXTRACTED_MAX = 256


def extract_file(file: MemoryFile, contract: Contract, *, repo: str | None = None) -> list[MemoryLine]:
    """Read ``file`` and extract its lines (an unreadable file gives no lines; one over
    :data:`~statewise.limits.MAX_MEMORY_FILE_BYTES` raises InputTooLargeError, unread)."""
    try:
        text = read_capped(file.path, MAX_MEMORY_FILE_BYTES, "a memory file").decode("utf-8", errors="replace")
    except OSError:
        return []
    slot = (file, id(contract), repo, hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest())
    if slot in _EXTRACTED:
        _EXTRACTED.move_to_end(slot)
        return list(_EXTRACTED[slot][1])
    lines = extract_text(text, file, contract, repo=repo)
    _EXTRACTED[slot] = (contract, tuple(lines))
    if len(_EXTRACTED) > _EXTRACTED_MAX:
        _EXTRACTED.popitem(last=False)
    return lines
