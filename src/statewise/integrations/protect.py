"""The hook's use of :mod:`statewise.protection`: where the protected targets are for one call,
and which of them the call's actions (and, for a shell command, its words) reach.

Runs before the guard and needs no record: a write, delete or move of StateWise's own files, of
the clients' hook settings, of git's hooks and configuration, of git's refs (another
repository's included), or of a secret is denied with the target and the reason; a secret named
by a command (read) is asked. The shell normalizer's actions say what a command writes and
deletes; the words add what it cannot model: a file a program is told through the environment
to write (``GIT_TRACE=.env``), a secret named inside a program's own text (``awk '{print >
".env"}'``), a program run from a file the same command wrote (``cp /bin/rm build/tidy &&
build/tidy -rf migrations``).
"""

from __future__ import annotations

import dataclasses
import glob
import os
import re
import shlex
import shutil
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from statewise.actions import Action
from statewise.integrations.hook_files import runtime_directory
from statewise.protection import CHANGING_COMMANDS, Finding, Places, SecretRules, Use, check_path, self_targets
from statewise.workspace import find_repository_root, git_output

if TYPE_CHECKING:  # the command model is imported by the call that needs it
    from statewise.commands.named import Named

__all__ = ["FILE_WRITING_ENV", "findings_for", "listed", "places_for", "protected_paths_touched", "read_findings"]

#: Environment variables that make a program write (or replace) the file they name: git's
#: traces and its index, shells' and REPLs' history files, TLS key logs.
FILE_WRITING_ENV = frozenset({
    "GIT_TRACE", "GIT_TRACE2", "GIT_TRACE2_EVENT", "GIT_TRACE2_PERF", "GIT_TRACE_PACKET", "GIT_TRACE_PACKFILE",
    "GIT_TRACE_PERFORMANCE", "GIT_TRACE_SETUP", "GIT_TRACE_CURL", "GIT_TRACE_SHALLOW", "GIT_TRACE_PACK_ACCESS",
    "GIT_TRACE_REFS", "GIT_TRACE_FSMONITOR", "GIT_INDEX_FILE", "HISTFILE", "NODE_REPL_HISTORY",
    "PYTHON_HISTORY", "LESSHISTFILE", "SQLITE_HISTORY", "MYSQL_HISTFILE", "PSQL_HISTORY", "SSLKEYLOGFILE",
})

#: Operations whose ``path`` slot (and ``link_path``) is written or deleted.
_USES: dict[str, Use] = {"fs.write": "write", "config.edit": "write", "fs.delete": "delete"}
#: Operations that change what another slot names: a database shell's writing statements change
#: its ``database``, a file for SQLite (`sqlite3 .statewise/store.db 'DELETE ...'`); a server's
#: database name never resolves to a protected file.
_CHANGED_SLOTS: dict[str, str] = {"db.write": "database"}


def listed(value: object) -> list[str]:
    """A list slot's items as strings (nothing for a slot that is not a list)."""
    return [str(item) for item in value] if isinstance(value, (list, tuple)) else []

_SEPARATORS = frozenset({"&&", "||", ";", "|", "&", "(", ")", "|&", ";;", "\n"})
_ASSIGNMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.DOTALL)
_PIECES = re.compile(r"""[\s=<>{}();,:"'|&`]+""")
#: Words before a program that do not change which program runs.
_PREFIXES = frozenset({"sudo", "doas", "env", "nohup", "time", "nice", "ionice", "command", "exec", "stdbuf",
                       "setsid", "timeout", "xargs"})
#: find's tests whose value is a pattern matched against names, not a file find opens.
_FIND_PATTERNS = frozenset({"-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex",
                            "-lname", "-ilname"})
#: find's actions that read, write or run something on what it matched.
_FIND_ACTIONS = frozenset({"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"})
#: bash's builtins and keywords: found without PATH.
_BUILTINS = frozenset(".,:,[,[[,alias,bg,bind,break,builtin,caller,cd,command,compgen,complete,compopt,continue,"
                      "declare,dirs,disown,echo,enable,eval,exec,exit,export,false,fc,fg,getopts,hash,help,history,"
                      "jobs,kill,let,local,logout,mapfile,popd,printf,pushd,pwd,read,readarray,readonly,return,set,"
                      "shift,shopt,source,suspend,test,times,trap,true,type,typeset,ulimit,umask,unalias,unset,wait,"
                      "if,then,else,elif,fi,case,esac,for,select,while,until,do,done,in,function,time,{,},!,coproc"
                      .split(","))
