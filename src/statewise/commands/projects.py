"""Project tools: test runners, make, migrations, Django's manage.py, bundler."""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Sequence
from pathlib import Path

from statewise.commands.base import DB_MIGRATE, _Base
from statewise.commands.tables import (
    _INSTALL_ENV,
    _MIGRATION_SCRIPT,
    _TRUE_WORDS,
    _canonical,
)
from statewise.commands.words import _Call, _parse, _Spec, _Word


class _Projects(_Base):
    """Test runners, make targets, migration tools and bundler, and what the package managers
    share: the environment an install runs in, a path as the record shows it."""

    def test_run(self, call: _Call, _rest: Sequence[_Word] = ()) -> None:
        values = [w.value for w in call.words]
        if any(flag in values for flag in ("--collect-only", "--co", "--version", "--help", "-h", "--fixtures",
                                           "--markers")) and _canonical(call.name.rsplit("/", 1)[-1]) in (
                "pytest", "python"):
            return
        text = call.text()
        if text is None:
            self.fail("the test command has arguments only known at run time", call.part)
            return
        self.emit(call, "test.run", {"command": text, "cwd": self.cwd_arg(call)}, reason=f"runs the tests: {text}")

    def make(self, call: _Call) -> None:
        spec = _Spec.of(flags="-k -s -B -i -e -w -n -q -t -r -R --silent --quiet --no-print-directory "
                              "--always-make --keep-going --ignore-errors --environment-overrides --dry-run "
                              "--just-print --recon --question --touch --print-directory --no-builtin-rules",
                        valued="-C -f -I -o -W --directory --file --makefile --include-dir --old-file --what-if",
                        optional="-j -l -O --jobs --load-average --output-sync --debug -d",
                        allow_unknown=True)
        words = list(call.args)
        for index, word in enumerate(words):  # -j 4
            if word.value == "-j" and index + 1 < len(words) and (words[index + 1].value or "").isdigit():
                words = words[:index] + [_Word.literal("-j" + (words[index + 1].value or ""))] + words[index + 2:]
                break
        parsed = _parse(words, spec)
        if not self.parsed_ok(call, parsed, "make"):
            return
        if parsed.has("-n", "--dry-run", "--just-print", "--recon", "-q", "--question"):
            return
        targets = [w.value for w in parsed.positionals if w.value is None or "=" not in w.value]
        if any(t is None for t in targets):
            self.fail("a make target is only known at run time", call.part)
            return
        if not parsed.has("-t", "--touch"):
            # What the recipes run is checked as if typed (statewise.commands.recipes).
            assignments = {value.partition("=")[0]: value.partition("=")[2]
                           for value in (w.value for w in parsed.positionals) if value and "=" in value}
            self.make_recipes(call, {"-C": parsed.values("-C", "--directory"),
                                     "-f": parsed.values("-f", "--file", "--makefile")},
                              [t for t in targets if t], assignments)
        if set(targets) & {"test", "tests", "check"}:
            self.test_run(call)
            return
        if any(t and _MIGRATION_SCRIPT.search(t) for t in targets):
            self.migration(call, "make", call.args)
            return
        self.unguard(call.part)

    def migration(self, call: _Call, framework: str, _rest: Sequence[_Word] = ()) -> None:
        text = call.text()
        self.emit(call, DB_MIGRATE, {"command": text, "framework": framework, "cwd": self.cwd_arg(call)},
                  reason=f"{framework} changes a database schema")
        if text is None:
            self.fail("the migration command has arguments only known at run time", call.part)

    def django(self, call: _Call, words: Sequence[_Word]) -> None:
        """``python manage.py ...``: classified by the command rules for ``manage.py``, with the
        interpreter's words kept in the command's text. A migration whose settings module the
        project's files show, holding only local databases, says so (``database_local``)."""
        start = len(call.words) - len(words) - 1
        inner = _Call(call.words[start:], call.env, call.ctx, call.part, call.kept + call.words[:start])
        before = len(self.actions)
        if not self.declared(inner):
            self.unguard(call.part)
            return
        manage = call.words[start].value
        for index in range(before, len(self.actions)):
            action = self.actions[index]
            if action.operation != DB_MIGRATE or action.args.get("framework") != "django" or not manage:
                continue
            if call.ctx.cwd is None:
                continue
            settings = action.args.get("settings")
            local = django_databases_local(Path(call.ctx.cwd) / manage,
                                           settings if isinstance(settings, str) else None)
            if local is not None:
                self.actions[index] = action.model_copy(update={
                    "args": {**action.args, "database_local": True, "database_evidence": local}})

    def bundle(self, call: _Call) -> None:
        if call.args and call.args[0].value == "exec":
            self.runner(call, 2, _Spec.of(stop_at_positional=True))
        else:
            self.unguard(call.part)

    def install_env(self, call: _Call, tool: str) -> dict[str, str] | None:
        """What the command's environment (and pip's configuration files) say about where
        ``tool`` installs (_INSTALL_ENV); None (and the call unresolved) when it points at
        settings StateWise does not read."""
        found: dict[str, str] = {}
        if tool == "pip":
            configured = self.pip_config(call)
            if configured is None:
                return None
            found.update(configured)
        if tool == "npm":
            npmrc = self.npmrc_settings(call)
            if npmrc is None:
                return None
            found.update(npmrc)
        for name, value in call.env.items():
            entry = _INSTALL_ENV.get(name.upper() if name.upper().startswith("NPM_CONFIG_") else name)
            if entry is None or entry[0] != tool:
                continue
            what = entry[1]
            if "\0" in value:
                self.fail(f"{name} is set to a value only known at run time, so where `{call.name}` installs is "
                          "not known", call.part)
                return None
            if what == "config-file":
                continue  # read with the tool's other configuration files (pip_config, npmrc_settings, uv's)
            if what in ("user", "system", "global"):
                found.pop(what, None)  # the environment wins over pip's configuration files
                if value.strip().lower() in _TRUE_WORDS:
                    found[what] = "true"
            elif what == "location":
                if value.strip().lower() == "global":
                    found["global"] = "true"
            elif what == "target" and value:
                found[what] = self.represent_path(call, value)
            elif value:
                found[what] = value
        return found

    def npmrc_settings(self, call: _Call) -> dict[str, str] | None:
        """``prefix``, ``global`` and ``location`` from the .npmrc files npm_config_globalconfig
        and npm_config_userconfig name (the user's file wins); None (and the call unresolved)
        when one exists but cannot be read. The default ~/.npmrc is not read (docs/shell.md)."""
        found: dict[str, str] = {}
        names = {name.upper(): value for name, value in call.env.items()}
        for variable in ("NPM_CONFIG_GLOBALCONFIG", "NPM_CONFIG_USERCONFIG"):
            path = names.get(variable)
            if not path or path == os.devnull:
                continue
            if "\0" in path:
                self.fail(f"{variable} names a file only known at run time, so where `{call.name}` installs is "
                          "not known", call.part)
                return None
            path = self.absolute(call.ctx, os.path.expanduser(path), follow=True) or path
            if not os.path.exists(path):
                continue  # npm skips a configuration file that is not there
            try:
                with open(path, encoding="utf-8") as handle:
                    lines = handle.read().splitlines()
            except (OSError, UnicodeError) as error:
                self.fail(f"npm's configuration {path} cannot be read ({type(error).__name__}), so where "
                          f"`{call.name}` installs is not known", call.part)
                return None
            for line in lines:
                key, equals, value = line.strip().partition("=")
                key, value = key.strip().lower(), value.strip().strip("'\"")
                if not equals or key.startswith((";", "#")):
                    continue
                if key == "prefix" and value:
                    found["prefix"] = value
                elif key == "global":
                    found.pop("global", None)
                    if value.lower() in _TRUE_WORDS:
                        found["global"] = "true"
                elif key == "location" and value.lower() == "global":
                    found["global"] = "true"
        return found

    def represent_path(self, call: _Call, value: str) -> str:
        absolute = self.absolute(call.ctx, value, follow=True)
        return self.represent(absolute)[0] if absolute else value

    def pip_config(self, call: _Call) -> dict[str, str] | None:
        """install settings in pip's configuration files that redirect an install (target,
        prefix, root, user, python), lowest precedence first; None if a file cannot be read."""
        import configparser

        home = call.env.get("HOME", "")
        xdg = call.env.get("XDG_CONFIG_HOME") or (os.path.join(home, ".config") if home else "")
        # PIP_CONFIG_FILE is read last (it wins); when it exists the user's files are skipped,
        # and os.devnull turns every file off, as pip does.
        own = call.env.get("PIP_CONFIG_FILE")
        if own is not None and "\0" in own:
            self.fail(f"PIP_CONFIG_FILE names a file only known at run time, so where `{call.name}` installs is "
                      "not known", call.part)
            return None
        if own == os.devnull:
            return {}
        own_path = (self.absolute(call.ctx, os.path.expanduser(own), follow=True) or own) if own else None
        files = ["/etc/xdg/pip/pip.conf", "/etc/pip.conf"]
        if not (own_path and os.path.exists(own_path)):
            if home:
                files.append(os.path.join(home, ".pip", "pip.conf"))
            if xdg:
                files.append(os.path.join(xdg, "pip", "pip.conf"))
        virtual_env = call.env.get("VIRTUAL_ENV")
        if virtual_env and "\0" not in virtual_env:
            files.append(os.path.join(virtual_env, "pip.conf"))
        if own_path:
            files.append(own_path)
        found: dict[str, str] = {}
        for path in files:
            if not os.path.isfile(path):
                continue
            parser = configparser.RawConfigParser()
            try:
                parser.read(path, encoding="utf-8")
            except (OSError, UnicodeError, configparser.Error) as error:
                self.fail(f"pip's configuration {path} cannot be read ({type(error).__name__}), so where "
                          f"`{call.name}` installs is not known", call.part)
                return None
            for section in ("global", "install"):
                if not parser.has_section(section):
                    continue
                for key, value in parser.items(section):
                    name = key.replace("_", "-")
                    if name in ("target", "prefix", "root") and value:
                        found["target"] = self.represent_path(call, value)
                    elif name == "user":
                        found.pop("user", None)
                        if value.strip().lower() in _TRUE_WORDS:
                            found["user"] = "true"
                    elif name == "python" and value:
                        found["python"] = value
                    elif name in ("index-url", "extra-index-url", "find-links", "no-index"):
                        found["config:" + name] = value
        return found


