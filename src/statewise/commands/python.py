"""Python's tools: the interpreter, pip, uv, poetry, virtualenv, venv, conda-style installers."""

from __future__ import annotations

import ast
import os
import re
import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from statewise.commands.base import GIT_TIMEOUT
from statewise.commands.inline import python_reads_input
from statewise.commands.projects import _Projects
from statewise.commands.tables import (
    _INDEX_CONFIG_NAMES,
    _INDEX_SETTINGS,
    _PYTHON_NAME,
    _TRUE_WORDS,
    DEFAULT_INDEX,
    _index_url,
)
from statewise.commands.words import _UV_RUN, _UVX, _Call, _parse, _Parsed, _Spec, _Word

#: Modules whose ``python -m`` runs what the program of that name runs, and is read by the same
#: reading (the contract's command rule for ``pytest``: its test path, its read-only options).
_MODULE_PROGRAMS = frozenset({"pytest"})


def _module_as_program(call: _Call, module: str, rest: Sequence[_Word]) -> _Call:
    """``python -m pytest ARGS`` as the call ``pytest ARGS``, the words before it (``python
    -m``, a runner's ``uv run``) kept in its normalized text, which stays the command as typed."""
    before = call.kept + call.words[:len(call.words) - len(rest)]
    last = before[-1].value if before else None
    if last == module:
        before = before[:-1]
    elif last is not None and last.endswith(module):  # -mpytest: the module attached to its option
        before = [*before[:-1], _Word.literal(last[:-len(module)])]
    return _Call([_Word.literal(module), *rest], call.env, call.ctx, call.part, before)


#: Modules whose ``python -m`` is a console reading what is typed into the terminal.
_CONSOLE_MODULES = frozenset({"code", "asyncio", "pdb", "IPython", "ptpython", "bpython", "idlelib"})

_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*?)\s*$")
_VERSIONED = re.compile(r"^python(\d+)\.(\d+)$")
_VENV_VERSION = re.compile(r"^\s*(?:version|version_info)\s*=\s*(\d+)\.(\d+)", re.MULTILINE)


def interpreter_version(path: str | None) -> tuple[int, int] | None:
    """The version of the Python interpreter at ``path``: from the file it resolves to
    (``python3.11``), else from the ``pyvenv.cfg`` of the environment it is in; None when
    neither says (a launcher script such as a pyenv shim, a missing file)."""
    if path is None:
        return None
    real = os.path.realpath(path)
    if not os.path.isfile(real):
        return None
    match = _VERSIONED.match(os.path.basename(real))
    if match:
        return int(match[1]), int(match[2])
    config = Path(path).parent.parent / "pyvenv.cfg"
    try:
        found = _VENV_VERSION.search(config.read_text(encoding="utf-8", errors="replace")[:4096])
    except OSError:
        return None
    return (int(found[1]), int(found[2])) if found else None


def refused_by(version: tuple[int, int] | None, code: str) -> bool:
    """True when a Python 3 interpreter of ``version`` refuses to run ``code`` at all: the program
    does not parse in that version's grammar, so it stops with a SyntaxError before any of it
    runs. False when it parses, when the version is not known, is Python 2 (whose grammar this
    parser does not have), or is newer than the Python StateWise runs on (a newer grammar may
    accept it)."""
    if version is None or version[0] != 3 or version < (3, 4) or version > sys.version_info[:2]:
        return False
    try:
        ast.parse(code, feature_version=version)
    except (SyntaxError, ValueError):  # ValueError: a null byte, which CPython refuses as well
        return True
    except (RecursionError, MemoryError):
        return False
    return False


