"""Recipes: what ``make X``, ``npm run X`` (``npm test``, ``pnpm X``, ``yarn X``, ``bun run X``)
and ``just X`` run, read from the project's Makefile, package.json and justfile.

Each recipe line (a package.json script, a just recipe body) is analyzed as the shell command it
is, in the directory it runs in (the Makefile's, ``-C DIR``; the package's; the justfile's), so
what it does is checked as if the agent had typed it. Prerequisites and dependencies run first
and are read too; a recipe that runs ``$(MAKE) other`` or ``npm run other`` is followed, to the
depth bound of :mod:`.inside`. Make variables are expanded where they are static (the
Makefile's own, the command line's, the environment's, the automatic ``$@ $< $^ $*``); what only
make can know (``$(shell ...)``, an unknown function) stays a value known at run time, which
makes the commands that need it "cannot check".
"""

from __future__ import annotations

import fnmatch
import glob
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from statewise.commands.inline import _Inline
from statewise.commands.inside import DYNAMIC_MARK
from statewise.commands.node import _PNPM_COMMANDS, _YARN_COMMANDS
from statewise.commands.words import _Call, _Parsed, _Word

# --- make ----------------------------------------------------------------------------------

#: The most targets one make invocation is followed through (prerequisites included).
MAX_TARGETS = 64
_MAKEFILE_NAMES = ("GNUmakefile", "makefile", "Makefile")
_ASSIGNMENT = re.compile(r"^(?:(?:export|override|private)\s+)*([^\s:#=+?!]+)\s*(::?=|:::=|\?=|\+=|!=|=)\s*(.*)$",
                         re.S)
_RULE = re.compile(r"^([^:=#]+?)\s*(::?)(?!=)\s*(.*)$", re.S)
_CONDITIONAL = re.compile(r"^(ifeq|ifneq|ifdef|ifndef|else|endif)\b")
_INCLUDE = re.compile(r"^(-?include|sinclude)\s+(.*)$")


@dataclass(slots=True)
class _Rule:
    prerequisites: list[str] = field(default_factory=list)
    recipe: list[tuple[int, str]] = field(default_factory=list)  # (line number, text)


@dataclass(slots=True)
class _Makefile:
    """What the walk needs from a Makefile: variables, explicit and pattern rules."""

    variables: dict[str, tuple[str, bool]] = field(default_factory=dict)  # name -> (value, recursive)
    rules: dict[str, _Rule] = field(default_factory=dict)
    patterns: list[tuple[str, _Rule]] = field(default_factory=list)
    default_goal: str | None = None
    one_shell: bool = False
    unread: list[str] = field(default_factory=list)  # includes that could not be read
    generated: bool = False  # rules made at run time ($(eval ...), $(call ...) at the top level)
    names: list[str] = field(default_factory=list)


def _logical_lines(text: str) -> list[tuple[int, str, bool]]:
    """(line number, text, is a recipe line) with backslash continuations joined: for make's
    own lines into one line, for recipe lines kept as backslash-newline (the shell joins them)."""
    raw = text.split("\n")
    out: list[tuple[int, str, bool]] = []
    i = 0
    in_rule = False
    while i < len(raw):
        line = raw[i]
        number = i + 1
        recipe = line.startswith("\t") and in_rule
        parts = [line[1:] if recipe else line]
        while parts[-1].endswith("\\") and not parts[-1].endswith("\\\\") and i + 1 < len(raw):
            i += 1
            nxt = raw[i]
            if recipe:
                parts.append(nxt[1:] if nxt.startswith("\t") else nxt)
            else:
                parts[-1] = parts[-1][:-1]
                parts.append(nxt.strip())
        joined = "\n".join(parts) if recipe else " ".join(p.strip() if k else p for k, p in enumerate(parts))
        out.append((number, joined, recipe))
        stripped = joined.strip()
        # A conditional inside a recipe keeps it going (its lines are the recipe's, either branch).
        if not recipe and stripped and not stripped.startswith("#") and not _CONDITIONAL.match(stripped):
            in_rule = bool(_RULE.match(_strip_comment(joined))) and not _ASSIGNMENT.match(_strip_comment(joined))
        i += 1
    return out


def _strip_comment(line: str) -> str:
    out = []
    i = 0
    while i < len(line):
        if line[i] == "\\" and i + 1 < len(line):
            out.append(line[i:i + 2])
            i += 2
            continue
        if line[i] == "#":
            break
        out.append(line[i])
        i += 1
    return "".join(out)


