"""Here-documents the bash grammar cannot parse, rewritten as here-strings bash treats alike.

tree-sitter-bash rejects some valid bash around here-documents: two on one line (``cat <<A &&
cat <<B``), a redirect then a pipe after one (``python - <<'PY' 2>&1 | head``). Bash reads the
bodies the same way every time: after the line that started them, in order, each up to the line
that is its delimiter (leading tabs stripped for ``<<-``). :func:`hoist_heredocs` does that and
writes each here-document in place as a here-string with the same content (``<<< 'body'``, or a
double-quoted string when the delimiter is unquoted, so ``$(...)`` in the body still runs and is
still analyzed). The walk uses the rewritten text only when the original does not parse and the
rewrite does (commands/walk.py), so every command the grammar reads keeps its own tree.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class _Pending:
    start: int  # where `<<` starts in the line
    end: int  # where the delimiter word ends
    delimiter: str
    quoted: bool
    strip_tabs: bool


def _single_quoted(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def _double_quoted(body: str) -> str:
    """A here-document body with expansions as a double-quoted string with the same value:
    in a body, a backslash escapes only ``$``, backquote, backslash and newline; a double
    quote is an ordinary character."""
    out = []
    i = 0
    while i < len(body):
        char = body[i]
        if char == "\\" and i + 1 < len(body) and body[i + 1] in "$`\\\n":
            out.append(body[i:i + 2])
            i += 2
            continue
        out.append("\\\\" if char == "\\" else '\\"' if char == '"' else char)
        i += 1
    return '"' + "".join(out) + '"'


def _delimiter(text: str, i: int) -> tuple[str, bool, int] | None:
    """The delimiter word at ``i``: its value with quotes removed, whether any part was
    quoted, and where it ends; None if there is none."""
    while i < len(text) and text[i] in " \t":
        i += 1
    value = []
    quoted = False
    while i < len(text) and text[i] not in " \t\n;&|<>()":
        char = text[i]
        if char in "'\"":
            close = text.find(char, i + 1)
            if close < 0:
                return None
            value.append(text[i + 1:close])
            quoted = True
            i = close + 1
        elif char == "\\" and i + 1 < len(text):
            value.append(text[i + 1])
            quoted = True
            i += 2
        elif char == "$":
            return None  # a delimiter with an expansion: leave it to the grammar
        else:
            value.append(char)
            i += 1
    word = "".join(value)
    return (word, quoted, i) if word else None


def hoist_heredocs(text: str) -> str | None:
    """``text`` with every here-document written as a here-string, or None when there is
    none or they cannot be read the way bash reads them (a missing delimiter line)."""
    out: list[str] = []
    pending: list[_Pending] = []
    line_start = 0
    i = 0
    found = False
    quote = ""
    while i < len(text):
        char = text[i]
        if quote == "'":
            if char == "'":
                quote = ""
            i += 1
            continue
        if char == "\\":
            i += 2
            continue
        if quote == '"':
            if char == '"':
                quote = ""
            i += 1
            continue
        if char in "'\"":
            quote = char
            i += 1
            continue
        if char == "#" and (i == 0 or text[i - 1] in " \t\n;&|("):
            while i < len(text) and text[i] != "\n":
                i += 1
            continue
        if text.startswith("$((", i) or (text.startswith("((", i) and text[:i].rstrip(" \t")[-1:] in ("", "\n", ";",
                                                                                                     "&", "|")):
            close = text.find("))", i)
            if close < 0:
                return None
            i = close + 2  # arithmetic: `<<` there is a shift
            continue
        if text.startswith("<<", i) and not text.startswith("<<<", i):
            strip = text.startswith("<<-", i)
            word = _delimiter(text, i + (3 if strip else 2))
            if word is None:
                return None
            delimiter, quoted, end = word
            pending.append(_Pending(i, end, delimiter, quoted, strip))
            i = end
            continue
        if char == "\n" and pending:
            bodies: list[str] = []
            position = i + 1
            for heredoc in pending:
                lines: list[str] = []
                while True:
                    if position > len(text):
                        return None  # no delimiter line
                    newline = text.find("\n", position)
                    raw = text[position:] if newline < 0 else text[position:newline]
                    position = len(text) + 1 if newline < 0 else newline + 1
                    candidate = raw.lstrip("\t") if heredoc.strip_tabs else raw
                    if candidate == heredoc.delimiter:
                        break
                    lines.append(candidate)
                body = "\n".join(lines)
                bodies.append(_single_quoted(body) if heredoc.quoted else _double_quoted(body))
            rebuilt = []
            cursor = line_start
            for heredoc, body in zip(pending, bodies, strict=True):
                rebuilt.append(text[cursor:heredoc.start])
                rebuilt.append("<<< " + body)
                cursor = heredoc.end
            rebuilt.append(text[cursor:i])
            out.append("".join(rebuilt) + "\n")
            found = True
            pending = []
            i = position
            line_start = i
            continue
        if char == "\n":
            out.append(text[line_start:i + 1])
            line_start = i + 1
        i += 1
    if pending:
        return None  # here-documents whose bodies never start
    out.append(text[line_start:])
    return "".join(out) if found else None


#: Programs that copy a here-document to their output as data (into a file, with `>` or `tee`).
_COPIERS = frozenset({"cat", "tee"})


def data_heredoc_spans(command: str) -> list[tuple[int, int]]:
    """(start, end) character offsets in ``command`` of each here-document body that is a file's
    content and nothing else: fed to ``cat`` or ``tee`` (``cat <<'EOF' > notes.py``) and with no
    expansion in it (a quoted delimiter, or none written). Its words name no file the command
    reads: ``self.env`` in the Python text an agent writes is an attribute, not a ``.env`` file.
    A command the grammar cannot parse has none."""
    from statewise.commands.words import _has_expansion, _parser

    source = command.encode("utf-8")
    tree = _parser().parse(source)
    if tree.root_node.has_error:
        return []
    spans: list[tuple[int, int]] = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        if node.type != "heredoc_body" or _has_expansion(node):
            continue
        statement = node.parent.parent if node.parent is not None else None
        program = next((child for child in (statement.children if statement is not None else ())
                        if child.type == "command"), None)
        name = program.child_by_field_name("name") if program is not None else None
        copier = source[name.start_byte:name.end_byte].decode("utf-8", "replace") if name is not None else ""
        if copier not in _COPIERS or program is None:
            continue
        if copier == "cat" and any(child.type != "command_name" for child in program.children):
            continue  # `cat <<'EOF' other-file`: cat reads the file too
        spans.append((len(source[:node.start_byte].decode("utf-8", "replace")),
                      len(source[:node.end_byte].decode("utf-8", "replace"))))
    return sorted(spans)