_SETTINGS_DEFAULT = re.compile(
    r"""os\.environ\.setdefault\(\s*['"]DJANGO_SETTINGS_MODULE['"]\s*,\s*['"]([\w.]+)['"]\s*\)""")
#: Hosts that are this machine: a database there is the developer's own.
_LOCAL_HOSTS = frozenset({"", "localhost", "127.0.0.1", "::1"})
_SETTINGS_LIMIT = 256 * 1024


def django_databases_local(manage: Path, settings: str | None) -> str | None:
    """Where a Django project's settings show that every database is on this machine: a SQLite
    file, or a server at localhost (no HOST is the local socket). Returns what shows it (the
    settings file and the engines) or None: the settings module not found next to
    ``manage.py`` (from ``--settings``, DJANGO_SETTINGS_MODULE, or the module manage.py sets),
    ``DATABASES`` not a literal assigned once, a value computed at run time (an environment
    variable, ``dj_database_url``), a ``*`` import that may replace it, or a remote host."""
    try:
        if not manage.is_file() or manage.stat().st_size > _SETTINGS_LIMIT:
            return None
        if settings is None or "\0" in settings:
            found = _SETTINGS_DEFAULT.search(manage.read_text(encoding="utf-8", errors="replace"))
            settings = found.group(1) if found else None
        if not settings or not re.fullmatch(r"[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*", settings):
            return None
        base = manage.parent.joinpath(*settings.split("."))
        path = next((p for p in (base.with_suffix(".py"), base / "__init__.py") if p.is_file()), None)
        if path is None or path.stat().st_size > _SETTINGS_LIMIT:
            return None
        tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, SyntaxError, ValueError, RecursionError):
        return None
    assigned = [node for node in tree.body if isinstance(node, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == "DATABASES" for t in node.targets)]
    changed = any(isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names)
                  for node in ast.walk(tree)) or any(
        isinstance(node, ast.Attribute | ast.Subscript) and isinstance(node.ctx, ast.Store | ast.Del)
        and _root_name(node) == "DATABASES" for node in ast.walk(tree)) or any(
        isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and _root_name(node.func) == "DATABASES"
        for node in ast.walk(tree))
    if len(assigned) != 1 or changed:
        return None
    try:
        databases = ast.literal_eval(assigned[0].value)
    except (ValueError, TypeError, SyntaxError, RecursionError):
        return None
    if not isinstance(databases, dict) or not databases:
        return None
    engines = []
    for entry in databases.values():
        if not isinstance(entry, dict) or not isinstance(entry.get("ENGINE"), str):
            return None
        engine = entry["ENGINE"]
        host = entry.get("HOST", "")
        if engine.endswith(("sqlite3", "spatialite")):
            engines.append(engine.rsplit(".", 1)[-1])
        elif isinstance(host, str) and host.strip().lower() in _LOCAL_HOSTS:
            engines.append(f"{engine.rsplit('.', 1)[-1]} at {host or 'the local socket'}")
        else:
            return None
    return f"{path.name}: {', '.join(engines)}"


def _root_name(node: ast.expr) -> str | None:
    """``DATABASES`` for ``DATABASES['default']['HOST']`` or ``DATABASES['default'].update``."""
    while isinstance(node, ast.Attribute | ast.Subscript):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None