#: Searchers whose first operand (or -e's value) is a pattern, and their options whose separate
#: value is a pattern of text or of names left out (--exclude), or is not a file (-m 3). -f names
#: a file of patterns, and --include/--glob the files searched: those stay names of files read.
_GREPS = frozenset({"grep", "egrep", "fgrep", "zgrep", "rg", "ag", "ack"})
_GREP_PATTERN_VALUES = frozenset({"-e", "--regexp", "--exclude", "--exclude-dir", "-t", "--type", "-T",
                                  "--type-not"})
_GREP_OTHER_VALUES = frozenset({"-m", "--max-count", "-A", "-B", "-C", "--after-context", "--before-context",
                                "--context", "-d", "-D", "--devices", "--directories", "--label", "-j", "--threads",
                                "-M", "--max-columns", "--max-depth", "--color", "--colour"})


def _cache_root() -> Path:
    explicit = os.environ.get("STATEWISE_CACHE_DIR")
    if explicit:
        return Path(explicit)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "statewise"


def places_for(cwd: Path, *, store: str | None, contract_path: str | None, config_path: Path | None,
               secrets: SecretRules | None = None) -> Places:
    """Where the protected targets are for a call in ``cwd``, with the store, contract and
    config file the settings in effect name (each protected wherever it is)."""
    home = Path(os.environ.get("HOME") or Path.home())
    config_home = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    root = find_repository_root(cwd)
    git_dirs: list[Path] = []
    hooks_path: Path | None = None
    if root is not None:
        # One git call: the git directory, the common one (a linked worktree's main .git), and
        # where git looks for hooks (core.hooksPath honoured).
        answer = git_output(cwd, "rev-parse", "--path-format=absolute", "--absolute-git-dir", "--git-common-dir",
                            "--git-path", "hooks")
        lines = answer.splitlines() if answer else []
        git_dirs = [Path(line) for line in lines[:2]]
        if not git_dirs and (root / ".git").is_dir():
            git_dirs.append(root / ".git")
        if len(lines) == 3 and all(Path(lines[2]) != d / "hooks" for d in git_dirs):
            hooks_path = Path(lines[2])
    extra: list[tuple[Path, str]] = []
    why = ("StateWise's {what}, named by the settings in effect: the agent the guard checks must not change "
           "what checks it")
    if store and "://" not in store:
        for suffix in ("", "-wal", "-shm", "-journal"):
            extra.append((Path(store + suffix), why.format(what="store")))
    if contract_path:
        extra.append((Path(contract_path), why.format(what="contract")))
    if config_path is not None:
        extra.append((config_path, why.format(what="project settings")))
    # Each folder itself (made, removed) and, as a pattern, everything in it: a file planted in
    # the cache (a compiled contract, a contract's digest, a session note) decides checks too.
    cache, runtime = str(_cache_root()), runtime_directory()
    for target in (cache, f"{glob.escape(cache)}/*"):
        extra.append((Path(target), "StateWise's cache (the compiled contracts and their digests, the observation "
                                    "index, session notes): what it holds decides how calls are checked"))
    for target in (runtime, f"{glob.escape(runtime)}/*"):
        extra.append((Path(target), "the warm worker's folder (its socket, lock and status): a process listening "
                                    "there answers the guard's checks, so the agent must not place or remove one"))
    return Places(home=home, config_home=config_home, repo_root=root, git_dirs=tuple(dict.fromkeys(git_dirs)),
                  hooks_path=hooks_path, extra=tuple(extra), secrets=secrets or SecretRules())


def _absolute(value: str, base: Path) -> Path:
    # os.path.expanduser, not Path.expanduser: like bash, it leaves `~name` of a user that does
    # not exist as it is (`~.mod.A` in a heredoc's text), where Path.expanduser raises.
    path = Path(os.path.expanduser(value))
    return path if path.is_absolute() else base / path


#: What lies directly in a git directory that moves a branch when written or deleted.
_GIT_REF_STORE = ("refs", "objects", "HEAD", "packed-refs", "logs", "ORIG_HEAD", "FETCH_HEAD")
#: What lies directly in a git directory that decides what a push there may do.
_GIT_PUSH_RULES = ("hooks", "config")


def _git_internals(path: Path, use: Use) -> Finding | None:
    """A write or delete inside a git directory (this repository's or another's, a local bare
    origin's above all) of its refs, objects, HEAD or packed-refs, which moves a branch with no
    push and no check, or of its hooks or config, which decide what a push there may do (a
    ``pre-receive`` hook, ``receive.denyNonFastForwards``)."""
    clean = Path(os.path.realpath(path))
    for directory in clean.parents:
        if (directory / "HEAD").is_file() and (directory / "objects").is_dir() and (directory / "refs").is_dir():
            inside = clean.relative_to(directory)
            head = inside.parts[0] if inside.parts else ""
            if head in _GIT_REF_STORE:
                return Finding(clean, clean, f"inside the git repository {directory}: a ref or object changed "
                                             "there moves a branch with no push and no check (a push does that "
                                             "with the remote's rules)", "deny", use, secret=False)
            if head in _GIT_PUSH_RULES:
                return Finding(clean, clean, f"inside the git repository {directory}: its hooks and settings "
                                             "decide what a push there may do (a pre-receive hook, "
                                             "receive.denyNonFastForwards)", "deny", use, secret=False)
            return None
    return None


