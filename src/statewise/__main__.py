"""The command line's front door (``statewise``, ``python -m statewise``).

``statewise --help`` and ``statewise --version`` are answered here with the standard library
alone, and ``statewise record list`` (the text view) without click; everything else goes to
:mod:`statewise.cli` (click). Importing click costs about three times the interpreter's own
start-up, and ``--help`` is what a new user runs first.

The help is the text click itself renders, kept in ``cli/main_help.txt`` with a checksum of
what it was rendered from (the command line's sources and click's formatter): when anything
differs (an edited command, another click, a terminal narrower than click's 80 columns, another
program name) the front door steps aside and click renders the help as ever, so the answer is
never stale. ``python -m statewise.cli.main_help`` writes the file, and
``tests/test_cli_startup.py`` checks it is current and identical to click's output.

``record list`` is parsed from the options click declares for it, as the same writer describes
them into ``cli/record_list_options.txt`` under the same checksum: the front door answers only
words it reads exactly as click does (``--task``, ``--text``, ``--project`` naming a readable
directory, each at most once) and hands anything else (``--json``, ``--key``, a deprecated
spelling, ``--help``, a mistake, a changed command) to click, which parses it and prints its
own errors. The work itself is :mod:`statewise.front`'s, which the click command calls too.
"""

from __future__ import annotations

import os
import sys

#: The command line's sources, relative to this package, whose text the help is rendered from.
HELP_SOURCES = ("cli/__init__.py", "cli/context.py", "cli/memory.py", "cli/examples.py")
#: click's modules that shape the rendering (found without importing click).
CLICK_SOURCES = ("core.py", "formatting.py", "decorators.py")
#: Where the rendered help is kept, relative to this package.
HELP_FILE = "cli/main_help.txt"
#: Where ``record list``'s options as click declares them are kept, relative to this package.
OPTIONS_FILE = "cli/record_list_options.txt"
#: What the front door expects the options file to declare, kind and parameter name, and the
#: parameters it answers itself; any other declaration (a new option, another kind) and it
#: leaves ``record list`` to click (tests/test_cli_startup.py fails until this is taught).
LIST_DECLARES = (("text", "task"), ("directory", "cwd"), ("alias", "_cwd_alias"), ("multiple", "keys"),
                 ("text", "text"), ("flag", "as_json"))
LIST_ANSWERS = ("task", "cwd", "text")
#: The context settings click's groups may declare with the front door still parsing as click.
LIST_SETTINGS = "settings help_option_names"

_HERE = os.path.dirname(os.path.abspath(__file__))


def help_checksum() -> str | None:
    """Checksums of what the top-level help is rendered from, ours then click's, as two hex
    words (None when a file is missing).

    Two words so that a test can tell a stale kept help (our sources changed: run the writer)
    from another click release on the machine (the front door steps aside; nothing is stale).
    """
    from zlib import crc32

    # The folder `import click` would load, found as the path finder finds it (importlib.util
    # costs more than the rest of the answer); a finder of another kind only costs a miss.
    click_dir = next((os.path.join(entry or ".", "click") for entry in sys.path
                      if os.path.isfile(os.path.join(entry or ".", "click", "__init__.py"))), None)
    if click_dir is None:
        return None
    words = []
    try:
        for paths in ([os.path.join(_HERE, name) for name in HELP_SOURCES],
                      [os.path.join(click_dir, name) for name in CLICK_SOURCES]):
            value = 0
            for path in paths:
                with open(path, "rb") as handle:
                    value = crc32(handle.read(), value)
            words.append(f"{value:08x}")
    except OSError:
        return None
    return " ".join(words)


