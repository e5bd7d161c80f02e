"""Wrapper prefixes as data: where the command a wrapper runs starts.

An agent often runs a command inside an environment manager (``conda run -n base pytest``,
``nix develop -c make``, ``direnv exec . npm test``) or under a process wrapper (``nice``,
``timeout 60``). The command inside is what has effects, so it is checked exactly as if it
were typed without the prefix. Each entry below says, for one program, which words select
the wrapping form (``run``, ``develop``), which options the wrapper takes (and how many
values each), how many words of its own come before the command (``timeout DURATION``,
``direnv exec DIR``), which options carry the command (``nix develop -c CMD ARGS``) or a
shell string (``nix-shell --run 'CMD'``), and what the wrapper does when given no command
(some open an interactive shell). An option not in the table means the command's start is
not known: the call is unresolved (fail closed), never skipped.

:func:`scan_wrapper` reads a wrapper's words with one of these shapes; ``_Wrappers.wrapped``
(commands/wrappers.py) peels the wrapper and dispatches what it runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from statewise.commands.words import _Word

#: What a wrapper given no command does.
NOTHING = "nothing"  # runs nothing, or lists what it could run (``pixi run``, ``ionice -p PID``)
SESSION = "session"  # opens an interactive shell (``nix develop``, ``hatch shell``)
NO_COMMAND = "fail"  # the command is required; a call without one is unresolved


def _arity(flags: str = "", valued: str = "", pairs: str = "") -> dict[str, int]:
    table = {name: 0 for name in flags.split()}
    table.update({name: 1 for name in valued.split()})
    table.update({name: 2 for name in pairs.split()})  # nix's --option NAME VALUE, --arg NAME EXPR
    return table


@dataclass(frozen=True, slots=True)
class WrapperShape:
    """One wrapping form of a program: ``conda run``, ``nix develop``, ``timeout``."""

    #: Words after the program (and its leading options) that select this form; () is the program itself.
    path: tuple[str, ...]
    #: The form's options: how many values each takes (0 for a flag).
    options: Mapping[str, int] = field(default_factory=dict)
    #: Positionals of the wrapper's own before the command (``timeout DURATION``, ``direnv exec DIR``).
    skip: int = 0
    #: Options after which the remaining words are the command (``nix develop -c CMD ...``). With
    #: any, every positional is the wrapper's own (installables, packages) and the command comes
    #: only through these or ``body``.
    command_after: frozenset[str] = frozenset()
    #: Options whose value is a shell command string (``nix-shell --run 'pytest -q'``).
    body: frozenset[str] = frozenset()
    #: Options naming the directory the command runs in (``conda run --cwd DIR``).
    chdir: frozenset[str] = frozenset()
    #: Options that only print and exit (``--help``): no command runs.
    quiet: frozenset[str] = frozenset()
    #: What the wrapper does with no command: NOTHING, SESSION or NO_COMMAND.
    without_command: str = NO_COMMAND
    #: A leading ``ENV:`` on the command names an environment (``hatch run test:pytest``).
    env_prefix: bool = False
    #: The form never takes a command: it opens a shell (``hatch shell``, ``pixi shell``).
    shell_only: bool = False
    #: Positionals starting with this character before the command are the wrapper's own
    #: selectors (``hatch run +py=3.11 pytest``: a matrix filter).
    selector: str = ""
    #: The command runs with the environment's PATH (``conda run``, ``nix develop``), not the
    #: caller's: which ``pip`` or ``python`` it finds is not known from here.
    environment: bool = False
    #: The wrapper's words stay in a test command's normalized text (``hatch run pytest``, as the
    #: contract's test_command_is_resolved_command knows them); otherwise the command is read as
    #: if typed without the prefix.
    keep: bool = False

    @property
    def positional_command(self) -> bool:
        """Whether the first positional after ``skip`` starts the command."""
        return not self.command_after and not self.body and not self.shell_only


@dataclass(frozen=True, slots=True)
class WrapperProgram:
    """A program with wrapping forms: the options it takes before them, and the forms."""

    shapes: tuple[WrapperShape, ...]
    leading: Mapping[str, int] = field(default_factory=dict)  # options before the subcommand (nix --option)


def _shape(path: str = "", flags: str = "", valued: str = "", pairs: str = "", *, command_after: str = "",
           body: str = "", chdir: str = "", quiet: str = "--help -h --version -V", skip: int = 0,
           without_command: str = NO_COMMAND, env_prefix: bool = False, shell_only: bool = False,
           keep: bool = False, environment: bool = True, selector: str = "") -> WrapperShape:
    options = _arity(flags + " " + command_after + " " + quiet, valued + " " + body + " " + chdir, pairs)
    return WrapperShape(tuple(path.split()), options, skip=skip, command_after=frozenset(command_after.split()),
                        body=frozenset(body.split()), chdir=frozenset(chdir.split()), quiet=frozenset(quiet.split()),
                        without_command=without_command, env_prefix=env_prefix, shell_only=shell_only, keep=keep,
                        environment=environment, selector=selector)


_CONDA_RUN = _shape("run", "-v --verbose --dev --debug-wrapper-scripts --no-capture-output --no-capture --live-stream "
                    "-q --quiet --json -a --attach --clean-env -d --detach",
                    "-n --name -p --prefix -r --root-prefix --label -e --env --rc-file", chdir="--cwd")
_NIX_LEADING = _arity("-L --print-build-logs --impure --offline --refresh --no-write-lock-file --accept-flake-config "
                      "-v --verbose -vv -vvv --quiet --debug --show-trace --no-update-lock-file",
                      "--extra-experimental-features --experimental-features --log-format --max-jobs -j --cores "
                      "--store --eval-store --system --builders --substituters --extra-substituters",
                      "--option --override-input --arg --argstr")


def _nix_environment(path: str) -> WrapperShape:
    """``nix develop`` / ``nix shell``: installables, then ``-c CMD ARGS``; without it a shell."""
    return _shape(
        path,
        flags="-L --print-build-logs --impure --offline --refresh --no-write-lock-file --accept-flake-config "
              "-i --ignore-environment --build --check --configure --install --installcheck --unpack --no-update-lock-file "
              "--recreate-lock-file --show-trace -v --verbose --quiet --debug",
        valued="-k --keep --unset --profile --phase --redirect --extra-experimental-features --experimental-features "
               "--inputs-from --reference-lock-file --output-lock-file --log-format -j --max-jobs --system --file -f "
               "--expr --update-input",
        pairs="--option --override-input --arg --argstr --override-flake",
        command_after="-c --command", without_command=SESSION)

#: Every wrapper the normalizer peels through this table, by program name.
WRAPPERS: Mapping[str, WrapperProgram] = {
    # Environment managers: the command runs with the environment's PATH.
    "conda": WrapperProgram((_CONDA_RUN,)),
    "mamba": WrapperProgram((_CONDA_RUN,)),
    "micromamba": WrapperProgram((_CONDA_RUN,)),
    "hatch": WrapperProgram(
        (_shape("run", env_prefix=True, keep=True, selector="+"),
         _shape("env run", "--force-continue --ignore-compat", "-e --env -i --include -x --exclude --filter",
                keep=True),
         _shape("shell", "--name", without_command=SESSION, shell_only=True)),
        leading=_arity("-v --verbose -q --quiet --interactive --no-interactive --no-color --color",
                       "-e --env -p --project --data-dir --cache-dir --config")),
    "rye": WrapperProgram((_shape("run", "-l --list -v --verbose -q --quiet", "--pyproject", keep=True),
                           _shape("shell", "--no-banner --allow-nested", "--pyproject", without_command=SESSION,
                                  shell_only=True))),
    "pixi": WrapperProgram(
        (_shape("run", "--frozen --locked --clean-env --force-activate --revalidate --no-install --no-lockfile-update "
                       "-v --verbose -q --quiet --skip-deps --dry-run -n",
                "--manifest-path -e --environment --color --executable --skip --concurrency",
                without_command=NOTHING),
         _shape("exec", "--force-reinstall -v --verbose -q --quiet --no-modify-ps1 --list", "-s --spec -c --channel "
                        "--platform --with"),
         _shape("shell", "--frozen --locked --no-install --change-ps1 --force-activate", "--manifest-path -e "
                         "--environment", without_command=SESSION, shell_only=True)),
        leading=_arity("-v --verbose -q --quiet --no-progress", "--color")),
    "devbox": WrapperProgram(
        (_shape("run", "-q --quiet --pure --all-projects --omit-nix-env --recompute -l --list",
                "-c --config -e --env --env-file --environment", without_command=NOTHING),
         _shape("shell", "--pure --print-env --omit-nix-env --recompute", "-c --config -e --env --env-file "
                         "--environment", without_command=SESSION, shell_only=True))),
    # pdm's project environment: its PATH is the one the caller's interpreter resolves to, as
    # for `uv run` and `poetry run`.
    "pdm": WrapperProgram((_shape("run", "-l --list -s --site-packages --recreate -j --json -v --verbose -q --quiet "
                                         "-g --global", "-p --project -c --config --venv --skip", keep=True,
                                  environment=False, without_command=NOTHING),),  # `pdm run` lists the scripts
                          leading=_arity("-v --verbose -q --quiet -I --ignore-python --no-cache", "-c --config")),
    "direnv": WrapperProgram((WrapperShape(("exec",), skip=1, environment=True),)),
    "nix": WrapperProgram((_nix_environment("develop"), _nix_environment("shell")),
                          leading=_NIX_LEADING),
    "nix-shell": WrapperProgram((_shape("", "-p --packages --pure --impure -E --expr --show-trace -v --verbose "
                                            "--quiet --keep-going -K --keep-failed --no-build-output -Q",
                                        "-A --attr -I --include -j --max-jobs --cores --keep --exclude",
                                        "--option --arg --argstr", body="--run --command", without_command=SESSION),)),
    # Process wrappers: the command runs with another priority, limit or buffering.
    "nice": WrapperProgram((_shape("", " ".join(f"-{n}" for n in range(1, 21)), "-n --adjustment",
                                   quiet="--help --version", without_command=NOTHING, environment=False),)),
    "command": WrapperProgram((_shape("", "-p", quiet="-v -V --help", without_command=NOTHING, environment=False),)),
    "exec": WrapperProgram((_shape("", "-c -l", "-a", quiet="", without_command=NOTHING, environment=False),)),
    "timeout": WrapperProgram((_shape("", "--preserve-status --foreground -v --verbose", "-k -s --kill-after --signal",
                                      skip=1, environment=False),)),
    "stdbuf": WrapperProgram((_shape("", "", "-i -o -e --input --output --error", environment=False),)),
    "ionice": WrapperProgram((_shape("", "-t --ignore", "-c -n -p -P -u --class --classdata --pid --pgid --uid",
                                     without_command=NOTHING, environment=False),)),
    "doas": WrapperProgram((_shape("", "-n -s -L", "-u -C", quiet="", environment=False),)),
}


@dataclass(frozen=True, slots=True)
class WrapperScan:
    """A wrapper's words read with a shape: where its command starts, or why that is not known."""

    shape: WrapperShape | None = None
    options: tuple[tuple[str, tuple[str | None, ...]], ...] = ()
    start: int | None = None  # index (in the call's words) of the command's first word
    body: _Word | None = None  # a shell string to run (nix-shell --run)
    error: str | None = None

    def value(self, *names: str) -> str | None:
        found = [values[0] for name, values in self.options if name in names and values]
        return found[-1] if found else None

    def has(self, *names: str) -> bool:
        return any(name in names for name, _ in self.options)