def _cleaned(action: Action, workspace: Path) -> list[str]:
    """What a git clean would remove, as git itself lists it (``git clean -n`` with the same
    options: read-only); a clean that git cannot list is taken to remove its whole paths."""
    where = workspace / str(action.args.get("cwd") or ".")
    argv = ["clean", "-n"]
    if action.args.get("directories"):
        argv.append("-d")
    if action.args.get("only_ignored"):
        argv.append("-X")
    elif action.args.get("ignored"):
        argv.append("-x")
    paths = listed(action.args.get("paths"))
    listing = git_output(where, *argv, "--", *paths)
    if listing is None:
        return [str(where / p) for p in paths] or [str(where)]
    return [str(where / line.removeprefix("Would remove ").rstrip("/")) for line in listing.splitlines()
            if line.startswith("Would remove ")]


#: Operations that replace tracked files with another commit's (or the index's) version, and the
#: slot naming that commit.
_TREE_CHANGES = {"git.checkout": "branch", "git.switch": "branch", "git.reset_hard": "ref", "git.restore": "source",
                 "git.tree_update": "ref"}


def _tree_update_diff(compare: object, ref: str) -> list[str]:
    """``git diff --name-only`` arguments listing what a merge, pull, cherry-pick, revert or
    stash brings in (:meth:`statewise.commands.git._Git.git_tree_update`'s ``compare``)."""
    if compare == "merge_base":
        return [f"HEAD...{ref}"]
    if compare == "parent":
        return [f"{ref}^", ref]
    if compare == "range":
        start, _, end = ref.partition("...") if "..." in ref else ref.partition("..")
        return [start or "HEAD", end or "HEAD"]
    return [ref]  # worktree: the work tree against REF


def _replaced_by_git(action: Action, workspace: Path, places: Places) -> list[Finding]:
    """Self-protected files git tracks that a checkout, switch, hard reset or restore would
    replace (``git checkout feature`` bringing another ``.claude/settings.json`` or
    ``.statewise/config.toml``): git is asked which of them differ (``git diff --name-only``,
    read-only); what it cannot answer is not assumed to differ (a branch that does not exist
    changes nothing)."""
    if places.repo_root is None or action.args.get("create"):
        return []
    candidates = [str(target.relative_to(places.repo_root)) for target, directory, _ in self_targets(places)
                  if not directory and not any(c in str(target) for c in "*?[") and places.repo_root in target.parents]
    ref = action.args.get(_TREE_CHANGES[action.operation])
    # A checkout or switch carries local changes over (or refuses): what changes is HEAD's
    # version against the branch's. A reset or restore replaces the working tree's.
    since = ["HEAD"] if action.operation in ("git.checkout", "git.switch") else []
    if action.operation == "git.tree_update" and ref:
        argv = ["diff", "--name-only", *_tree_update_diff(action.args.get("compare"), str(ref))]
    else:
        argv = ["diff", "--name-only", *since, str(ref)] if ref else ["diff", "--name-only"]
    listing = git_output(places.repo_root, *argv, "--", *candidates)
    if not listing:
        return []
    restored = [Path(os.path.normpath(workspace / p)) for p in listed(action.args.get("paths"))]
    found = []
    for name in listing.splitlines():
        path = places.repo_root / name
        if action.operation == "git.restore" and not any(p == path or p in path.parents for p in restored):
            continue
        finding = check_path(path, "write", places)
        if finding is not None:
            version = (f"another version ({action.args.get('via')} {ref} changes it)"
                       if action.operation == "git.tree_update" else
                       f"its version {'at ' + str(ref) if ref else 'in the index'}")
            found.append(Finding(path, path, finding.why, "deny", "write", secret=False,
                                 said=f"this call replaces {path} with {version} (git tracks it), which "
                                      f"StateWise protects: {finding.why}"))
    return found


