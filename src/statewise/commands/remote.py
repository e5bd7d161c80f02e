"""Programs that reach another machine or container: ssh, docker/podman exec, curl, wget."""

from __future__ import annotations

import os
import re

from statewise.actions import Action
from statewise.commands.base import _Base
from statewise.commands.tables import (
    _CONTAINER_RUNS,
    _CONTAINER_TTY,
    _CURL,
    _DEV_FILES,
    _OUTPUT_OPTIONS,
    _WGET,
)
from statewise.commands.words import _Call, _Ctx, _parse, _Spec, _Word


class _Remote(_Base):
    """ssh, container exec/run, curl and wget: the files they write and the commands they run."""

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
        if remote.actions and not remote.unresolved and self.approved_each_time(remote.actions):
            # What the developer approves each time here (a service restart, a reboot, a publish)
            # is asked there too, naming the host: `ssh host sudo systemctl restart app` is the
            # service action on that host. The host itself is checked as the remote command it
            # also is (the catalogue's remote.command, added beside this reading).
            host = rest[0].value or ""
            self.actions += [a.model_copy(update={"args": {**a.args, "host": host, "via": "ssh",
                                                           "command": call.text() or call.part}})
                             for a in remote.actions]
            self.unguard(call.part)
            return
        if remote.actions or remote.unresolved:
            why = f" ({remote.unresolved[0][0]})" if remote.unresolved else ""
            self.fail(f"`ssh` runs `{text[:200]}` on another machine, where StateWise cannot check it{why}",
                      call.part)
            return
        self.unguard(call.part)  # a remote command StateWise does not guard: docs/shell.md

    def approved_each_time(self, actions: list[Action]) -> bool:
        """Whether every action is of an operation the contract has the developer approve each
        time (``requires_approval``): asked wherever it runs, so it can be asked on another host."""
        operations = self.contract.operations if self.contract is not None else {}
        return all((spec := operations.get(a.operation)) is not None and spec.requires_approval for a in actions)

    def container(self, call: _Call) -> None:
        """docker/podman/kubectl: a terminal inside a container is a session; the arguments of
        the verbs that run a command in a container are scanned as an unknown wrapper's."""
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
        # Any such verb among the positionals (global options may take values: `docker -H h run`).
        runs = any(v in _CONTAINER_RUNS for v in positionals)
        if runs:
            self.unknown(call)
        elif not (self.rules and self.declared(call)):
            # `docker rm web`, `docker volume rm data`: the words after the tool are its own
            # verbs and names, not a command it runs in a container.
            self.unguard(call.part)

    # -- programs that write files --

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
