"""Per-program handling that needs logic (git push destinations, pip indexes, file paths ...)."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from statewise.integrations.shell.base import DB_MIGRATE, GIT_TIMEOUT, _Base
from statewise.integrations.shell.tables import (
    _COMPRESSORS,
    _CONTAINER_TTY,
    _CURL,
    _DANGEROUS_GIT_CONFIG,
    _DEV_FILES,
    _ENV_NAME,
    _GIT_READ_ONLY_ARGS,
    _GIT_SESSIONS,
    _GIT_UNGUARDED,
    _INDEX_CONFIG_NAMES,
    _INDEX_SETTINGS,
    _INSTALL_ENV,
    _NO_OP_EDITORS,
    _OUTPUT_OPTIONS,
    _PUSH_CONFIG,
    _PUSH_SECTIONS,
    _PYTHON_NAME,
    _READ_ONLY_ARGS,
    _SESSIONS,
    _TRUE_WORDS,
    _WGET,
    DEFAULT_INDEX,
    _canonical,
    _index_url,
    _ReadOnly,
)
from statewise.integrations.shell.words import _NPX, _UV_RUN, _UVX, _Call, _Ctx, _parse, _Parsed, _Repo, _Spec, _Word


class _Tools(_Base):
    """Programs that need logic beyond a rule table: git, pip, npm, file tools ..."""

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
        if not ro.numeric:
            return list(words)
        return [w for w in words if not (w.value and re.fullmatch(r"[-+]\d+", w.value))]

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

    def ssh(self, call: _Call) -> None:
        spec = _Spec.of(flags="-4 -6 -A -a -C -f -G -g -K -k -M -N -n -q -s -T -t -V -v -X -x -Y -y",
                        valued="-B -b -c -D -E -e -F -I -i -J -L -l -m -O -o -p -Q -R -S -W -w",
                        stop_at_positional=True)
        parsed = _parse(call.args, spec)
        if not self.parsed_ok(call, parsed, "ssh"):
            return
        for value in parsed.values("-o"):
            option = re.split(r"[=\s]", value or "", maxsplit=1)[0].lower()
            if option in ("proxycommand", "localcommand", "permitlocalcommand", "knownhostscommand", "match",
                          "remotecommand"):
                self.fail(f"`ssh -o {option}` runs a command", call.part)
                return
        if parsed.has("-V", "-G", "-Q", "-O"):
            return
        rest = call.args[parsed.rest or 0:]
        if not rest:
            return
        command = rest[1:]
        if not command:
            if parsed.has("-N", "-W"):
                self.unguard(call.part)
            elif call.ctx.stdin == "tty":
                self.interactive(call, "a remote shell")
            else:
                self.fail("`ssh` runs the commands on its standard input on another machine", call.part)
            return
        values = [w.value for w in command]
        if any(v is None for v in values):
            self.fail("the command `ssh` runs on another machine is only known at run time", call.part)
            return
        text = " ".join(v for v in values if v is not None)
        remote = type(self)(self.command, self.workspace, self.base_env, self.rules, self.contract)
        ctx = _Ctx(None, dict(call.env), call.ctx.depth + 1, stdin=call.ctx.stdin, stdout=call.ctx.stdout)
        remote.analyze_text(text, ctx, call.part)
        if remote.actions or remote.unresolved:
            why = f" ({remote.unresolved[0][0]})" if remote.unresolved else ""
            self.fail(f"`ssh` runs `{text[:200]}` on another machine, where StateWise cannot check it{why}",
                      call.part)
            return
        self.unguard(call.part)  # a remote command StateWise does not guard: docs/shell.md

    def container(self, call: _Call) -> None:
        values = [w.value or "" for w in call.args]
        positionals = [v for v in values if not v.startswith("-")]
        sub = positionals[0] if positionals else ""
        second = positionals[1] if len(positionals) > 1 else ""
        attaches = sub in ("run", "exec", "attach", "debug", "start") or (sub == "compose" and second in ("exec", "run"))
        tty = any(v in _CONTAINER_TTY for v in values) or sub == "attach" or (
            sub == "compose" and second in ("exec", "run") and not {"-T", "--no-TTY", "-d", "--detach"} & set(values))
        if attaches and tty:
            self.interactive(call, "a terminal inside a container")
            return
        self.unknown(call)

    # -- programs that write files --

    def output_options(self, call: _Call) -> None:
        """Unguarded programs whose options name files they write (gcc -o, iconv -o ...)."""
        key = _canonical(call.name.rsplit("/", 1)[-1].lower())
        options = _OUTPUT_OPTIONS.get(key, ())
        words = call.args
        for index, word in enumerate(words):
            value = word.value
            if value is None or value == "--":
                if value == "--":
                    break
                continue
            for option in options:
                target: _Word | None = None
                if value == option and index + 1 < len(words):
                    target = words[index + 1]
                elif option.startswith("--") and value.startswith(option + "="):
                    target = _Word.literal(value[len(option) + 1:])
                elif not option.startswith("--") and value.startswith(option) and len(value) > len(option):
                    target = _Word.literal(value[len(option):])
                if target is None:
                    continue
                if target.value is None:
                    self.fail(f"the file `{call.name} {option}` writes is only known at run time", call.part)
                elif target.value != "-" and not _DEV_FILES.match(target.value):
                    self.write_paths(call, [target], via=f"{call.name} {option}")

    def compressor(self, call: _Call) -> None:
        key = _canonical(call.name.rsplit("/", 1)[-1].lower())
        suffix, decompressing, keeps = _COMPRESSORS[key]
        spec = _Spec.of(flags="-c --stdout --to-stdout -d --decompress --uncompress -z --compress -f --force -k --keep "
                              "-l --list -n --no-name -N --name -q --quiet -r --recursive -t --test -v --verbose "
                              "-1 -2 -3 -4 -5 -6 -7 -8 -9 --fast --best --rsyncable -h --help -V --version -L "
                              "--license -s --small --synchronous -e --extreme --rm -0 --ultra --no-progress -T0",
                        valued="-S --suffix -T --threads -F --format -C --check -o -M --memory -B -b",
                        optional="--long --adapt")
        parsed = _parse(call.args, spec)
        if not self.parsed_ok(call, parsed, call.name):
            return
        if parsed.has("-c", "--stdout", "--to-stdout", "-l", "--list", "-t", "--test", "-h", "--help", "-V",
                      "--version", "-L", "--license"):
            self.unguard(call.part)
            return
        decompressing = decompressing or parsed.has("-d", "--decompress", "--uncompress")
        keeps = (keeps and not parsed.has("--rm")) or parsed.has("-k", "--keep")
        suffix = parsed.value("-S", "--suffix") or suffix
        output = parsed.value("-o")
        recursive = parsed.has("-r", "--recursive")
        files = [w for w in parsed.positionals if w.value != "-"]
        for word in files:
            if word.value is None:
                self.fail(f"a file of `{call.name}` is only known at run time", call.part)
                continue
            if output is not None:
                written = output
            elif recursive:
                written = word.value
            elif decompressing:
                written = word.value[:-len(suffix)] if word.value.endswith(suffix) else word.value
            else:
                written = word.value + suffix
            self.write_paths(call, [_Word.literal(written)], via=call.name,
                             extra={"recursive": True} if recursive else None)
            if not keeps:
                self.delete_paths(call, [word], recursive=recursive, via=call.name)
        if not files:
            self.unguard(call.part)  # standard input to standard output

    def zip(self, call: _Call) -> None:
        flags = set("-r -R -j -D -q -v -u -f -d -m -T -y -X -e -g -F -FF -A -J -k -l -ll -L -o -S -z -0 -1 -2 -3 -4 "
                    "-5 -6 -7 -8 -9 -h -h2 --recurse-paths --junk-paths --quiet --verbose --update --freshen "
                    "--delete --move --test --symlinks --encrypt --grow --fix --help --version".split())
        valued = set("-b -n -t -tt -P -Z -s -sp -O --out --password --temp-path --suffixes -ll".split())
        lists = {"-x", "-i", "--exclude", "--include"}
        archive: _Word | None = None
        files: list[_Word] = []
        options: set[str] = set()
        output: str | None = None
        words = call.args
        i = 0
        in_list = False
        while i < len(words):
            value = words[i].value
            if value is not None and value.startswith("-") and value not in ("-", "-@"):
                in_list = False
                if value == "-TT" or value.startswith("--unzip-command"):
                    self.fail("`zip -TT` runs a command", call.part)
                    return
                if value in lists:
                    in_list = True
                elif value in valued:
                    if value in ("-O", "--out"):
                        output = words[i + 1].value if i + 1 < len(words) else None
                    i += 1
                elif value not in flags:
                    self.fail(f"zip: unknown option {value}; an option StateWise does not know may have effects",
                              call.part)
                    return
                options.add(value)
            elif value == "-@":
                self.fail("`zip -@` reads the names of the files from standard input", call.part)
                return
            elif not in_list:
                if archive is None:
                    archive = words[i]
                else:
                    files.append(words[i])
            i += 1
        if archive is None:
            self.unguard(call.part)
            return
        name = archive.value
        if name is not None and "." not in name.rsplit("/", 1)[-1]:
            archive = _Word.literal(name + ".zip")
        self.write_paths(call, [_Word.literal(output)] if output else [archive], via="zip")
        if options & {"-m", "--move"}:
            self.delete_paths(call, files, recursive=bool(options & {"-r", "-R", "--recurse-paths"}), via="zip -m")

    def split(self, call: _Call) -> None:
        name = call.name.rsplit("/", 1)[-1].lower()
        if name == "csplit":
            spec = _Spec.of(flags="-k -s -q -z --keep-files --quiet --silent --elide-empty-files --suppress-matched "
                                  "--help --version", valued="-f -b -n --prefix --suffix-format --digits")
            parsed = _parse(call.args, spec)
            if not self.parsed_ok(call, parsed, "csplit"):
                return
            digits = parsed.value("-n", "--digits") or "2"
            first = (parsed.value("-f", "--prefix") or "xx") + "0" * (int(digits) if digits.isdigit() else 2)
            self.write_paths(call, [_Word.literal(first)], via="csplit", extra={"first_of_many": True})
            return
        spec = _Spec.of(flags="-e -u --elide-empty-files --unbuffered --verbose --help --version",
                        valued="-a -b -C -l -n -t --suffix-length --bytes --line-bytes --lines --number --separator "
                               "--additional-suffix --filter",
                        optional="-d -x --numeric-suffixes --hex-suffixes")
        parsed = _parse(call.args, spec)
        if not self.parsed_ok(call, parsed, "split"):
            return
        if parsed.has("--filter"):
            self.fail("`split --filter` runs a command", call.part)
            return
        prefix = parsed.positionals[1].value if len(parsed.positionals) > 1 else "x"
        if prefix is None:
            self.fail("the prefix of the files `split` writes is only known at run time", call.part)
            return
        length = parsed.value("-a", "--suffix-length") or "2"
        digit = "0" if parsed.has("-d", "-x", "--numeric-suffixes", "--hex-suffixes") else "a"
        first = prefix + digit * (int(length) if length.isdigit() else 2) + (parsed.value("--additional-suffix") or "")
        self.write_paths(call, [_Word.literal(first)], via="split", extra={"first_of_many": True})

    def curl(self, call: _Call) -> None:
        parsed = _parse(call.args, _CURL)
        if not self.parsed_ok(call, parsed, "curl"):
            return
        if parsed.has("-K", "--config"):
            self.fail("`curl -K` reads its options from a file StateWise does not read", call.part)
            return
        for option in _OUTPUT_OPTIONS["curl"]:
            for value in parsed.values(option):
                if value is None:
                    self.fail(f"the file `curl {option}` writes is only known at run time", call.part)
                elif value != "-" and not _DEV_FILES.match(value):
                    self.write_paths(call, [_Word.literal(value)], via=f"curl {option}")
        directory = parsed.value("--output-dir")
        if parsed.has("-O", "--remote-name", "--remote-name-all", "-J", "--remote-header-name"):
            urls = [w for w in parsed.positionals] + [_Word.literal(v or "") for v in parsed.values("--url")]
            for url in urls:
                if url.value is None:
                    self.fail("a URL `curl -O` saves is only known at run time", call.part)
                    continue
                base = url.value.split("?", 1)[0].split("#", 1)[0].rstrip("/").rsplit("/", 1)[-1] or "index.html"
                if parsed.has("-J", "--remote-header-name"):
                    self.write_paths(call, [_Word.literal(directory or ".")], via="curl -J",
                                     extra={"into_directory": True})
                    break
                self.write_paths(call, [_Word.literal(os.path.join(directory, base) if directory else base)],
                                 via="curl -O")
        self.unguard(call.part)

    def wget(self, call: _Call) -> None:
        aliases = {"-nv": "--no-verbose", "-nc": "--no-clobber", "-np": "--no-parent", "-nd": "--no-directories",
                   "-nH": "--no-host-directories"}
        call = _Call([call.words[0], *(_Word.literal(aliases[w.value]) if w.value in aliases else w
                                       for w in call.args)], call.env, call.ctx, call.part, call.kept, call.program)
        parsed = _parse(call.args, _WGET)
        if not self.parsed_ok(call, parsed, "wget"):
            return
        if parsed.has("-e", "--execute", "--config", "--use-askpass"):
            self.fail("`wget -e/--config/--use-askpass` runs commands or reads options StateWise does not read",
                      call.part)
            return
        if parsed.has("-h", "--help", "-V", "--version"):
            return
        for option in _OUTPUT_OPTIONS["wget"]:
            for value in parsed.values(option):
                if value is None:
                    self.fail(f"the file `wget {option}` writes is only known at run time", call.part)
                elif value != "-" and not _DEV_FILES.match(value):
                    self.write_paths(call, [_Word.literal(value)], via=f"wget {option}")
        directory = parsed.value("-P", "--directory-prefix")
        if parsed.has("--spider") or parsed.has("-O", "--output-document"):
            self.unguard(call.part)
            return
        if parsed.has("-r", "--recursive", "-m", "--mirror", "-p", "--page-requisites", "-i", "--input-file"):
            self.write_paths(call, [_Word.literal(directory or ".")], via="wget", extra={"recursive": True})
        else:
            for url in parsed.positionals:
                if url.value is None:
                    self.fail("a URL `wget` saves is only known at run time", call.part)
                    continue
                base = url.value.split("?", 1)[0].split("#", 1)[0].rstrip("/").rsplit("/", 1)[-1]
                if "/" not in url.value.split("://", 1)[-1].rstrip("/"):
                    base = "index.html"
                self.write_paths(call, [_Word.literal(os.path.join(directory, base) if directory else base)],
                                 via="wget")
        self.unguard(call.part)

    # -- paths --

    def git(self, call: _Call) -> None:
        repo = _Repo(call.ctx.cwd, call.env.get("GIT_DIR"), call.env.get("GIT_WORK_TREE"))
        if (repo.git_dir and "\0" in repo.git_dir) or (repo.work_tree and "\0" in repo.work_tree):
            self.fail("GIT_DIR or GIT_WORK_TREE is only known at run time", call.part)
            return
        words = call.args
        i = 0
        while i < len(words):
            value = words[i].value
            nxt = words[i + 1].value if i + 1 < len(words) else None
            if value is None:
                self.fail(f"git: `{words[i].text}` is only known at run time ({words[i].why})", call.part)
                return
            if value == "-C":
                if nxt is None:
                    self.fail("the directory of `git -C` is only known at run time", call.part)
                    return
                if nxt:
                    repo.cwd = self.resolve_dir(_Ctx(repo.cwd, {}), nxt)
                i += 2
                continue
            if value in ("-c", "--config-env") or value.startswith("--config-env="):
                setting = value.partition("=")[2] if value.startswith("--config-env=") else nxt
                if setting is None:
                    self.fail(f"the setting of `git {value}` is only known at run time", call.part)
                    return
                key, equals, setting_value = setting.partition("=")
                if _DANGEROUS_GIT_CONFIG.match(key) or value != "-c":
                    self.fail(f"`git -c {key}` can run commands or redirect git", call.part)
                    return
                repo.config[key.lower()] = setting_value if equals else "true"
                i += 1 if value.startswith("--config-env=") else 2
                continue
            matched = False
            for option, attr in (("--git-dir", "git_dir"), ("--work-tree", "work_tree"), ("--namespace", None)):
                if value == option or value.startswith(option + "="):
                    given = value.partition("=")[2] if "=" in value else nxt
                    if given is None:
                        self.fail(f"the value of `git {option}` is only known at run time", call.part)
                        return
                    if attr:
                        resolved = self.resolve_dir(_Ctx(repo.cwd, {}), given)
                        setattr(repo, attr, str(resolved) if resolved else None)
                    i += 1 if "=" in value else 2
                    matched = True
                    break
            if matched:
                continue
            if value in ("--no-pager", "-p", "--paginate", "-P", "--bare", "--no-replace-objects", "--literal-pathspecs",
                         "--glob-pathspecs", "--noglob-pathspecs", "--icase-pathspecs", "--no-optional-locks",
                         "--no-advice", "--no-lazy-fetch"):
                i += 1
                continue
            if value in ("--version", "--help", "-h", "-v", "--html-path", "--man-path", "--info-path", "--exec-path"):
                return
            if value.startswith("-"):
                self.fail(f"git: unknown global option {value}", call.part)
                return
            break
        if i >= len(words):
            return
        if "git" in self.rules.own_programs:
            self.beside(call, words[i:])  # the contract's own git rules, after git's global options
        sub = words[i].value or ""
        rest = words[i + 1:]
        if repo.cwd != call.ctx.cwd:  # git -C: paths on its command line are relative to that directory
            ctx = call.ctx.copy()
            ctx.cwd = repo.cwd
            call = _Call(call.words, call.env, ctx, call.part, call.kept, call.program)
        handler = _GIT_HANDLERS.get(sub)
        if handler is not None:
            failures = len(self.unresolved)
            handler(self, call, repo, rest)
            if sub in ("checkout", "switch", "rebase") and len(self.unresolved) > failures:
                self.set_head(repo, None)  # where HEAD ends up is not known either
        elif sub in _GIT_READ_ONLY_ARGS:
            self.git_read_only(call, repo, sub, rest)
        elif sub in _GIT_SESSIONS:
            self.git_session(call, sub, rest)
        elif sub in _GIT_UNGUARDED:
            if (sub in _GIT_MESSAGE_EDITORS and _git_opens_editor(sub, [w.value for w in rest])
                    and not self.git_editor_does_nothing(call, repo)):
                self.interactive(call, f"an editor for the {sub} message")
                return
            if sub == "submodule" and rest and rest[0].value == "foreach":
                self.git_foreach(call, rest[1:])
                return
            if sub == "bisect" and rest and rest[0].value == "run":
                if len(rest) > 1:
                    self.dispatch(_Call(rest[1:], call.env, call.ctx, call.part))
                return
            if sub in ("stash", "reflog") and self.git_log_like(call, repo, sub, rest):
                return
            if sub == "bundle" and rest and rest[0].value == "create":
                files = [w for w in rest[1:] if (w.value or "x")[:1] != "-"]
                self.write_paths(call, files[:1], via="git bundle create")
                return
            if sub == "remote" and not _git_listing(sub, [w.value for w in rest]):
                self.push_config_unknown(repo, f"git remote {rest[0].value if rest else ''}".strip())
            if _git_listing(sub, [w.value for w in rest]):
                return
            self.unguard(call.part)
        else:
            self.fail(f"`git {sub}` is not a git command StateWise knows (a git alias can run anything)", call.part)

    def git_editor_does_nothing(self, call: _Call, repo: _Repo, *, todo_list: bool = False) -> bool:
        """Whether the editor git would start is one that does nothing (``true``, ``:``), so no
        session opens: git's own order, GIT_SEQUENCE_EDITOR and sequence.editor first for a
        rebase todo list, then GIT_EDITOR, core.editor, VISUAL, EDITOR. Claude Code runs its
        Bash tool with GIT_EDITOR=true (docs/integrations.md), so there `git commit` without -m
        and `git rebase -i --autosquash` open nothing."""
        def setting(variable: str, config: str | None) -> str | None:
            value = call.env.get(variable)
            if value is None and config is not None:
                value = self.git_config(repo, config)
            return value

        sources: list[tuple[str, str | None]] = [("GIT_SEQUENCE_EDITOR", "sequence.editor")] if todo_list else []
        sources += [("GIT_EDITOR", "core.editor"), ("VISUAL", None), ("EDITOR", None)]
        for variable, config in sources:
            value = setting(variable, config)
            if value is not None:
                return value.strip() in _NO_OP_EDITORS
        return False  # git's default editor, vi

    def git_session(self, call: _Call, sub: str, words: list[_Word]) -> None:
        """difftool/mergetool with -x run that command; otherwise they open a tool on the terminal."""
        values = [w.value for w in words]
        if "--tool-help" in values:
            return
        for index, value in enumerate(values):
            body = None
            if value in ("-x", "--extcmd") and index + 1 < len(words):
                body = words[index + 1]
            elif value is not None and value.startswith("--extcmd="):
                body = _Word.literal(value.partition("=")[2])
            elif value is not None and value.startswith("-x") and len(value) > 2:
                body = _Word.literal(value[2:])
            if body is not None:
                if body.value is None:
                    self.fail(f"the command of `git {sub} -x` is only known at run time", call.part)
                    return
                inner = call.ctx.copy()
                inner.depth += 1
                self.analyze_text(body.value, inner, call.part)
                return
        self.interactive(call, _GIT_SESSIONS[sub])

    def git_log_like(self, call: _Call, repo: _Repo, sub: str, words: list[_Word]) -> bool:
        """``git stash show`` and ``git reflog [show]`` take git log's options (--output=F too)."""
        first = words[0].value if words else None
        if sub == "stash" and first in ("list", "show"):
            self.git_read_only(call, repo, "log", words[1:])
            return True
        if sub == "reflog" and (first is None or first == "show" or first.startswith("-")):
            self.git_read_only(call, repo, "log", words[1:] if first == "show" else words)
            return True
        return False

    def git_config_command(self, call: _Call, repo: _Repo, words: list[_Word]) -> None:
        """``git config``: reads are read-only; writes of settings that decide where a push goes are
        simulated for the rest of the call; settings that run commands are unresolved."""
        values = [w.value for w in words]
        if any(v is None for v in values):
            self.fail("`git config` with arguments only known at run time", call.part)
            return
        args = [v for v in values if v is not None]
        scopes = {"--local", "--global", "--system", "--worktree", "--includes", "--no-includes", "-z", "--null",
                  "--name-only", "--show-origin", "--show-scope", "--bool", "--int", "--bool-or-int", "--path",
                  "--expiry-date", "--all", "--append", "--fixed-value"}
        valued = {"--type", "--default", "--blob", "--value", "--comment", "--url"}
        file: str | None = None
        rest: list[str] = []
        mode = None
        i = 0
        while i < len(args):
            value = args[i]
            if value in ("-f", "--file") and i + 1 < len(args):
                file, i = args[i + 1], i + 2
                continue
            if value.startswith("--file="):
                file = value.partition("=")[2]
            elif value in valued and i + 1 < len(args):
                i += 1
            elif value.startswith(tuple(v + "=" for v in valued)) or value in scopes:
                pass
            elif value.startswith("-") and mode is None:
                mode = value
            else:
                rest.append(value)
            i += 1
        subcommands = {"list": "-l", "get": "--get", "set": "set", "unset": "--unset", "edit": "-e",
                       "rename-section": "--rename-section", "remove-section": "--remove-section"}
        if mode is None and rest and rest[0] in subcommands:
            mode, rest = subcommands[rest[0]], rest[1:]
            if mode == "set" and "--append" in args:
                mode = "--add"
            elif mode == "--unset" and "--all" in args:
                mode = "--unset-all"
        reading = mode in ("-l", "--list", "--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color",
                           "--get-colorbool") or (mode is None and len(rest) < 2)
        if reading:
            return
        if mode in ("-e", "--edit"):
            self.interactive(call, "an editor on the git configuration")
            return
        if file is not None:
            self.write_paths(call, [_Word.literal(file)], via="git config --file")
            self.push_config_unknown(repo, "git config --file")
            return
        if mode in ("--rename-section", "--remove-section"):
            if rest and _PUSH_SECTIONS.match(rest[0]):
                self.push_config_unknown(repo, f"git config {mode} {rest[0]}")
            self.unguard(call.part)
            return
        if not rest:
            self.fail(f"git config {mode}: the setting is not given", call.part)
            return
        key = rest[0]
        if mode is not None and mode not in ("set", "--add", "--unset", "--unset-all", "--replace-all"):
            self.fail(f"git config: unknown option {mode}", call.part)
            return
        if _DANGEROUS_GIT_CONFIG.match(key):
            self.fail(f"`git config {key}` sets a git setting that runs commands or redirects git", call.part)
            return
        if _PUSH_CONFIG.match(key):
            overlay = self.push_overlay(repo)
            current = self.git_config_all(repo, key)
            if mode in ("--unset", "--unset-all"):
                overlay[key.lower()] = []
            elif mode == "--add":
                overlay[key.lower()] = [*(current or []), rest[1] if len(rest) > 1 else ""]
            else:
                overlay[key.lower()] = [rest[1] if len(rest) > 1 else ""]
        elif _PUSH_SECTIONS.match(key) and key.lower().startswith(("remote.", "url.")):
            self.push_config_unknown(repo, f"git config {key}")
        self.unguard(call.part)

    def push_overlay(self, repo: _Repo) -> dict[str, list[str]]:
        return self.config_overlay.setdefault(self.repo_key(repo), {})

    def push_config_unknown(self, repo: _Repo, why: str) -> None:
        self.config_unknown.setdefault(self.repo_key(repo), why)

    def git_config_all(self, repo: _Repo, name: str) -> list[str] | None:
        """Every value of a multi-valued setting, after what earlier parts of the call set."""
        if name.lower() in repo.config:
            return [repo.config[name.lower()]]
        overlay = self.config_overlay.get(self.repo_key(repo), {})
        if name.lower() in overlay:
            return overlay[name.lower()]
        out = self.git_query(repo, "config", "--get-all", name)
        return out.splitlines() if out else None

    def git_where(self, call: _Call, repo: _Repo) -> dict[str, Any]:
        """Where a working-tree operation runs, when that is not the workspace itself."""
        where: dict[str, Any] = {}
        if repo.cwd is not None:
            top = self.git_query(repo, "rev-parse", "--show-toplevel")
            path, _ = self.represent(os.path.realpath(top) if top else str(repo.cwd))
            if path != ".":
                where["cwd"] = path
        if repo.work_tree:
            where["work_tree"] = self.represent(repo.work_tree)[0]
        return where

    def git_foreach(self, call: _Call, words: list[_Word]) -> None:
        words = [w for w in words if w.value not in ("--recursive", "-q", "--quiet")]
        values = [w.value for w in words]
        if not words or any(v is None for v in values):
            self.fail("`git submodule foreach` runs a command only known at run time", call.part)
            return
        inner = call.ctx.copy()
        inner.depth += 1
        self.analyze_text(" ".join(v for v in values if v is not None), inner, call.part)

    def git_args_static(self, call: _Call, sub: str, words: Sequence[_Word]) -> bool:
        for word in words:
            if word.value is None:
                self.fail(f"`git {sub}` argument `{word.text}` is only known at run time ({word.why})", call.part)
                return False
        return True

    def git_push(self, call: _Call, repo: _Repo, words: list[_Word]) -> None:
        spec = _Spec.of(
            flags="-f --force --force-if-includes --no-force-if-includes --no-force-with-lease -u --set-upstream "
                  "-d --delete --all --branches --mirror --tags --follow-tags --no-follow-tags -n --dry-run "
                  "--porcelain -q --quiet -v --verbose --progress --no-progress --no-verify --verify --atomic "
                  "--no-atomic --thin --no-thin --prune --no-signed -4 --ipv4 -6 --ipv6 --no-recurse-submodules "
                  "--no-prune",
            valued="-o --push-option --repo --receive-pack --exec",
            optional="--force-with-lease --signed --recurse-submodules")
        parsed = _parse(words, spec)
        if not self.parsed_ok(call, parsed, "git push"):
            return
        if not self.git_args_static(call, "push", parsed.positionals):
            return
        if parsed.has("--receive-pack", "--exec"):
            self.fail("`git push --receive-pack/--exec` runs a command", call.part)
            return
        if parsed.has("-n", "--dry-run"):
            return
        if repo.cwd is None:
            self.fail("git push runs in a directory that is not known", call.part)
            return
        changed = self.config_unknown.get(self.repo_key(repo))
        if changed:
            self.fail(f"git push: an earlier part of the command ({changed}) changes settings that decide where "
                      "the push goes", call.part)
            return
        force = parsed.has("-f", "--force", "--force-with-lease", "--force-if-includes")
        set_upstream = parsed.has("-u", "--set-upstream") or None
        delete = parsed.has("-d", "--delete")
        positionals = [w.value or "" for w in parsed.positionals]
        remote = parsed.value("--repo") or (positionals[0] if positionals else None)
        refspecs = positionals[1:] if not parsed.has("--repo") else positionals
        # "git push origin tag v1" names refs/tags/v1
        joined: list[str] = []
        k = 0
        while k < len(refspecs):
            if refspecs[k] == "tag" and k + 1 < len(refspecs):
                joined.append(f"refs/tags/{refspecs[k + 1]}")
                k += 2
            else:
                joined.append(refspecs[k])
                k += 1
        refspecs = joined
        head, why = self.head(repo)
        if remote is None:
            if head is None:
                self.fail(f"git push without a remote: {why}", call.part)
                return
            remote = (self.git_config(repo, f"branch.{head}.pushRemote") or self.git_config(repo, "remote.pushDefault")
                      or self.git_config(repo, f"branch.{head}.remote") or "origin")
        common = {"remote": remote, "set_upstream": set_upstream}

        def push(branch: str, source: str | None, *, forced: bool = False, deleting: bool = False,
                 **extra: Any) -> None:
            args = {**common, "branch": branch, "source": source, "force": True if (force or forced) else None,
                    "delete": True if deleting else None, **extra}
            self.emit(call, "git.push", args, target=f"{remote}/{branch}",
                      reason=f"git push to {remote}/{branch}")

        mirror = parsed.has("--mirror") or (not refspecs and not parsed.has("--all", "--branches", "--tags") and (
            self.git_config(repo, f"remote.{remote}.mirror") or "").lower() in _TRUE_WORDS)
        if mirror and not parsed.has("--mirror"):
            parsed.options.append(("--mirror", None))  # remote.<name>.mirror: a bare push mirrors
        everything = parsed.has("--all", "--branches", "--mirror")
        if everything:
            branches = self.refs(repo, "refs/heads/")
            if branches is None:
                self.fail("git push --all/--mirror: the local branches cannot be listed", call.part)
                return
            for branch in branches:
                push(branch, branch, forced=parsed.has("--mirror"), all=True if not parsed.has("--mirror") else None,
                     mirror=True if parsed.has("--mirror") else None)
        if parsed.has("--mirror", "--prune"):
            local = set(self.refs(repo, "refs/heads/") or [])
            tracking = self.refs(repo, f"refs/remotes/{remote}/")
            if tracking is None:
                self.fail("git push --mirror/--prune: the remote branches cannot be listed", call.part)
            for branch in tracking or []:
                if branch not in local:
                    push(branch, None, deleting=True, prune=True)
        if parsed.has("--tags"):
            push("refs/tags/*", None, tags=True)
        if not refspecs and (everything or parsed.has("--tags")):
            return
        if not refspecs:
            configured = self.git_config_all(repo, f"remote.{remote}.push")
            if configured:
                refspecs = configured
            else:
                if head is None:
                    self.fail(f"git push without a refspec: {why}", call.part)
                    return
                mode = (self.git_config(repo, "push.default") or "simple").lower()
                if mode == "nothing":
                    return
                if mode == "matching":
                    tracked = set(self.refs(repo, f"refs/remotes/{remote}/") or [])
                    for branch in self.refs(repo, "refs/heads/") or []:
                        if branch in tracked:
                            push(branch, branch)
                    return
                branch = head
                if mode in ("upstream", "tracking"):
                    merge = self.git_config(repo, f"branch.{head}.merge")
                    if not merge:
                        self.fail(f"git push (push.default={mode}): {head} has no upstream", call.part)
                        return
                    branch = merge.removeprefix("refs/heads/")
                push(branch, head)
                if set_upstream:
                    self.set_upstream(repo, head, remote, branch)
                return
        for refspec in refspecs:
            forced = refspec.startswith("+")
            spec_text = refspec[1:] if forced else refspec
            if "*" in spec_text:
                self.fail(f"git push: the wildcard refspec `{refspec}` is not enumerated", call.part)
                continue
            source, colon, destination = spec_text.partition(":")
            if delete and not colon:
                destination, source, colon = source, "", ":"
            if colon and not source:
                name, kind = _ref_name(destination)
                push(name, None, deleting=True, ref_kind=kind)
                continue
            if not colon:
                if source in ("HEAD", "@"):
                    if head is None:
                        self.fail(f"git push {source}: {why}", call.part)
                        continue
                    destination = head
                elif source.startswith("refs/"):
                    destination = source
                elif self.tag_exists(repo, source) and not self.branch_exists(repo, source):
                    destination = f"refs/tags/{source}"
                else:
                    destination = source
            if destination in ("HEAD", "@") or not destination:
                self.fail(f"git push: the destination of `{refspec}` is not a branch name", call.part)
                continue
            name, kind = _ref_name(destination)
            push(name, source or None, forced=forced, ref_kind=kind)
            if set_upstream and kind is None:
                pushed = head if source in ("HEAD", "@", "") else source.removeprefix("refs/heads/")
                if pushed:
                    self.set_upstream(repo, pushed, remote, name)

    def set_upstream(self, repo: _Repo, branch: str, remote: str, merge: str) -> None:
        """What `git push -u`, `git branch -u` and tracking checkouts record for later pushes."""
        overlay = self.push_overlay(repo)
        overlay[f"branch.{branch}.remote".lower()] = [remote]
        overlay[f"branch.{branch}.merge".lower()] = [f"refs/heads/{merge}"]

    def tracking(self, repo: _Repo, branch: str, start: str | None) -> None:
        """A branch created from a remote-tracking branch tracks it (branch.autoSetupMerge)."""
        if not start or "/" not in start:
            return
        if self.git_query(repo, "rev-parse", "--verify", "--quiet", f"refs/remotes/{start}") is not None:
            remote, _, merge = start.partition("/")
            self.set_upstream(repo, branch, remote, merge)

    def git_checkout(self, call: _Call, repo: _Repo, words: list[_Word]) -> None:
        spec = _Spec.of(
            flags="-q --quiet -f --force -m --merge --detach --no-track --guess --no-guess --overlay --no-overlay "
                  "--progress --no-progress --ignore-skip-worktree-bits --ignore-other-worktrees "
                  "--no-recurse-submodules -p --patch --ours --theirs -2 -3 -l --pathspec-file-nul",
            valued="-b -B --orphan --pathspec-from-file",
            optional="-t --track --conflict --recurse-submodules")
        parsed = _parse(words, spec)
        if not self.parsed_ok(call, parsed, "git checkout"):
            return
        if not self.git_args_static(call, "checkout", parsed.positionals):
            return
        dashdash = any(w.value == "--" for w in words)
        positionals = [w.value or "" for w in parsed.positionals]
        create = parsed.value("-b", "-B", "--orphan")
        before = positionals
        paths: list[str] = []
        if dashdash:
            index = [w.value for w in words].index("--")
            after = {id(w) for w in words[index + 1:]}
            paths = [w.value or "" for w in parsed.positionals if id(w) in after]
            before = [w.value or "" for w in parsed.positionals if id(w) not in after]
        force = parsed.has("-f", "--force") or None
        if create is not None:
            start = before[0] if before else None
            if force:
                self.discard_changes(call, "git checkout --force")
            self.emit(call, "git.checkout", {"branch": create, "create": True, "start_point": start,
                                              "force": True if parsed.has("-B") else force,
                                              "orphan": True if parsed.has("--orphan") else None},
                      target=create, reason=f"git checkout -b {create}")
            self.set_head(repo, create)
            self.tracking(repo, create, start)
            if paths:
                self.git_restore_action(call, before[:1], paths)
            return
        if dashdash or parsed.has("--pathspec-from-file", "-p", "--patch", "--ours", "--theirs") or len(before) > 1:
            source = before[0] if before and (dashdash or len(before) > 1) else None
            self.git_restore_action(call, [source] if source else [], paths or before[1:] or before)
            return
        if parsed.has("--detach"):
            target = before[0] if before else "HEAD"
            if force:
                self.discard_changes(call, "git checkout --force")
            self.emit(call, "git.checkout", {"branch": target, "detach": True, "force": force},
                      target=target, reason=f"git checkout --detach {target}")
            self.set_head(repo, None)
            return
        if not before:
            if force:
                self.discard_changes(call, "git checkout --force")
            return  # otherwise it reports the state of the working tree
        target = before[0]
        if target == "-":
            previous = self.git_query(repo, "rev-parse", "--abbrev-ref", "@{-1}")
            if not previous:
                self.fail("git checkout -: the previous branch is not known", call.part)
                return
            target = previous
        if force:
            self.discard_changes(call, "git checkout --force")
        if parsed.has("-t", "--track") and "/" in target and not self.branch_exists(repo, target):
            local = target.split("/", 1)[1]
            self.tracking(repo, local, target)
            self.emit(call, "git.checkout", {"branch": local, "create": True, "start_point": target, "force": force},
                      target=local, reason=f"git checkout --track {target}")
            self.set_head(repo, local)
            return
        is_branch = self.branch_exists(repo, target)
        if not is_branch and repo.cwd is not None and (repo.cwd / target).exists():
            self.git_restore_action(call, [], [target])
            return
        self.emit(call, "git.checkout", {"branch": target, "force": force}, target=target,
                  reason=f"git checkout {target}")
        remote_branch = self.git_query(repo, "rev-parse", "--verify", "--quiet", f"refs/remotes/origin/{target}")
        self.set_head(repo, target if is_branch or remote_branch else None)

    def discard_changes(self, call: _Call, via: str) -> None:
        """checkout --force, switch --discard-changes: uncommitted work is thrown away, as with
        git reset --hard. It is a git.restore of the whole tree (undeclared: the gate stops it)."""
        self.emit(call, "git.restore", {"paths": ["."], "discard_all": True, "via": via}, target=".",
                  reason=f"{via} discards every uncommitted change")

    def git_restore_action(self, call: _Call, source: list[str], paths: list[str]) -> None:
        shown = [self.represent(a)[0] if (a := self.absolute(call.ctx, p, follow=False)) else p for p in paths] or ["."]
        self.emit(call, "git.restore", {"paths": shown, "source": source[0] if source else None},
                  target=" ".join(shown), reason="discards uncommitted changes to " + ", ".join(shown))

    def git_restore(self, call: _Call, repo: _Repo, words: list[_Word]) -> None:
        spec = _Spec.of(flags="-S --staged -W --worktree -q --quiet -p --patch --ours --theirs -m --merge "
                              "--ignore-unmerged --overlay --no-overlay --progress --no-progress "
                              "--ignore-skip-worktree-bits --no-recurse-submodules --pathspec-file-nul",
                        valued="-s --source --pathspec-from-file", optional="--conflict --recurse-submodules")
        parsed = _parse(words, spec)
        if not self.parsed_ok(call, parsed, "git restore"):
            return
        if not self.git_args_static(call, "restore", parsed.positionals):
            return
        if parsed.has("-S", "--staged") and not parsed.has("-W", "--worktree"):
            self.unguard(call.part)  # only the index
            return
        source = parsed.value("-s", "--source")
        self.git_restore_action(call, [source] if source else [], [w.value or "" for w in parsed.positionals])

    def git_switch(self, call: _Call, repo: _Repo, words: list[_Word]) -> None:
        spec = _Spec.of(
            flags="-d --detach -f --force --discard-changes -m --merge -q --quiet --progress --no-progress --no-track "
                  "--guess --no-guess --ignore-other-worktrees --no-recurse-submodules",
            valued="-c -C --create --force-create --orphan",
            optional="-t --track --conflict --recurse-submodules")
        parsed = _parse(words, spec)
        if not self.parsed_ok(call, parsed, "git switch"):
            return
        if not self.git_args_static(call, "switch", parsed.positionals):
            return
        positionals = [w.value or "" for w in parsed.positionals]
        create = parsed.value("-c", "-C", "--create", "--force-create", "--orphan")
        force = parsed.has("-f", "--force", "--discard-changes") or None
        if force:
            self.discard_changes(call, "git switch --discard-changes")
        if create is not None:
            self.tracking(repo, create, positionals[0] if positionals else None)
            self.emit(call, "git.switch", {"branch": create, "create": True,
                                            "start_point": positionals[0] if positionals else None,
                                            "force": True if parsed.has("-C", "--force-create") else force,
                                            "orphan": True if parsed.has("--orphan") else None},
                      target=create, reason=f"git switch -c {create}")
            self.set_head(repo, create)
            return
        if not positionals:
            if parsed.has("-d", "--detach"):
                self.emit(call, "git.switch", {"branch": "HEAD", "detach": True}, target="HEAD")
                self.set_head(repo, None)
                return
            self.fail("git switch without a branch", call.part)
            return
        target = positionals[0]
        if target == "-":
            previous = self.git_query(repo, "rev-parse", "--abbrev-ref", "@{-1}")
            if not previous:
                self.fail("git switch -: the previous branch is not known", call.part)
                return
            target = previous
        detach = parsed.has("-d", "--detach")
        self.emit(call, "git.switch", {"branch": target, "force": force, "detach": True if detach else None},
                  target=target, reason=f"git switch {target}")
        self.set_head(repo, None if detach else target)

    def git_branch(self, call: _Call, repo: _Repo, words: list[_Word]) -> None:
        spec = _Spec.of(
            flags="-d -D --delete -f --force -r --remotes -a --all -l --list -v -vv --verbose -q --quiet -m -M --move "
                  "-c -C --copy --show-current --no-track -i --ignore-case --no-column --no-color --no-abbrev "
                  "--create-reflog --edit-description --unset-upstream --omit-empty --recurse-submodules",
            valued="-u --set-upstream-to --contains --no-contains --merged --no-merged --points-at --sort --format",
            optional="-t --track --column --color --abbrev")
        parsed = _parse(words, spec)
        if not self.parsed_ok(call, parsed, "git branch"):
            return
        if not self.git_args_static(call, "branch", parsed.positionals):
            return
        names = [w.value or "" for w in parsed.positionals]
        force = parsed.has("-f", "--force")
        remote_tracking = parsed.has("-r", "--remotes")
        if parsed.has("-d", "-D", "--delete"):
            for name in names:
                self.emit(call, "git.branch_delete",
                          {"branch": name, "force": True if (parsed.has("-D") or force) else None,
                           "remote_tracking": True if remote_tracking else None},
                          target=name, reason=f"git branch -d {name}")
            return
        if parsed.has("-m", "-M", "--move", "-c", "-C", "--copy"):
            head, why = self.head(repo)
            if len(names) == 1:
                if head is None:
                    self.fail(f"git branch -m: {why}", call.part)
                    return
                old, new = head, names[0]
            elif len(names) >= 2:
                old, new = names[0], names[1]
            else:
                return
            if parsed.has("-m", "-M", "--move"):
                self.emit(call, "git.branch_delete", {"branch": old, "force": True if parsed.has("-M") or force else None,
                                                       "renamed_to": new},
                          target=old, reason=f"git branch -m renames {old} to {new}")
                if old == head:
                    self.set_head(repo, new)
            self.emit(call, "git.branch_create", {"name": new, "start_point": old,
                                                   "force": True if parsed.has("-M", "-C") or force else None},
                      target=new, reason=f"git branch creates {new}")
            return
        if parsed.has("-u", "--set-upstream-to", "--unset-upstream", "--edit-description"):
            upstream = parsed.value("-u", "--set-upstream-to")
            branch = names[0] if names else self.head(repo)[0]
            if parsed.has("--unset-upstream") and branch:
                overlay = self.push_overlay(repo)
                overlay[f"branch.{branch}.merge".lower()] = []
                overlay[f"branch.{branch}.remote".lower()] = []
            elif upstream and branch and "/" in upstream:
                remote, _, merge = upstream.partition("/")
                self.set_upstream(repo, branch, remote, merge)
            elif upstream:
                self.push_config_unknown(repo, "git branch --set-upstream-to")
            self.unguard(call.part)
            return
        listing = parsed.has("-l", "--list", "-a", "--all", "-r", "--remotes", "-v", "-vv", "--verbose",
                             "--show-current", "--contains", "--no-contains", "--merged", "--no-merged",
                             "--points-at", "--sort", "--format")
        if listing or not names:
            return
        self.emit(call, "git.branch_create", {"name": names[0], "start_point": names[1] if len(names) > 1 else None,
                                               "force": True if force else None},
                  target=names[0], reason=f"git branch {names[0]}")

    def git_reset(self, call: _Call, repo: _Repo, words: list[_Word]) -> None:
        spec = _Spec.of(flags="--hard --soft --mixed --keep --merge -q --quiet -p --patch -N --intent-to-add "
                              "--no-refresh --refresh --no-recurse-submodules --pathspec-file-nul",
                        valued="--pathspec-from-file", optional="--recurse-submodules")
        parsed = _parse(words, spec)
        if not self.parsed_ok(call, parsed, "git reset"):
            return
        if not parsed.has("--hard", "--merge", "--keep"):
            self.unguard(call.part)
            return
        if not self.git_args_static(call, "reset", parsed.positionals):
            return
        ref = parsed.positionals[0].value if parsed.positionals else "HEAD"
        mode = None if parsed.has("--hard") else "merge" if parsed.has("--merge") else "keep"
        self.emit(call, "git.reset_hard", {"ref": ref, "mode": mode, **self.git_where(call, repo)}, target=ref,
                  reason=f"git reset --hard {ref}")

    def git_clean(self, call: _Call, repo: _Repo, words: list[_Word]) -> None:
        spec = _Spec.of(flags="-d -f --force -x -X -n --dry-run -q --quiet -i --interactive",
                        valued="-e --exclude")
        parsed = _parse(words, spec)
        if not self.parsed_ok(call, parsed, "git clean"):
            return
        if parsed.has("-n", "--dry-run"):
            return
        if not self.git_args_static(call, "clean", parsed.positionals):
            return
        paths = []
        for word in parsed.positionals:
            absolute = self.absolute(call.ctx, word.value or "", follow=False)
            paths.append(self.represent(absolute)[0] if absolute else word.value or "")
        self.emit(call, "git.clean", {"directories": parsed.has("-d"), "ignored": parsed.has("-x", "-X"),
                                       "only_ignored": True if parsed.has("-X") else None,
                                       "paths": paths or None, **self.git_where(call, repo)},
                  target=" ".join(paths) or None, reason="git clean removes untracked files")

    def git_rebase(self, call: _Call, repo: _Repo, words: list[_Word]) -> None:
        spec = _Spec.of(
            flags="-i --interactive --autosquash --no-autosquash --autostash --no-autostash --keep-base --root -f "
                  "--force-rebase --no-ff --fork-point --no-fork-point -m --merge --apply -q --quiet -v --verbose "
                  "--stat -n --no-stat --no-verify --verify --signoff --committer-date-is-author-date "
                  "--reset-author-date --ignore-date --ignore-whitespace --reapply-cherry-picks "
                  "--no-reapply-cherry-picks --update-refs --no-update-refs -k --keep-empty --no-keep-empty "
                  "--rerere-autoupdate --no-rerere-autoupdate -r --no-rebase-merges --no-gpg-sign --continue "
                  "--abort --skip --quit --edit-todo --show-current-patch",
            valued="--onto -s --strategy -X --strategy-option -x --exec --whitespace",
            optional="--rebase-merges --gpg-sign -S --empty -C")
        parsed = _parse(words, spec)
        if not self.parsed_ok(call, parsed, "git rebase"):
            return
        for body in parsed.values("-x", "--exec"):
            if body is None:
                self.fail("the command of `git rebase --exec` is only known at run time", call.part)
                return
            inner = call.ctx.copy()
            inner.depth += 1
            self.analyze_text(body, inner, call.part)
        if parsed.has("--edit-todo") or (parsed.has("-i", "--interactive") and not parsed.has(
                "--continue", "--abort", "--skip", "--quit", "--show-current-patch")
                and not self.git_editor_does_nothing(call, repo, todo_list=True)):
            self.interactive(call, "an editor on the rebase todo list (GIT_SEQUENCE_EDITOR=: takes the list "
                                   "as generated, e.g. for --autosquash)")
        if parsed.has("--continue", "--abort", "--skip", "--quit", "--edit-todo", "--show-current-patch"):
            self.unguard(call.part)
            return
        if not self.git_args_static(call, "rebase", parsed.positionals):
            return
        positionals = [w.value or "" for w in parsed.positionals]
        upstream = positionals[0] if positionals and not parsed.has("--root") else None
        branch = positionals[1] if len(positionals) > 1 else (positionals[0] if parsed.has("--root") and positionals
                                                               else None)
        onto = parsed.value("--onto") or upstream
        if onto is None and parsed.has("--root"):
            onto = "--root"
        if onto is None:
            _, why = self.head(repo)
            found = self.git_query(repo, "rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{upstream}")
            if not found:
                self.fail(f"git rebase without an upstream: the current branch has none ({why or 'no upstream'})",
                          call.part)
                return
            onto = found
        if branch is None:
            branch, _ = self.head(repo)
        else:
            self.set_head(repo, branch)
        self.emit(call, "git.rebase", {"onto": onto, "branch": branch,
                                        "interactive": True if parsed.has("-i", "--interactive") else None,
                                        "root": True if parsed.has("--root") else None},
                  target=onto, reason=f"git rebase onto {onto}")

    def git_worktree(self, call: _Call, repo: _Repo, words: list[_Word]) -> None:
        if not words or words[0].value is None:
            self.fail("git worktree without a static subcommand", call.part)
            return
        sub = words[0].value
        rest = words[1:]
        if sub == "list":
            return
        if sub == "add":
            spec = _Spec.of(flags="-f --force --detach --checkout --no-checkout --lock --guess-remote "
                                  "--no-guess-remote --track --no-track --orphan -q --quiet --relative-paths "
                                  "--no-relative-paths",
                            valued="-b -B --reason")
            parsed = _parse(rest, spec)
            if not self.parsed_ok(call, parsed, "git worktree add"):
                return
            if not parsed.positionals or not self.git_args_static(call, "worktree add", parsed.positionals):
                return
            path_word = parsed.positionals[0]
            commit = parsed.positionals[1].value if len(parsed.positionals) > 1 else None
            self.write_paths(call, [path_word], via="git worktree add", extra={"worktree": True})
            new = parsed.value("-b", "-B")
            if new is None and commit is None and not parsed.has("--detach"):
                candidate = (path_word.value or "").rstrip("/").rsplit("/", 1)[-1]
                if candidate and not self.branch_exists(repo, candidate):
                    new = candidate
            if new is not None:
                self.emit(call, "git.branch_create", {"name": new, "start_point": commit,
                                                       "force": True if parsed.has("-B") else None, "worktree": True},
                          target=new, reason=f"git worktree add creates branch {new}")
            return
        if sub == "remove":
            paths = [w for w in rest if (w.value or "x")[:1] != "-"]
            self.delete_paths(call, paths, recursive=True, via="git worktree remove")
            return
        if sub == "move":
            paths = [w for w in rest if (w.value or "x")[:1] != "-"]
            if len(paths) == 2:
                self.delete_paths(call, paths[:1], recursive=True, via="git worktree move")
                self.write_paths(call, paths[1:], via="git worktree move", extra={"worktree": True})
            return
        if sub in ("prune", "lock", "unlock", "repair"):
            self.unguard(call.part)
            return
        self.fail(f"git worktree {sub} is not known", call.part)

    def git_rm(self, call: _Call, repo: _Repo, words: list[_Word]) -> None:
        spec = _Spec.of(flags="-r -f --force -n --dry-run -q --quiet --cached --ignore-unmatch --sparse "
                              "--pathspec-file-nul",
                        valued="--pathspec-from-file")
        parsed = _parse(words, spec)
        if not self.parsed_ok(call, parsed, "git rm"):
            return
        if parsed.has("-n", "--dry-run", "--cached"):
            if parsed.has("--cached"):
                self.unguard(call.part)
            return
        if parsed.has("--pathspec-from-file"):
            self.fail("git rm --pathspec-from-file: the paths are read at run time", call.part)
            return
        self.delete_paths(call, parsed.positionals, recursive=parsed.has("-r"), via="git rm")

    def git_mv(self, call: _Call, repo: _Repo, words: list[_Word]) -> None:
        self.move(call, words, via="git mv", spec=_Spec.of(flags="-f --force -k -n --dry-run -v --verbose --sparse"))

    def git_update_ref(self, call: _Call, repo: _Repo, words: list[_Word]) -> None:
        values = [w.value for w in words]
        if any(v is None for v in values) or "--stdin" in values:
            self.fail("git update-ref with refs only known at run time", call.part)
            return
        plain = [v for v in values if v is not None and not v.startswith("-")]
        deleting = "-d" in values
        if not plain:
            return
        ref = plain[0]
        if not ref.startswith("refs/heads/"):
            self.unguard(call.part)
            return
        name = ref.removeprefix("refs/heads/")
        if deleting:
            self.emit(call, "git.branch_delete", {"branch": name, "force": True}, target=name,
                      reason=f"git update-ref -d {ref}")
        else:
            self.emit(call, "git.branch_create", {"name": name, "start_point": plain[1] if len(plain) > 1 else None,
                                                   "force": True}, target=name, reason=f"git update-ref {ref}")

    # -- files --

    def rm(self, call: _Call) -> None:
        spec = _Spec.of(flags="-r -R --recursive -f --force -i -I -v --verbose -d --dir --one-file-system "
                              "--no-preserve-root --help --version",
                        optional="--preserve-root --interactive")
        parsed = _parse(call.args, spec)
        if not self.parsed_ok(call, parsed, "rm"):
            return
        if parsed.has("--help", "--version"):
            return
        extra = {"no_preserve_root": True} if parsed.has("--no-preserve-root") else None
        self.delete_paths(call, parsed.positionals, recursive=parsed.has("-r", "-R", "--recursive"), via="rm",
                          extra=extra)

    def rmdir(self, call: _Call) -> None:
        parsed = _parse(call.args, _Spec.of(flags="-p --parents -v --verbose --ignore-fail-on-non-empty"))
        if not self.parsed_ok(call, parsed, "rmdir"):
            return
        words = list(parsed.positionals)
        if parsed.has("-p", "--parents"):
            for word in parsed.positionals:
                value = (word.value or "").rstrip("/")
                while word.value is not None and "/" in value:
                    value = value.rsplit("/", 1)[0]
                    if value:
                        words.append(_Word.literal(value))
        self.delete_paths(call, words, recursive=False, via="rmdir")

    def unlink(self, call: _Call) -> None:
        words = [w for w in call.args if w.value not in ("--",)]
        self.delete_paths(call, words, recursive=False, via="unlink")

    def shred(self, call: _Call) -> None:
        spec = _Spec.of(flags="-f --force -u -x --exact -v --verbose -z --zero", valued="-n --iterations -s --size "
                        "--random-source", optional="--remove")
        parsed = _parse(call.args, spec)
        if not self.parsed_ok(call, parsed, "shred"):
            return
        if parsed.has("-u", "--remove"):
            self.delete_paths(call, parsed.positionals, recursive=False, via="shred")
        else:
            self.write_paths(call, parsed.positionals, via="shred", extra={"destroys_content": True})

    def trash(self, call: _Call) -> None:
        words = [w for w in call.args if (w.value or "x")[:1] != "-"]
        self.delete_paths(call, words, recursive=True, via=call.name)

    def find(self, call: _Call) -> None:
        words = call.args
        i = 0
        while (i < len(words) and words[i].value in ("-H", "-L", "-P")) or (
                i < len(words) and (words[i].value or "").startswith(("-O", "-D"))):
            i += 2 if words[i].value == "-D" else 1
        roots: list[_Word] = []
        while i < len(words):
            value = words[i].value
            if value is not None and (value.startswith("-") or value in ("(", ")", "!", ",")):
                break
            roots.append(words[i])
            i += 1
        expression = words[i:]
        roots = roots or [_Word.literal(".")]
        deleting = False
        k = 0
        filters = []
        while k < len(expression):
            value = expression[k].value
            if value == "-delete":
                deleting = True
            elif value in ("-exec", "-execdir", "-ok", "-okdir"):
                end = k + 1
                while end < len(expression) and expression[end].value not in (";", "+"):
                    end += 1
                inner_words = expression[k + 1:end]
                if inner_words:
                    result = self.probe(_Call(list(inner_words), call.env, call.ctx, call.part))
                    if result.unresolved or any(a.operation != "fs.delete" for a in result.actions):
                        self.fail(f"find {value} runs `{inner_words[0].text}` on files found at run time", call.part)
                    elif result.actions:
                        deleting = True
                    elif result.unguarded:
                        self.unguard(call.part)
                k = end
            elif value in ("-fprint", "-fprint0", "-fls", "-fprintf") and k + 1 < len(expression):
                self.write_paths(call, [expression[k + 1]], via=f"find {value}")
                k += 1
            elif expression[k].value is not None:
                filters.append(expression[k].value or "")
            k += 1
        if deleting:
            self.delete_paths(call, roots, recursive=True, via="find",
                              extra={"filter": " ".join(filters) or None})

    def tee(self, call: _Call) -> None:
        parsed = _parse(call.args, _Spec.of(flags="-a --append -i --ignore-interrupts -p", optional="--output-error"))
        if not self.parsed_ok(call, parsed, "tee"):
            return
        files = [w for w in parsed.positionals if not (w.value and _DEV_FILES.match(w.value))]
        self.write_paths(call, files, via="tee", extra={"append": True if parsed.has("-a", "--append") else None})

    _CP = _Spec.of(
        flags="-a -r -R -f -i -n -p -v -u -l -s -x -d -H -L -P -b -T --archive --recursive --force --interactive "
              "--no-clobber --parents --verbose --remove-destination --strip-trailing-slashes --attributes-only "
              "--copy-contents --dereference --no-dereference --link --symbolic-link --one-file-system "
              "--no-target-directory -Z --debug --keep-directory-symlink",
        valued="-t --target-directory -S --suffix --no-preserve",
        optional="--update --backup --preserve --sparse --reflink --context")
    _MV = _Spec.of(flags="-f -i -n -u -v -b -T --force --interactive --no-clobber --verbose --strip-trailing-slashes "
                         "--no-target-directory --exchange --no-copy -Z --debug",
                   valued="-t --target-directory -S --suffix", optional="--update --backup --context")

    def destinations(self, call: _Call, parsed: _Parsed) -> tuple[list[_Word], list[_Word]] | None:
        """Sources and the words written, for cp/mv/ln/install-like commands."""
        positionals = list(parsed.positionals)
        target = parsed.value("-t", "--target-directory")
        if target is not None:
            directory, sources = _Word.literal(target), positionals
        elif len(positionals) >= 2:
            directory, sources = positionals[-1], positionals[:-1]
        else:
            return None
        if directory.value is None:
            self.fail(f"the destination of `{call.name}` is only known at run time", call.part)
            return None
        into_directory = target is not None or len(sources) > 1
        if not into_directory and not parsed.has("-T", "--no-target-directory") and call.ctx.cwd is not None:
            absolute = self.absolute(call.ctx, directory.value, follow=True)
            into_directory = bool(absolute and os.path.isdir(absolute))
        if not into_directory:
            return sources, [directory]
        written = []
        for source in sources:
            if source.value is None:
                self.fail(f"a source of `{call.name}` is only known at run time", call.part)
                return None
            name = source.value.rstrip("/").rsplit("/", 1)[-1]
            written.append(_Word.literal(directory.value.rstrip("/") + "/" + name))
        return sources, written

    def cp(self, call: _Call) -> None:
        parsed = _parse(call.args, self._CP)
        if not self.parsed_ok(call, parsed, "cp"):
            return
        found = self.destinations(call, parsed)
        if found:
            self.write_paths(call, found[1], via="cp",
                             extra={"recursive": True if parsed.has("-r", "-R", "-a", "--recursive", "--archive")
                                    else None})

    def mv(self, call: _Call) -> None:
        self.move(call, call.args, via="mv", spec=self._MV)

    def move(self, call: _Call, words: Sequence[_Word], *, via: str, spec: _Spec) -> None:
        parsed = _parse(words, spec)
        if not self.parsed_ok(call, parsed, f"{via}"):
            return
        if parsed.has("-n", "--dry-run") and via == "git mv":
            return
        found = self.destinations(call, parsed)
        if not found:
            return
        sources, written = found
        for source in sources:
            absolute = self.absolute(call.ctx, source.value, follow=False) if source.value is not None else None
            is_dir = bool(absolute and os.path.isdir(absolute) and not os.path.islink(absolute))
            self.delete_paths(call, [source], recursive=is_dir, via=via, extra={"moved": True})
        self.write_paths(call, written, via=via)

    def ln(self, call: _Call) -> None:
        spec = _Spec.of(flags="-s -f -n -r -v -b -i -L -P -T --symbolic --force --no-dereference --relative --verbose "
                              "--interactive --logical --physical --no-target-directory",
                        valued="-t -S --target-directory --suffix", optional="--backup")
        parsed = _parse(call.args, spec)
        if not self.parsed_ok(call, parsed, "ln"):
            return
        if len(parsed.positionals) == 1 and parsed.value("-t", "--target-directory") is None:
            value = parsed.positionals[0].value
            if value is None:
                self.fail("the target of `ln` is only known at run time", call.part)
                return
            self.write_paths(call, [_Word.literal(value.rstrip("/").rsplit("/", 1)[-1])], via="ln")
            return
        found = self.destinations(call, parsed)
        if found:
            self.write_paths(call, found[1], via="ln")

    def install(self, call: _Call) -> None:
        spec = _Spec.of(flags="-b -c -C --compare -D -d --directory -p -s -v -Z --preserve-timestamps --strip "
                              "--verbose --debug --no-target-directory -T --preserve-context",
                        valued="-g -m -o -S -t --group --mode --owner --suffix --target-directory --strip-program",
                        optional="--backup --context")
        parsed = _parse(call.args, spec)
        if not self.parsed_ok(call, parsed, "install"):
            return
        if parsed.has("-d", "--directory"):
            self.write_paths(call, parsed.positionals, via="install -d")
            return
        found = self.destinations(call, parsed)
        if found:
            self.write_paths(call, found[1], via="install")

    def touch(self, call: _Call) -> None:
        parsed = _parse(call.args, _Spec.of(flags="-a -c -m -f -h --no-create --no-dereference",
                                            valued="-d -r -t --date --reference --time"))
        if not self.parsed_ok(call, parsed, "touch"):
            return
        self.write_paths(call, parsed.positionals, via="touch")

    def truncate(self, call: _Call) -> None:
        parsed = _parse(call.args, _Spec.of(flags="-c -o --no-create --io-blocks", valued="-s -r --size --reference"))
        if not self.parsed_ok(call, parsed, "truncate"):
            return
        self.write_paths(call, parsed.positionals, via="truncate")

    def sed(self, call: _Call) -> None:
        spec = _Spec.of(flags="-n -E -r -s -u -z --quiet --silent --regexp-extended --separate --unbuffered "
                              "--null-data --posix --debug --sandbox --follow-symlinks --help --version",
                        valued="-e -f -l --expression --file --line-length", optional="-i --in-place")
        parsed = _parse(call.args, spec)
        if not self.parsed_ok(call, parsed, "sed"):
            return
        files = list(parsed.positionals)
        in_place = parsed.has("-i", "--in-place")
        if in_place and files and files[0].value == "" and parsed.value("-i", "--in-place") is None:
            files = files[1:]  # BSD sed: -i '' (no backup suffix)
        scripts: list[str | None] = list(parsed.values("-e", "--expression"))
        if not parsed.has("-e", "--expression", "-f", "--file"):
            scripts.append(files[0].value if files else "")
            files = files[1:]
        if parsed.has("-f", "--file") and not parsed.has("--sandbox"):
            self.fail("`sed -f` runs a script file StateWise does not read (it may write files or run commands)",
                      call.part)
            return
        if not parsed.has("--sandbox"):
            for script in scripts:
                if script is None:
                    self.fail("the sed script is only known at run time", call.part)
                    return
                effects = _sed_effects(script)
                if effects is None:
                    self.fail("the sed script cannot be read with confidence", call.part)
                    return
                written, runs = effects
                if runs:
                    self.fail("the sed script runs a command (`e`)", call.part)
                    return
                self.write_paths(call, [_Word.literal(w) for w in written if not _DEV_FILES.match(w)],
                                 via="sed w")
        if not in_place:
            self.unguard(call.part)
            return
        self.write_paths(call, files, via="sed -i")

    def dd(self, call: _Call) -> None:
        for word in call.args:
            if word.value is None:
                if word.text.startswith("of="):
                    self.fail("the output file of `dd` is only known at run time", call.part)
                continue
            if word.value.startswith("of="):
                target = word.value[3:]
                if not _DEV_FILES.match(target):
                    self.write_paths(call, [_Word.literal(target)], via="dd")
                return
        self.unguard(call.part)

    def chmod(self, call: _Call) -> None:
        spec = _Spec.of(flags="-R --recursive -v -c -f --silent --quiet --changes --verbose -h --dereference "
                              "--no-dereference -H -L -P --preserve-root --no-preserve-root",
                        valued="--reference --from")
        words = list(call.args)
        mode_index = None
        if call.name.rsplit("/", 1)[-1] == "chmod":
            for index, word in enumerate(words):
                if word.value and re.fullmatch(r"[ugoa]*[-+=][rwxXstugo]*(,[ugoa]*[-+=][rwxXstugo]*)*", word.value):
                    mode_index = index
                    break
        if mode_index is not None:
            words = words[:mode_index] + [_Word.literal("MODE")] + words[mode_index + 1:]
        parsed = _parse(words, spec)
        if not self.parsed_ok(call, parsed, f"{call.name}"):
            return
        files = parsed.positionals if parsed.has("--reference") else parsed.positionals[1:]
        self.write_paths(call, files, via=call.name.rsplit("/", 1)[-1],
                         extra={"attributes": True,
                                "recursive": True if parsed.has("-R", "--recursive") else None})

    def rsync(self, call: _Call) -> None:
        spec = _Spec.of(valued="-e --rsh --exclude --include -f --filter --exclude-from --include-from --files-from "
                               "--chmod --chown --backup-dir --suffix -T --temp-dir --partial-dir --log-file --port "
                               "--bwlimit --timeout --compare-dest --copy-dest --link-dest --max-size --min-size -B "
                               "--block-size --password-file --rsync-path --out-format --info --debug -M "
                               "--remote-option --iconv --checksum-choice --compress-choice --usermap --groupmap",
                        allow_unknown=True)
        parsed = _parse(call.args, spec)
        if parsed.error or len(parsed.positionals) < 2:
            self.unguard(call.part)
            return
        destination = parsed.positionals[-1]
        value = destination.value
        if value is None:
            self.fail("the destination of `rsync` is only known at run time", call.part)
            return
        if re.match(r"^[^/]*:", value) or value.startswith("rsync://"):
            self.unguard(call.part)
            return
        deletes = [name for name, _ in parsed.options if name.startswith("--del")]
        self.write_paths(call, [destination], via="rsync")
        if deletes:
            self.delete_paths(call, [destination], recursive=True, via="rsync " + deletes[0])
        if parsed.has("--remove-source-files"):
            self.delete_paths(call, parsed.positionals[:-1], recursive=False, via="rsync --remove-source-files")

    # -- Python --

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
            self.django(call, words[i + 1:])
            return
        self.unguard(call.part)

    def stdin_program(self, call: _Call, what: str) -> None:
        """An interpreter given no program: it reads one from standard input."""
        if call.ctx.stdin == "tty":
            self.interactive(call, what)
        elif call.ctx.stdin in ("pipe", "dynamic"):
            self.fail(f"`{call.name}` runs a program it reads from its standard input, only known at run time",
                      call.part)
        else:
            self.unguard(call.part)  # a heredoc or a file: the program is in the command, like -c

    def python_module(self, call: _Call, module: str, rest: Sequence[_Word], *, interpreter: str | None) -> None:
        if module == "pip":
            self.pip_command(call, list(rest), interpreter=interpreter, how="python -m pip")
        elif module in ("pytest", "unittest", "tox", "nox", "green", "ward"):
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
        for name, value in call.env.items():
            entry = _INSTALL_ENV.get(name.upper() if name.upper().startswith("NPM_CONFIG_") else name)
            if entry is None or entry[0] != tool:
                continue
            what = entry[1]
            if "\0" in value:
                self.fail(f"{name} is set to a value only known at run time, so where `{call.name}` installs is "
                          "not known", call.part)
                return None
            if what == "config" and value not in ("", os.devnull):
                self.fail(f"{name} makes `{call.name}` read settings from {value}, which StateWise does not "
                          "read, so where it installs is not known", call.part)
                return None
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

    def pip_config(self, call: _Call) -> dict[str, str] | None:
        """install settings in pip's configuration files that redirect an install (target,
        prefix, root, user, python), lowest precedence first; None if a file cannot be read."""
        import configparser

        home = call.env.get("HOME", "")
        xdg = call.env.get("XDG_CONFIG_HOME") or (os.path.join(home, ".config") if home else "")
        files = ["/etc/xdg/pip/pip.conf", "/etc/pip.conf"]
        if home:
            files.append(os.path.join(home, ".pip", "pip.conf"))
        if xdg:
            files.append(os.path.join(xdg, "pip", "pip.conf"))
        virtual_env = call.env.get("VIRTUAL_ENV")
        if virtual_env and "\0" not in virtual_env:
            files.append(os.path.join(virtual_env, "pip.conf"))
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

    def represent_path(self, call: _Call, value: str) -> str:
        absolute = self.absolute(call.ctx, value, follow=True)
        return self.represent(absolute)[0] if absolute else value

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
        """Installs through package managers the built-in contract does not declare."""
        packages = [w for w in call.args[1:] if (w.value or "x")[:1] != "-"]
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
        if tool == "yarn" and sub not in ("install", "remove", "upgrade", "up", "link", "unlink", "dedupe", "pack",
                                          "publish", "cache", "config", "init", "import", "set", "plugin", "workspace",
                                          "workspaces", "create", "node", "patch", "rebuild", "npm", "constraints"):
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
        interpreter's words kept in the command's text."""
        start = len(call.words) - len(words) - 1
        inner = _Call(call.words[start:], call.env, call.ctx, call.part, call.kept + call.words[:start])
        if not self.declared(inner):
            self.unguard(call.part)

    def bundle(self, call: _Call) -> None:
        if call.args and call.args[0].value == "exec":
            self.runner(call, 2, _Spec.of(stop_at_positional=True))
        else:
            self.unguard(call.part)



def _git_listing(sub: str, values: list[str | None]) -> bool:
    """Whether ``git remote``/``tag``/``stash``/``config``/``notes``/``reflog`` only lists."""
    if any(v is None for v in values):
        return False
    words = [v for v in values if v is not None]
    if sub == "remote":
        return not [w for w in words if w not in ("-v", "--verbose")] or (words[0] in ("show", "get-url"))
    if sub == "tag":
        return not words or words[0] in ("-l", "--list", "-n", "--contains", "--points-at", "--merged",
                                         "--no-merged", "--sort") or words[0].startswith(("--sort=", "--format="))
    if sub == "stash":
        return bool(words) and words[0] in ("list", "show")
    if sub == "config":
        return bool(words) and words[0] in ("--get", "--get-all", "--get-regexp", "--list", "-l", "get", "list",
                                            "--show-origin", "--show-scope", "--name-only")
    if sub in ("notes", "reflog"):
        return not words or words[0] in ("list", "show")
    return False


_GIT_MESSAGE_EDITORS = frozenset({"commit", "tag"})


def _git_opens_editor(sub: str, values: list[str | None]) -> bool:
    """Whether ``git commit`` / ``git tag -a`` opens an editor for its message (no -m/-F/...)."""
    words = [v for v in values if v is not None]
    if len(words) < len(values):
        return False  # only known at run time: decided by the arguments' own checks
    if "-e" in words or "--edit" in words:
        return True
    short = "".join(w[1:] for w in words if w.startswith("-") and not w.startswith("--"))
    longs = {w.partition("=")[0] for w in words if w.startswith("--")}
    if sub == "tag":
        annotated = bool(set(short) & {"a", "s", "u"}) or bool(longs & {"--annotate", "--sign", "--local-user"})
        listing = bool(set(short) & {"l", "d", "v"}) or bool(longs & {"--list", "--delete", "--verify"})
        if not annotated or listing:
            return False
        return not (set(short) & {"m", "F"} or longs & {"--message", "--file"})
    if longs & {"--message", "--file", "--reuse-message", "--no-edit", "--dry-run", "--fixup", "--help"}:
        return False
    return not set(short) & {"m", "F", "C", "h"}


def _ref_name(destination: str) -> tuple[str, str | None]:
    """A push destination as the branch slot holds it, and its kind when it is not a branch."""
    if destination.startswith("refs/heads/"):
        return destination.removeprefix("refs/heads/"), None
    if destination.startswith("refs/tags/"):
        return destination, "tag"
    if destination.startswith("refs/"):
        return destination, "other"
    return destination, None


_REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*?)\s*$")
_MIGRATION_SCRIPT = re.compile(r"(^|[:_-])(migrate|migration|migrations|db:push|db:reset)($|[:_-])")


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


def _split_node_package(value: str) -> tuple[str, str | None]:
    if value.startswith((".", "/", "~", "git+", "github:", "file:", "npm:")) or "://" in value:
        return value, None
    at = value.rfind("@")
    if at > 0:
        return value[:at], value[at + 1:] or None
    return value, None


_SED_SIMPLE = frozenset("=dDgGhHlnNpPqQxzF")


def _sed_effects(script: str) -> tuple[list[str], bool] | None:
    """The files a sed script writes (``w``, ``W``, ``s///w``) and whether it runs commands
    (``e``, ``s///e``); None if the script cannot be read with confidence."""
    written: list[str] = []
    runs = False
    i, n = 0, len(script)

    def rest_of_line(start: int) -> tuple[str, int]:
        end = script.find("\n", start)
        end = n if end < 0 else end
        return script[start:end].strip(), end

    def delimited(start: int, delimiter: str) -> int | None:
        """The index after the closing delimiter of a part that starts at ``start``."""
        k = start
        while k < n:
            if script[k] == "\\":
                k += 2
                continue
            if script[k] == delimiter:
                return k + 1
            k += 1
        return None

    def address(k: int) -> int | None:
        if k < n and script[k] == "$":
            return k + 1
        if k < n and script[k].isdigit():
            while k < n and (script[k].isdigit() or script[k] == "~"):
                k += 1
            return k
        if k < n and script[k] in "/\\":
            delimiter = "/"
            if script[k] == "\\":
                if k + 1 >= n:
                    return None
                delimiter, k = script[k + 1], k + 1
            end = delimited(k + 1, delimiter)
            if end is None:
                return None
            while end < n and script[end] in "IM":
                end += 1
            return end
        return k

    while i < n:
        char = script[i]
        if char in " \t\n;}":
            i += 1
            continue
        if char == "#":
            i = rest_of_line(i)[1]
            continue
        after = address(i)
        if after is None:
            return None
        i = after
        if i < n and script[i] == ",":
            i += 1
            if i < n and script[i] in "+~":
                i += 1
                while i < n and script[i].isdigit():
                    i += 1
            else:
                after = address(i)
                if after is None:
                    return None
                i = after
        while i < n and script[i] in " \t!":
            i += 1
        if i >= n:
            return None
        command = script[i]
        i += 1
        if command == "{":
            continue
        if command in "aic":
            while True:  # text up to an unescaped end of line
                end = script.find("\n", i)
                if end < 0:
                    i = n
                    break
                if end > 0 and script[end - 1] == "\\":
                    i = end + 1
                    continue
                i = end
                break
            continue
        if command in "btT:v":
            while i < n and script[i] not in ";\n":
                i += 1
            continue
        if command in "rRwW":
            name, i = rest_of_line(i)
            if command in "wW":
                if not name:
                    return None
                written.append(name)
            continue
        if command == "e":
            runs = True
            i = rest_of_line(i)[1]
            continue
        if command in "sy":
            if i >= n or script[i] in "\n\\":
                return None
            delimiter = script[i]
            middle = delimited(i + 1, delimiter)
            closing = delimited(middle, delimiter) if middle is not None else None
            if closing is None:
                return None
            i = closing
            if command == "s":
                while i < n and script[i] in "gpiImMe0123456789w":
                    if script[i] == "e":
                        runs = True
                    if script[i] == "w":
                        name, i = rest_of_line(i + 1)
                        if not name:
                            return None
                        written.append(name)
                        break
                    i += 1
            continue
        if command in _SED_SIMPLE:
            while i < n and script[i].isdigit():
                i += 1
            continue
        return None
    return written, runs



def _npx_call(self: _Tools, call: _Call) -> None:
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

_GIT_HANDLERS: dict[str, Callable[[_Tools, _Call, _Repo, list[_Word]], None]] = {
    "push": _Tools.git_push,
    "checkout": _Tools.git_checkout,
    "switch": _Tools.git_switch,
    "restore": _Tools.git_restore,
    "branch": _Tools.git_branch,
    "reset": _Tools.git_reset,
    "clean": _Tools.git_clean,
    "rebase": _Tools.git_rebase,
    "worktree": _Tools.git_worktree,
    "rm": _Tools.git_rm,
    "mv": _Tools.git_mv,
    "update-ref": _Tools.git_update_ref,
    "config": _Tools.git_config_command,
}
