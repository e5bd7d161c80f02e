"""The "Examples" section of every command's help, by command path.

Kept in one table rather than beside each command so that ``tests/test_cli_examples.py`` can
hold every user command to having examples, parse each one with the real command line, and run
a sample of them in a real repository. A line starting with ``#`` says what the next one does;
``RECORD_ID`` stands for an id as the command's usage names it.
"""

from __future__ import annotations

#: Command path (words after ``statewise``; "" for ``statewise`` itself) -> example lines.
EXAMPLES: dict[str, tuple[str, ...]] = {
    "": (
        "statewise init",
        'statewise record add project.test_command "pytest -q"',
        "statewise record list",
        'statewise guard --task "push the changes"',
    ),
    "init": (
        "statewise init",
        "statewise --store postgresql://db.example.com/statewise init --json",
    ),
    "record": (
        "statewise record list --key project.test_command",
        "statewise record get user.allow_force_push --scope user:alice",
    ),
    "record add": (
        "# the repository's scope is derived from the current folder",
        "statewise record add python.package_index https://pypi.example.com/simple",
        "statewise record add user.allow_force_push false --scope user:alice",
        'statewise record add project.test_command "pytest -x" --replace \\',
        '    --reason "the suite stops at the first failure now"',
    ),
    "record get": (
        "statewise record get user.allow_force_push --scope user:alice",
        "statewise record get user.allow_force_push --scope user:alice --json",
    ),
    "record list": (
        "statewise record list",
        "statewise record list --key git.default_branch --json",
        "statewise record list --text pytest",
    ),
    "record history": (
        "statewise record history user.allow_force_push --scope user:alice",
    ),
    "record lineage": (
        "statewise record lineage RECORD_ID",
        "statewise record lineage RECORD_ID --json",
    ),
    "record retract": (
        'statewise record retract RECORD_ID --reason "alice left the team"',
    ),
    "record revert": (
        'statewise record revert RECORD_ID --reason "the remote was restored"',
    ),
    "record export": (
        "statewise record export records.jsonl",
        "statewise record export - | gzip > records.jsonl.gz",
    ),
    "record import": (
        "# into another store: all records and links, or nothing",
        "statewise --store copy.db record import records.jsonl",
    ),
    "guard": (
        'statewise guard --task "push the changes"',
        'statewise guard --task "push the changes" --json',
        '# a proposal of your own: {"tool": "shell", "operation": "test.run", ...}',
        'statewise guard --task "run the tests" --action action.json --planner none',
    ),
    "verify": (
        "statewise verify git.current_branch",
        "statewise verify runtime.python_version --json",
    ),
    "bench": (
        "statewise bench --quick",
        "statewise bench --sets primary --methods agent,statewise --html report.html",
    ),
    "install": (
        "statewise install claude-code",
        "statewise install codex --user",
    ),
    "uninstall": (
        "statewise uninstall claude-code",
    ),
    "doctor": (
        "statewise doctor",
        "statewise doctor --agent claude-code --json",
    ),
    "mcp": (
        "# usually started by the agent, e.g. claude mcp add statewise -- statewise mcp",
        "statewise mcp --project ~/src/app",
    ),
    "contract": (
        "statewise contract check contracts/team.yaml",
    ),
    "contract check": (
        "statewise contract check contracts/team.yaml",
        "statewise contract check contracts/team.yaml --json",
    ),
    "keys": (
        "statewise keys",
        "statewise keys python",
        "statewise keys --json",
    ),
    "demo": (
        "statewise demo",
        "statewise demo store",
        "statewise demo --report figure1.json",
    ),
    "store": (
        "statewise store check",
    ),
    "store check": (
        "statewise store check",
        "statewise --store postgresql://db.example.com/statewise store check --json",
    ),
    "config": (
        "statewise config approve",
    ),
    "config approve": (
        "# after reviewing .statewise/config.toml (git diff .statewise/config.toml)",
        "statewise config approve",
    ),
    "memory": (
        "statewise memory check",
        "statewise memory context --stats",
    ),
    "memory import": (
        "statewise memory import",
        "statewise memory import --agent claude --json",
    ),
    "memory check": (
        "statewise memory check",
        "statewise memory check --diff",
        "statewise memory check --no-store --sarif memory.sarif",
    ),
    "memory context": (
        "statewise memory context",
        "statewise memory context --budget 200 --stats",
    ),
}