def _action_findings(actions: Iterable[Action], workspace: Path, places: Places) -> list[Finding]:
    found: list[Finding] = []
    for action in actions:
        if action.operation in _TREE_CHANGES:
            found += _replaced_by_git(action, workspace, places)
        use: Use | None = _USES.get(action.operation)
        paths: list[str] = []
        if use is not None:
            paths = [str(action.args[slot]) for slot in ("path", "link_path") if action.args.get(slot)]
            matched = _found_by_name(action, workspace) if use == "delete" else None
            if matched is not None:
                paths = matched  # find deletes what its name filter matches, not its whole root
        elif action.operation == "git.restore":
            use, paths = "write", listed(action.args.get("paths"))
        elif action.operation in ("git.clean", "git.stash_untracked"):  # stash -u/-a takes what clean would
            use, paths = "delete", _cleaned(action, workspace)
        elif action.args.get(_CHANGED_SLOTS.get(action.operation, "")):
            use, paths = "write", [str(action.args[_CHANGED_SLOTS[action.operation]])]
        if use is None:
            continue
        for value in paths:
            absolute = _absolute(value, workspace)
            finding = check_path(absolute, use, places)
            if finding is None and use in ("write", "delete"):
                finding = _git_internals(absolute, use)
            if finding is not None and action.operation == "git.stash_untracked":
                finding = dataclasses.replace(finding, verb="stashes away (out of the work tree until the stash "
                                                            "is applied)")
            if finding is not None and action.operation in _CHANGED_SLOTS:
                finding = dataclasses.replace(finding, said=(
                    f"{finding.reason()}; `{action.args.get('client') or 'its shell'}` can change the database it "
                    "opens, whatever the statements look like (a read-only session, `sqlite3 -readonly`, "
                    "or `statewise record list`, reads it)"))
            if finding is not None and finding.target not in {f.target for f in found}:
                found.append(finding)
    return found


#: find's predicates that only narrow what it reaches by name, type and depth.
_FIND_NARROWING = {"-type": 1, "-prune": 0, "-maxdepth": 1, "-mindepth": 1, "-o": 0, "-or": 0, "-a": 0, "-and": 0}
#: How many entries the walk for a find's name filter may look at before it gives up (and the
#: whole root is checked, as for any recursive delete).
_FIND_WALK_LIMIT = 20000


def _found_by_name(action: Action, workspace: Path) -> list[str] | None:
    """For ``find ROOT -name P [-type/-prune/-maxdepth ...] -delete`` (or ``-exec rm``): the
    entries under ROOT whose names match, as find would reach them, each with what lies under
    it (an ``rm -rf`` of a matched folder takes its contents). None when the filter holds any
    other predicate or the walk is too large: then the whole root counts, as before."""
    if action.args.get("via") != "find" or not action.args.get("path"):
        return None
    words = str(action.args.get("filter") or "").split()
    patterns: list[tuple[str, bool]] = []
    index = 0
    while index < len(words):
        word = words[index]
        if word in ("-name", "-iname") and index + 1 < len(words):
            patterns.append((words[index + 1], word == "-iname"))
            index += 2
        elif word in _FIND_NARROWING:
            index += 1 + _FIND_NARROWING[word]
        else:
            return None
    if not patterns:
        return None
    import fnmatch

    def named(name: str) -> bool:
        return any(fnmatch.fnmatchcase(name.lower() if folded else name, pattern.lower() if folded else pattern)
                   for pattern, folded in patterns)

    root = _absolute(str(action.args["path"]), workspace)
    reached: list[str] = []
    seen = 0
    for directory, folders, files in os.walk(root):
        inside = any(named(part) for part in Path(directory).relative_to(root).parts)
        for name in [*folders, *files]:
            seen += 1
            if seen > _FIND_WALK_LIMIT:
                return None
            if inside or named(name):
                reached.append(os.path.join(directory, name))
    return reached


def _segments(command: str) -> list[tuple[list[str], bool]] | None:
    """The simple commands' words, each with whether its output goes into a pipe."""
    # An unquoted newline ends a command as `;` does: read as blank space, it joined the next
    # line's command to this one's words, so `true<newline>statewise uninstall ...` was never
    # seen as a statewise command. Quoted newlines stay inside their word.
    lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|()<>\n")
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True
    lexer.commenters = ""
    segments: list[tuple[list[str], bool]] = [([], False)]
    try:
        for token in lexer:
            # shlex joins neighbouring punctuation into one token: `;` + newline, `|` + newline.
            joined = token.replace("\n", "") if "\n" in token and not token.strip(";&|()<>\n") else None
            if token in _SEPARATORS or joined is not None:
                if (joined if joined is not None else token) in ("|", "|&"):
                    segments[-1] = (segments[-1][0], True)
                segments.append(([], False))
            else:
                segments[-1][0].append(token)
    except ValueError:
        return None  # unbalanced quotes: the normalizer has already refused the command
    return [segment for segment in segments if segment[0]]


