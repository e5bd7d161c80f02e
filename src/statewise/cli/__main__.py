"""``python -m statewise.cli``: the same command line as ``statewise``."""

from statewise.cli import main

main(prog_name="statewise")
