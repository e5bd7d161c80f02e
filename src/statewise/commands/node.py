"""Node's package managers: npm, pnpm, yarn, bun, npx."""

from __future__ import annotations

from statewise.commands.projects import _Projects
from statewise.commands.tables import (
    _MIGRATION_SCRIPT,
    _canonical,
)
from statewise.commands.words import _NPX, _Call, _parse, _Parsed, _Spec, _Word


class _Node(_Projects):
    """npm, pnpm, yarn and bun: installs, scripts and the programs they run."""

    def npm(self, call: _Call) -> None:
        tool = _canonical(call.name.rsplit("/", 1)[-1])
        spec = _Spec.of(
            flags="-D --save-dev -P --save-prod -O --save-optional -E --save-exact -B --save-bundle --no-save -S --save "
                  "-g --global -f --force --legacy-peer-deps --strict-peer-deps --dry-run --ignore-scripts --no-audit "
                  "--no-fund --prefer-offline --prefer-online --offline --package-lock-only --no-package-lock "
                  "--foreground-scripts -y --yes --no -q --quiet --silent -s -d --loglevel --workspaces -ws "
                  "--include-workspace-root --save-peer --frozen-lockfile --no-frozen-lockfile -W "
                  "--ignore-workspace-root-check -T --tilde --exact --dev --peer --optional --recursive -r "
                  "--workspace-root -w --shamefully-hoist --no-optional --production --prod -v --version -h --help "
                  "--if-present --stream --parallel --no-bail --immutable",
            valued="--workspace --prefix --registry --tag --omit --include --install-strategy --cache --userconfig "
                   "--location "
                   "-C --dir --filter -F --cwd --reporter --network-concurrency --modules-folder --mode",
            allow_unknown=True)
        parsed = _parse(call.args, spec)
        if not self.parsed_ok(call, parsed, f"{tool}"):
            return
        ctx = call.ctx
        for name in ("--prefix", "-C", "--dir", "--cwd"):
            value = parsed.value(name)
            if parsed.has(name):
                ctx = call.ctx.copy()
                ctx.cwd = self.resolve_dir(call.ctx, value) if value else None
        inner = _Call(call.words, call.env, ctx, call.part, call.kept)
        positionals = parsed.positionals
        if parsed.has("-v", "--version", "-h", "--help") and not positionals:
            return
        sub = positionals[0].value if positionals else ("install" if tool in ("yarn", "bun") else None)
        if sub is None:
            if positionals:
                self.fail(f"the {tool} subcommand is only known at run time", call.part)
            return
        rest = positionals[1:]
        self.package_script_call(call, inner, tool, sub, rest, parsed)  # what the script runs (recipes.py)
        if tool == "yarn" and sub == "global" and rest and rest[0].value == "add":
            self.node_install(inner, tool, rest[1:], parsed, force_global=True)
            return
        installs = {"npm": ("install", "i", "add", "in", "ins", "inst", "insta", "instal", "isnt", "isnta", "isntal",
                            "isntall"),
                    "pnpm": ("add", "install", "i"), "yarn": ("add",), "bun": ("add", "install", "i", "a")}
        if sub in installs.get(tool, ()):
            if not rest:
                self.unguard(call.part)  # installs what the lockfile says
                return
            self.node_install(inner, tool, rest, parsed)
            return
        if (sub in ("test", "t", "tst") and tool != "bun") or (tool == "bun" and sub == "test"):
            self.test_run(inner, call.args)
            return
        if sub in ("run", "run-script", "rum", "urn"):
            script = rest[0].value if rest else None
            if script is None and rest:
                self.fail(f"the {tool} script is only known at run time", call.part)
                return
            if script is not None and (script == "test" or script.startswith("test:")):
                self.test_run(inner, call.args)
                return
            if script is not None and _MIGRATION_SCRIPT.search(script):
                self.migration(inner, f"{tool} run {script}", call.args)
                return
            elsewhere = any(parsed.has(name) for name in (
                "--workspace", "--workspaces", "-ws", "-w", "--filter", "-F", "--prefix", "-C", "--dir", "--cwd",
                "--recursive", "-r", "--if-present"))
            # Only npm and pnpm `run` mean a package.json script; yarn and bun run a binary or a
            # file of that name too (`bun run index.ts`).
            if script is not None and tool in ("npm", "pnpm") and not elsewhere and self.cwd_arg(inner) is None:
                # The script must be one package.json declares (instructions name scripts that
                # were renamed or removed): npm.script_exists[script] is read from the file.
                self.emit(call, f"{tool}.run_script", {"script": script, "command": inner.text()}, target=script,
                          reason=f"{tool} runs the package.json script {script}")
                return
            self.unguard(call.part)
            return
        if sub == "repl" and tool in ("bun", "pnpm", "npm"):
            self.interactive(call, "an interactive interpreter")
            return
        if sub in ("exec", "x", "dlx") or (tool == "pnpm" and sub == "dlx"):
            index = call.words.index(positionals[0])
            self.runner(inner, index + 1, _NPX)
            return
        if tool == "yarn" and sub in ("test",):
            self.test_run(inner, call.args)
            return
        if sub in ("ls", "list", "ll", "la", "view", "info", "show", "v", "outdated", "search", "help", "prefix",
                   "root", "bin", "whoami", "ping", "why", "explain", "fund", "docs", "repo", "bugs"):
            return
        if tool == "yarn" and sub not in _YARN_COMMANDS:
            self.script_or_bin(call, inner, tool, sub, positionals[0])
            return
        if tool == "pnpm" and sub not in _PNPM_COMMANDS:
            self.script_or_bin(call, inner, tool, sub, positionals[0])
            return
        self.unguard(call.part)

    def script_or_bin(self, call: _Call, inner: _Call, tool: str, sub: str, word: _Word) -> None:
        """``pnpm <name>`` / ``yarn <name>``: the project's script of that name, or else the
        program ``<name>`` from node_modules/.bin (``pnpm prisma migrate reset`` runs prisma).
        Scripts named like tests or migrations are those; any other name is classified as the
        program it would run, so a binary a rule guards is guarded here too."""
        if sub == "test" or sub.startswith("test:"):
            self.test_run(inner, call.args)
        elif _MIGRATION_SCRIPT.search(sub):
            self.migration(inner, f"{tool} {sub}", call.args)
        else:
            self.dispatch(inner.then(call.words.index(word), keep=True))

    def node_install(self, call: _Call, tool: str, packages: list[_Word], parsed: _Parsed, *,
                     force_global: bool = False) -> None:
        operation = {"npm": "npm.install", "pnpm": "pnpm.add", "yarn": "yarn.add", "bun": "bun.add"}[tool]
        dev = parsed.has("-D", "--save-dev", "--dev")
        redirect = self.install_env(call, tool)
        if redirect is None:
            return
        location = parsed.value("--location")
        is_global = force_global or parsed.has("-g", "--global") or bool(redirect.get("global")) or location == "global"
        prefix = parsed.value("--prefix") if tool == "npm" else None
        prefix = prefix or (redirect.get("prefix") if tool == "npm" or is_global else None)
        if prefix:
            prefix = self.represent_path(call, prefix)
        for word in packages:
            if word.value is None:
                self.fail(f"a package of `{tool}` is only known at run time", call.part)
                continue
            name, version = _split_node_package(word.value)
            self.emit(call, operation, {"package": name, "version": version, "dev": True if dev else None,
                                        "global": True if is_global else None, "prefix": prefix},
                      target=name, reason=f"{tool} installs {word.value}")

    def npx(self, call: _Call) -> None:
        self.runner(call, 1, _NPX)

    # -- tests, builds, migrations --