def _expand(piece: str, cwd: Path, home: Path) -> str:
    for name, value in (("HOME", str(home)), ("PWD", str(cwd))):
        piece = piece.replace("${" + name + "}", value).replace("$" + name, value)
    if piece.startswith("~"):
        piece = str(home) + piece[1:] if piece == "~" or piece.startswith("~/") else piece
    return piece


def _statewise_command(words: Sequence[str]) -> Finding | None:
    """`statewise record add ...`, `statewise uninstall ...` (also `python -m statewise`, a path
    to the program): a change to StateWise's records or installation the agent proposes, asked
    with what it would change (:data:`~statewise.protection.CHANGING_COMMANDS`)."""
    rest = list(words)
    if len(rest) >= 3 and os.path.basename(rest[0]).startswith("python") and rest[1:3] == ["-m", "statewise"]:
        rest = rest[2:]
    if not rest or os.path.basename(rest[0]) != "statewise":
        return None
    plain: list[str] = []
    skip = False
    for word in rest[1:]:
        if skip:
            skip = False
        elif word in ("--store", "--contract"):  # the CLI's global options that take a value
            skip = True
        elif not word.startswith("-"):
            plain.append(word)
    for length in (2, 1):
        name = " ".join(plain[:length])
        if name in CHANGING_COMMANDS:
            shown = shlex.join(rest)[:300]
            return Finding(Path("."), Path("."), CHANGING_COMMANDS[name], "ask", "write", secret=False,
                           said=f"this call runs `{shown}`, which {CHANGING_COMMANDS[name]}: a change to what "
                                "checks the agent is the developer's (a record the agent writes carries the "
                                "agent's authority, whatever flag it passes)")
    return None


def findings_for(actions: Sequence[Action], command: str | None, cwd: Path, places: Places, *,
                 named: Sequence[Named] = ()) -> list[Finding]:
    """Every protected target the call reaches: first what its actions write or delete, then
    what the programs it runs name and may do more than read (``named``), then, for a shell
    command, what its words name (files written through the environment, programs run from a
    file the command itself wrote, secrets read)."""
    workspace = cwd
    found = _action_findings(actions, workspace, places)
    found += [finding for finding in _named_findings(named, cwd, places)
              if finding.target not in {f.target for f in found}]
    if command is None:
        return found
    from statewise.commands.heredocs import data_heredoc_spans

    # A here-document that is only a file's content (`cat <<'EOF' > x.py`) names no file read.
    bodies = []
    for start, end in reversed(data_heredoc_spans(command)):
        bodies.append(command[start:end])
        command = command[:start] + command[end:]
    segments = _segments(command)
    if segments is None:
        return found
    # A file the command writes before running it may be any program; a file whose mode only
    # changes (`chmod +x run.sh && ./run.sh`) runs what it held, which the normalizer reads.
    written = {os.path.realpath(_absolute(str(a.args["path"]), workspace))
               for a in actions if a.operation == "fs.write" and a.args.get("path") and not a.args.get("attributes")}
    if bodies and written and _runs_written(segments, written, cwd, places.home):
        found += _written_program_findings(bodies, cwd, places, {f.target for f in found})
    # A word an action already writes or deletes was checked as that use (a new .env.local that
    # `cp .env.example .env.local` creates is not a read of a secret).
    seen = {finding.path for finding in found} | {
        Path(os.path.normpath(_absolute(str(a.args[slot]), workspace)))
        for a in actions if a.operation in _USES for slot in ("path", "link_path") if a.args.get(slot)}
    for segment, piped in segments:
        program_at = 0
        while program_at < len(segment) and _ASSIGNMENT.match(segment[program_at]):
            program_at += 1
        statewise = _statewise_command(segment[program_at:])
        if statewise is not None:
            found.append(statewise)
        if program_at < len(segment) and "/" in segment[program_at]:
            program = os.path.realpath(_absolute(_expand(segment[program_at], cwd, places.home), cwd))
            if program in written:
                found.append(Finding(Path(program), Path(program), "a file this same command writes before running "
                                     "it: StateWise cannot tell what that program does (a copy of rm runs as rm)",
                                     "deny", "write", secret=False))
        # What a search prints can be fed to a reader (`find -name "*.env" | xargs cat`): its
        # patterns are then still checked as names of files read.
        patterns = set() if piped or _defines_programs(command) else _pattern_operands(segment, program_at)
        if not piped and not _SED_REDEFINED.search(command):
            texts = _sed_text(segment, program_at)
            if texts is not None:  # a sed script's text is not names; the files it reads or writes are
                patterns |= texts[0]
                segment = [*segment, *texts[1]]
        created = _created_operands(segment, program_at)
        for index, token in enumerate(segment):
            if index in patterns:
                continue  # a pattern `find -name` or grep matches names or text with, not a file it reads
            if index in created:
                value = _expand(token, cwd, places.home)
                finding = check_path(Path(os.path.normpath(_absolute(value, cwd))), "write", places)
                if finding is not None:
                    found.append(finding)
                continue
            assignment = _ASSIGNMENT.match(token) if index < program_at or index == 0 else None
            if assignment and assignment.group(1) in FILE_WRITING_ENV and assignment.group(2):
                value = _expand(assignment.group(2), cwd, places.home)
                finding = check_path(_absolute(value, cwd), "write", places)
                if finding is not None:
                    found.append(finding)
                continue
            for piece in _PIECES.split(token):
                if not piece or (piece.startswith("-") and "/" not in piece and "." not in piece):
                    continue
                absolute = Path(os.path.normpath(_absolute(_expand(piece, cwd, places.home), cwd)))
                if absolute in seen:
                    continue
                finding = check_path(absolute, "read", places)
                if finding is not None:
                    seen.add(absolute)
                    found.append(finding)
    return found


