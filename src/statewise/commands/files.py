"""File tools: rm, cp, mv, ln, install, touch, truncate, sed -i, dd, chmod, rsync, find, tee."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

from statewise.commands.base import _Base
from statewise.commands.sed import read_sed_script, sed_words
from statewise.commands.tables import (
    _DEV_FILES,
)
from statewise.commands.words import _Call, _parse, _Parsed, _Spec, _Word


class _Files(_Base):
    """The paths file tools write, move or delete."""

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
        found = sed_words(call.args)  # sed's options: one table (commands/sed.py)
        parsed = found.parsed
        if not self.parsed_ok(call, parsed, "sed"):
            return
        files = [call.args[index] for index in found.files]
        in_place = found.in_place
        scripts = [text for _, text in found.scripts]
        if parsed.has("-f", "--file") and not parsed.has("--sandbox"):
            self.fail("`sed -f` runs a script file StateWise does not read (it may write files or run commands)",
                      call.part)
            return
        if not parsed.has("--sandbox"):
            if None in scripts:
                self.fail("the sed script is only known at run time", call.part)
                return
            # GNU sed joins its -e scripts with newlines (an `a\` in one continues into the next).
            read = read_sed_script("\n".join(s for s in scripts if s is not None))
            if read is None:
                self.fail("the sed script cannot be read with confidence", call.part)
                return
            if read.runs:
                self.fail("the sed script runs a command (`e`)", call.part)
                return
            self.write_paths(call, [_Word.literal(w) for w in read.writes if not _DEV_FILES.match(w)],
                             via="sed w")
            if read.refused:
                # sed refuses the script while compiling it: nothing is read, run or edited in place.
                self.unguard(call.part)
                return
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
