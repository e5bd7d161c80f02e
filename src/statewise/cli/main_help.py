"""Write ``cli/main_help.txt``, the top-level help the front door (:mod:`statewise.__main__`)
prints without importing click: ``python -m statewise.cli.main_help``.

Run it after changing a command's summary or a global option; ``tests/test_cli_startup.py``
fails until it is run, and until then ``statewise --help`` is rendered by click (correct, slower).
"""

from __future__ import annotations

from pathlib import Path

import click

from statewise.__main__ import HELP_FILE, help_checksum
from statewise.cli import main

#: click's width at a terminal of 80 columns or more (its own cap, less its margin).
WIDTH = 78


def render() -> str:
    """The top-level help exactly as ``statewise --help`` prints it at 80 columns or more."""
    with click.Context(main, info_name="statewise", terminal_width=WIDTH, **main.context_settings) as ctx:
        return main.get_help(ctx) + "\n"


def write() -> Path:
    """Write the help with the checksum of what it was rendered from; return the file."""
    target = Path(__file__).resolve().parent.parent / HELP_FILE
    target.write_text(f"checksum {help_checksum()}\n{render()}", encoding="utf-8")
    return target


if __name__ == "__main__":
    print(f"wrote {write()}")
