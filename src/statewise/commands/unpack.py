"""What extracting an archive or applying a patch writes: ``tar -x``, ``unzip``, ``patch``,
``git apply``.

The archive or the diff is an existing file of the workspace, so what the command writes is
known before it runs: the archive's member names (listed with :mod:`tarfile` / :mod:`zipfile`,
never extracted, so nothing in it runs) or the diff's file names (``--- a/X`` / ``+++ b/Y``,
``diff --git``, renames, deletions), resolved under the directory they land in. Each becomes an
``fs.write`` (``fs.delete`` for a file a patch deletes), so the path checks apply: an archive
that holds ``.claude/settings.json`` is a write of it (docs/shell.md).

Reading is bounded and read-only. An archive or a diff that is not a file of the workspace
keeps today's reading (unguarded), as for scripts (:mod:`.scripts`); one that cannot be read
within the bounds, names only known at run time, or a member or file name that leaves its
directory upwards (``../``, an absolute name) is "cannot check".
"""

from __future__ import annotations

import os
import posixpath
import tarfile
import zipfile
from collections.abc import Callable
from pathlib import Path

from statewise.commands.base import _Base
from statewise.commands.words import _Call, _parse, _Repo, _Spec, _Word
from statewise.protection import SELF_PROTECTED

#: The largest archive listed (its members are read, never extracted).
MAX_ARCHIVE_BYTES = 32 * 1024 * 1024
#: The most members listed from one archive.
MAX_MEMBERS = 10_000
#: The largest diff read.
MAX_DIFF_BYTES = 4 * 1024 * 1024
#: Up to this many members each is a write of its own; past it, members below a top-level entry
#: are one write of that entry, except those that overwrite an existing file or pass through a
#: dot-folder (``.claude``, ``.statewise``, ``.git``), which stay exact: a write of a folder does
#: not reach a protected file inside it (protection.check_path).
MAX_EXACT_MEMBERS = 256


_Listing = Callable[[Path], list[str]]


class _Unreadable(Exception):
    """The archive or diff cannot be read within the bounds (the message says why)."""