class _Recipes(_Inline):
    """make, package.json scripts and just recipes, read and analyzed."""

    # -- make --

    def make_recipes(self, call: _Call, options: dict[str, list[str | None]], targets: list[str],
                     assignments: dict[str, str]) -> None:
        """Read the Makefile ``make`` would read and analyze the recipes of ``targets`` (the
        default goal when none), prerequisites first. ``options`` holds ``-C`` and ``-f``."""
        directory = call.ctx.cwd
        for value in options.get("-C", []):
            if value is None or directory is None:
                self.fail("cannot check the recipes: the directory of `make -C` is only known at run time", call.part)
                return
            here = call.ctx.copy()
            here.cwd = directory
            directory = self.resolve_dir(here, value)
        if directory is None:
            return
        files = options.get("-f", [])
        paths: list[Path] = []
        for value in files:
            if value is None:
                self.fail("cannot check the recipes: the Makefile `make -f` reads is only known at run time",
                          call.part)
                return
            if value in ("-", "/dev/stdin") or value.startswith(("/dev/fd/", "/proc/self/fd/")):
                self.fail("`make -f` reads its Makefile from standard input, only known at run time", call.part)
                return
            paths.append(Path(os.path.join(str(directory), value)))
        if not paths:
            found = next((directory / name for name in _MAKEFILE_NAMES if (directory / name).is_file()), None)
            if found is None:
                return  # make has nothing to run (built-in rules compile, no recipe of the project)
            paths = [found]
        makefile = _Makefile()
        for path in paths:
            if not path.is_file():
                self.fail(f"cannot check the recipes: {path} is not a file", call.part)
                return
            if not self.read_makefile(call, path, directory, makefile, assignments):
                return
        goals = targets or ([makefile.default_goal] if makefile.default_goal else [])
        env = dict(call.env)
        env.pop("MAKEFLAGS", None)
        seen: set[str] = set()
        for goal in goals:
            self.make_target(call, makefile, goal, directory, assignments, env, seen)

    def read_makefile(self, call: _Call, path: Path, directory: Path, makefile: _Makefile,
                      assignments: dict[str, str]) -> bool:
        text = self.read_inside(call, path, f"the Makefile {path.name}")
        if text is None:
            return False
        makefile.names.append(str(path))
        current: list[_Rule] = []
        replaced: list[_Rule] = []  # rules given again: their next recipe line replaces the old recipe
        defining: tuple[str, list[str]] | None = None
        for number, line, recipe in _logical_lines(text):
            if defining is not None:
                if line.strip() == "endef":
                    makefile.variables[defining[0]] = ("\n".join(defining[1]), True)
                    defining = None
                else:
                    defining[1].append(line)
                continue
            if recipe:
                if line.strip() and not line.lstrip().startswith("#"):
                    for rule in current:
                        if any(rule is r for r in replaced):
                            rule.recipe = []  # a later recipe for the same target replaces it, as make warns
                            replaced = [r for r in replaced if r is not rule]
                        rule.recipe.append((number, line))
                continue
            content = _strip_comment(line).strip()
            if not content:
                continue
            if content.startswith("define "):
                defining = (content.split()[1], [])
                current = []
                continue
            if content.startswith(("$(eval", "${eval", "$(call", "${call", "$(foreach", "${foreach")):
                makefile.generated = True
                current = []
                continue
            if _CONDITIONAL.match(content):
                continue  # both branches are read: what either may run is checked
            include = _INCLUDE.match(content)
            if include:
                current = []
                for name in self.make_expand(include.group(2), makefile, assignments, call.env, directory).split():
                    target = Path(os.path.join(str(directory), name))
                    if DYNAMIC_MARK in name or not target.is_file():
                        if include.group(1) == "include":
                            makefile.unread.append(name)
                        continue
                    if not self.read_makefile(call, target, directory, makefile, assignments):
                        return False
                continue
            assignment = _ASSIGNMENT.match(content)
            if assignment:
                self.make_assign(makefile, assignment.group(1), assignment.group(2), assignment.group(3), assignments,
                                 call.env, directory)
                current = []
                continue
            rule_line = _RULE.match(content)
            if rule_line is None:
                current = []
                continue
            names = self.make_expand(rule_line.group(1), makefile, assignments, call.env, directory).split()
            rest = rule_line.group(3)
            inline_recipe = None
            if ";" in rest:
                rest, inline_recipe = rest.split(";", 1)
            if "=" in rest and not rest.strip().startswith("%"):
                current = []  # a target-specific variable
                continue
            target_pattern = ""
            if ":" in rest:  # a static pattern rule: targets: target-pattern: prereq-patterns
                target_pattern, rest = rest.split(":", 1)
                target_pattern = target_pattern.strip()
            prerequisites = [p for p in self.make_expand(rest.split("|")[0], makefile, assignments, call.env,
                                                         directory).split()]
            current = []
            for name in names:
                if name == ".ONESHELL":
                    makefile.one_shell = True
                if name.startswith(".") and "/" not in name and "%" not in name:
                    continue
                if makefile.default_goal is None and "%" not in name:
                    makefile.default_goal = name
                if "%" in name:
                    pattern_rule = _Rule(list(prerequisites))
                    makefile.patterns.append((name, pattern_rule))
                    current.append(pattern_rule)
                    continue
                existing = makefile.rules.setdefault(name, _Rule())
                stem = _stem(target_pattern, name) if target_pattern else None
                existing.prerequisites.extend(p.replace("%", stem) if stem is not None else p for p in prerequisites)
                if rule_line.group(2) == ":" and existing.recipe:
                    replaced.append(existing)
                current.append(existing)
            if inline_recipe is not None and inline_recipe.strip():
                for target_rule in current:
                    target_rule.recipe.append((number, inline_recipe.strip()))
        goal = makefile.variables.get(".DEFAULT_GOAL")
        if goal:
            makefile.default_goal = self.make_expand(goal[0], makefile, assignments, call.env, directory).strip() or \
                makefile.default_goal
        return True

    def make_assign(self, makefile: _Makefile, name: str, operator: str, value: str, assignments: dict[str, str],
                    env: dict[str, str], directory: Path) -> None:
        if name in assignments:
            return  # the command line wins
        if operator == "?=" and (name in makefile.variables or name in env):
            return
        if operator == "!=":
            makefile.variables[name] = (f"${{{DYNAMIC_MARK}shell}}", False)
            return
        if operator == "+=" and name in makefile.variables:
            old, recursive = makefile.variables[name]
            added = value if recursive else self.make_expand(value, makefile, assignments, env, directory)
            makefile.variables[name] = (f"{old} {added}".strip(), recursive)
            return
        if operator in (":=", "::=", ":::="):
            makefile.variables[name] = (self.make_expand(value, makefile, assignments, env, directory), False)
            return
        makefile.variables[name] = (value, True)

    def make_expand(self, text: str, makefile: _Makefile, assignments: dict[str, str], env: dict[str, str],
                    directory: Path, automatic: dict[str, str] | None = None, depth: int = 0) -> str:
        """Expand make's ``$(...)`` references the way make does where the values are static;
        a value only known at run time becomes ``${__statewise_dynamic_NAME}``."""
        if depth > 16 or "$" not in text:
            return text
        out: list[str] = []
        i = 0
        while i < len(text):
            char = text[i]
            if char != "$" or i + 1 >= len(text):
                out.append(char)
                i += 1
                continue
            nxt = text[i + 1]
            if nxt == "$":
                out.append("$")
                i += 2
                continue
            if nxt in "({":
                close = _matching(text, i + 1)
                if close < 0:
                    out.append(text[i:])
                    break
                inner = text[i + 2:close]
                i = close + 1
            else:
                inner = nxt
                i += 2
            out.append(self.make_reference(inner, makefile, assignments, env, directory, automatic or {}, depth))
        return "".join(out)

    def make_reference(self, inner: str, makefile: _Makefile, assignments: dict[str, str], env: dict[str, str],
                       directory: Path, automatic: dict[str, str], depth: int) -> str:
        def expand(value: str) -> str:
            return self.make_expand(value, makefile, assignments, env, directory, automatic, depth + 1)

        if inner in automatic:
            return automatic[inner]
        if len(inner) == 2 and inner[0] in automatic and inner[1] in "DF":
            value = automatic[inner[0]]
            return (os.path.dirname(value) or ".") if inner[1] == "D" else os.path.basename(value)
        function, _, arguments = inner.partition(" ")
        if arguments and function in _MAKE_FUNCTIONS:
            parts = _split_arguments(arguments)
            values = [expand(part) for part in parts]
            found = _MAKE_FUNCTIONS[function](values, directory)
            return found if found is not None else _dynamic(function)
        if arguments or inner.startswith(("shell", "eval", "call")):
            return _dynamic(function or "value")
        name = expand(inner)
        if ":" in name and "=" in name:  # $(VAR:.c=.o)
            variable, _, substitution = name.partition(":")
            old, _, new = substitution.partition("=")
            value = expand(f"$({variable})")
            return " ".join(word[:-len(old)] + new if old and word.endswith(old) else word for word in value.split())
        if name in assignments:
            return assignments[name]
        if name in makefile.variables:
            value, recursive = makefile.variables[name]
            return expand(value) if recursive else value
        if name in ("MAKE", "MAKE_COMMAND"):
            return "make"
        if name == "CURDIR":
            return str(directory)
        if name == "SHELL":
            return "/bin/sh"
        if name == "MAKEFILE_LIST":
            return " ".join(makefile.names)
        if name in env:
            return env[name] if "\0" not in env[name] else _dynamic(name)
        if name in _MAKE_DEFAULTS:
            return _MAKE_DEFAULTS[name]
        if makefile.unread or not re.fullmatch(r"[\w.-]+", name):
            return _dynamic(name)
        return ""  # an undefined variable is empty

    def make_target(self, call: _Call, makefile: _Makefile, target: str, directory: Path,
                    assignments: dict[str, str], env: dict[str, str], seen: set[str]) -> None:
        if target in seen:
            return
        seen.add(target)
        if len(seen) > MAX_TARGETS:
            self.fail(f"cannot check the recipes: `{call.name}` reaches more than {MAX_TARGETS} targets", call.part)
            return
        rule = makefile.rules.get(target)
        stem = ""
        if rule is None or not rule.recipe:
            pattern = self.make_pattern(makefile, target, directory)
            if pattern is not None:
                stem, found = pattern
                extra = rule.prerequisites if rule is not None else []
                rule = _Rule([p.replace("%", stem) for p in found.prerequisites] + extra, found.recipe)
        if rule is None:
            if makefile.generated:
                self.fail(f"cannot check `make {target}`: the Makefile makes rules with $(eval ...) or $(call ...), "
                          "known only when make runs", call.part)
            elif makefile.unread:
                self.fail(f"cannot check `make {target}`: its rule may be in {', '.join(makefile.unread)}, which "
                          "make includes but is not there to read", call.part)
            return
        for prerequisite in rule.prerequisites:
            if prerequisite in makefile.rules or any(fnmatch.fnmatch(prerequisite, p.replace("%", "*"))
                                                     for p, _ in makefile.patterns):
                self.make_target(call, makefile, prerequisite, directory, assignments, env, seen)
        if not rule.recipe:
            return
        automatic = {"@": target, "<": rule.prerequisites[0] if rule.prerequisites else "",
                     "^": " ".join(dict.fromkeys(rule.prerequisites)), "+": " ".join(rule.prerequisites),
                     "?": " ".join(dict.fromkeys(rule.prerequisites)), "*": stem, "|": ""}
        lines = [(number, self.make_expand(text, makefile, assignments, env, directory, automatic))
                 for number, text in rule.recipe]
        if makefile.one_shell:
            lines = [(lines[0][0], "\n".join(_recipe_prefix(text) for _, text in lines))]
        for number, text in lines:
            command = _recipe_prefix(text)
            if not command.strip():
                continue
            ctx = self.inner_ctx(call, directory, env=env)
            if ctx is None:
                return
            where = f"`make {target}` ({Path(makefile.names[0]).name} line {number})"
            with self.reading_inside(where, call.text()):
                self.analyze_text(command, ctx, call.part)

    def make_pattern(self, makefile: _Makefile, target: str, directory: Path) -> tuple[str, _Rule] | None:
        """The pattern rule make would use for ``target``: the first whose prerequisites exist
        or can be made."""
        for pattern, rule in makefile.patterns:
            if not rule.recipe:
                continue
            prefix, _, suffix = pattern.partition("%")
            if not (target.startswith(prefix) and target.endswith(suffix) and len(target) >= len(prefix + suffix)):
                continue
            stem = target[len(prefix):len(target) - len(suffix)] if suffix else target[len(prefix):]
            needed = [p.replace("%", stem) for p in rule.prerequisites]
            if all((directory / p).exists() or p in makefile.rules for p in needed):
                return stem, rule
        return None

    # -- package.json scripts --

    def package_script_call(self, call: _Call, inner: _Call, tool: str, sub: str, rest: list[_Word],
                            parsed: _Parsed) -> None:
        """Which package.json script ``npm/pnpm/yarn/bun <sub> ...`` runs, and where; read it."""
        script: str | None = None
        workspaces: list[str] = []
        passed = rest  # the words the package manager appends to the script's text
        if sub in ("run", "run-script", "rum", "urn"):
            script = rest[0].value if rest else None
            passed = rest[1:]
        elif sub in ("test", "t", "tst") and tool != "bun":
            script = "test"
        elif sub in ("start", "stop", "restart") and tool != "bun":
            script = sub
        elif tool == "yarn" and sub == "workspace" and len(rest) >= 2:
            workspaces.append(rest[0].value or "\0")
            script = rest[1].value
            passed = rest[2:]
            if script == "run" and len(rest) >= 3:
                script = rest[2].value
                passed = rest[3:]
        elif (tool == "pnpm" and sub not in _PNPM_COMMANDS) or (tool == "yarn" and sub not in _YARN_COMMANDS):
            script = sub
        if not script:
            return
        for index, word in enumerate(call.args):
            if tool == "npm" and word.value == "-w" and index + 1 < len(call.args):
                named = call.args[index + 1]  # npm's -w takes a value (the option table reads it as a flag)
                workspaces.append(named.value or "\0")
                passed = [w for w in passed if w is not named]
        workspaces += [v or "\0" for v in parsed.values("--workspace", "--filter", "-F")]
        every = parsed.has("--workspaces", "-ws") or (tool == "pnpm" and parsed.has("-r", "--recursive"))
        if any("\0" in w for w in workspaces):
            self.fail(f"cannot check the script `{script}`: the workspace is only known at run time", call.part)
            return
        self.package_scripts(inner, tool, script, workspaces=workspaces or None, every_workspace=every,
                             if_present=parsed.has("--if-present"), arguments=" ".join(w.text for w in passed))

    def package_scripts(self, call: _Call, tool: str, script: str, *, workspaces: list[str] | None = None,
                        every_workspace: bool = False, if_present: bool = False, arguments: str = "") -> bool:
        """Analyze the package.json script ``script`` (and its pre/post scripts) as shell, in
        the package's directory with its ``node_modules/.bin`` on PATH. ``workspaces`` names
        workspace packages (``-w``, ``--filter``); ``every_workspace`` is ``--workspaces``/``-r``.
        ``arguments`` (shell text) are appended to the script's own text, as the package managers
        append the words after the script name. False when there is no package.json script of
        that name here (yarn/pnpm then run a binary of that name)."""
        directory = call.ctx.cwd
        if directory is None:
            return False
        root = _nearest(directory, "package.json")
        if root is None:
            return False
        manifest = self.read_manifest(call, root / "package.json")
        if manifest is None:
            return True
        packages: list[tuple[Path, dict[str, object]]] = []
        if workspaces or every_workspace:
            members = self.workspace_packages(call, root, manifest)
            if members is None:
                return True
            for member_dir, member in members:
                name = member.get("name")
                relative = os.path.relpath(member_dir, root)
                if every_workspace or any(fnmatch.fnmatch(str(name), w) or relative == w.strip("./") or
                                          os.path.realpath(os.path.join(str(directory), w)) == str(member_dir)
                                          for w in workspaces or []):
                    packages.append((member_dir, member))
        else:
            packages.append((root, manifest))
        ran = False
        for package_dir, package in packages:
            scripts = package.get("scripts")
            if not isinstance(scripts, dict) or not isinstance(scripts.get(script), str):
                continue
            ran = True
            names = [f"pre{script}", script, f"post{script}"] if tool != "pnpm" or script == "test" else [script]
            for name in names:
                body = scripts.get(name)
                if not isinstance(body, str) or not body.strip():
                    continue
                if name == script and arguments:
                    body = f"{body} {arguments}"
                if not self.spend_lines(call, body, f"the script {name}"):
                    return True
                env = dict(call.env)
                bins = [str(package_dir / "node_modules" / ".bin")]
                if package_dir != root:
                    bins.append(str(root / "node_modules" / ".bin"))
                env["PATH"] = os.pathsep.join([*bins, env.get("PATH", os.defpath)])
                env["npm_lifecycle_event"] = name
                ctx = self.inner_ctx(call, package_dir, env=env)
                if ctx is None:
                    return True
                where = f"`{tool} run {name}` ({os.path.relpath(package_dir / 'package.json', self.workspace)})"
                with self.reading_inside(where, call.text()):
                    self.analyze_text(body, ctx, call.part)
        return ran or if_present or bool(workspaces) or every_workspace

    def read_manifest(self, call: _Call, path: Path) -> dict[str, object] | None:
        text = self.read_inside(call, path, f"the scripts of {path.name}")
        if text is None:
            return None
        try:
            data = json.loads(text)
        except ValueError as error:
            self.fail(f"cannot check the scripts: {path} is not valid JSON ({error})", call.part)
            return None
        if not isinstance(data, dict):
            self.fail(f"cannot check the scripts: {path} is not a JSON object", call.part)
            return None
        return data

    def workspace_packages(self, call: _Call, root: Path, manifest: dict[str, object]
                           ) -> list[tuple[Path, dict[str, object]]] | None:
        """The workspace packages of ``root``: package.json ``workspaces`` or pnpm-workspace.yaml."""
        patterns: list[str] = []
        declared = manifest.get("workspaces")
        if isinstance(declared, dict):
            declared = declared.get("packages")
        if isinstance(declared, list):
            patterns += [p for p in declared if isinstance(p, str)]
        pnpm = root / "pnpm-workspace.yaml"
        if pnpm.is_file():
            import yaml

            text = self.read_inside(call, pnpm, "pnpm-workspace.yaml")
            if text is None:
                return None
            try:
                data = yaml.safe_load(text)
            except yaml.YAMLError:
                self.fail("cannot check the scripts: pnpm-workspace.yaml cannot be parsed", call.part)
                return None
            if isinstance(data, dict) and isinstance(data.get("packages"), list):
                patterns += [p for p in data["packages"] if isinstance(p, str)]
        found: list[tuple[Path, dict[str, object]]] = []
        for pattern in patterns:
            if pattern.startswith("!"):
                continue
            for match in sorted(glob.glob(os.path.join(glob.escape(str(root)), pattern))):
                manifest_path = Path(match) / "package.json"
                if manifest_path.is_file():
                    member = self.read_manifest(call, manifest_path)
                    if member is None:
                        return None
                    found.append((Path(os.path.realpath(match)), member))
        return found

    # -- just --

    def just(self, call: _Call) -> None:
        """``just [options] [recipe [args...]]``: the justfile's recipes analyzed as shell."""
        words = call.args
        directory = call.ctx.cwd
        justfile: Path | None = None
        index = 0
        positionals: list[str] = []
        while index < len(words):
            value = words[index].value
            if value is None:
                self.fail(f"`just` has an argument only known at run time ({words[index].text})", call.part)
                return
            if value in ("-f", "--justfile", "-d", "--working-directory", "--set", "--shell", "--shell-arg",
                         "--dotenv-filename", "--dotenv-path", "--color", "--dump-format", "--chooser",
                         "--command-color", "--list-heading", "--list-prefix", "--timestamp-format"):
                argument = words[index + 1].value if index + 1 < len(words) else None
                if value in ("-f", "--justfile") and argument is not None and directory is not None:
                    justfile = Path(os.path.realpath(os.path.join(str(directory), argument)))
                elif value in ("-d", "--working-directory") and argument is not None:
                    directory = self.resolve_dir(call.ctx, argument)
                elif value in ("--shell", "--set"):
                    self.fail(f"cannot check the recipes: `just {value}` changes how they run", call.part)
                    return
                index += 2 if value != "--set" else 3
                continue
            if value in ("-l", "--list", "--summary", "--dump", "--evaluate", "--show", "-s", "--variables",
                         "--version", "-V", "--help", "-h", "-n", "--dry-run", "--fmt", "--groups", "--choose"):
                self.unguard(call.part)
                return
            if value.startswith("-"):
                index += 1
                continue
            positionals.append(value)
            index += 1
        if justfile is None:
            if directory is None:
                return
            found = None
            for candidate in [directory, *directory.parents]:
                found = next((candidate / name for name in ("justfile", "Justfile", ".justfile")
                              if (candidate / name).is_file()), None)
                if found is not None:
                    break
            if found is None:
                self.unguard(call.part)
                return
            justfile = found
        text = self.read_inside(call, justfile, f"the justfile {justfile.name}")
        if text is None:
            return
        parsed = _parse_justfile(text)
        if isinstance(parsed, str):
            self.fail(f"cannot check the recipes: {parsed}", call.part)
            return
        recipes, variables = parsed
        if not recipes:
            return
        run_in = justfile.parent
        requests: list[tuple[str, list[str]]] = []
        if not positionals:
            first = next(iter(recipes))
            requests.append((first, []))
        else:
            i = 0
            while i < len(positionals):
                name = positionals[i]
                if name not in recipes:
                    self.fail(f"cannot check `just {name}`: the justfile has no recipe of that name", call.part)
                    return
                params = recipes[name].parameters
                count = len(params) if params and not params[-1][0].startswith(("+", "*")) else \
                    len(positionals) - i - 1
                requests.append((name, positionals[i + 1:i + 1 + count]))
                i += 1 + count
        seen: set[str] = set()
        for name, arguments in requests:
            self.just_recipe(call, recipes, variables, name, arguments, run_in, seen)
        self.unguard(call.part)

    def just_recipe(self, call: _Call, recipes: dict[str, _JustRecipe], variables: dict[str, str], name: str,
                    arguments: list[str], directory: Path, seen: set[str]) -> None:
        if name in seen or name not in recipes or len(seen) > MAX_TARGETS:
            return
        seen.add(name)
        recipe = recipes[name]
        for dependency in recipe.dependencies:
            self.just_recipe(call, recipes, variables, dependency, [], directory, seen)
        values = dict(variables)
        for position, (parameter, default) in enumerate(recipe.parameters):
            bare = parameter.lstrip("+*$")
            if parameter.startswith(("+", "*")):
                values[bare] = " ".join(arguments[position:]) or (default or "")
            elif position < len(arguments):
                values[bare] = arguments[position]
            else:
                values[bare] = default if default is not None else _dynamic(bare)
        body = [(number, _just_interpolate(line, values)) for number, line in recipe.body]
        if not body:
            return
        ctx = self.inner_ctx(call, directory)
        if ctx is None:
            return
        if body[0][1].startswith("#!"):
            interpreter = body[0][1][2:].split()
            program = (interpreter[-1] if interpreter and interpreter[0].endswith("env") else
                       interpreter[0] if interpreter else "").rsplit("/", 1)[-1]
            script = "\n".join(line for _, line in body[1:])
            where = f"`just {name}` (justfile line {body[0][0]})"
            if program in ("bash", "sh", "zsh", "dash"):
                with self.reading_inside(where, call.text()):
                    self.analyze_text(script, ctx, call.part)
            elif program.startswith("python"):
                self.python_program(_Call(call.words, call.env, ctx, call.part), script, where)
            else:
                self.fail(f"cannot check {where}: a {program or 'shebang'} recipe", call.part)
            return
        for number, line in body:
            command = line.lstrip("@-").lstrip()
            if not command or command.startswith("#"):
                continue
            line_ctx = self.inner_ctx(call, directory)
            if line_ctx is None:
                return
            with self.reading_inside(f"`just {name}` (justfile line {number})", call.text()):
                self.analyze_text(command, line_ctx, call.part)