#: Programs that run the file named as their first operand (`python3 plant.py`, `bash x.sh`).
_INTERPRETERS = frozenset({"python", "python3", "python2", "node", "nodejs", "deno", "bun", "perl", "ruby", "php",
                           "bash", "sh", "zsh", "dash", "ksh", "source", ".", "awk", "gawk"})


def _runs_written(segments: Sequence[tuple[list[str], bool]], written: set[str], cwd: Path, home: Path) -> bool:
    """Whether a simple command runs a file the command writes: as the program, or as the
    script operand of an interpreter (``cat > plant.py <<'EOF' ... EOF && python3 plant.py``)."""
    for segment, _ in segments:
        at = 0
        while at < len(segment) and (_ASSIGNMENT.match(segment[at]) or os.path.basename(segment[at]) in _PREFIXES):
            at += 1
        candidates = segment[at:at + 1]
        # Any interpreter word, not only the first: a line break is no separator to this scan.
        for index, word in enumerate(segment):
            program = os.path.basename(word)
            if program in _INTERPRETERS or re.fullmatch(r"python\d(\.\d+)?", program):
                candidates += [w for w in segment[index + 1:] if not w.startswith("-")][:1]
        for word in candidates:
            if os.path.realpath(_absolute(_expand(word, cwd, home), cwd)) in written:
                return True
    return False


def _written_program_findings(bodies: Sequence[str], cwd: Path, places: Places, known: set[Path]) -> list[Finding]:
    """StateWise's own files and folders named in the text of a file the command writes and then
    runs: a program StateWise has not read (it does not exist yet when the call is checked) that
    names a protected path is taken to write it."""
    found: list[Finding] = []
    for body in bodies:
        for piece in _PIECES.split(body):
            if not piece or not ("/" in piece or piece.startswith(("~", "."))):
                continue
            absolute = Path(os.path.normpath(_absolute(_expand(piece, cwd, places.home), cwd)))
            finding = check_path(absolute, "write", places)
            if finding is None or finding.secret or finding.target in known:
                continue
            known.add(finding.target)
            found.append(Finding(finding.path, finding.target, finding.why, "deny", "write", secret=False,
                                 said=f"this call writes a program that names {finding.path} and runs it: "
                                      "StateWise cannot read a program before it exists, and a program the guard "
                                      f"cannot model that names a protected path is taken to write it, which "
                                      f"StateWise protects: {finding.why}"))
    return found


def _self_roots(places: Places) -> tuple[str, ...]:
    """The self-protected targets as plain path strings, as written and resolved (a glob's
    folder for a glob), each also with a trailing ``/``: whatever check_path can match for a
    write is one of them or starts with one."""
    roots: set[str] = set()
    for target, _, _ in self_targets(places):
        text = str(target)
        cut = min((text.index(c) for c in "*?[" if c in text), default=None)
        if cut is not None:
            text = os.path.dirname(text[:cut])
        roots.update({os.path.normpath(text), os.path.realpath(text)})
    # Each as itself and as a folder (`str.startswith` takes the tuple at once).
    return (*roots, *(root.rstrip("/") + "/" for root in roots))