class _Unpack(_Base):
    """Archives extracted and patches applied: the files they write, read from the file."""

    # -- archives --

    def tar_extract(self, call: _Call, archive: _Word | None, directory: str | None, strip: int) -> None:
        """``tar -x[f ARCHIVE] [-C DIR] [--strip-components=N]``: a write of every member."""
        if archive is None or archive.value in (None, "-"):
            stdin = _stdin_file(call)
            if stdin is None:
                if not self.extracts_near_protected(call, directory):
                    # `curl ... | tar xz -C /tmp/tool` or `-C build`: a folder that holds nothing
                    # StateWise protects (tar itself refuses members that climb out with `..`,
                    # and makes an archive's links last), as before: unguarded
                    self.unguard(call.part)
                    return
                self.fail("tar -x: the archive comes from standard input, so the names it writes are only known "
                          "at run time", call.part)
                return
            archive = _Word.literal(stdin)
        self.extract(call, archive.value or "\0", directory, strip, via="tar -x", listing=_tar_names)

    def extracts_near_protected(self, call: _Call, directory: str | None) -> bool:
        """Whether the folder an extraction of unseen members writes into (``-C DIR``, else the
        current one) may hold what StateWise protects: the workspace's root or any folder above
        it or above the home folder, a folder inside one of the protected folders, or one that
        holds one of them (True when it cannot be told: the stricter reading)."""
        absolute = self.absolute(call.ctx, os.path.expanduser(directory or "."), follow=True)
        if absolute is None:
            return True
        home = os.path.expanduser("~")
        for above in (str(self.workspace), home):
            if above == absolute or above.startswith(absolute.rstrip("/") + "/"):
                return True
        relative, inside = self.represent(absolute)
        parts = relative.split("/") if inside else absolute.split("/")
        return any(part in _PROTECTED_FOLDERS for part in parts) or any(
            os.path.lexists(os.path.join(absolute, name)) for name in _PROTECTED_FOLDERS)

    def unzip(self, call: _Call) -> None:
        """``unzip [-o] ARCHIVE [MEMBERS] [-d DIR]``: a write of every member under DIR."""
        spec = _Spec.of(flags="-o -n -q -qq -j -a -aa -b -B -C -L -M -s -u -f -V -X -K -D -T -U -UU -F -FF -l -v -t "
                              "-p -c -z -Z -h --help",
                        valued="-d -x -P -O -I")
        parsed = _parse(call.args, spec)
        if not self.parsed_ok(call, parsed, "unzip"):
            return
        words = list(parsed.positionals)
        if not words or parsed.has("-l", "-v", "-t", "-p", "-c", "-z", "-Z", "-h", "--help"):
            self.unguard(call.part)
            return
        if parsed.has("-j"):
            self.fail("unzip -j: the members land under their base names, which are not read here", call.part)
            return
        self.extract(call, words[0].value or "\0", parsed.value("-d"), 0, via="unzip", listing=_zip_names)

    def extract(self, call: _Call, archive: str, directory: str | None, strip: int, *, via: str,
                listing: _Listing) -> None:
        if "\0" in archive:
            self.fail(f"{via}: the archive is only known at run time", call.part)
            return
        path = self.workspace_file(call, archive)
        if path is None:
            self.unguard(call.part)  # not a file of the workspace: as for a script elsewhere
            return
        if call.ctx.cwd is None:
            self.fail(f"{via}: the directory it extracts into is not known", call.part)
            return
        base = os.path.join(str(call.ctx.cwd), directory) if directory else str(call.ctx.cwd)
        try:
            if path.stat().st_size > MAX_ARCHIVE_BYTES:
                raise _Unreadable(f"it is larger than {MAX_ARCHIVE_BYTES // (1024 * 1024)} MB")
            names = listing(path)
        except _Unreadable as error:
            self.fail(f"cannot check `{via} {archive}`: {error}", call.part)
            return
        except (OSError, EOFError, tarfile.TarError, zipfile.BadZipFile, ValueError) as error:
            self.fail(f"cannot check `{via} {archive}`: it cannot be listed ({type(error).__name__})", call.part)
            return
        relative: list[str] = []
        for name in names:
            parts = [p for p in name.replace("\\", "/").split("/") if p not in ("", ".")]
            if name.startswith("/") or ".." in parts:
                self.fail(f"cannot check `{via} {archive}`: the member {name!r} leaves the folder it extracts "
                          "into", call.part)
                return
            if len(parts) > strip:
                relative.append("/".join(parts[strip:]))
        targets = _collapsed(sorted(set(relative)), base)
        self.write_paths(call, [_Word.literal(os.path.join(base, t)) for t in targets], via=via)

    # -- patches --

    def patch(self, call: _Call) -> None:
        """``patch [-pN] [-d DIR] [-i DIFF | < DIFF] [FILE]``: a write of each file the diff changes."""
        spec = _Spec.of(flags="-R --reverse -N --forward -f --force -s --silent --quiet -t --batch -E "
                              "--remove-empty-files -b --backup -l --ignore-whitespace -u --unified -c --context "
                              "-n --normal -e --ed --verbose --binary -Z --set-utc -T --set-time --posix "
                              "--dry-run --help -v --version --no-backup-if-mismatch --backup-if-mismatch",
                        valued="-p --strip -i --input -d --directory -o --output -r --reject-file -F --fuzz "
                               "-V --version-control -z --suffix -B --prefix -Y --basename-prefix -D --ifdef "
                               "-g --get --quoting-style --merge --read-only")
        parsed = _parse(call.args, spec)
        if not self.parsed_ok(call, parsed, "patch"):
            return
        if parsed.has("--dry-run", "--help", "-v", "--version"):
            self.unguard(call.part)
            return
        if parsed.has("-e", "--ed"):
            self.fail("patch -e: an ed script is run by ed, which StateWise does not read", call.part)
            return
        output = parsed.value("-o", "--output")
        positionals = parsed.positionals
        diff = parsed.value("-i", "--input") or (positionals[1].value if len(positionals) > 1 else None)
        if diff is None:
            diff = _stdin_file(call)
        if output is not None or positionals[:1]:
            # the file named on the command line (or -o) is the one written, whatever the diff says
            self.write_paths(call, [_Word.literal(output)] if output else positionals[:1], via="patch")
            return
        if diff is None:
            self.fail("patch: the diff comes from standard input, so the files it changes are only known at "
                      "run time", call.part)
            return
        strip = _number(parsed.value("-p", "--strip"))
        self.apply_diff(call, diff, parsed.value("-d", "--directory"), strip, via="patch")

    def git_apply(self, call: _Call, repo: _Repo, rest: list[_Word]) -> None:
        """``git apply [-pN] [--directory=D] DIFF...``: a write of each file the diff changes
        (paths from the top of the working tree)."""
        spec = _Spec.of(flags="--stat --numstat --summary --check --index --cached --intent-to-add -N -3 --3way "
                              "--apply --no-add --allow-binary-replacement --binary -R --reverse --reject -z "
                              "--unidiff-zero --inaccurate-eof -v --verbose -q --quiet --recount --allow-empty "
                              "--ignore-space-change --ignore-whitespace --no-3way",
                        valued="-p -C --exclude --include --whitespace --directory")
        parsed = _parse(rest, spec)
        if not self.parsed_ok(call, parsed, "git apply"):
            return
        if (parsed.has("--stat", "--numstat", "--summary", "--check") and not parsed.has("--apply")) or \
                parsed.has("--cached"):
            self.unguard(call.part)  # reports, or changes only the index
            return
        diffs = [w.value for w in parsed.positionals]
        if not diffs:
            stdin = _stdin_file(call)
            if stdin is None:
                self.fail("git apply: the diff comes from standard input, so the files it changes are only known "
                          "at run time", call.part)
                return
            diffs = [stdin]
        top = self.git_query(repo, "rev-parse", "--show-toplevel") if call.ctx.cwd is not None else None
        directory = parsed.value("--directory")
        for diff in diffs:
            if diff is None:
                self.fail("git apply: the diff is only known at run time", call.part)
                return
            self.apply_diff(call, diff, None, _number(parsed.value("-p")) if parsed.has("-p") else 1,
                            via="git apply", root=top, prefix=directory)

    def apply_diff(self, call: _Call, diff: str, directory: str | None, strip: int | None, *, via: str,
                   root: str | None = None, prefix: str | None = None) -> None:
        path = self.workspace_file(call, diff)
        if path is None:
            self.unguard(call.part)  # not a file of the workspace: as for a script elsewhere
            return
        try:
            if path.stat().st_size > MAX_DIFF_BYTES:
                raise _Unreadable(f"it is larger than {MAX_DIFF_BYTES // (1024 * 1024)} MB")
            text = path.read_bytes().decode("utf-8", "replace")
            changes = _diff_files(text, strip)
        except (_Unreadable, OSError) as error:
            self.fail(f"cannot check `{via} {diff}`: {error}", call.part)
            return
        base = root or (str(call.ctx.cwd) if call.ctx.cwd is not None else None)
        if base is None:
            self.fail(f"{via}: the directory it patches in is not known", call.part)
            return
        if directory:
            base = os.path.join(base, directory)
        for name, deleted in changes:
            name = posixpath.join(prefix, name) if prefix else name
            word = _Word.literal(os.path.join(base, name))
            if deleted:
                self.delete_paths(call, [word], recursive=False, via=via)
            else:
                self.write_paths(call, [word], via=via)