@dataclass(slots=True)
class _JustRecipe:
    parameters: list[tuple[str, str | None]] = field(default_factory=list)
    dependencies: list[str] = field(default_factory=list)
    body: list[tuple[int, str]] = field(default_factory=list)


_JUST_HEADER = re.compile(r"^@?([A-Za-z_][\w-]*)((?:\s+[^:]*?)?)\s*:(?!=)\s*(.*)$")
_JUST_VARIABLE = re.compile(r"^(?:export\s+)?([A-Za-z_][\w-]*)\s*:=\s*(.*)$")
_JUST_PARAMETER = re.compile(r"""([+*]?\$?[A-Za-z_][\w-]*)(?:=("[^"]*"|'[^']*'|[^\s'"]+))?""")


def _parse_justfile(text: str) -> tuple[dict[str, _JustRecipe], dict[str, str]] | str:
    """Recipes (in order) and variables of a justfile; a string says why it cannot be read."""
    recipes: dict[str, _JustRecipe] = {}
    variables: dict[str, str] = {}
    current: _JustRecipe | None = None
    for number, line in enumerate(text.split("\n"), 1):
        if current is not None and line[:1] in (" ", "\t") and line.strip():
            current.body.append((number, line.strip()))
            continue
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or stripped.startswith("["):
            if not stripped:
                current = current  # blank lines inside a recipe are kept going
            continue
        current = None
        if stripped.startswith(("set ", "alias ", "import ", "mod ")):
            if stripped.startswith("set shell") or stripped.startswith(("import ", "mod ")):
                if stripped.startswith("set shell") and not re.search(r'\[\s*"(ba|z|da)?sh"', stripped):
                    return f"the justfile sets a shell StateWise does not read ({stripped[:80]})"
                if stripped.startswith(("import ", "mod ")):
                    return f"the justfile imports another file ({stripped[:80]})"
            continue
        variable = _JUST_VARIABLE.match(stripped)
        if variable:
            variables[variable.group(1)] = _just_value(variable.group(2), variables)
            continue
        header = _JUST_HEADER.match(stripped)
        if header:
            recipe = _JustRecipe()
            for parameter, default in _JUST_PARAMETER.findall(header.group(2)):
                recipe.parameters.append((parameter, _just_value(default, variables) if default else None))
            recipe.dependencies = [d.strip("()").split()[0] for d in re.findall(r"\([^)]*\)|[\w-]+",
                                                                                header.group(3).split("&&")[0])
                                   if d.strip("()")]
            recipes[header.group(1)] = recipe
            current = recipe
    return recipes, variables