class _Python(_Projects):
    """Python interpreters and package installers: the index, the environment, the packages."""

    def python(self, call: _Call) -> None:
        interpreter = self.which(call, call.name)
        words = call.args
        i = 0
        inspect = False  # -i: a REPL after the script or -c
        while i < len(words):
            value = words[i].value
            if value is None:
                break  # the script is only known at run time (below)
            if not value.startswith("-") or value == "-":
                break
            if value in ("--version", "-V", "-h", "--help", "-VV"):
                return
            if value.startswith("--"):
                i += 2 if value == "--check-hash-based-pycs" else 1
                continue
            cluster = value[1:]
            for j, char in enumerate(cluster):
                if char == "i":
                    inspect = True
                if char in "mc":
                    if inspect:
                        self.interactive(call, "an interactive interpreter (-i)")
                        return
                    remainder = cluster[j + 1:]
                    target = remainder or (words[i + 1].value if i + 1 < len(words) else None)
                    after = i + (1 if remainder else 2)
                    if char == "c":
                        self.unguard(call.part)
                        reads = python_reads_input(target) if target is not None and self.typed_input and \
                            call.ctx.stdin == "tty" else None
                        if target is None:
                            self.fail(f"the program of `{call.name} -c` is only known at run time", call.part)
                        elif refused_by(interpreter_version(interpreter), target):
                            pass  # the interpreter stops at its SyntaxError: nothing of it runs
                        elif reads is not None:
                            self.typed_session(call, f"`{call.name} -c` runs a program that reads what is typed "
                                                     f"into it ({reads}) and runs code it cannot check")
                        else:  # read with ast (statewise.commands.inline)
                            self.python_program(call, target, f"the program of `{call.name} -c`")
                        return
                    if target is None:
                        self.fail("the module `python -m` runs is only known at run time", call.part)
                        return
                    self.python_module(call, target, words[after:], interpreter=interpreter)
                    return
                if char in "WX":
                    i += 0 if cluster[j + 1:] else 1
                    break
            i += 1
        if inspect:
            self.interactive(call, "an interactive interpreter (-i)")
            return
        if i >= len(words) or words[i].value == "-":
            self.stdin_program(call, "an interactive interpreter")
            return
        if words[i].value is None:
            self.fail(f"`{call.name}` runs a program only known at run time ({words[i].text})", call.part)
            return
        script = words[i].value or ""
        if script.rsplit("/", 1)[-1] == "manage.py":
            if not self.django_console(call, words[i + 1:]):
                self.django(call, words[i + 1:])
            return
        if script.rsplit("/", 1)[-1] == "setup.py" and self.setup_py(call, [w.value for w in words[i + 1:]]):
            return
        self.unguard(call.part)
        path = self.workspace_file(call, script)
        if path is not None:  # a workspace script: read with ast (statewise.commands.scripts)
            self.python_script(call, path)

    def django_console(self, call: _Call, words: Sequence[_Word]) -> bool:
        """``manage.py shell`` (and django-extensions' ``shell_plus``) is a Python interpreter in
        the project's settings: its ``-c`` program is read like ``python -c``'s, and without one
        it runs what its standard input gives, like ``python`` alone (a session on a terminal).
        ``dbshell`` opens the database's own client. False: another subcommand."""
        sub = words[0].value if words else None
        if sub == "dbshell":
            if len(words) > 1:  # `dbshell -- -c SQL`: arguments for the database client
                self.fail("`manage.py dbshell` with arguments runs the database client on them", call.part)
            else:
                self.stdin_program(call, "the database's client shell (manage.py dbshell)", python=False)
            return True
        if sub not in ("shell", "shell_plus"):
            return False
        rest = list(words[1:])
        for index, word in enumerate(rest):
            value = word.value
            if value is None:
                self.fail(f"an argument of `manage.py {sub}` is only known at run time", call.part)
                return True
            code: str | None = None
            if value in ("-c", "--command"):
                following = rest[index + 1] if index + 1 < len(rest) else None
                if following is None or following.value is None:
                    self.fail(f"the program of `manage.py {sub} -c` is only known at run time", call.part)
                    return True
                code = following.value
            elif value.startswith("--command="):
                code = value.partition("=")[2]
            elif value.startswith("-c") and len(value) > 2:
                code = value[2:]
            if code is not None:
                self.unguard(call.part)
                self.python_program(call, code, f"the program of `manage.py {sub} -c`")
                return True
        self.stdin_program(call, f"Django's interactive shell (manage.py {sub})")
        return True

    def stdin_program(self, call: _Call, what: str, *, python: bool = True) -> None:
        """An interpreter given no program: it reads one from standard input (``python``: a
        Python interpreter, which refuses a program that does not parse before running any)."""
        if call.ctx.stdin == "tty":
            self.interactive(call, what)
        elif call.ctx.stdin in ("pipe", "dynamic"):
            self.fail(f"`{call.name}` runs a program it reads from its standard input, only known at run time",
                      call.part)
        else:
            self.unguard(call.part)  # a heredoc or a file: the program is in the command, like -c
            if call.ctx.stdin == "here" and call.ctx.stdin_text is not None and not (python and refused_by(
                    interpreter_version(self.which(call, call.name)), call.ctx.stdin_text)):
                self.python_program(call, call.ctx.stdin_text, f"the program `{call.name}` reads from a here-document")

    def python_module(self, call: _Call, module: str, rest: Sequence[_Word], *, interpreter: str | None) -> None:
        if module in _CONSOLE_MODULES:
            self.stdin_program(call, f"an interactive console (-m {module})")  # runs what it reads
        elif module == "pip":
            self.pip_command(call, list(rest), interpreter=interpreter, how="python -m pip")
        elif module in _MODULE_PROGRAMS:
            self.dispatch(_module_as_program(call, module, rest))
        elif module in ("unittest", "tox", "nox", "green", "ward"):
            self.test_run(call, rest)
        elif module == "venv":
            self.venv(call, list(rest), interpreter=interpreter, via="python -m venv")
        elif module == "virtualenv":
            self.virtualenv(_Call([_Word.literal("virtualenv"), *rest], call.env, call.ctx, call.part, call.kept),
                            interpreter)
        elif module in ("uv", "poetry", "alembic", "django", "pdm", "pipenv", "hatch"):
            name = "django-admin" if module == "django" else module
            self.dispatch(_Call([_Word.literal(name), *rest], call.env, call.ctx, call.part, call.kept))
        else:
            self.unguard(call.part)

    def pip(self, call: _Call) -> None:
        path = self.which(call, call.name)
        self.pip_command(call, call.args, interpreter=self.interpreter_of_pip(call, path), how=call.name)

    def interpreter_of_pip(self, call: _Call, path: str | None) -> str | None:
        """The interpreter the pip at ``path`` installs into (None: not known, so the install is
        unresolved): a pyenv/asdf/mise shim is resolved read-only (``pyenv which pip``) the way the
        interpreter verifier resolves one, so a shim is never read as the shell that runs it."""
        search = self.search_path(call)
        if not path or search is None:
            return None
        from statewise.verifiers.python import interpreter_of_executable  # noqa: PLC0415 - install path only

        env = {name: value for name, value in call.env.items() if "\0" not in value}
        env["PATH"] = search
        cwd = call.ctx.cwd or self.workspace
        found, _ = interpreter_of_executable(path, env, cwd, timeout=GIT_TIMEOUT)
        if found is None or os.path.isfile(os.path.join(os.path.dirname(os.path.dirname(found)), "pyvenv.cfg")):
            return found
        # Outside a venv, one installation answers to several names (pyenv's pip runs
        # bin/python3.11; the workspace resolves `python3`, a link to it): when the python3 on
        # PATH is that same file, the install goes into it, so it is named as PATH names it.
        python3 = shutil.which("python3", path=search)
        if python3 is not None:
            named, _ = interpreter_of_executable(python3, env, cwd, timeout=GIT_TIMEOUT)
            if named is not None and os.path.realpath(named) == os.path.realpath(found):
                return named
        return found

    def pip_command(self, call: _Call, words: list[_Word], *, interpreter: str | None, how: str) -> None:
        global_spec = _Spec.of(flags="-v --verbose -q --quiet --isolated --require-virtualenv --no-input "
                                     "--no-cache-dir --disable-pip-version-check --no-color --debug --version -V "
                                     "--help -h --no-python-version-warning",
                               valued="--python --proxy --retries --timeout --exists-action --trusted-host --cert "
                                      "--client-cert --cache-dir --log --use-feature --use-deprecated --keyring-provider "
                                      "--resume-retries",
                               stop_at_positional=True)
        parsed = _parse(words, global_spec)
        if not self.parsed_ok(call, parsed, f"{how}"):
            return
        python = parsed.value("--python")
        start = parsed.rest if parsed.rest is not None else len(words)
        if start >= len(words):
            return
        sub = words[start].value
        rest = words[start + 1:]
        if sub in ("list", "freeze", "show", "check", "download", "help", "search", "index", "inspect", "debug",
                   "hash", "config", "cache", "completion", "wheel"):
            if sub in ("config", "cache", "wheel", "download"):
                self.unguard(call.part)
            return
        if sub != "install":
            self.unguard(call.part)
            return
        spec = _Spec.of(
            flags="-U --upgrade --user --force-reinstall -I --ignore-installed --no-deps --pre -q --quiet -v --verbose "
                  "--no-cache-dir --no-build-isolation --dry-run --break-system-packages --no-index --require-hashes "
                  "--disable-pip-version-check --no-input --isolated --compile --no-compile --no-warn-script-location "
                  "--no-warn-conflicts --ignore-requires-python --prefer-binary --no-clean --check-build-dependencies "
                  "--no-color --use-pep517 --no-use-pep517 --only-deps --quiet",
            valued="-r --requirement -c --constraint -e --editable -t --target --prefix --root -i --index-url "
                   "--extra-index-url -f --find-links --python --platform --python-version --implementation --abi "
                   "--no-binary --only-binary --progress-bar --src --upgrade-strategy --global-option "
                   "--config-settings -C --trusted-host --cert --client-cert --proxy --retries --timeout "
                   "--exists-action --log --cache-dir --report --root-user-action --keyring-provider --use-feature "
                   "--use-deprecated --group --install-option",
            allow_unknown=True)
        parsed_install = _parse(rest, spec)
        if not self.parsed_ok(call, parsed_install, f"{how} install"):
            return
        if parsed_install.has("--dry-run"):
            return
        redirect = self.install_env(call, "pip")
        if redirect is None:
            return
        python = parsed_install.value("--python") or python or redirect.get("python")
        if python is not None:
            interpreter = self.interpreter_option(call, python)
        extra: dict[str, Any] = {}
        if "target" in redirect and not parsed_install.has("-t", "--target", "--prefix", "--root"):
            extra["target_dir"] = redirect["target"]
        if redirect.get("user") and not parsed_install.has("--user"):
            extra["user"] = True
        sources = self.package_sources(call, "pip", parsed_install, redirect)
        if sources is None:
            return
        extra.update(sources)
        self.python_install(call, "pip.install", "pip", parsed_install, interpreter=interpreter, how=how,
                            extra=extra)

    def package_sources(self, call: _Call, tool: str, parsed: _Parsed, config: Mapping[str, str]
                        ) -> dict[str, Any] | None:
        """Where an install of ``tool`` fetches packages from, read from what will run: the
        options, then the command's environment, then (pip) its configuration files. ``index``
        is the primary index (DEFAULT_INDEX when nothing names one), ``extra_index`` and
        ``find_links`` the other sources, ``no_index`` when no index is used. None (and the
        call unresolved) when a source is only known at run time."""
        found: dict[str, Any] = {}
        for slot, (options, variables) in _INDEX_SETTINGS[tool].items():
            values: list[str] = []
            if parsed.has(*options):
                given = parsed.values(*options)
                if any(v is None for v in given):
                    self.fail(f"where `{call.name}` installs from is only known at run time", call.part)
                    return None
                values = [v for v in given if v]
            else:
                for variable in variables:
                    value = call.env.get(variable)
                    if value is None:
                        continue
                    if "\0" in value:
                        self.fail(f"{variable} is set to a value only known at run time, so where `{call.name}` "
                                  "installs from is not known", call.part)
                        return None
                    values += value.split() if slot != "index" else [value]
                configured = config.get("config:" + _INDEX_CONFIG_NAMES[slot])
                if not values and configured:
                    values = configured.split()
            if slot == "index":
                if values:
                    found["index"] = _index_url(values[-1])
                elif "config:uv" not in config:  # uv's configuration names sources: not guessed
                    found["index"] = DEFAULT_INDEX
            elif values:
                found[slot] = [_index_url(v) for v in values] if slot == "extra_index" else values
        no_index_variable = "PIP_NO_INDEX" if tool == "pip" else "UV_NO_INDEX"
        no_index = parsed.has("--no-index") or (call.env.get(no_index_variable, "").strip().lower() in _TRUE_WORDS) \
            or (config.get("config:no-index", "").strip().lower() in _TRUE_WORDS)
        if no_index:
            found.pop("index", None)
            found.pop("extra_index", None)
            found["no_index"] = True
        return found

    def interpreter_option(self, call: _Call, value: str) -> str | None:
        """``--python X`` of pip or uv: a path (or a venv directory) or a name on PATH."""
        if "/" in value or value.startswith("."):
            absolute = self.absolute(call.ctx, value, follow=False)
            if absolute and os.path.isdir(absolute):
                return os.path.join(absolute, "bin", "python")
            return absolute
        if _PYTHON_NAME.match(value):
            return self.which(call, value)
        return None  # a version request such as 3.12

    def python_install(self, call: _Call, operation: str, tool: str, parsed: _Parsed, *, interpreter: str | None,
                       how: str, extra: Mapping[str, Any] | None = None) -> None:
        requests: list[tuple[str | None, dict[str, Any]]] = []
        for word in parsed.positionals:
            requests.append((word.value, {}))
        for value in parsed.values("-e", "--editable"):
            requests.append((value, {"editable": True}))
        for value in parsed.values("-r", "--requirement", "--requirements"):
            requests.append((value, {"requirements_file": True}))
        if not requests:
            return
        if operation in ("pip.install", "uv.pip_install") and interpreter is None:
            self.fail(f"cannot tell which interpreter `{how}` installs into", call.part)
        common = {"interpreter": interpreter if operation in ("pip.install", "uv.pip_install") else None,
                  "user": True if parsed.has("--user") else None,
                  "target_dir": self.represent_path(call, target) if (
                      target := parsed.value("-t", "--target", "--prefix", "--root")) else None, **(extra or {})}
        for value, flags in requests:
            if value is None:
                self.fail(f"a package of `{how}` is only known at run time", call.part)
                continue
            name, version = (value, None) if flags.get("requirements_file") else _split_python_requirement(value)
            self.emit(call, operation, {"package": name, "version": version, **common, **flags}, target=name,
                      reason=f"{how} installs {value}")

    def uv(self, call: _Call) -> None:
        global_spec = _Spec.of(flags="-q --quiet -v --verbose -n --no-cache --offline --native-tls --no-config "
                                     "--preview --no-preview --no-python-downloads --no-progress --help -h -V --version "
                                     "--managed-python --no-managed-python",
                               valued="--directory --project --cache-dir --color --config-file --python-preference "
                                      "--allow-insecure-host",
                               stop_at_positional=True)
        parsed = _parse(call.args, global_spec)
        if not self.parsed_ok(call, parsed, "uv"):
            return
        ctx = call.ctx
        if parsed.has("--directory"):
            ctx = call.ctx.copy()
            directory = parsed.value("--directory")
            ctx.cwd = self.resolve_dir(call.ctx, directory) if directory else None
        start = 1 + (parsed.rest if parsed.rest is not None else len(call.args))
        if start >= len(call.words):
            return
        inner = _Call(call.words, call.env, ctx, call.part, call.kept)
        sub = call.words[start].value
        rest = call.words[start + 1:]
        if sub == "pip":
            self.uv_pip(inner, rest)
        elif sub == "add":
            self.uv_add(inner, rest)
        elif sub == "venv":
            self.uv_venv(inner, rest)
        elif sub == "run":
            self.runner(inner, start + 1, _UV_RUN, chdir=("--directory",))
        elif sub == "tool" and rest and rest[0].value == "run":
            self.runner(inner, start + 2, _UVX)
        elif sub in ("tree", "version", "help", "self") or sub is None:
            return
        else:
            self.unguard(call.part)

    def uvx(self, call: _Call) -> None:
        self.runner(call, 1, _UVX)

    def uv_pip(self, call: _Call, words: list[_Word]) -> None:
        if not words or words[0].value != "install":
            if words and words[0].value in ("list", "freeze", "show", "check", "tree"):
                return
            self.unguard(call.part)
            return
        spec = _Spec.of(
            flags="-U --upgrade --reinstall --no-deps --system --break-system-packages --user --pre -q --quiet -v "
                  "--verbose --no-cache -n --offline --native-tls --compile-bytecode --dry-run --all-extras "
                  "--no-build-isolation --no-build --strict --refresh --exact --require-hashes --no-verify-hashes "
                  "--no-config --no-sources --torch-backend",
            valued="-p --python -r --requirement --requirements -c --constraint --constraints -e --editable -i "
                   "--index-url --extra-index-url -f --find-links --index --default-index --target --prefix "
                   "--python-platform --python-version --exclude-newer --index-strategy --keyring-provider "
                   "--resolution --prerelease --config-setting -C --override --overrides --upgrade-package -P "
                   "--reinstall-package --no-binary --only-binary --link-mode --refresh-package --extra --group "
                   "--cache-dir --directory --project --color --no-build-package --no-build-isolation-package",
            allow_unknown=True)
        parsed = _parse(words[1:], spec)
        if not self.parsed_ok(call, parsed, "uv pip install"):
            return
        if parsed.has("--dry-run"):
            return
        redirect = self.install_env(call, "uv")
        if redirect is None:
            return
        python = parsed.value("-p", "--python") or redirect.get("python")
        if python is not None:
            interpreter = self.interpreter_option(call, python)
        elif parsed.has("--system") or redirect.get("system"):
            interpreter = self.which(call, "python3") or self.which(call, "python")
        else:
            interpreter = self.uv_environment(call)
        sources = self.package_sources(call, "uv", parsed, self.uv_index_config(call))
        if sources is None:
            return
        self.python_install(call, "uv.pip_install", "uv", parsed, interpreter=interpreter, how="uv pip install",
                            extra=sources)

    def uv_index_config(self, call: _Call) -> dict[str, str]:
        """Whether uv's configuration (the nearest pyproject.toml/uv.toml, the user's uv.toml)
        names package sources. Their precedence is not modelled, so an install that relies on
        them gets no ``index`` slot (unknown) rather than a guessed one."""
        import tomllib

        files: list[str] = []
        directory = call.ctx.cwd
        own = call.env.get("UV_CONFIG_FILE")
        if own and "\0" in own:
            return {"config:uv": "UV_CONFIG_FILE"}  # a file only known at run time: no index guessed
        if own:
            files.append(self.absolute(call.ctx, os.path.expanduser(own), follow=True) or own)
            directory = None  # --config-file replaces discovery
        while directory is not None:
            for name in ("uv.toml", "pyproject.toml"):
                if (directory / name).is_file():
                    files.append(str(directory / name))
            if directory.parent == directory:
                break
            directory = directory.parent
        xdg = call.env.get("XDG_CONFIG_HOME") or os.path.join(call.env.get("HOME", "/nonexistent"), ".config")
        files.append(os.path.join(xdg, "uv", "uv.toml"))
        for path in files:
            try:
                with open(path, "rb") as handle:
                    data = tomllib.load(handle)
            except (OSError, ValueError):
                continue
            table = data.get("tool", {}).get("uv", {}) if path.endswith("pyproject.toml") else data
            if isinstance(table, dict) and any(k in table for k in ("index", "index-url", "extra-index-url",
                                                                      "find-links", "no-index")):
                return {"config:uv": path}
        return {}

    def uv_environment(self, call: _Call) -> str | None:
        """The interpreter uv pip uses by default: $VIRTUAL_ENV, else the nearest .venv."""
        virtual_env = call.env.get("VIRTUAL_ENV")
        if virtual_env and "\0" not in virtual_env:
            return os.path.join(self.absolute(call.ctx, virtual_env, follow=False) or virtual_env, "bin", "python")
        directory = call.ctx.cwd
        while directory is not None:
            if (directory / ".venv" / "pyvenv.cfg").is_file():
                return str(directory / ".venv" / "bin" / "python")
            if directory.parent == directory:
                break
            directory = directory.parent
        return None

    def uv_add(self, call: _Call, words: list[_Word]) -> None:
        spec = _Spec.of(
            flags="--dev --editable --raw --raw-sources --frozen --locked --no-sync --active --workspace --no-workspace "
                  "-q --quiet -v --verbose --offline --no-cache --upgrade -U --reinstall --no-install-project "
                  "--no-config --no-build-isolation --compile-bytecode --dry-run --native-tls",
            valued="--optional --group --rev --tag --branch --extra --package --script -p --python --index "
                   "--default-index --index-url --extra-index-url -r --requirements -c --constraints --bounds "
                   "--marker -m --directory --project --cache-dir --upgrade-package -P --link-mode --resolution "
                   "--prerelease --exclude-newer --index-strategy -f --find-links --color",
            allow_unknown=True)
        parsed = _parse(words, spec)
        if not self.parsed_ok(call, parsed, "uv add"):
            return
        if parsed.has("--dry-run"):
            return
        venv = None
        project_env = call.env.get("UV_PROJECT_ENVIRONMENT")
        if parsed.has("--active") and call.env.get("VIRTUAL_ENV"):
            venv = self.absolute(call.ctx, call.env["VIRTUAL_ENV"], follow=False)
        elif project_env:
            venv = self.absolute(call.ctx, project_env, follow=False)
        self.python_install(call, "uv.add", "uv", parsed, interpreter=None, how="uv add",
                            extra={"venv": venv, "dev": True if parsed.has("--dev") else None,
                                   "group": parsed.value("--group")})

    def uv_venv(self, call: _Call, words: list[_Word]) -> None:
        spec = _Spec.of(flags="--seed --allow-existing --clear --system-site-packages --relocatable -q --quiet -v "
                              "--verbose --no-project --no-config --offline --native-tls --no-cache",
                        valued="-p --python --prompt --index-url --extra-index-url --index --default-index "
                               "--link-mode --index-strategy --keyring-provider --exclude-newer --cache-dir "
                               "--directory --project --color -f --find-links",
                        allow_unknown=True)
        parsed = _parse(words, spec)
        if not self.parsed_ok(call, parsed, "uv venv"):
            return
        python = parsed.value("-p", "--python")
        interpreter = self.interpreter_option(call, python) if python else None
        path = parsed.positionals[0] if parsed.positionals else _Word.literal(
            call.env.get("UV_PROJECT_ENVIRONMENT") or ".venv")
        self.venv_action(call, path, interpreter, via="uv venv", clear=parsed.has("--clear") or None)

    def venv(self, call: _Call, words: list[_Word], *, interpreter: str | None, via: str) -> None:
        spec = _Spec.of(flags="--system-site-packages --symlinks --copies --clear --upgrade --without-pip "
                              "--upgrade-deps --without-scm-ignore-files -h --help",
                        valued="--prompt")
        parsed = _parse(words, spec)
        if not self.parsed_ok(call, parsed, f"{via}"):
            return
        for path in parsed.positionals:
            self.venv_action(call, path, interpreter, via=via, clear=parsed.has("--clear") or None)

    def virtualenv(self, call: _Call, interpreter: str | None = None) -> None:
        spec = _Spec.of(flags="--clear --system-site-packages --symlinks --copies --always-copy --no-pip "
                              "--no-setuptools --no-wheel --no-download --download --no-periodic-update --no-vcs-ignore "
                              "-q --quiet -v --verbose --reset-app-data --upgrade-embed-wheels --read-only-app-data",
                        valued="-p --python --prompt --activators --creator --seeder --app-data --pip --setuptools "
                               "--wheel --extra-search-dir",
                        allow_unknown=True)
        parsed = _parse(call.args, spec)
        if not self.parsed_ok(call, parsed, "virtualenv"):
            return
        python = parsed.value("-p", "--python")
        chosen = self.interpreter_option(call, python) if python else interpreter
        for path in parsed.positionals:
            self.venv_action(call, path, chosen, via="virtualenv", clear=parsed.has("--clear") or None)

    def venv_action(self, call: _Call, path_word: _Word, interpreter: str | None, *, via: str,
                    clear: bool | None) -> None:
        for path, inside in self.expand(call, path_word, follow=True) or ():
            self.emit(call, "venv.create", {"path": path, "interpreter": interpreter, "inside_workspace": inside,
                                                "clear": clear},
                      target=path, reason=f"{via} creates {path}")

    def poetry(self, call: _Call) -> None:
        global_spec = _Spec.of(flags="-q --quiet -v -vv -vvv --verbose -n --no-interaction --ansi --no-ansi "
                                     "--no-plugins --no-cache -V --version -h --help",
                               valued="-C --directory -P --project", stop_at_positional=True)
        parsed = _parse(call.args, global_spec)
        if not self.parsed_ok(call, parsed, "poetry"):
            return
        ctx = call.ctx
        for name in ("-C", "--directory", "-P", "--project"):
            if parsed.has(name):
                ctx = call.ctx.copy()
                value = parsed.value(name)
                ctx.cwd = self.resolve_dir(call.ctx, value) if value else None
        start = 1 + (parsed.rest if parsed.rest is not None else len(call.args))
        if start >= len(call.words):
            return
        inner = _Call(call.words, call.env, ctx, call.part, call.kept)
        sub = call.words[start].value
        if sub == "add":
            spec = _Spec.of(flags="-D --dev -e --editable --allow-prereleases --dry-run --lock -q --quiet -v "
                                  "--verbose -n --no-interaction --optional",
                            valued="-G --group -E --extras --source --python --platform --markers",
                            allow_unknown=True)
            added = _parse(call.words[start + 1:], spec)
            if not self.parsed_ok(call, added, "poetry add"):
                return
            if added.has("--dry-run"):
                return
            self.python_install(inner, "poetry.add", "poetry", added, interpreter=None, how="poetry add",
                                extra={"dev": True if added.has("-D", "--dev") else None,
                                       "group": added.value("-G", "--group")})
        elif sub == "run":
            self.runner(inner, start + 1, _Spec.of(stop_at_positional=True))
        elif sub == "shell":
            self.interactive(call, "an interactive shell in the environment")
        elif sub in ("show", "check", "about", "help", "list", "version", "search", "config", "env"):
            if sub in ("config", "env"):
                self.unguard(call.part)
        else:
            self.unguard(call.part)

    def generic_add(self, call: _Call, operation: str, tool: str) -> None:
        """Installs through package managers the built-in contract does not declare. Options
        that take a value (``conda install -c conda-forge numpy``: a channel) are skipped with
        their value, so only the packages remain."""
        valued = _ADD_VALUED.get(tool, frozenset())
        packages: list[_Word] = []
        words = call.args[1:]
        i = 0
        while i < len(words):
            value = words[i].value
            if value is not None and value.startswith("-"):
                i += 2 if value in valued else 1  # `-c conda-forge`; `-cconda-forge`, `--channel=x` are one word
                continue
            packages.append(words[i])
            i += 1
        if not packages:
            self.unguard(call.part)
            return
        for word in packages:
            if word.value is None:
                self.fail(f"a package of `{call.name}` is only known at run time", call.part)
                continue
            name, version = _split_python_requirement(word.value)
            self.emit(call, operation, {"package": name, "version": version}, target=name,
                      reason=f"{call.name} installs {word.value}")

    # -- Node --


# Options of `<tool> install/add` that take a separate value (a channel, an environment, a
# file), by tool: their values are not packages.
_CONDA_INSTALL_VALUED = frozenset(
    "-c --channel -n --name -p --prefix --file --solver --repodata-fn --platform --subdir -r --root-prefix "
    "--rc-file".split())
_ADD_VALUED: dict[str, frozenset[str]] = {
    "conda": _CONDA_INSTALL_VALUED, "mamba": _CONDA_INSTALL_VALUED, "micromamba": _CONDA_INSTALL_VALUED,
    "pdm": frozenset("-G --group -p --project -L --lockfile --strategy -S --venv --config-setting -C".split()),
    "pipenv": frozenset("--python --pypi-mirror -r --requirements --categories --extra-pip-args".split()),
}


def _split_python_requirement(value: str) -> tuple[str, str | None]:
    if value.startswith((".", "/", "~")) or "://" in value or value.endswith((".whl", ".tar.gz", ".zip")):
        return value, None
    match = _REQUIREMENT.match(value)
    if not match:
        return value, None
    name, _extras, rest = match.groups()
    if rest.startswith("@") and "://" not in rest:
        rest = rest[1:].strip()  # poetry add name@^2.0
    return name, (rest or None)