def _terminal_columns() -> int:
    """``shutil.get_terminal_size().columns``, which click asks, without importing shutil (it
    brings re, bz2 and lzma): $COLUMNS, else the terminal on stdout, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 80
        columns = columns or 80
    return columns


def _fast_answer(argv: list[str], prog_name: str, help_file: str | None = None) -> str | None:
    """What ``statewise ARGV`` prints, when the front door can say it exactly; else None.

    ``help_file`` replaces the kept help (tests)."""
    if len(argv) != 1 or prog_name != "statewise":
        return None
    if argv[0] in ("-V", "--version"):
        from statewise import __version__

        return f"statewise, version {__version__}\n"
    # click renders at min(terminal columns, 80) - 2: the kept text is its 80-column rendering.
    if argv[0] not in ("-h", "--help") or _terminal_columns() < 80:
        return None
    try:
        with open(help_file or os.path.join(_HERE, HELP_FILE), encoding="utf-8") as handle:
            header, _, text = handle.read().partition("\n")
    except OSError:
        return None
    if header != f"checksum {help_checksum()}":
        return None
    return text


def _list_options(options_file: str | None = None) -> dict[str, tuple[str, str]] | None:
    """``record list``'s option spellings -> (kind, parameter name), from the kept file when it
    is current and declares what the front door expects; else None."""
    try:
        with open(options_file or os.path.join(_HERE, OPTIONS_FILE), encoding="utf-8") as handle:
            header, settings, *lines = handle.read().splitlines()
    except (OSError, ValueError):
        return None
    if header != f"checksum {help_checksum()}" or settings != LIST_SETTINGS:
        return None
    declared = [line.split(" ") for line in lines]
    if [tuple(words[:2]) for words in declared] != list(LIST_DECLARES):
        return None
    return {spelling: (words[0], words[1]) for words in declared for spelling in words[2:]}


def _readable_directory(path: str) -> bool:
    """What click's ``Path(exists=True, file_okay=False)`` accepts, narrowed to directories (a
    FIFO it accepts too is left to it)."""
    import stat

    try:
        return stat.S_ISDIR(os.stat(path).st_mode) and os.access(path, os.R_OK)
    except (OSError, ValueError):
        return False


def list_arguments(words: list[str], options_file: str | None = None) -> dict[str, str] | None:
    """The values of ``statewise record list WORDS`` by parameter name when the front door
    reads every word exactly as click would and answers every option given; else None."""
    options = _list_options(options_file)
    if options is None:
        return None
    values: dict[str, str] = {}
    position = 0
    while position < len(words):
        spelling, equals, attached = words[position].partition("=")
        kind, name = options.get(spelling, ("", ""))
        if not spelling.startswith("--") or name not in LIST_ANSWERS or name in values:
            return None  # not an option, one click answers, or given twice: click parses
        if equals:
            value = attached
        elif position + 1 < len(words) and not words[position + 1].startswith("-"):
            position += 1
            value = words[position]
        else:
            return None  # no value, or one that looks like an option: click says what it makes of it
        if kind == "directory" and not _readable_directory(value):
            return None  # click's own error for a missing or unreadable directory
        values[name] = value
        position += 1
    return values


def _record_list(values: dict[str, str]) -> None:
    """``statewise record list`` with the parsed ``values``, as click's command runs it: the
    same context object as the group makes without options, the store closed after the
    command, its errors through the same exit."""
    from statewise.front import Context, exit_for, print_retrieval, retrieve_for_list

    state = Context(None, None, verbosity=0)
    try:
        try:
            print_retrieval(retrieve_for_list(state, values.get("task"), values.get("cwd"), (), values.get("text")))
        except Exception as error:  # noqa: BLE001 - sorted by exit_for, as the click command's are
            exit_for(error)
        finally:
            state.close()
    except KeyboardInterrupt:
        sys.stderr.write("\nAborted!\n")  # what click prints for an interrupted command
        sys.stderr.flush()
        sys.exit(1)
    sys.exit(0)


def main(argv: list[str] | None = None, prog_name: str | None = None) -> None:
    """Run the command line: answer ``--help``/``--version`` and ``record list`` here, or hand
    over to click."""
    args = sys.argv[1:] if argv is None else argv
    name = prog_name or os.path.basename(sys.argv[0])
    text = _fast_answer(args, name)
    if text is not None:
        sys.stdout.write(text)
        sys.stdout.flush()
        sys.exit(0)
    if args[:2] == ["record", "list"]:
        values = list_arguments(args[2:])
        if values is not None:
            _record_list(values)
    from statewise.cli import main as click_main

    click_main(args, prog_name=name)


if __name__ == "__main__":
    main(prog_name="statewise")