def _long_name(name: str, known: Mapping[str, int]) -> str:
    """A long option as written, or the one known option it abbreviates (GNU getopt_long)."""
    if name in known or not name.startswith("--"):
        return name
    matches = [option for option in known if option.startswith(name) and option.startswith("--")]
    return matches[0] if len(matches) == 1 else name


def _read_options(words: Sequence[_Word], start: int, known: Mapping[str, int],
                  options: list[tuple[str, tuple[str | None, ...]]]) -> tuple[int, str | None]:
    """Options from ``start`` up to the first positional (or ``--``, returned unconsumed):
    the index reached, or an error."""
    i = start
    while i < len(words):
        value = words[i].value
        if value is None or value == "-" or not value.startswith("-") or value == "--":
            return i, None
        if value.startswith("--"):
            name, equals, attached = value.partition("=")
            name = _long_name(name, known)
            if name not in known:
                return i, f"unknown option {value}"
            arity = known[name]
            if equals:
                if arity != 1:
                    return i, f"option {name} takes {arity} values, not one attached"
                options.append((name, (attached,)))
                i += 1
                continue
            if arity and i + arity >= len(words):
                return i, f"option {name} needs {arity} value{'s' if arity > 1 else ''}"
            options.append((name, tuple(w.value for w in words[i + 1:i + 1 + arity])))
            i += 1 + arity
            continue
        if value in known:  # single-dash long options (-vv, -Q) and plain short ones
            arity = known[value]
            if arity and i + arity >= len(words):
                return i, f"option {value} needs a value"
            options.append((value, tuple(w.value for w in words[i + 1:i + 1 + arity])))
            i += 1 + arity
            continue
        cluster = value[1:]
        j = 0
        while j < len(cluster):
            option = "-" + cluster[j]
            if option not in known:
                return i, f"unknown option {option}" + (f" (in {value})" if len(cluster) > 1 else "")
            arity = known[option]
            remainder = cluster[j + 1:]
            if arity == 0:
                options.append((option, ()))
                j += 1
                continue
            if remainder and arity == 1:
                options.append((option, (remainder,)))
            else:
                if i + arity >= len(words):
                    return i, f"option {option} needs a value"
                options.append((option, tuple(w.value for w in words[i + 1:i + 1 + arity])))
                i += arity
            break
        i += 1
    return i, None


