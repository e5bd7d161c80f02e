"""The command line's front door (``statewise``, ``python -m statewise``).

``statewise --help`` and ``statewise --version`` are answered here with the standard library
alone; everything else goes to :mod:`statewise.cli` (click). Importing click costs about three
times the interpreter's own start-up, and ``--help`` is what a new user runs first.

The help is the text click itself renders, kept in ``cli/main_help.txt`` with a checksum of
what it was rendered from (the command line's sources and click's formatter): when anything
differs (an edited command, another click, a terminal narrower than click's 80 columns, another
program name) the front door steps aside and click renders the help as ever, so the answer is
never stale. ``python -m statewise.cli.main_help`` writes the file, and
``tests/test_cli_startup.py`` checks it is current and identical to click's output.
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


def main(argv: list[str] | None = None, prog_name: str | None = None) -> None:
    """Run the command line: answer ``--help``/``--version`` here, or hand over to click."""
    args = sys.argv[1:] if argv is None else argv
    name = prog_name or os.path.basename(sys.argv[0])
    text = _fast_answer(args, name)
    if text is not None:
        sys.stdout.write(text)
        sys.stdout.flush()
        sys.exit(0)
    from statewise.cli import main as click_main

    click_main(args, prog_name=name)


if __name__ == "__main__":
    main(prog_name="statewise")