def _just_value(expression: str, variables: dict[str, str]) -> str:
    expression = expression.strip()
    if len(expression) >= 2 and expression[0] == expression[-1] and expression[0] in "'\"":
        return expression[1:-1]
    if expression in variables:
        return variables[expression]
    return _dynamic("just")


def _just_interpolate(line: str, values: dict[str, str]) -> str:
    def replace(match: re.Match[str]) -> str:
        return _just_value(match.group(1), values)

    return re.sub(r"\{\{(.*?)\}\}", replace, line)


# --- helpers -------------------------------------------------------------------------------


def _dynamic(name: str) -> str:
    return "${" + DYNAMIC_MARK + re.sub(r"\W", "_", name)[:40] + "}"


def _stem(pattern: str, name: str) -> str | None:
    """What ``%`` matches when ``pattern`` (``%.o``) matches ``name`` (``a.o``), else None."""
    prefix, percent, suffix = pattern.partition("%")
    if not percent or not (name.startswith(prefix) and name.endswith(suffix)) or len(name) < len(prefix + suffix):
        return None
    return name[len(prefix):len(name) - len(suffix)] if suffix else name[len(prefix):]


def _recipe_prefix(text: str) -> str:
    """A recipe line without make's own prefixes (``@`` quiet, ``-`` ignore errors, ``+`` always)."""
    stripped = text.lstrip()
    while stripped[:1] in ("@", "-", "+"):
        stripped = stripped[1:].lstrip()
    return stripped