def _named_findings(named: Sequence[Named], cwd: Path, places: Places) -> list[Finding]:
    """StateWise's own files and folders named inside a program (``python -c``, ``node -e``, a
    heredoc to an interpreter, a workspace script) that StateWise cannot show only reads them
    (commands/named.py): a program the guard cannot model that names a protected path is taken
    to write it (``socket.bind`` in the warm worker's folder plants a process that answers the
    guard's checks). A string known only by its start names whatever starts so (the start of
    the worker's folder's own name, ``f"/tmp/statewise-{uid}"``). Secrets are left to the
    words' check (a read is asked, never denied)."""
    found: list[Finding] = []
    targets: list[tuple[str, str]] | None = None
    roots: tuple[str, ...] | None = None
    resolved: dict[str, str] = {}
    for name in named:
        base = Path(name.cwd) if name.cwd else cwd
        text = _expand(name.value, base, places.home)
        if name.prefix and not text.startswith(("/", "~")):
            continue  # a relative start (`f"{x}..."` aside) could be anything under the folder: its whole
            # value is checked when known
        # Plain strings first (pathlib costs more than the rest of this loop): most strings of a
        # program are nowhere near StateWise's files, and check_path (which resolves every
        # target anew) runs only for those that are, or lie inside, one of them.
        plain = os.path.normpath(os.path.join(str(base), os.path.expanduser(text)))
        if roots is None:
            roots = _self_roots(places)
        # Resolved through its folder (cached: a program's strings share folders).
        folder, leaf = os.path.split(plain)
        if folder not in resolved:
            resolved[folder] = os.path.realpath(folder)
        near = (plain, os.path.join(resolved[folder], leaf))
        if not name.prefix and not any(p in roots or p.startswith(roots) or "/.statewise" in p for p in near):
            continue
        absolute = Path(plain)
        finding = check_path(absolute, "write", places)
        if finding is not None and finding.secret:
            finding = None
        if finding is None and name.prefix:
            if targets is None:
                targets = [(str(target), why) for target, _, why in self_targets(places)
                           if not any(c in str(target) for c in "*?[")]
            start = str(_absolute(text, base))
            for target, why in targets:
                # The start reaches into the folder's own name, not only its parent's.
                if target.startswith(start) and len(start) > len(os.path.dirname(target)) + 1:
                    finding = Finding(Path(target), Path(target), why, "deny", "write", secret=False)
                    break
        if finding is None:
            continue
        if finding.target in {f.target for f in found}:
            continue
        found.append(Finding(finding.path, finding.target, finding.why, "deny", "write", secret=False,
                             said=f"this call runs {name.where}, which names {finding.path}"
                                  f"{'...' if name.prefix else ''} and StateWise cannot show it only reads it (a "
                                  "program the guard cannot model that names a protected path is taken to write "
                                  f"it), which StateWise protects: {finding.why}"))
    return found


def _defines_programs(command: str) -> bool:
    """Whether the command may run a program this scan cannot see: substitutions, functions,
    aliases, a changed PATH."""
    return bool(re.search(r"\$\(|`|\bPATH\b|\balias\b|\bfunction\b|\w\s*\(\s*\)", command))


# What could make `sed` run something else: a function or alias of that name, a changed PATH
# (a sed script's own text, `foo()` in the Python it inserts, is not one).
_SED_REDEFINED = re.compile(r"\bPATH\b|\balias\b|\bsed\s*\(\s*\)|\bfunction\s+sed\b")


def _sed_text(segment: Sequence[str], program_at: int) -> tuple[set[int], list[str]] | None:
    """For a ``sed`` segment: the indexes of its script's words (text such as ``c\\ self.env``
    names no file) and the files the script names (``r``/``w``), or None when it is no sed or
    its script is not read (commands/sed.py)."""
    from statewise.commands.sed import sed_text_operands

    at = _program_index(segment, program_at)
    if at >= len(segment) or os.path.basename(segment[at]) != "sed":
        return None
    found = sed_text_operands(segment[at + 1:])
    if found is None:
        return None
    return {at + 1 + index for index in found[0]}, list(found[1])


def _program_index(segment: Sequence[str], start: int) -> int:
    """The index of the program ``segment`` runs, from ``start`` on: past the words before a
    program (``sudo``, ``env``, ``nice`` ...), their options and assignments (``len(segment)``
    when none is left)."""
    at = start
    while at < len(segment) and (os.path.basename(segment[at]) in _PREFIXES or segment[at].startswith("-")
                                 or _ASSIGNMENT.match(segment[at])):
        at += 1
    return at


#: Programs that create the names they are given (a folder, a pipe, a device node): the
#: normalizer leaves them unguarded (creating a folder is ordinary work), but a folder or pipe
#: made where StateWise keeps a file (`mkdir .statewise/store.db-journal`) stops the store from
#: being written, so for self-protection each name they create is a write.
_CREATORS = frozenset({"mkdir", "mkfifo", "mknod"})
#: Their options that take the next word as a value (`mkdir -m 700 DIR`).
_CREATOR_VALUE_OPTIONS = frozenset({"-m", "--mode", "--context"})


