"""Programs whose options name an output file: archivers, compressors, zip, split."""

from __future__ import annotations

from statewise.commands.base import _Base
from statewise.commands.tables import (
    _COMPRESSORS,
    _DEV_FILES,
    _OUTPUT_OPTIONS,
    _canonical,
)
from statewise.commands.words import _Call, _parse, _Spec, _Word


class _Archives(_Base):
    """Output files of archivers, compressors, zip and split."""

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
                    "--delete --move --test --symlinks --encrypt --grow --fix --help --version -sp -sb -sv -sc -sf "
                    "--split-pause --split-bell --split-verbose --show-files -db -dc -dd -dg -du -dv --display-bytes "
                    "--display-counts --display-dots --display-globaldots --display-usize --display-volume -MM "
                    "--must-match -nw --no-wild -ws --wild-stop-dirs -ic --ignore-case -FS --filesync -c "
                    "--entry-comments -z --archive-comment -o --latest-time --no-extra --no-dir-entries".split())
        valued = set("-b -n -t -tt -P -Z -s -O --out --password --temp-path --suffixes -ll --split-size -ds --dot-size "
                     "--compression-method --from-date --before-date".split())
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


#: tar options that run another program (a checkpoint action, a filter, a compressor, a volume
#: script, a remote shell): what they run is not read here (issue 25: `--checkpoint-action=exec='rm
#: -f .env'`).
_TAR_RUNS = ("--checkpoint-action", "--to-command", "--use-compress-program", "--info-script",
             "--new-volume-script", "--rsh-command", "--rmt-command")
#: tar's short options that take a value (the next word, in a bundle such as -cf).
_TAR_VALUED_SHORT = frozenset("fCTXbKNVgLIF")
_TAR_VALUED_LONG = frozenset({"--file", "--directory", "--files-from", "--exclude-from", "--exclude",
                              "--blocking-factor", "--starting-file", "--newer", "--newer-mtime", "--label",
                              "--listed-incremental", "--tape-length", "--owner", "--group", "--mode", "--mtime",
                              "--transform", "--xform", "--format", "--checkpoint", "--record-size", "--suffix",
                              "--volno-file", "--index-file"})


class _Tar(_Base):
    """tar: the archive it writes, the inputs `--remove-files` deletes, the options that run programs."""

    def tar(self, call: _Call) -> None:
        words = list(call.args)
        if words and (words[0].value or "").isalpha():
            words[0] = _Word.literal("-" + (words[0].value or ""))  # `tar cf x.tar dir`: old-style bundle
        modes: set[str] = set()
        archive: _Word | None = None
        inputs: list[_Word] = []
        removing = moved = extracting = False
        directory: str | None = None
        strip = 0
        index = 0
        while index < len(words):
            value = words[index].value
            if value is None:
                if removing or any(w.value == "--remove-files" for w in words):
                    self.fail(f"tar: `{words[index].text}` is only known at run time", call.part)
                    return
                inputs.append(words[index])
            elif value.startswith("--"):
                name, equals, _ = value.partition("=")
                moved = moved or name == "--directory"
                if name.startswith(_TAR_RUNS) or (name == "--checkpoint-action" and "exec" in value):
                    self.fail(f"`tar {name}` runs another program, which StateWise does not read", call.part)
                    return
                if name == "--remove-files":
                    removing = True
                elif name in ("--extract", "--get"):
                    extracting = True
                elif name in ("--to-stdout", "--to-command"):
                    modes.add("o")
                elif name == "--strip-components":
                    count = value.partition("=")[2] if equals else (words[index + 1].value if index + 1 < len(words)
                                                                      else None)
                    strip = int(count) if count and count.isdigit() else -1
                    index += 0 if equals else 1
                elif name in ("--create", "--append", "--update", "--concatenate", "--catenate"):
                    modes.add("c")
                elif name in _TAR_VALUED_LONG and not equals:
                    if name == "--file" and index + 1 < len(words):
                        archive = words[index + 1]
                    if name == "--directory" and index + 1 < len(words):
                        directory = words[index + 1].value or "\0"
                    if name in ("--transform", "--xform"):
                        modes.add("t")
                    index += 1
                elif name == "--file":
                    archive = _Word.literal(value.partition("=")[2])
                elif name == "--directory":
                    directory = value.partition("=")[2]
                elif name in ("--transform", "--xform"):
                    modes.add("t")
            elif value.startswith("-") and len(value) > 1:
                letters = value[1:]
                for position, letter in enumerate(letters):
                    if letter in "crAu":
                        modes.add("c")
                    extracting = extracting or letter == "x"
                    if letter == "O":
                        modes.add("o")
                    if letter in "IF":
                        self.fail(f"`tar -{letter}` runs another program, which StateWise does not read", call.part)
                        return
                    if letter in _TAR_VALUED_SHORT:
                        rest = letters[position + 1:]
                        given = _Word.literal(rest) if rest else (words[index + 1] if index + 1 < len(words)
                                                                     else None)
                        if letter == "f":
                            archive = given
                        if letter == "C":
                            directory = (given.value or "\0") if given is not None else "\0"
                        moved = moved or letter == "C"
                        if not rest:
                            index += 1
                        break
            else:
                inputs.append(words[index])
            index += 1
        if "c" in modes and archive is not None and archive.value not in (None, "-") and \
                not _DEV_FILES.match(archive.value or ""):
            self.write_paths(call, [archive], via="tar")
        if removing and moved:
            self.fail("tar --remove-files with -C: which files it deletes depends on where each -C applies",
                      call.part)
        elif removing:
            self.delete_paths(call, inputs, recursive=True, via="tar --remove-files")
        if extracting and "o" not in modes:
            if "t" in modes or strip < 0 or (directory is not None and "\0" in directory):
                self.fail("tar -x: the names it writes are only known at run time (--transform, or a -C or "
                          "--strip-components value computed when it runs)", call.part)
            else:
                self.tar_extract(call, archive, directory, strip)
        elif not removing and "c" not in modes:
            self.unguard(call.part)