#: Folders that hold what the self-protection keeps: the first folder of each repository entry of
#: statewise.protection.SELF_PROTECTED (StateWise's own, the clients' settings), and git's.
_PROTECTED_FOLDERS = frozenset({entry.path.split("/")[0] for entry in SELF_PROTECTED if entry.anchor == "repo"}
                               | {".git"})


def _stdin_file(call: _Call) -> str | None:
    """The file a ``< FILE`` redirect gives the call as its standard input, when it has one."""
    return call.ctx.stdin_text if call.ctx.stdin == "file" else None


def _tar_names(path: Path) -> list[str]:
    names: list[str] = []
    links: set[str] = set()
    with tarfile.open(path, "r:*") as archive:
        for member in archive:
            if len(names) >= MAX_MEMBERS:
                raise _Unreadable(f"it holds more than {MAX_MEMBERS} members")
            if member.issym() or member.islnk():
                _link(member.name, member.linkname, links)
            names.append(member.name)
    _through_links(names, links)
    return names


def _zip_names(path: Path) -> list[str]:
    with zipfile.ZipFile(path) as archive:
        infos = archive.infolist()
        if len(infos) > MAX_MEMBERS:
            raise _Unreadable(f"it holds more than {MAX_MEMBERS} members")
        links: set[str] = set()
        for info in infos:
            if (info.external_attr >> 16) & 0o170000 == 0o120000 and info.file_size <= 4096:
                _link(info.filename, archive.read(info).decode("utf-8", "replace"), links)
    names = [info.filename for info in infos]
    _through_links(names, links)
    return names


