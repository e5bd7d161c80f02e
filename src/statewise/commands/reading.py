"""Proving a command read-only, and the programs that open an interactive session."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from statewise.commands.base import _Base
from statewise.commands.tables import (
    _DEV_FILES,
    _ENV_NAME,
    _GIT_READ_ONLY_ARGS,
    _READ_ONLY_ARGS,
    _SESSIONS,
    _ReadOnly,
)
from statewise.commands.words import _Call, _parse, _Repo, _Word


class _Reading(_Base):
    """Read-only proofs (option tables, listings) and interactive sessions (editors, REPLs, multiplexers)."""

    def read_only_builtin(self, call: _Call, key: str) -> None:
        if key in ("cd", "pushd"):
            args = [w for w in call.args if w.value not in ("-P", "-L", "-e", "-@", "--")]
            if not args:
                home = call.env.get("HOME")
                call.ctx.cwd = Path(home) if home and "\0" not in home else None
            elif args[0].value is None or args[0].value == "-":
                call.ctx.cwd = None
            else:
                call.ctx.cwd = self.resolve_dir(call.ctx, args[0].value)
        elif key == "popd":
            call.ctx.cwd = None
        elif key in ("export", "declare", "typeset", "local", "readonly"):
            for word in call.args:
                if word.value is not None and "=" in word.value and not word.value.startswith("-"):
                    name, _, value = word.value.partition("=")
                    self.set_env(call.ctx.env, name, value, call.part, call.ctx)
                elif word.value is None:
                    text_name = word.text.split("=", 1)[0]
                    if _ENV_NAME.match(text_name):
                        self.set_env(call.ctx.env, text_name, None, call.part, call.ctx)
        elif key == "unset":
            for word in call.args:
                if word.value == "PATH":
                    call.ctx.path_known = False
        elif key == "hash" and any((w.value or "-p").startswith("-p") for w in call.args):
            self.fail("`hash -p` makes a command name run another program", call.part)

    def read_only_program(self, call: _Call, key: str) -> None:
        """A read-only program: read-only only if every option is one it is known to accept."""
        ro = _READ_ONLY_ARGS[key]
        before = len(self.actions)
        if not self.prove_read_only(call, call.args, ro, call.name.rsplit("/", 1)[-1]):
            return
        if ro.in_place and len(self.actions) == before:
            parsed = _parse(self.counts_removed(call.args, ro), ro.spec)
            if any(parsed.has(name) for name in ro.in_place):
                files = parsed.positionals[1:] if len(parsed.positionals) > 1 else parsed.positionals
                self.write_paths(call, files, via=f"{call.name} -i")

    @staticmethod
    def counts_removed(words: Sequence[_Word], ro: _ReadOnly) -> list[_Word]:
        """The words without the bare counts (``head -5``, ``seq 10 -1 1``); a count that is an
        option's value stays (``tail -n +50``: ``+50`` is the value of ``-n``, not a count)."""
        if not ro.numeric:
            return list(words)
        kept: list[_Word] = []
        takes_value = False
        for word in words:
            if not takes_value and word.value and re.fullmatch(r"[-+]\d+", word.value):
                continue
            kept.append(word)
            value = word.value or ""
            # `-n`, `--lines`, or a cluster of short flags ending in one that takes a value (`-fn`)
            takes_value = not takes_value and (value in ro.spec.valued or (
                len(value) > 2 and value[0] == "-" and value[1] != "-" and f"-{value[-1]}" in ro.spec.valued
                and all(f"-{letter}" in ro.spec.flags for letter in value[1:-1])))
        return kept

    def may_be_option(self, word: _Word, ro: _ReadOnly) -> bool:
        """Whether a word only known at run time could turn out to be an option with effects."""
        text = word.text.lstrip("\"'")
        if text.startswith("-"):
            prefix = re.split(r"[$`]", text, maxsplit=1)[0]
            name, equals, _ = prefix.partition("=")
            harmless = name in ro.spec.valued | ro.spec.optional and name not in ro.effects and name not in ro.writes
            return not (equals and harmless)
        return text[:1] in ("$", "`", "")

    def prove_read_only(self, call: _Call, words: Sequence[_Word], ro: _ReadOnly, what: str) -> bool:
        """True when the arguments have no effect; otherwise the effects are recorded (writes as
        fs.write, anything else unresolved) and False is returned."""
        words = self.counts_removed(words, ro)
        if ro.effectful:
            for word in words:
                if word.value == "--":
                    break  # what follows is never an option
                if word.value is None and self.may_be_option(word, ro):
                    self.fail(f"{what}: `{word.text}` is only known at run time and may be an option with effects "
                              f"({word.why})", call.part)
                    return False
        parsed = _parse(words, ro.spec)
        if parsed.error and not ro.effectful:
            # No option or argument of this program is known to have an effect, so an option
            # its table lacks (`ls -a.git`, a newer version's flag) is no reason to stop work:
            # the call is checked as a program StateWise does not read, i.e. only for the
            # protected targets its words name (issue 22, item 5).
            self.unguard(call.part)
            return False
        if parsed.error:
            self.fail(f"{what}: {parsed.error}; an option StateWise does not know may have effects", call.part)
            return False
        for name, _ in parsed.options:
            if name in ro.effects:
                self.fail(f"`{what} {name}` {ro.effects[name]}", call.part)
                return False
        proven = True
        for name in sorted(ro.writes):
            for value in parsed.values(name):
                if value is None:
                    self.fail(f"the file `{what} {name}` writes is only known at run time", call.part)
                    return False
                if value != "-" and not _DEV_FILES.match(value):
                    self.write_paths(call, [_Word.literal(value)], via=f"{what} {name}")
                    proven = False
        positionals = parsed.positionals
        if ro.output_positional is not None and len(positionals) > ro.output_positional:
            output = positionals[ro.output_positional]
            if output.value != "-" and not (output.value and _DEV_FILES.match(output.value)):
                self.write_paths(call, [output], via=what)
                proven = False
        if (ro.max_positionals is not None and len(positionals) > ro.max_positionals) or (ro.positional and any(
                w.value is None or not re.search(ro.positional, w.value) for w in positionals)):
            self.fail(f"`{what}` with these arguments changes something (only some of its forms are read-only)",
                      call.part)
            return False
        return proven

    def git_read_only(self, call: _Call, repo: _Repo, sub: str, words: list[_Word]) -> None:
        ro = _GIT_READ_ONLY_ARGS[sub]
        if not self.prove_read_only(call, words, ro, f"git {sub}"):
            return
        if sub in ("format-patch", "bugreport"):
            parsed = _parse(self.counts_removed(words, ro), ro.spec)
            if parsed.has("--stdout"):
                return
            directory = parsed.value("-o", "--output-directory")
            if parsed.dynamic:
                self.fail(f"the directory `git {sub}` writes into is only known at run time", call.part)
                return
            self.write_paths(call, [_Word.literal(directory or ".")], via=f"git {sub}",
                             extra={"into_directory": True})

    def interactive(self, call: _Call, what: str) -> None:
        if self.typed_input and call.ctx.stdin == "tty":
            self.typed_session(call, f"`{call.name}` opens {what}")
            return
        self.fail(f"`{call.name}` opens {what}; the hook cannot see the session's later input", call.part)

    def session(self, call: _Call, key: str) -> None:
        """Programs that open an interactive session unless given their program another way."""
        s = _SESSIONS[key]
        values = [w.value for w in call.args]
        if any(v in s.quiet for v in values if v is not None) and not any(
                v in s.interactive for v in values if v is not None):
            return  # prints its version or help
        given = interactive = editing = False
        positionals: list[_Word] = []
        i = 0
        while i < len(call.args):
            word = call.args[i]
            value = word.value
            if value is None or not value.startswith("-") or value == "-":
                positionals.append(word)
                i += 1
                if s.script and not given and value != "-" and len(positionals) > s.script_index:
                    break  # the script's own arguments follow
                continue
            if value == "--":
                positionals.extend(call.args[i + 1:])
                break
            name = value.partition("=")[0]
            if name in s.runs or (not value.startswith("--") and any("-" + c in s.runs for c in value[1:2])):
                self.fail(f"`{call.name} {name}` runs a command", call.part)
                return
            takes_value = s.valued | (s.program - s.program_flags)
            if value.startswith("--") or name in s.program | s.valued | s.interactive | s.in_place:
                given = given or name in s.program
                interactive = interactive or name in s.interactive
                editing = editing or name in s.in_place
                if name in takes_value and "=" not in value:
                    i += 1
            else:  # a cluster of short options: -qc, -pie, -i.bak
                for index, char in enumerate(value[1:]):
                    option = "-" + char
                    given = given or option in s.program
                    interactive = interactive or option in s.interactive
                    editing = editing or option in s.in_place
                    if option in s.in_place:
                        break  # -i.bak: the rest is the backup suffix
                    if option in takes_value:
                        if index == len(value) - 2:
                            i += 1
                        break
            i += 1
        if s.decides == "subcommand":
            first = positionals[0].value if positionals else None
            if first is None and positionals:
                self.fail(f"the {call.name} subcommand is only known at run time", call.part)
            elif first in s.program:
                self.unknown(call)
            else:
                self.interactive(call, s.what)
            return
        if s.script and len(positionals) > s.script_index and positionals[s.script_index].value != "-":
            if positionals[s.script_index].value is None and not given:
                self.fail(f"`{call.name}` runs a program only known at run time ({positionals[s.script_index].text})",
                          call.part)
                return
            if editing and not given:
                positionals = positionals[s.script_index + 1:]  # the script, then the files it edits
            given = True
        if interactive or (not given and (
                s.decides == "always" or (s.decides == "stdin" and call.ctx.stdin == "tty")
                or (s.decides == "stdout" and call.ctx.stdout == "tty"))):
            self.interactive(call, s.what)
            return
        if not given and s.decides == "stdin" and call.ctx.stdin in ("pipe", "dynamic") and s.code_from_pipe:
            self.fail(f"`{call.name}` runs a program it reads from its standard input, only known at run time",
                      call.part)
            return
        if editing:
            self.write_paths(call, positionals, via=f"{call.name} -i")
        if s.what.startswith("an editor"):
            # ed <<EOF, vim -es, emacs --batch: editor commands, which may write the files named
            self.write_paths(call, [w for w in positionals if w.value != "-"], via=call.name)
        if s.runs_args:
            self.unknown(call)
        else:
            self.unguard(call.part)