def _matching(text: str, start: int) -> int:
    opener = text[start]
    closer = ")" if opener == "(" else "}"
    depth = 0
    for index in range(start, len(text)):
        if text[index] == opener:
            depth += 1
        elif text[index] == closer:
            depth -= 1
            if depth == 0:
                return index
    return -1


def _split_arguments(text: str) -> list[str]:
    parts: list[str] = []
    depth = 0
    current: list[str] = []
    for char in text:
        if char in "({":
            depth += 1
        elif char in ")}":
            depth -= 1
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        current.append(char)
    parts.append("".join(current))
    return parts


def _nearest(directory: Path, name: str) -> Path | None:
    for candidate in [directory, *directory.parents]:
        if (candidate / name).is_file():
            return candidate
    return None


def _patsubst(values: list[str], _directory: Path) -> str | None:
    if len(values) != 3:
        return None
    pattern, replacement, words = values
    prefix, percent, suffix = pattern.strip().partition("%")
    out = []
    for word in words.split():
        if percent and word.startswith(prefix) and word.endswith(suffix):
            stem = word[len(prefix):len(word) - len(suffix)] if suffix else word[len(prefix):]
            out.append(replacement.strip().replace("%", stem))
        elif not percent and word == pattern.strip():
            out.append(replacement.strip())
        else:
            out.append(word)
    return " ".join(out)