def _split_node_package(value: str) -> tuple[str, str | None]:
    if value.startswith((".", "/", "~", "git+", "github:", "file:", "npm:")) or "://" in value:
        return value, None
    at = value.rfind("@")
    if at > 0:
        return value[:at], value[at + 1:] or None
    return value, None



def _npx_call(self: _Node, call: _Call) -> None:
    values = [w.value for w in call.words]
    if "-c" in values or "--call" in values:
        index = values.index("-c") if "-c" in values else values.index("--call")
        body = values[index + 1] if index + 1 < len(values) else None
        if body is None:
            self.fail("the body of `npx -c` is only known at run time", call.part)
            return
        inner = call.ctx.copy()
        inner.depth += 1
        self.analyze_text(body, inner, call.part)
        return
    self.runner(call, 1, _NPX)


# yarn's own commands; any other word after yarn is a script or a program (as for pnpm below).
_YARN_COMMANDS = frozenset({"install", "remove", "upgrade", "up", "link", "unlink", "dedupe", "pack", "publish", "cache",
                            "config", "init", "import", "set", "plugin", "workspace", "workspaces", "create", "node",
                            "patch", "rebuild", "npm", "constraints"})

# pnpm's own commands; any other word after pnpm is a script, or else a program in
# node_modules/.bin (as `pnpm exec` runs it).
_PNPM_COMMANDS = frozenset("""
add install i update up upgrade remove rm uninstall un link ln unlink import rebuild rb prune fetch
install-test it patch patch-commit patch-remove audit list ls ll la outdated why licenses run run-script test t tst
exec dlx create start stop restart pack publish recursive multi m server store root bin setup init deploy
doctor config c get set env cat-file cat-index find-hash self-update help dedupe ignored-builds
approve-builds version login logout whoami team owner access view info show v search docs bugs repo ping
adduser cache completion sbom catalog repl node
""".split())