def _link(name: str, target: str, links: set[str]) -> None:
    """A link member: one pointing outside is "cannot check"; its name is kept, since a later
    member written through it lands wherever it points."""
    if target.startswith("/") or ".." in target.split("/"):
        raise _Unreadable(f"the link {name!r} points outside the folder it extracts into")
    links.add(name.strip("/"))


def _through_links(names: list[str], links: set[str]) -> None:
    for name in names:
        parts = name.strip("/").split("/")
        for end in range(1, len(parts)):
            if "/".join(parts[:end]) in links:
                raise _Unreadable(f"the member {name!r} is written through the link {'/'.join(parts[:end])!r} "
                                  "the archive makes")


def _collapsed(names: list[str], base: str) -> list[str]:
    """The members as writes: each one, or, past :data:`MAX_EXACT_MEMBERS`, their top-level
    entries plus every member that overwrites an existing file or passes through a dot-folder."""
    if len(names) <= MAX_EXACT_MEMBERS:
        return names
    kept: dict[str, None] = {}
    for name in names:
        parts = name.split("/")
        kept[parts[0]] = None
        if any(p.startswith(".") for p in parts) or os.path.isfile(os.path.join(base, name)):
            kept[name] = None
    return list(kept)


def _number(value: str | None) -> int | None:
    return int(value) if value is not None and value.isdigit() else None


def _diff_files(text: str, strip: int | None) -> list[tuple[str, bool]]:
    """The files a unified or git diff changes, as (name, deleted), names stripped of ``strip``
    leading components (None: patch's default, the base name)."""
    found: dict[str, bool] = {}
    old: str | None = None
    for line in text.splitlines():
        if line.startswith("--- "):
            old = _diff_name(line[4:])
        elif line.startswith("+++ ") and old is not None:
            new = _diff_name(line[4:])
            if new == "/dev/null":
                found.update(dict.fromkeys(_stripped(old, strip), True))
            else:
                if old != "/dev/null":
                    for each in _stripped(old, strip):
                        found.setdefault(each, False)
                found.update(dict.fromkeys(_stripped(new, strip), False))
            old = None
        elif line.startswith("diff --git "):
            for name in line[len("diff --git "):].split(" "):
                if name.startswith(("a/", "b/")):
                    for each in _stripped(name, strip):
                        found.setdefault(each, False)
        elif line.startswith(("rename from ", "copy from ")):
            found.setdefault(_checked(line.split(" ", 2)[2]), False)
        elif line.startswith(("rename to ", "copy to ")):
            found[_checked(line.split(" ", 2)[2])] = False
    return list(found.items())


def _diff_name(field: str) -> str:
    name = field.split("\t", 1)[0].strip()
    if name.startswith('"'):
        raise _Unreadable(f"the quoted file name {name} is not read here")
    return name


def _stripped(name: str, strip: int | None) -> list[str]:
    """``name`` with ``strip`` leading components removed. Without ``-p``, patch takes the base
    name, and a git-style diff (``a/``, ``b/``) may be read as ``-p1``: both are listed."""
    parts = [p for p in name.split("/") if p]
    if strip is None:
        both = [parts[-1:]] + ([parts[1:]] if len(parts) > 2 and parts[0] in ("a", "b") else [])
        return [_checked("/".join(p)) for p in both]
    if strip > len(parts) - 1:
        raise _Unreadable(f"-p{strip} strips all of {name}")
    return [_checked("/".join(parts[strip:]))]


def _checked(name: str) -> str:
    if name.startswith("/") or ".." in name.split("/") or not name:
        raise _Unreadable(f"the file name {name!r} leaves the folder the diff applies in")
    return name
