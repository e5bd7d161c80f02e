"""Write what the front door (:mod:`statewise.__main__`) knows without importing click:
``cli/main_help.txt``, the top-level help, and ``cli/record_list_options.txt``, the options of
``record list`` as click declares them (``python -m statewise.cli.main_help``).

Run it after changing a command's summary, a global option or any command line source;
``tests/test_cli_startup.py`` fails until it is run, and until then click answers ``statewise
--help`` and ``statewise record list`` (correct, slower): each file carries the checksum of
the sources it was made from, and the front door reads neither when it differs.
"""

from __future__ import annotations

from pathlib import Path

import click

from statewise.__main__ import HELP_FILE, OPTIONS_FILE, help_checksum
from statewise.cli import main

#: click's width at a terminal of 80 columns or more (its own cap, less its margin).
WIDTH = 78


def render() -> str:
    """The top-level help exactly as ``statewise --help`` prints it at 80 columns or more."""
    with click.Context(main, info_name="statewise", terminal_width=WIDTH, **main.context_settings) as ctx:
        return main.get_help(ctx) + "\n"


def describe(param: click.Parameter, absent: object) -> str:
    """What kind of option ``param`` is, in the words the front door reads: ``text`` (one
    string value, default None), ``directory`` (``--project``: an existing readable directory,
    the value as given), ``flag`` (False unless given), ``multiple`` (strings, repeatable),
    ``alias`` (a hidden spelling whose value goes elsewhere) or ``other`` (anything else; the
    front door then leaves the command to click). ``absent`` is the value the command receives
    when the option is not given."""
    if not isinstance(param, click.Option) or param.envvar is not None or param.required or param.nargs != 1:
        return "other"
    callback = getattr(param.callback, "__qualname__", None)
    if not param.expose_value and param.hidden and absent is None:
        return "alias"
    if param.is_flag and not param.multiple and isinstance(param.type, click.types.BoolParamType) and absent is False:
        return "flag" if callback is None and not param.secondary_opts else "other"
    if param.multiple and param.type is click.STRING and callback is None and absent == ():
        return "multiple"
    if param.multiple or param.is_flag or absent is not None:
        return "other"
    if param.type is click.STRING and callback is None:
        return "text"
    kind = param.type
    if (isinstance(kind, click.Path) and kind.exists and not kind.file_okay and kind.dir_okay and kind.readable
            and not kind.writable and not kind.executable and not kind.resolve_path and not kind.allow_dash
            and kind.type is None and callback == "project_option.<locals>.from_main"):
        return "directory"
    return "other"


def record_list_options() -> str:
    """``record list``'s options as click declares them, one a line: kind, parameter name, the
    option's spellings; first the context settings the command line's groups declare."""
    record = main.commands["record"]
    assert isinstance(record, click.Group)
    command = record.commands["list"]
    settings = sorted({*main.context_settings, *record.context_settings, *command.context_settings})
    lines = [f"settings {' '.join(settings)}"]
    # What each parameter is when its option is not given: click's own reading of no words.
    with command.make_context("list", []) as ctx:
        absent = dict(ctx.params)
    lines += [f"{describe(param, absent.get(param.name or ''))} {param.name} "
              f"{' '.join([*param.opts, *param.secondary_opts])}" for param in command.params]
    return "\n".join(lines) + "\n"


def write() -> list[Path]:
    """Write the help and ``record list``'s options, each with the checksum of what it was
    made from; return the files."""
    folder = Path(__file__).resolve().parent.parent
    written = []
    for name, text in ((HELP_FILE, render()), (OPTIONS_FILE, record_list_options())):
        target = folder / name
        target.write_text(f"checksum {help_checksum()}\n{text}", encoding="utf-8")
        written.append(target)
    return written


if __name__ == "__main__":
    for path in write():
        print(f"wrote {path}")