def find_shape(program: WrapperProgram, words: Sequence[_Word]) -> tuple[WrapperShape, int] | str | None:
    """The shape ``words`` (the whole call, program first) use and the index after its path
    words; an error when the leading options cannot be read; None when no shape applies."""
    for shape in program.shapes:
        if not shape.path:
            return shape, 1  # the program itself wraps: its options are the shape's
    options: list[tuple[str, tuple[str | None, ...]]] = []
    index, error = _read_options(words, 1, program.leading, options)
    if error:
        return error
    for shape in program.shapes:
        end = index + len(shape.path)
        if tuple(w.value for w in words[index:end]) == shape.path:
            return shape, end
    return None


def scan_wrapper(shape: WrapperShape, words: Sequence[_Word], start: int) -> WrapperScan:
    """Read the wrapper's own words from ``start`` (after its name and path) with ``shape``."""
    options: list[tuple[str, tuple[str | None, ...]]] = []
    own = 0
    i = start
    while True:
        i, error = _read_options(words, i, shape.options, options)
        if error:
            return WrapperScan(shape, tuple(options), error=error)
        names = {name for name, _ in options}
        if names & shape.quiet:
            return WrapperScan(shape, tuple(options))
        if names & shape.command_after:
            return WrapperScan(shape, tuple(options), start=i if i < len(words) else None)
        if i < len(words) and words[i].value == "--":
            i += 1
            if shape.positional_command and own >= shape.skip:
                break
            continue
        if i >= len(words):
            break
        if shape.positional_command and own >= shape.skip and not (
                shape.selector and (words[i].value or "").startswith(shape.selector)):
            break
        own += 1  # a positional of the wrapper's own: a duration, a directory, an installable
        i += 1
    bodies = [values for name, values in options if name in shape.body]
    if bodies:
        value = bodies[-1][0] if bodies[-1] else None
        body = _Word.literal(value) if value is not None else _Word("", None, "a value only known at run time")
        return WrapperScan(shape, tuple(options), body=body)
    if shape.positional_command and i < len(words) and own >= shape.skip:
        return WrapperScan(shape, tuple(options), start=i)
    if shape.skip and own < shape.skip:
        return WrapperScan(shape, tuple(options), error="is missing the words it takes before the command")
    return WrapperScan(shape, tuple(options))
