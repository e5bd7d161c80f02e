"""Reading a sed script the way sed compiles it: which files it reads and writes, whether it
runs commands, and whether sed refuses it before doing anything.

sed compiles the whole script before it reads a line of input (GNU, BSD and busybox alike): a
script with a command no sed has is refused with nothing read, written or run, and ``sed -i``
leaves its files as they were. Only ``r``/``R`` (read) and ``w``/``W`` (write) name files, and
``e`` / the ``s///e`` flag run commands; the text of ``a``, ``i`` and ``c`` (one line, or
lines continued by a trailing backslash) is literal text sed prints, not names and not code.
GNU sed opens a ``w`` file while compiling, so a file named before the point where the script
is refused is still written (truncated) and is still reported.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from statewise.commands.words import _parse, _Parsed, _Spec, _Word

# Every command of GNU sed, a superset of BSD's and busybox's (`L` was GNU's until 4.2 and is
# read here as unknown, not as refused); a command position holding anything else makes every
# one of them refuse the script.
_COMMANDS = frozenset("{}=:#abcdDeFgGhHilLnNpPqQrRstTvwWxyz")
_SIMPLE = frozenset("=dDgGhHlnNpPqQxzF")  # no argument, or an optional number (l 5, q 1)


#: sed's options (GNU's, which accepts BSD's and busybox's): one table for the file tools'
#: reading (commands/files.py) and for the words' reading of the self-protection's secret check
#: (:func:`sed_text_operands`).
SED_OPTIONS = _Spec.of(flags="-n -E -r -s -u -z --quiet --silent --regexp-extended --separate --unbuffered "
                             "--null-data --posix --debug --sandbox --follow-symlinks --help --version",
                       valued="-e -f -l --expression --file --line-length", optional="-i --in-place")


@dataclass(frozen=True, slots=True)
class SedWords:
    """A sed command line read with :data:`SED_OPTIONS`: each script (the index of the word
    holding it, None when it shares its option's word, ``-eSCRIPT``, or when there is none)
    with its text, and the indexes of the operands that are files."""

    parsed: _Parsed
    scripts: tuple[tuple[int | None, str | None], ...]
    files: tuple[int, ...]
    in_place: bool


def sed_words(words: Sequence[_Word]) -> SedWords:
    """``words`` (the words after ``sed``) read as sed reads them: ``-e``/``--expression``
    scripts, else the first operand; BSD's ``-i ''`` (an empty backup suffix as its own word)
    is no file. Check ``parsed.error`` first."""
    parsed = _parse(words, SED_OPTIONS)
    operands = list(parsed.positions)
    in_place = parsed.has("-i", "--in-place")
    if in_place and operands and words[operands[0]].value == "" and parsed.value("-i", "--in-place") is None:
        operands = operands[1:]  # BSD sed: -i '' (no backup suffix)
    scripts: list[tuple[int | None, str | None]] = [
        (at, value) for (name, value), at in zip(parsed.options, parsed.value_words, strict=True)
        if name in ("-e", "--expression")]
    if not parsed.has("-e", "--expression", "-f", "--file"):
        scripts.append((operands[0], words[operands[0]].value) if operands else (None, ""))
        operands = operands[1:]
    return SedWords(parsed, tuple(scripts), tuple(operands), in_place)


@dataclass(frozen=True, slots=True)
class SedScript:
    """What a sed script does: the files it names to read and to write, whether it runs shell
    commands, and whether sed refuses it while compiling (then only ``writes`` happen)."""

    reads: tuple[str, ...]
    writes: tuple[str, ...]
    runs: bool
    refused: bool


def read_sed_script(script: str) -> SedScript | None:
    """``script`` read command by command as sed compiles it; None when a part of it cannot be
    read with confidence (an unterminated ``s``, an unknown construct some sed may accept)."""
    reads: list[str] = []
    writes: list[str] = []
    runs = False
    i, n = 0, len(script)

    def result(refused: bool = False) -> SedScript:
        return SedScript(tuple(reads), tuple(writes), runs, refused)

    def rest_of_line(start: int) -> tuple[str, int]:
        end = script.find("\n", start)
        end = n if end < 0 else end
        return script[start:end].strip(), end

    def delimited(start: int, delimiter: str) -> int | None:
        """The index after the closing delimiter of a part that starts at ``start``."""
        k = start
        while k < n:
            if script[k] == "\\":
                k += 2
                continue
            if script[k] == delimiter:
                return k + 1
            k += 1
        return None

    def address(k: int) -> int | None:
        if k < n and script[k] == "$":
            return k + 1
        if k < n and script[k].isdigit():
            while k < n and (script[k].isdigit() or script[k] == "~"):
                k += 1
            return k
        if k < n and script[k] in "/\\":
            delimiter = "/"
            if script[k] == "\\":
                if k + 1 >= n:
                    return None
                delimiter, k = script[k + 1], k + 1
            end = delimited(k + 1, delimiter)
            if end is None:
                return None
            while end < n and script[end] in "IM":
                end += 1
            return end
        return k

    def text_end(k: int) -> int:
        """Where the text of ``a``/``i``/``c`` starting at ``k`` ends: the first end of line
        not escaped by a backslash (``\\\\`` is an escaped backslash, which escapes nothing)."""
        while True:
            end = script.find("\n", k)
            if end < 0:
                return n
            slashes = 0
            while end - slashes - 1 >= k and script[end - slashes - 1] == "\\":
                slashes += 1
            if slashes % 2 == 0:
                return end
            k = end + 1

    while i < n:
        char = script[i]
        if char in " \t\n;}":
            i += 1
            continue
        if char == "#":
            i = rest_of_line(i)[1]
            continue
        after = address(i)
        if after is None:
            return None
        i = after
        if i < n and script[i] == ",":
            i += 1
            if i < n and script[i] in "+~":
                i += 1
                while i < n and script[i].isdigit():
                    i += 1
            else:
                after = address(i)
                if after is None:
                    return None
                i = after
        while i < n and script[i] in " \t!":
            i += 1
        if i >= n or script[i] in "\n;":
            return result(refused=True)  # an address with no command: "missing command"
        command = script[i]
        i += 1
        if command not in _COMMANDS:
            return result(refused=True)  # "unknown command": sed stops before reading input
        if command == "{":
            continue
        if command in "aic":
            i = text_end(i)
            continue
        if command in "btT:v":
            while i < n and script[i] not in ";\n":
                i += 1
            continue
        if command in "rRwW":
            name, i = rest_of_line(i)
            if not name:
                return None
            (writes if command in "wW" else reads).append(name)
            continue
        if command == "e":
            runs = True
            i = rest_of_line(i)[1]
            continue
        if command in "sy":
            if i >= n or script[i] in "\n\\":
                return None
            delimiter = script[i]
            middle = delimited(i + 1, delimiter)
            closing = delimited(middle, delimiter) if middle is not None else None
            if closing is None:
                return None
            i = closing
            if command == "s":
                while i < n and script[i] in "gpiImMe0123456789w":
                    if script[i] == "e":
                        runs = True
                    if script[i] == "w":
                        name, i = rest_of_line(i + 1)
                        if not name:
                            return None
                        writes.append(name)
                        break
                    i += 1
            continue
        if command in _SIMPLE:
            while i < n and script[i].isdigit():
                i += 1
            continue
        return None  # `L`, a `}` after an address: read in a way not modelled here
    return result()


def sed_text_operands(args: Sequence[str]) -> tuple[frozenset[int], tuple[str, ...]] | None:
    """For sed's arguments ``args`` (the words after ``sed``, quotes removed): the indexes of
    the words that are script text, and the files the script names (``r``, ``R``, ``w``,
    ``W``). None when the script is not read here: it runs commands, cannot be read, comes
    from a file (``-f``), shares its word with its option (``-eSCRIPT``), or the options are
    not sed's; every word then stays what it looks like."""
    found = sed_words([_Word.literal(arg) for arg in args])
    if found.parsed.error or found.parsed.has("-f", "--file") or not found.scripts:
        return None
    if any(at is None for at, _ in found.scripts):
        return None
    read = read_sed_script("\n".join(text or "" for _, text in found.scripts))
    if read is None or read.runs:
        return None
    return frozenset(at for at, _ in found.scripts if at is not None), read.reads + read.writes
