"""Wrapper peeling: ``sudo``, ``env``, ``nohup``, ``timeout``, ``xargs``, ``sh -c`` bodies ..."""

from __future__ import annotations

import os

from statewise.commands.base import _Base
from statewise.commands.multiplexers import ARGV, FAIL, SESSION, SHELL, WRITE, read_screen, read_tmux
from statewise.commands.tables import _ENV_NAME, _TRANSPARENT, _canonical
from statewise.commands.words import _Call, _Ctx, _parse, _Parsed, _Spec, _Word
from statewise.commands.wrapper_shapes import NOTHING, WRAPPERS, find_shape, scan_wrapper


class _Wrappers(_Base):
    """Peeling wrappers (``sudo``, ``env``, ``sh -c``, ``xargs`` ...) down to the command they run."""

    def shell(self, call: _Call) -> None:
        spec = _Spec.of(flags="-e -x -u -v -n -l -i -r -s -a -b -f -h -k -m -p -t -B -C -E -H -P -T -c --login "
                              "--norc --noprofile --posix --restricted --noediting --verbose --debugger "
                              "--no-rcs --interactive --no-config --private",
                        valued="-O -o --rcfile --init-file --init-command", stop_at_positional=True)
        words = [w if (w.value or "")[:1] != "+" else _Word.literal("-" + (w.value or "")[1:]) for w in call.args]
        parsed = _parse(words, spec)
        if not self.parsed_ok(call, parsed, f"{call.name}"):
            return
        rest = call.args[parsed.rest or 0:]
        if parsed.has("-n"):
            return
        if parsed.has("-c"):
            if not rest:
                self.fail(f"`{call.name} -c` without a command", call.part)
                return
            body = rest[0]
            if body.value is None:
                self.fail(f"the body of `{call.name} -c` is only known at run time ({body.why})", call.part)
                return
            inner = call.ctx.copy()
            inner.env = dict(call.env)
            inner.depth += 1
            self.analyze_text(body.value, inner, call.part)
            return
        if rest and not parsed.has("-s"):
            script = rest[0].value
            if script is None or script in ("-", "/dev/stdin") or script.startswith(("/dev/fd/", "/proc/self/fd/")):
                self.fail(f"`{call.name}` runs a script only known at run time ({rest[0].text})", call.part)
                return
            self.shell_script(call, rest[0])  # a workspace script is read (scripts.py)
            self.unguard(call.part)  # runs a script file
            return
        if call.ctx.stdin == "tty" and not parsed.has("-s"):
            self.interactive(call, "an interactive shell")
            return
        self.fail(f"`{call.name}` reads the commands it runs from its standard input", call.part)

    def wrapper(self, call: _Call, spec: _Spec, *, what: str = "", chdir: tuple[str, ...] = (),
                keep: bool = False, need_command: bool = False, assignments: bool = False) -> None:
        parsed = _parse(call.args, spec)
        if not self.parsed_ok(call, parsed, f"{call.name}"):
            return
        start = 1 + (parsed.rest if parsed.rest is not None else len(call.args))
        ctx = call.ctx
        for name in chdir:
            directory = parsed.value(name)
            if parsed.has(name):
                ctx = call.ctx.copy()
                ctx.cwd = self.resolve_dir(call.ctx, directory) if directory else None
        env = call.env
        # sudo VAR=value cmd: the assignments are the command's environment, not its name.
        while assignments and start < len(call.words):
            word = call.words[start]
            name, equals, assigned = (word.value or word.text).partition("=")
            if not equals or not _ENV_NAME.match(name):
                break
            env = dict(env) if env is call.env else env
            self.set_env(env, name, assigned if word.value is not None else None, call.part, ctx)
            start += 1
        if start >= len(call.words):
            if need_command:
                self.fail(f"`{call.name}` {what or 'runs no command StateWise can see'}", call.part)
            return
        self.dispatch(call.then(start, keep=keep, ctx=ctx, env=env))

    def wrapped(self, call: _Call, otherwise: str = "unknown") -> None:
        """A wrapper from the table of wrapper shapes (commands/wrapper_shapes.py): the command
        it runs is dispatched as if typed without the prefix. ``otherwise`` says what a call
        in none of the program's wrapping forms is: ``unknown`` or ``unguarded``."""
        program = WRAPPERS[_canonical(call.name.rsplit("/", 1)[-1].lower())]
        found = find_shape(program, call.words)
        if isinstance(found, str):
            self.fail(f"{call.name}: {found}; where the command it runs starts is not known", call.part)
            return
        if found is None:
            if otherwise == "unguarded":
                self.unguard(call.part)
            else:
                self.unknown(call)
            return
        shape, start = found
        scan = scan_wrapper(shape, call.words, start)
        what = " ".join(w.value or w.text for w in call.words[:start])
        if scan.error:
            self.fail(f"`{what}` {scan.error}; where the command it runs starts is not known", call.part)
            return
        ctx = call.ctx
        if shape.environment:
            ctx = call.ctx.copy()
            ctx.path_known = False  # the environment's PATH: which pip or python runs is not known here
        for name in shape.chdir:
            if scan.has(name):
                ctx = ctx.copy()
                directory = scan.value(name)
                ctx.cwd = self.resolve_dir(call.ctx, directory) if directory else None
        if scan.body is not None:
            if scan.body.value is None:
                self.fail(f"the command `{what}` runs is only known at run time", call.part)
                return
            inner = ctx.copy()
            inner.env = dict(call.env)
            inner.depth += 1
            self.analyze_text(scan.body.value, inner, call.part)
            return
        if scan.start is None or scan.start >= len(call.words):
            if scan.has(*shape.quiet) or shape.without_command == NOTHING:
                return
            if shape.without_command == SESSION:
                self.interactive(call, "an interactive shell in the environment")
            else:
                self.fail(f"`{what}` runs no command StateWise can see", call.part)
            return
        inner_call = call.then(scan.start, keep=shape.keep, ctx=ctx)
        head = inner_call.words[0]
        if shape.env_prefix and head.value and ":" in head.value and "/" not in head.value.partition(":")[0]:
            # hatch run test:pytest runs pytest in the environment `test`
            program_name = head.value.partition(":")[2]
            inner_call = _Call([_Word.literal(program_name), *inner_call.words[1:]], inner_call.env, inner_call.ctx,
                               inner_call.part, inner_call.kept)
        self.dispatch(inner_call)

    def multiplexer(self, call: _Call) -> None:
        """tmux and screen (commands/multiplexers.py): attaching is an interactive session; a
        detached session, window or pane runs the command in its argv, and keys typed into a
        pane (``tmux send-keys``, ``screen -X stuff``) are read as the command they type."""
        name = _canonical(call.name.rsplit("/", 1)[-1].lower())
        effects = read_tmux(call.words) if name == "tmux" else read_screen(call.words)
        if not effects:
            self.unguard(call.part)
        for effect in effects:
            if effect.kind == SESSION:
                self.interactive(call, "a terminal multiplexer session")
            elif effect.kind == FAIL:
                self.fail(effect.text, call.part)
            elif effect.kind == WRITE:
                self.write_paths(call, [_Word.literal(effect.text)], via=f"{name} save-buffer")
            elif effect.kind == ARGV:
                self.dispatch(call.then(effect.start))
            elif effect.kind == SHELL:
                inner = call.ctx.copy()
                inner.env = dict(call.env)
                inner.depth += 1
                if effect.directory:
                    inner.cwd = self.resolve_dir(call.ctx, effect.directory)
                self.analyze_text(effect.text, inner, call.part)

    def sudo(self, call: _Call) -> None:
        spec = _Spec.of(flags="-A -b -E -H -i -K -k -l -n -P -S -s -V -v -B -N --askpass --background --login "
                              "--non-interactive --preserve-groups --reset-timestamp --remove-timestamp --shell "
                              "--stdin --set-home --version --validate --list --bell --no-update --help -h",
                        valued="-u -g -C -D -p -r -t -T -U -R --user --group --close-from --chdir --prompt --role "
                               "--type --command-timeout --other-user --chroot --host",
                        optional="--preserve-env", stop_at_positional=True)
        parsed = _parse(call.args, spec)
        if not self.parsed_ok(call, parsed, call.name):
            return
        if parsed.has("-R", "--chroot"):
            self.fail(f"`{call.name}` runs the command in another root directory", call.part)
            return
        if parsed.has("-s", "-i", "--shell", "--login") and parsed.rest is not None and parsed.rest >= len(call.args):
            self.fail(f"`{call.name} -s/-i` starts a shell that reads commands from its standard input", call.part)
            return
        self.wrapper(call, spec, chdir=("-D", "--chdir"), assignments=True)

    def env_wrapper(self, call: _Call) -> None:
        env = dict(call.env)
        ctx = call.ctx
        i = 1
        words = call.words
        while i < len(words):
            value = words[i].value
            assigned_name = words[i].text.partition("=")[0]
            if value is None and "=" in words[i].text and _ENV_NAME.match(assigned_name):
                # env PATH=$PATH cmd: a variable set to a value only known at run time
                self.set_env(env, assigned_name, None, call.part, ctx)
                i += 1
                continue
            if value is None:
                self.fail(f"`env` argument `{words[i].text}` is only known at run time", call.part)
                return
            if value in ("-i", "--ignore-environment", "-"):
                env = {}
            elif value in ("-0", "--null", "-v", "--debug"):
                pass
            elif value in ("-a", "--argv0") and i + 1 < len(words):
                i += 1  # the name the command is told it has: not what runs
            elif value.startswith("--argv0="):
                pass
            elif value in ("-u", "--unset") and i + 1 < len(words):
                env.pop(words[i + 1].value or "", None)
                i += 1
            elif value.startswith("--unset="):
                env.pop(value.partition("=")[2], None)
            elif value in ("-C", "--chdir") and i + 1 < len(words):
                ctx = ctx.copy()
                ctx.cwd = self.resolve_dir(call.ctx, words[i + 1].value or "\0")
                i += 1
            elif value.startswith("--chdir="):
                ctx = ctx.copy()
                ctx.cwd = self.resolve_dir(call.ctx, value.partition("=")[2])
            elif value in ("-S", "--split-string") or value.startswith(("--split-string=", "-S")):
                self.fail("`env -S` splits a string into a command", call.part)
                return
            elif value.startswith(("--default-signal", "--ignore-signal", "--block-signal", "--list-signal")):
                pass
            elif value == "--":
                i += 1
                break
            elif value.startswith("-"):
                self.fail(f"env: unknown option {value}", call.part)
                return
            elif "=" in value and _ENV_NAME.match(value.partition("=")[0]):
                name, _, assigned = value.partition("=")
                self.set_env(env, name, assigned, call.part, ctx)
            else:
                break
            i += 1
        if i >= len(words):
            return  # prints the environment
        self.dispatch(call.then(i, env=env, ctx=ctx))

    def simple_wrapper(self, call: _Call) -> None:
        name = _canonical(call.name.rsplit("/", 1)[-1])
        specs = {
            "time": _Spec.of(flags="-p -v -a -q --portability --verbose --append --quiet",
                             valued="-f -o --format --output", stop_at_positional=True),
            "flock": _Spec.of(flags="-s -x -e -u -n -o -F --shared --exclusive --unlock --nonblock --nb "
                                    "--close --no-fork --verbose",
                              valued="-w -E -c --timeout --wait --conflict-exit-code --command", stop_at_positional=True),
        }
        if name in _TRANSPARENT:
            self.dispatch(call.then(1))
            return
        spec = specs[name]
        if name == "time":
            parsed = _parse(call.args, spec)
            output = parsed.value("-o", "--output")
            if output:
                self.write_paths(call, [_Word.literal(output)], via="time -o")
            rest = call.args[parsed.rest or 0:] if parsed.rest is not None else []
            if rest and rest[0].value is None and rest[0].why in ("a subshell", "a compound statement"):
                self.unguard(call.part)  # `time (make)`, `time { ...; }`: bash's keyword; the body was walked
                return
        if name == "flock":
            parsed = _parse(call.args, spec)
            if not self.parsed_ok(call, parsed, "flock"):
                return
            start = 1 + (parsed.rest or 0)
            after = call.words[start + 1:start + 3]
            if not parsed.has("-c", "--command") and after and after[0].value in ("-c", "--command"):
                parsed.options.append(("-c", after[1].value if len(after) > 1 else None))
            if parsed.has("-c", "--command"):
                body = parsed.value("-c", "--command")
                if body is None:
                    self.fail("the body of `flock -c` is only known at run time", call.part)
                    return
                inner = call.ctx.copy()
                inner.depth += 1
                self.analyze_text(body, inner, call.part)
                return
            self.dispatch(call.then(start + 1))  # skip the lock file
            return
        self.wrapper(call, spec)

    def xargs(self, call: _Call) -> None:
        spec = _Spec.of(flags="-0 -r -t -p -x -o --null --no-run-if-empty --verbose --interactive --exit "
                              "--open-tty --show-limits",
                        valued="-I -n -L -P -d -E -s -a --max-args --max-lines --max-procs --delimiter "
                               "--max-chars --arg-file --process-slot-var",
                        optional="-i -e -l --replace --eof",
                        stop_at_positional=True)
        parsed = _parse(call.args, spec)
        if not self.parsed_ok(call, parsed, "xargs"):
            return
        start = 1 + (parsed.rest if parsed.rest is not None else len(call.args))
        if start >= len(call.words):
            return  # echo
        inner = call.then(start)
        given = _xargs_input(call.ctx, parsed)
        if given is not None:
            # `echo build | xargs rm -rf`: the words xargs appends are what the echo prints
            self.dispatch(_Call([*inner.words, *(_Word.literal(w) for w in given)], inner.env, inner.ctx, inner.part))
            return
        # The arguments xargs appends are read at run time: probe with one such argument.
        result = self.probe(_Call([*inner.words, _Word("<stdin>", None, "an argument xargs reads at run time")],
                                  inner.env, inner.ctx, inner.part))
        if result.actions or result.unresolved:
            self.fail(f"xargs runs `{inner.name}` with arguments read at run time", call.part)
        elif result.unguarded:
            self.unguard(call.part)

    def watch(self, call: _Call) -> None:
        spec = _Spec.of(flags="-d -t -b -e -g -c -x -p -w -r -C --differences --no-title --beep --errexit "
                              "--chgexit --color --no-color --exec --precise --no-wrap --no-rerun",
                        valued="-n -q --interval --equexit", optional="--differences", stop_at_positional=True)
        parsed = _parse(call.args, spec)
        if not self.parsed_ok(call, parsed, "watch"):
            return
        start = 1 + (parsed.rest if parsed.rest is not None else len(call.args))
        if start >= len(call.words):
            return
        if parsed.has("-x", "--exec"):
            self.dispatch(call.then(start))
            return
        values = [w.value for w in call.words[start:]]
        if any(v is None for v in values):
            self.fail("the command `watch` runs is only known at run time", call.part)
            return
        inner = call.ctx.copy()
        inner.depth += 1
        self.analyze_text(" ".join(v for v in values if v is not None), inner, call.part)

    def eval_builtin(self, call: _Call) -> None:
        self.fail("`eval` runs a string as a command", call.part)

    def shell_body_builtin(self, call: _Call) -> None:
        """``trap 'cmd' SIG`` and ``alias name='cmd'``: the bodies are commands; read them."""
        name = call.name
        bodies: list[_Word] = []
        if name == "trap":
            args = [w for w in call.args if w.value not in ("-p", "-l", "--")]
            if len(args) >= 2:
                bodies.append(args[0])
        else:
            for word in call.args:
                if word.value is None:
                    self.fail(f"`{name}` with a definition only known at run time", call.part)
                    return
                if "=" in word.value:
                    bodies.append(_Word.literal(word.value.partition("=")[2]))
        for body in bodies:
            if body.value is None:
                self.fail(f"the body of `{name}` is only known at run time", call.part)
                continue
            inner = call.ctx.copy()
            inner.depth += 1
            self.analyze_text(body.value, inner, call.part)

    def source(self, call: _Call) -> None:
        if not call.args:
            return
        target = call.args[0].value
        if target is None or target in ("-", "/dev/stdin") or target.startswith(("/dev/fd/", "/proc/self/fd/")):
            self.fail(f"`{call.name}` runs commands only known at run time ({call.args[0].text})", call.part)
            return
        if target and target.endswith("bin/activate"):
            venv = self.absolute(call.ctx, target, follow=False)
            if venv:
                root = os.path.dirname(os.path.dirname(venv))
                call.ctx.env["VIRTUAL_ENV"] = root
                call.ctx.env["PATH"] = f"{root}/bin:{call.ctx.env.get('PATH', os.defpath)}"
                return
        if self.sourced_script(call, call.args[0]):  # a workspace script is read (scripts.py)
            return
        call.ctx.path_known = False
        self.unguard(call.part)

    # -- runners: uv run, poetry run, npx ... --

    def runner(self, call: _Call, skip: int, spec: _Spec, *, chdir: tuple[str, ...] = ()) -> None:
        """``<tool> run [options] command ...``: the command after the options, with the runner's
        words kept in the text of a test command."""
        args = call.words[skip:]
        parsed = _parse(args, spec)
        if not self.parsed_ok(call, parsed, f"{call.name}"):
            return
        start = skip + (parsed.rest if parsed.rest is not None else len(args))
        ctx = call.ctx
        for name in chdir:
            if parsed.has(name):
                ctx = call.ctx.copy()
                value = parsed.value(name)
                ctx.cwd = self.resolve_dir(call.ctx, value) if value else None
        module = parsed.value("-m", "--module")
        if module:
            # uv run -m pytest: as python -m
            self.python_module(call.then(start, keep=True, ctx=ctx), module, call.words[start:], interpreter=None)
            return
        if start >= len(call.words):
            self.unguard(call.part)
            return
        self.dispatch(call.then(start, keep=True, ctx=ctx))

    # -- git --


#: xargs options that change how its input is split or substituted (then it is not read here).
_XARGS_SPLITTING = ("-0", "--null", "-d", "--delimiter", "-a", "--arg-file", "-I", "-i", "--replace", "-E", "-e",
                    "--eof")


def _xargs_input(ctx: _Ctx, parsed: _Parsed) -> list[str] | None:
    """The words xargs reads when its standard input is a pipe from a plain ``echo`` of static
    words (split on blanks, as xargs does when no quote or backslash is in them), or None."""
    text = ctx.stdin_text
    if ctx.stdin != "pipe" or text is None or parsed.has(*_XARGS_SPLITTING) or any(c in text for c in "'\"\\"):
        return None
    words = text.split()
    return words or None