def _wildcard(values: list[str], directory: Path) -> str | None:
    found: list[str] = []
    for pattern in values[0].split():
        found += sorted(os.path.relpath(p, directory) if not pattern.startswith("/") else p
                        for p in glob.glob(os.path.join(glob.escape(str(directory)), pattern)))
    return " ".join(found)


_MAKE_FUNCTIONS: dict[str, Callable[[list[str], Path], str | None]] = {
    "subst": lambda v, _d: v[2].replace(v[0], v[1]) if len(v) == 3 else None,
    "patsubst": _patsubst,
    "strip": lambda v, _d: " ".join(v[0].split()),
    "addprefix": lambda v, _d: " ".join(v[0].strip() + w for w in v[1].split()) if len(v) == 2 else None,
    "addsuffix": lambda v, _d: " ".join(w + v[0].strip() for w in v[1].split()) if len(v) == 2 else None,
    "notdir": lambda v, _d: " ".join(os.path.basename(w) for w in v[0].split()),
    "dir": lambda v, _d: " ".join((os.path.dirname(w) or ".") + "/" for w in v[0].split()),
    "basename": lambda v, _d: " ".join(os.path.splitext(w)[0] for w in v[0].split()),
    "firstword": lambda v, _d: (v[0].split() or [""])[0],
    "lastword": lambda v, _d: (v[0].split() or [""])[-1],
    "sort": lambda v, _d: " ".join(sorted(set(v[0].split()))),
    "abspath": lambda v, d: " ".join(os.path.normpath(os.path.join(str(d), w)) for w in v[0].split()),
    "realpath": lambda v, d: " ".join(os.path.realpath(os.path.join(str(d), w)) for w in v[0].split()),
    "wildcard": _wildcard,
    "filter": lambda v, _d: " ".join(w for w in v[1].split() if any(
        fnmatch.fnmatch(w, p.replace("%", "*")) for p in v[0].split())) if len(v) == 2 else None,
    "filter-out": lambda v, _d: " ".join(w for w in v[1].split() if not any(
        fnmatch.fnmatch(w, p.replace("%", "*")) for p in v[0].split())) if len(v) == 2 else None,
    "if": lambda v, _d: (v[1] if v[0].strip() else (v[2] if len(v) > 2 else "")) if len(v) >= 2 and
    DYNAMIC_MARK not in v[0] else None,
    "or": lambda v, _d: next((w for w in v if w.strip()), "") if not any(DYNAMIC_MARK in w for w in v) else None,
    "info": lambda _v, _d: "",
    "warning": lambda _v, _d: "",
    "error": lambda _v, _d: "",
}

#: make's built-in variables a recipe may use.
_MAKE_DEFAULTS = {"CC": "cc", "CXX": "g++", "RM": "rm -f", "AR": "ar", "CPP": "cc -E", "LD": "ld", "FC": "f77",
                  "INSTALL": "install", "MKDIR_P": "mkdir -p"}