def _created_operands(segment: Sequence[str], program_at: int) -> set[int]:
    """The indexes of the words ``mkdir``, ``mkfifo`` or ``mknod`` creates (past the words
    before a program, its options and their values); empty for any other program. mknod's
    type and numbers are taken as names too: they name nothing StateWise keeps."""
    at = _program_index(segment, program_at)
    if at >= len(segment) or os.path.basename(segment[at]) not in _CREATORS:
        return set()
    created: set[int] = set()
    skip = False
    options_end = False
    for index in range(at + 1, len(segment)):
        word = segment[index]
        if skip:
            skip = False
        elif word == "--" and not options_end:
            options_end = True
        elif word.startswith("-") and word != "-" and not options_end:
            skip = word in _CREATOR_VALUE_OPTIONS
        else:
            created.add(index)
    return created


def _pattern_operands(segment: Sequence[str], program_at: int) -> set[int]:
    """The indexes of the words of ``segment`` that are patterns, not files: the value of a
    name test of ``find`` (``-name "*.env"``), and a searcher's pattern (grep's first operand or
    ``-e``'s value, ``--include``'s glob). A searcher given ``-f FILE`` reads FILE, which stays
    a file; its other operands are the files it searches and stay files too."""
    at = _program_index(segment, program_at)
    if at >= len(segment):
        return set()
    program = os.path.basename(segment[at])
    words = list(segment)
    found: set[int] = set()
    if program not in _BUILTINS and "/" not in program and shutil.which(program) is None:
        # Not a program bash can find (a typing slip, `find.`): it runs nothing and reads nothing
        # (functions, aliases and PATH changes in the command are ruled out by the caller).
        return set(range(at, len(words)))
    if program == "find":
        if any(word in _FIND_ACTIONS for word in words[at + 1:]):
            return set()  # -exec cat {}: the names it matches are read
        found = {i + 1 for i in range(at + 1, len(words) - 1) if words[i] in _FIND_PATTERNS}
    elif program in _GREPS or (program == "git" and at + 1 < len(words) and words[at + 1] == "grep"):
        first = at + (2 if program == "git" else 1)
        given = False  # a pattern given by -e/-f: every operand is then a file
        operand_seen = False
        i = first
        while i < len(words):
            word = words[i]
            if word == "--":
                if not given and not operand_seen and i + 1 < len(words):
                    found.add(i + 1)
                break
            if word in _GREP_PATTERN_VALUES and i + 1 < len(words):
                found.add(i + 1)
                given = given or word in ("-e", "--regexp")
                i += 2
                continue
            if word in ("-f", "--file"):
                given = True
                i += 2
                continue
            if word in _GREP_OTHER_VALUES:
                i += 2
                continue
            if word in ("--include", "-g", "--glob", "--iglob"):
                i += 2  # its value names files searched: checked as a name of a file read
                continue
            if word.startswith(("--regexp=", "--exclude=", "--exclude-dir=")):
                found.add(i)
                given = given or word.startswith("--regexp=")
            elif word.startswith("-e") and len(word) > 2 and not word.startswith("--"):
                found.add(i)
                given = True
            elif word.startswith("--file=") or (word.startswith("-f") and len(word) > 2 and word[1] != "-"):
                given = True
            elif not word.startswith("-") and not given and not operand_seen:
                found.add(i)
                operand_seen = True
            i += 1
    return found


def read_findings(tool_input: Mapping[str, object], workspace: Path, places: Places) -> list[Finding]:
    """A read tool's file (``file_path``, ``absolute_path``, ``path``, or each of ``paths``) that
    is a secret: asked (or what the contract's ``secrets.read`` says)."""
    values: list[str] = []
    for name in ("file_path", "absolute_path", "path", "notebook_path", "filePath"):
        if isinstance(tool_input.get(name), str):
            values.append(str(tool_input[name]))
    values += listed(tool_input.get("paths"))
    found = []
    for value in values:
        finding = check_path(_absolute(_expand(value, workspace, places.home), workspace), "read", places)
        if finding is not None:
            found.append(finding)
    return found


def protected_paths_touched(paths: Sequence[str], protected: Sequence[str], workspace: Path,
                            repo_root: Path | None) -> list[str]:
    """The entries of ``protected`` (relative to the repository root, as ``fs.protected_paths``
    holds them) that ``paths`` (relative to the workspace) reach: the same path, a path inside
    one, or a directory holding one."""
    root = repo_root or workspace
    touched = []
    for entry in protected:
        target = Path(os.path.normpath(root / entry))
        for value in paths:
            path = Path(os.path.normpath(workspace / value))
            if path == target or target in path.parents or path in target.parents:
                touched.append(entry)
                break
    return touched
