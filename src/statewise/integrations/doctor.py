"""``statewise doctor``: find what would make an installed hook fail open, and say how to fix it.

Every check looks at what the client will really use (the settings file it reads, the wrapper the
command names, the program the wrapper runs, the trust settings that decide whether project hooks
load at all) and ends with a synthetic call run exactly as the client runs it: through a shell,
with the client's JSON on stdin. A check that fails where the client would then run a tool
unchecked is ``fatal``; ``statewise doctor`` exits non-zero when any is.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shlex
import shutil
import subprocess
import time
import tomllib
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from statewise.errors import InputError
from statewise.integrations.hook_files import SHELL_TOOLS
from statewise.integrations.install import (
    AGENTS,
    command_wrapper,
    installed_capture_gaps,
    our_entries,
    post_literals,
    project_root,
    settings_path,
    uncovered_observation_rules,
    wrapper_path,
)
from statewise.verifiers.base import CommandResult, run_command

__all__ = ["BLOCKED", "UNCHECKED", "Check", "diagnose", "doctor_summary", "installed_capture_gaps",
           "uncovered_observation_rules"]


@dataclass(frozen=True, slots=True)
class Check:
    """One finding: what was checked, whether it passed, and the fix when it did not."""

    agent: str
    name: str
    ok: bool
    detail: str
    fix: str = ""
    fatal: bool = True  # failing it makes `statewise doctor` exit 1
    effect: str = ""  # what a fatal failure does to the agent's calls (BLOCKED, UNCHECKED, or narrower)

    def __post_init__(self) -> None:
        if self.fatal and not self.ok and not self.effect:
            object.__setattr__(self, "effect", UNCHECKED)

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


#: The two effects of a fatal problem, as doctor words them: the hook stops every guarded call
#: (safe, but the agent cannot work), or the client runs tools without the hook's check.
BLOCKED = "every guarded call will be blocked"
UNCHECKED = "tools will run unchecked"


def _our_entry(groups: Any) -> dict[str, Any] | None:
    for group in groups if isinstance(groups, list) else []:
        for hook in group.get("hooks", []) if isinstance(group, dict) else []:
            if isinstance(hook, dict) and "statewise-hook" in str(hook.get("command", "")):
                return {"matcher": group.get("matcher", ""), **hook}
    return None


def _settings(agent: str, root: Path, user: bool) -> tuple[list[Check], dict[str, Any] | None]:
    path = settings_path(agent, project=root, user=user)
    fix = f"statewise install {agent}" + (" --user" if user else f" --project {shlex.quote(str(root))}")
    if not path.exists():
        return [Check(agent, "settings", False, f"{path} does not exist", fix)], None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        return [Check(agent, "settings", False, f"{path} does not parse: {error}",
                      f"repair the JSON, then run {fix}")], None
    spec = AGENTS[agent]
    entry = _our_entry(data.get("hooks", {}).get(spec.pre_event)) if isinstance(data, dict) else None
    if entry is None:
        legacy = "statewise hook" in json.dumps(data)
        detail = (f"{path} has an old bare `statewise hook` command, which fails open when statewise is not on "
                  "the agent's PATH" if legacy else f"{path} has no StateWise {spec.pre_event} hook")
        return [Check(agent, "settings", False, detail, fix)], None
    checks = [Check(agent, "settings", True, f"{path} parses and has the {spec.pre_event} hook")]
    wanted = set(spec.pre_matcher.split("|"))
    covered = set(str(entry.get("matcher", "")).split("|"))
    missing = sorted(wanted - covered)
    checks.append(Check(agent, "matcher", not missing,
                        f"the hook's matcher covers {', '.join(sorted(wanted))}" if not missing
                        else f"the matcher misses {', '.join(missing)}: those tools run unchecked", fix))
    checks.append(_waited_for(agent, spec.pre_event, entry, fix))
    hooks = data.get("hooks", {})
    for event in spec.post_events:
        posts = our_entries(hooks.get(event))
        unwaited = sorted({option for post in posts for option in _not_waited_for(post, _UNWAITED_POST)})
        if unwaited:
            checks.append(Check(agent, "post-tool capture", False,
                                f"the {event} hook has {', '.join(unwaited)}: the client does not "
                                "wait for it, so its note never reaches the model, and `claude -p` kills it "
                                "when the session ends (the last command's capture is lost)", fix, fatal=False))
        if posts and any(post_literals(post) is not None for post in posts):
            checks.append(_post_filters(agent, event, posts, root, entry, fix))
    if spec.prompt_event:
        prompt = _our_entry(hooks.get(spec.prompt_event))
        checks.append(Check(agent, "prompt check", prompt is not None and " prompt" in str(prompt.get("command")),
                            f"the {spec.prompt_event} hook gives the model the repaired state before it plans"
                            if prompt is not None else
                            f"{path} has no StateWise {spec.prompt_event} hook: an agent that stops on a wrong "
                            "record without calling a tool is never corrected", fix, fatal=False))
    if spec.stop_event:
        stop = _our_entry(hooks.get(spec.stop_event))
        checks.append(Check(agent, "stop check", stop is not None and " stop" in str(stop.get("command")),
                            f"the {spec.stop_event} hook continues a stop on a corrected fact once"
                            if stop is not None else
                            f"{path} has no StateWise {spec.stop_event} hook: a turn that ends on a wrong record "
                            "is never continued", fix, fatal=False))
    return checks, {"path": path, "entry": entry}


def _describe_filters(posts: list[dict[str, Any]]) -> str:
    """What the filtered ones among ``posts`` run for, in words."""
    rules = [str(post["if"]) for post in posts if post.get("if")]
    parts = [f"commands matching {', '.join(rules)}"] if rules else []
    for post in posts:
        literals = None if post.get("if") else post_literals(post)
        if literals is not None:
            parts.append(f"calls whose payload holds {' or '.join(literals)}" if literals
                         else "calls passing a shell filter StateWise did not write")
    return "; ".join(parts)


#: The ``--contract`` a wrapper passes: in the Python wrapper's ``main([...])`` call, or on the
#: shell wrapper's command line.
_WRAPPER_CONTRACT = re.compile(r"""^    main\(\[.*"--contract", (?P<python>'[^']*'|"[^"]*")"""
                               r"""|--contract (?P<shell>'[^']*'|\S+)""", re.MULTILINE)


def _named_by_wrapper(entry: dict[str, Any], root: Path, pattern: re.Pattern[str]) -> str | None:
    """The file the installed wrapper names with ``pattern`` (its ``--contract`` or ``--store``),
    found as the client finds the wrapper (a portable command searches from ``root`` up), or
    None when the wrapper names none (the settings in effect decide)."""
    wrapper, _portable = command_wrapper(str(entry.get("command", "")), root)
    try:
        text = wrapper.read_text(encoding="utf-8", errors="replace") if wrapper is not None else ""
    except OSError:
        text = ""
    found = pattern.search(text)
    if found is None:
        return None
    named = found.group("python")
    return str(ast.literal_eval(named)) if named else shlex.split(found.group("shell"))[0]


def _contract_in_effect(entry: dict[str, Any], root: Path) -> str | None:
    """The contract the hook uses in ``root``: the one its wrapper names, else the environment's
    or the project's config.toml one (:func:`statewise.settings.resolve_settings`), else None
    (the built-in)."""
    named = _named_by_wrapper(entry, root, _WRAPPER_CONTRACT)
    if named is not None:
        return named
    from statewise.settings import resolve_settings

    return resolve_settings(root).contract.value


def _post_filters(agent: str, event: str, posts: list[dict[str, Any]], root: Path, guard: dict[str, Any],
                  fix: str) -> Check:
    """Whether the post-tool hooks' filters (Claude Code's ``if`` rules, the other clients' shell
    pre-filter) still let a hook run for every command an observation rule of the contract in
    effect can match (a rule added since install, or a contract chosen since, would otherwise
    never see its commands' output)."""
    described = _describe_filters(posts)
    try:
        uncovered = uncovered_observation_rules([post_literals(post) for post in posts],
                                                _contract_in_effect(guard, root))
    except Exception as error:  # noqa: BLE001 - a contract that does not load is reported, not raised
        return Check(agent, "post-tool capture", False, f"the {event} hooks' filters cannot be checked against the "
                                                        f"contract: {error}", fix, fatal=False)
    if uncovered:
        return Check(agent, "post-tool capture", False,
                     f"the {event} hooks run only for {described}: no hook runs for the commands of the "
                     f"observation rules {', '.join(uncovered)}, so what their output reveals is never recorded",
                     fix, fatal=False)
    return Check(agent, "post-tool capture", True,
                 f"the {event} hooks' filters ({described or 'none'}) let one run for every command an "
                 "observation rule of the contract can match", fatal=False)


#: Hook options (Claude Code 2.1's command-hook schema) under which the client does not wait for
#: the hook before the tool runs, or does not run it on every matching call: ``async`` and
#: ``asyncRewake`` run it in the background (the tool runs meanwhile), ``once`` removes it after
#: its first run, ``if`` runs it only for calls matching a permission rule. StateWise never
#: writes them on the guard; on Claude Code's post-tool hooks it writes ``if`` filters, which
#: :func:`_post_filters` checks against the contract instead (as it does the shell pre-filter
#: of the other clients' post-tool commands).
_UNWAITED = ("async", "asyncRewake", "once", "if")
_UNWAITED_POST = ("async", "asyncRewake", "once")


def _not_waited_for(entry: dict[str, Any], options: tuple[str, ...] = _UNWAITED) -> list[str]:
    """The ``options`` set in ``entry`` that keep the client from waiting for the hook on every call."""
    return [f"{key}: {json.dumps(entry[key])}" for key in options
            if key in entry and entry[key] not in (False, None, "")]


def _waited_for(agent: str, event: str, entry: dict[str, Any], fix: str) -> Check:
    found = _not_waited_for(entry)
    if found:
        return Check(agent, "synchronous", False, f"the {event} hook has {', '.join(found)}: the client does not "
                                                  "wait for it on every call, so tools run unchecked", fix)
    return Check(agent, "synchronous", True, f"the client waits for the {event} hook on every matching call")


#: StateWise's own wrapper: the shell half naming the interpreter (and starting the watchdog);
#: an older StateWise wrote a Python file started by the kernel (``#!<python> -IS``), with no
#: alarm before Python runs.
_PYTHON_HEADER = re.compile(r"\A#!/bin/sh\n''':'\n(?:#.*\n)*python=(?P<watched>.+)\n"
                            r"|\A#!(?P<direct>\S+) -IS\n|\A#!/bin/sh\n''':'\nexec (?P<shell>.+) -IS \"\$0\" \"\$@\"\n")
_ALARM = re.compile(r"^alarm\((\d+)\)$", re.MULTILINE)
_PACKAGE = re.compile(r"^sys\.path\.append\((.+?)\)  #", re.MULTILINE)
_SLEEP = re.compile(r"^\s*sleep (\d+) &$", re.MULTILINE)
_PROGRAM = re.compile(r"^program=(.+)$", re.MULTILINE)


def _wrapper_parts(text: str) -> tuple[str, int, str | None, bool] | None:
    """(the program it runs, its deadline in seconds, the package directory it adds, whether a
    watchdog holds before that program starts) for a wrapper a StateWise wrote, else None. Two
    kinds: the wrapper for StateWise's own hook (shell and Python in one file; an older one was
    Python only, with no watchdog), and the shell wrapper for another program
    (``--executable``)."""
    header, alarm, package = _PYTHON_HEADER.match(text), _ALARM.search(text), _PACKAGE.search(text)
    if header is not None and alarm is not None and package is not None:
        named = header.group("watched") or header.group("shell")
        interpreter = header.group("direct") or (shlex.split(named) or [""])[0]
        watched = header.group("watched") is not None and _SLEEP.search(text) is not None
        try:
            directory = ast.literal_eval(package.group(1))
        except (ValueError, SyntaxError):
            return None
        return (interpreter, int(alarm.group(1)), directory, watched) if isinstance(directory, str) else None
    program, sleep = _PROGRAM.search(text), _SLEEP.search(text)
    if text.startswith("#!/bin/sh\n") and program is not None and sleep is not None:
        return shlex.split(program.group(1))[0], int(sleep.group(1)), None, True
    return None


def _wrapper(agent: str, entry: dict[str, Any], root: Path, user: bool) -> tuple[list[Check], str | None, int | None]:
    fix = f"statewise install {agent}" + (" --user" if user else f" --project {shlex.quote(str(root))}")
    command = str(entry.get("command", ""))
    found, portable = command_wrapper(command, root) if command else (None, False)
    blocked = "every guarded call is blocked"
    if portable and found is None:
        return ([Check(agent, "wrapper", False, f"the settings find the hook wrapper from the project's folder, and "
                                                f"there is none in {root} or above on this machine (a clone, or a "
                                                f"project where `statewise install` never ran here): {blocked}, "
                                                "each with a message saying what to install",
                       f"install StateWise on this machine, then run: {fix}")], None, None)
    wrapper = found or wrapper_path(project=root, user=user)
    if not wrapper.is_absolute():
        return ([Check(agent, "wrapper", False, f"the hook command names {wrapper}, not an absolute path", fix)],
                None, None)
    if not os.access(wrapper, os.X_OK):
        if not user and wrapper != wrapper_path(project=root):
            # An absolute path that is not this project's: written on another machine, or before
            # the project moved (StateWise once wrote absolute paths into the project's settings).
            return ([Check(agent, "wrapper", False, f"the settings name {wrapper}, which is not on this machine: "
                                                    "they were written on another machine or before the project "
                                                    f"moved; {blocked}",
                           f"{fix} (it writes portable commands: commit the settings it changes)")], None, None)
        return [Check(agent, "wrapper", False, f"{wrapper} is missing or not executable: {blocked}", fix)], None, None
    parts = _wrapper_parts(wrapper.read_text(encoding="utf-8", errors="replace"))
    if parts is None:
        return [Check(agent, "wrapper", False, f"{wrapper} is not a wrapper this StateWise wrote", fix)], None, None
    target, deadline, package, watched = parts
    checks = [Check(agent, "wrapper", True, f"{wrapper} is executable")]
    if not user and not portable:
        checks.append(Check(agent, "portable settings", False,
                            f"the project's settings name the wrapper by its absolute path {wrapper}: a teammate's "
                            f"clone or a moved folder gets {blocked}",
                            f"{fix} (it writes portable commands: commit the settings it changes)", fatal=False))
    if not watched:
        checks.append(Check(agent, "watchdog", False,
                            f"{wrapper} starts Python with no alarm before it runs (an older StateWise): a hook that "
                            "stalls before Python starts outlasts the client's timeout, and the client then runs "
                            "the tool unchecked", fix))
    if not os.access(target, os.X_OK):
        checks.append(Check(agent, "executable", False, f"the wrapper runs {target}, which is missing", fix))
        return checks, None, deadline
    if package is not None:
        # What the hook's slow path needs: StateWise from the wrapper's directory, and its
        # dependencies from the interpreter's site-packages (the fast path starts without them).
        probe = (f"import sys; sys.path.append({package!r}); import statewise.integrations.hook_entry; "
                 "import site; site.main(); import statewise.integrations.hooks")
        try:
            done = subprocess.run([target, "-I", "-S", "-c", probe], capture_output=True, text=True, timeout=60,
                                  stdin=subprocess.DEVNULL)
            importable = done.returncode == 0
            why = (done.stderr.strip().splitlines() or [""])[-1]
        except (OSError, subprocess.TimeoutExpired) as error:
            importable, why = False, str(error)
        if not importable:
            checks.append(Check(agent, "executable", False, f"{target} cannot import statewise and its dependencies "
                                                            f"from {package}: {why}", fix))
            return checks, None, deadline
    checks.append(Check(agent, "executable", True, f"the wrapper runs {target}, found by absolute path (the "
                                                   "agent's PATH does not matter)"))
    return checks, command, deadline


def _timeouts(agent: str, entry: dict[str, Any], deadline: int | None, root: Path) -> Check:
    spec = AGENTS[agent]
    raw = entry.get("timeout")
    unit = "ms" if spec.timeout_scale == 1000 else "s"
    fix = f"statewise install {agent} --project {shlex.quote(str(root))} [--timeout SECONDS]"
    if not isinstance(raw, (int, float)) or isinstance(raw, bool) or raw <= 0:
        return Check(agent, "timeout", False, "the hook has no timeout; the client's default applies", fix)
    seconds = raw / spec.timeout_scale
    if deadline is not None and seconds <= deadline:
        hint = " (Gemini reads milliseconds: 60 means 60 ms)" if spec.timeout_scale == 1000 else ""
        return Check(agent, "timeout", False, f"timeout {raw:g} {unit} = {seconds:g} s is not above the wrapper's "
                                              f"deadline of {deadline} s{hint}: the client kills the hook first and "
                                              "runs the tool", fix)
    return Check(agent, "timeout", True, f"timeout {raw:g} {unit} ({seconds:g} s) is above the wrapper's deadline "
                                         f"of {deadline} s")


def _codex_trust(root: Path, home: Path) -> list[Check]:
    """Whether Codex loads the project's ``.codex/hooks.json``: only under ``[projects."<root>"]``
    with ``trust_level = "trusted"`` for this exact directory (the git root). Codex 0.171 applies
    no entry of a parent directory, a symlinked spelling or a trailing slash (asked through
    ``codex app-server``'s ``hooks/list``), and an entry saying ``untrusted`` wins over any
    other way of trusting. The fix is checked before it is given: the config with it applied
    must parse and trust the project."""
    codex_home = Path(os.environ.get("CODEX_HOME") or home / ".codex")
    config = codex_home / "config.toml"
    try:
        text = config.read_text(encoding="utf-8") if config.exists() else ""
        data = tomllib.loads(text)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        return [Check("codex", "project trust", False, f"{config} does not parse: {error}",
                      f"repair the TOML of {config}: Codex reads none of it, the project trust included")]
    projects: dict[str, Any] = data["projects"] if isinstance(data.get("projects"), dict) else {}
    entry = projects.get(str(root))
    level = entry.get("trust_level") if isinstance(entry, dict) else None
    if level == "trusted":
        return [Check("codex", "project trust", True, f"{root} is trusted in {config}")]
    detail = f"{root} is not trusted in {config}: Codex skips project-local .codex/hooks.json"
    if level is not None:
        detail = (f"{root} is marked trust_level = {json.dumps(level)} in {config}: Codex skips project-local "
                  ".codex/hooks.json (and `codex exec --trust` refuses to change an explicit setting)")
    else:
        parents = [name for name, value in projects.items() if isinstance(value, dict)
                   and value.get("trust_level") == "trusted" and name != str(root)
                   and Path(name).resolve() in (root, *root.parents)]
        if parents:
            detail += (f"; the trusted entry {json.dumps(parents[0])} does not count: Codex trusts only the "
                       "exact project directory")
    return [Check("codex", "project trust", False, detail, _codex_trust_fix(config, text, root))]


def _codex_trust_fix(config: Path, text: str, root: Path) -> str:
    """The edit of ``config`` that makes Codex trust ``root``, proved on the text before it is given."""
    table = f"[projects.{json.dumps(str(root))}]"
    header = re.compile(r"^\s*\[\s*projects\s*\.\s*" + re.escape(json.dumps(str(root))) + r"\s*\]\s*(#.*)?$",
                        re.MULTILINE)
    found = header.search(text)
    if found is not None:
        # Change the table's own trust_level line, the only spelling a person edits by hand.
        body_end = re.compile(r"^\s*\[", re.MULTILINE).search(text, found.end())
        body = text[found.end():body_end.start() if body_end else len(text)]
        fixed_body, changed = re.subn(r"^(\s*trust_level\s*=\s*).*$", r'\1"trusted"', body, count=1,
                                      flags=re.MULTILINE)
        if not changed:
            fixed_body = '\ntrust_level = "trusted"' + body
        fixed = text[:found.end()] + fixed_body + text[found.end() + len(body):]
        fix = f'in {config}, under {table}, set trust_level = "trusted"'
    else:
        fixed = text + ("" if not text or text.endswith("\n") else "\n") + f'{table}\ntrust_level = "trusted"\n'
        fix = f'add to {config}:\n{table}\ntrust_level = "trusted"'
    try:
        works = tomllib.loads(fixed).get("projects", {}).get(str(root), {}).get("trust_level") == "trusted"
    except (tomllib.TOMLDecodeError, AttributeError):
        works = False
    if works:
        return fix
    return (f"edit {config} so that its projects table holds {json.dumps(str(root))} with trust_level = "
            f'"trusted" (the file does not take the table {table} as it is written)')


def _ask_codex_for_hooks(codex: str, root: Path, codex_home: Path) -> list[dict[str, Any]]:
    """The hooks Codex itself discovers for ``root``, with their trust status: the JSON-RPC
    ``hooks/list`` of ``codex app-server``, which Codex's own ``/hooks`` review uses."""
    env = {**os.environ, "CODEX_HOME": str(codex_home)}
    process = subprocess.Popen([codex, "app-server"], cwd=root, env=env, text=True, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert process.stdin is not None and process.stdout is not None
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"clientInfo": {"name": "statewise-doctor", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "hooks/list", "params": {"cwds": [str(root)]}},
    ]
    try:
        process.stdin.write("".join(json.dumps(message) + "\n" for message in messages))
        process.stdin.flush()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                break
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if message.get("id") == 2:
                entries = message.get("result", {}).get("data", [])
                return [hook for entry in entries for hook in entry.get("hooks", []) if isinstance(hook, dict)]
        raise OSError("codex app-server did not answer hooks/list")
    finally:
        process.kill()
        process.wait(timeout=10)


def _codex_hook_trust(root: Path, home: Path, project_trust: Check | None = None) -> list[Check]:
    codex_home = Path(os.environ.get("CODEX_HOME") or home / ".codex")
    codex = os.environ.get("STATEWISE_CODEX") or shutil.which("codex")
    if codex is None:
        return [Check("codex", "hook trust", False, "codex is not on PATH, so it cannot be asked whether it trusts "
                                                    "the hooks; Codex skips hooks it was never told to trust",
                      "review the hooks in Codex with /hooks", fatal=False)]
    try:
        hooks = _ask_codex_for_hooks(codex, root, codex_home)
    except (OSError, subprocess.SubprocessError) as error:
        return [Check("codex", "hook trust", False, f"asking {codex} app-server failed: {error}",
                      "review the hooks in Codex with /hooks", fatal=False)]
    ours = [hook for hook in hooks if "statewise-hook" in str(hook.get("command", ""))]
    if not ours and project_trust is not None and not project_trust.ok:
        # Installing again changes nothing: Codex reads no project hook until the project is trusted.
        return [Check("codex", "hook trust", False, "Codex itself finds no StateWise hook for this project: it "
                                                    "reads no project hook while the project is not trusted",
                      project_trust.fix)]
    if not ours:
        return [Check("codex", "hook trust", False, "Codex itself finds no StateWise hook for this project",
                      f"statewise install codex --project {shlex.quote(str(root))}")]
    untrusted = [hook for hook in ours if hook.get("trustStatus") != "trusted"]
    if not untrusted:
        return [Check("codex", "hook trust", True, f"Codex trusts the {len(ours)} StateWise hooks (asked codex "
                                                   "app-server)")]
    lines = "\n".join(f"[hooks.state.{json.dumps(hook.get('key', ''))}]\ntrusted_hash = "
                      f"{json.dumps(hook.get('currentHash', ''))}" for hook in untrusted)
    events = ", ".join(str(hook.get("eventName")) for hook in untrusted)
    return [Check("codex", "hook trust", False, f"Codex does not trust the StateWise hooks for {events}: it skips "
                                                "them silently", f"review them in Codex with /hooks, or add to "
                                                                 f"{codex_home / 'config.toml'}:\n{lines}")]


def _gemini_trust(root: Path, home: Path) -> list[Check]:
    path = home / ".gemini" / "trustedFolders.json"
    try:
        folders = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    except (OSError, ValueError) as error:
        return [Check("gemini", "trusted folder", False, f"{path} does not parse: {error}", "repair the JSON")]
    trusted = isinstance(folders, dict) and any(
        (value == "TRUST_FOLDER" and Path(name) == root) or (value in ("TRUST_FOLDER", "TRUST_PARENT")
                                                             and Path(name) in root.parents)
        for name, value in folders.items())
    fix = f'add "{root}": "TRUST_FOLDER" to {path} (or trust the folder when Gemini CLI asks)'
    return [Check("gemini", "trusted folder", trusted,
                  f"{root} is a trusted folder" if trusted else
                  f"{root} is not a trusted folder: Gemini CLI does not run its project hooks", fix)]


def _round_trip(agent: str, command: str, root: Path) -> list[Check]:
    tool = min(SHELL_TOOLS[agent])  # the one definition of each client's shell tools; Codex: "Bash"
    event = AGENTS[agent].pre_event
    harmless = json.dumps({"cwd": str(root), "hook_event_name": event, "tool_name": tool, "session_id": "doctor",
                           "tool_input": {"command": "git status"}})
    unreadable = "this is not the JSON a client sends"  # must be blocked, and touches no store
    checks = []
    variable = AGENTS[agent].project_dir_var  # as the client runs it: its project folder variable set
    env = {**os.environ, **({variable: str(root)} if variable else {})}
    for label, payload, want_block in (("a harmless call", harmless, False), ("an unreadable call", unreadable, True)):
        started = time.monotonic()
        try:
            done = subprocess.run(["/bin/sh", "-c", command], input=payload, capture_output=True, text=True,
                                  cwd=root, timeout=120, env=env)
        except subprocess.TimeoutExpired:
            checks.append(Check(agent, "round trip", False, f"{label} did not come back within 120 s",
                                "run `statewise doctor` again; see the hook log"))
            continue
        elapsed = (time.monotonic() - started) * 1000
        blocked = done.returncode == 2 or '"deny"' in done.stdout
        ok = blocked == want_block and (done.returncode in (0, 2))
        what = "blocked" if blocked else f"passed (exit {done.returncode})"
        checks.append(Check(agent, "round trip", ok, f"{label} through the installed command: {what} in "
                                                     f"{elapsed:.0f} ms",
                            "" if ok else f"stderr: {done.stderr.strip()[:300]}",
                            effect=BLOCKED if blocked else UNCHECKED))
    return checks


def diagnose(agent: str, *, project: str | Path | None = None, user: bool = False,
             home: str | Path | None = None) -> list[Check]:
    """Every check for one agent's installation, in the order a user would fix them."""
    from statewise.workspace import git_answers_kept

    with git_answers_kept():  # one answer per git question: a git that hangs costs its timeout once
        return _diagnose(agent, project=project, user=user, home=home)


def _diagnose(agent: str, *, project: str | Path | None, user: bool, home: str | Path | None) -> list[Check]:
    root = project_root(project)
    home_dir = Path(home) if home is not None else Path.home()
    checks, found = _settings(agent, root, user)
    if found is None:
        return checks
    more, _, deadline = _wrapper(agent, found["entry"], root, user)
    checks += more
    checks.append(_timeouts(agent, found["entry"], deadline, root))
    if agent == "codex" and not user:
        project_trust = _codex_trust(root, home_dir)
        checks += project_trust
        checks += _codex_hook_trust(root, home_dir, project_trust[0])
    if agent == "gemini" and not user:
        checks += _gemini_trust(root, home_dir)
    trips = _round_trip(agent, str(found["entry"].get("command", "")), root)
    checks = _worded_by_effect(checks, trips) + trips
    checks.append(_warm_worker(agent))
    checks += _project_settings(agent, root)
    checks += _store_health(agent, found["entry"], root)
    checks += _verifier_programs(agent, found["entry"], root)
    return checks


def doctor_summary(failed: list[Check]) -> str:
    """The last line of ``statewise doctor``: how many problems, grouped by what they do."""
    if not failed:
        return "no problem found"
    counts: dict[str, int] = {}
    for check in failed:
        counts[check.effect] = counts.get(check.effect, 0) + 1
    parts = [f"{count} problem(s): {effect}" for effect, count in counts.items()]
    return "; ".join(parts)


def _project_settings(agent: str, root: Path) -> list[Check]:
    """Whether the hook honours every setting of the project's config.toml: a weakening one
    (on-pass = allow, another store) in a file the developer has not approved is ignored
    (statewise.settings.hook_settings). Not fatal: the hook is then stricter, never looser."""
    from statewise.settings import hook_settings

    try:
        settings = hook_settings(root)
    except InputError as error:
        return [Check(agent, "project settings", False, f"{error}; every guarded call is denied until it is fixed",
                      "repair .statewise/config.toml")]
    if settings.config_path is None:
        return []
    if settings.warnings:
        return [Check(agent, "project settings", False, " ".join(settings.warnings),
                      f"review {settings.config_path}, then run: statewise config approve", fatal=False)]
    return [Check(agent, "project settings", True, f"the hook uses every setting of {settings.config_path}")]


def _warm_worker(agent: str) -> Check:
    """Whether guarded calls can be answered by a warm worker (statewise.integrations.warm); a
    speed matter, never a safety one: without a worker the hook checks each call itself."""
    import os

    from statewise.integrations import warm

    if os.environ.get("STATEWISE_NO_WARM"):
        return Check(agent, "warm worker", True, "turned off (STATEWISE_NO_WARM): each guarded call imports the "
                                                 "guard itself, about four times slower", fatal=False)
    directory = warm.runtime_directory()
    if os.path.lexists(directory) and not warm.private_directory(directory):
        return Check(agent, "warm worker", False,
                     f"{directory} is not a directory of this user that no one else can enter: the hook never "
                     "uses a worker there, so each guarded call imports the guard itself (about four times slower)",
                     f"remove {directory} (the next guarded call makes it again, private), or set "
                     "STATEWISE_RUNTIME_DIR to a private folder", fatal=False)
    workers = warm.running_workers(directory)
    if not workers:
        return Check(agent, "warm worker", True, f"none running in {directory}: the next session start or guarded "
                                                 "call starts one", fatal=False)
    current = warm.code_stamp()
    serves = {True: "this code", False: "other code: it exits within a minute"}
    described = ", ".join(f"pid {worker['pid']} ({worker['served']} calls, {serves[worker.get('stamp') == current]})"
                          for worker in workers)
    return Check(agent, "warm worker", True, f"{len(workers)} running in {directory}: {described}; a worker "
                                             "serves one version of the code, for every session, until 8 hours "
                                             "without a call", fatal=False)


# --- what every guarded call depends on: the store and the verifiers' programs ---------------


def _worded_by_effect(checks: list[Check], trips: list[Check]) -> list[Check]:
    """The install checks worded by what the installed command really does: a wrapper or an
    interpreter that is gone (a deleted virtual environment) makes the settings command's
    ``|| exit 2`` block every call, which the harmless round trip shows; only where that call
    passes do the tools run unchecked."""
    harmless = trips[0] if trips else None
    blocks = harmless is not None and harmless.detail.split(": ", 1)[-1].startswith("blocked")
    effect = BLOCKED if blocks else UNCHECKED
    return [replace(check, effect=effect) if check.name in ("wrapper", "executable") and not check.ok else check
            for check in checks]


#: A wrapper's ``--store``: in the Python wrapper's ``main([...])`` call, or on the shell wrapper's line.
_WRAPPER_STORE = re.compile(r"""^    main\(\[.*"--store", (?P<python>'[^']*'|"[^"]*")"""
                            r"""|--store (?P<shell>'[^']*'|\S+)""", re.MULTILINE)


def _store_in_effect(entry: dict[str, Any], root: Path) -> str:
    """The store the hook opens for a call in ``root``: the wrapper's ``--store``, else the
    environment's or config.toml's (as :func:`statewise.settings.hook_settings` resolves it),
    else the default beside the repository."""
    named = _named_by_wrapper(entry, root, _WRAPPER_STORE)
    if named is not None:
        return named
    from statewise.settings import hook_settings
    from statewise.store import default_location

    try:
        chosen = hook_settings(root).store.value
    except InputError:
        chosen = None  # a broken config.toml is its own finding (project settings)
    return chosen or default_location(root)


def _loaded_contract(entry: dict[str, Any], root: Path) -> Any:
    """The contract the hook uses here, or None when it does not load (its own finding)."""
    from statewise.contract import builtin_contract, load_contract

    try:
        path = _contract_in_effect(entry, root)
        return load_contract(path) if path else builtin_contract()
    except Exception:  # noqa: BLE001 - a contract that does not load is reported by the post-tool check
        return None


#: How long doctor waits for the store's write lock. A writer holds it for milliseconds; the
#: hook's own writer waits 10 s, then the call is blocked at the hook's deadline.
_LOCK_WAIT_SECONDS = 3.0


def _store_health(agent: str, entry: dict[str, Any], root: Path) -> list[Check]:
    """Open the store exactly as the hook does (refusing a corrupt or tampered one), check its
    invariants as ``statewise store check`` does, and, for SQLite, take and release its write
    lock: a store the hook cannot open or write blocks every guarded call."""
    from statewise.errors import SchemaVersionError, StoreError
    from statewise.store import open_store
    from statewise.store.check import check_store

    location = _store_in_effect(entry, root)
    scheme, sep, rest = location.partition("://")
    path = Path(rest if scheme == "sqlite" else location) if not sep or scheme == "sqlite" else None
    if path is not None and not path.exists():
        return [Check(agent, "store", True, f"no store at {path} yet: the first guarded call creates it")]
    aside = f"mv {shlex.quote(str(path))} {shlex.quote(str(path) + '.broken')}" if path is not None else ""
    try:
        with open_store(location, key_schema=_loaded_contract(entry, root)) as store:
            report = check_store(store)
    except SchemaVersionError as error:
        return [Check(agent, "store", False, f"the hook cannot open the store: {error}",
                      "upgrade StateWise to the version that wrote the store", effect=BLOCKED)]
    except StoreError as error:
        fix = (f"restore {path} from a backup, or move it aside ({aside}) so the next guarded call starts an "
               "empty store (its records are then re-learned)") if path is not None else "make the database reachable"
        return [Check(agent, "store", False, f"the hook cannot open the store: {error}", fix, effect=BLOCKED)]
    checks = [Check(agent, "store", True, f"the hook opens {location} ({report.records} records)")]
    if not report.ok:
        codes = ", ".join(f"{code} ({count})" for code, count in sorted(report.by_code().items()))
        checks.append(Check(agent, "store invariants", False,
                            f"{location} breaks {len(report.violations)} of its invariants: {codes}; the hook reads "
                            "its records as they are, so a check may rest on a wrong one",
                            "statewise store check   (lists each violation)", fatal=False))
    if path is not None and _write_lock_held(path):
        checks.append(Check(agent, "store lock", False,
                            f"another process has held {path}'s write lock for over {_LOCK_WAIT_SECONDS:g} s: a "
                            "guarded call that records what it verified waits for it, then is blocked at the "
                            "hook's deadline",
                            f"end the process holding it (fuser {shlex.quote(str(path))}), e.g. an open "
                            "sqlite3 shell in a transaction", effect=BLOCKED))
    return checks


def _write_lock_held(path: Path) -> bool:
    """Whether another connection holds ``path``'s write lock past the wait (taken and released
    at once otherwise; nothing is written, and a missing file is never created)."""
    import sqlite3

    try:
        connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=rw", uri=True, timeout=_LOCK_WAIT_SECONDS,
                                     isolation_level=None)
    except sqlite3.Error:
        return False  # the open above already said what is wrong with the file
    try:
        connection.execute("BEGIN IMMEDIATE")
        connection.execute("ROLLBACK")
        return False
    except sqlite3.OperationalError as error:
        return "locked" in str(error) or "busy" in str(error)
    finally:
        connection.close()


#: The programs behind the built-in adapters: ``git.*`` runs git, ``npm.*`` npm, ``node.*`` node.
_ADAPTER_PROGRAMS = {"git": "git", "npm": "npm", "node": "node"}
#: The program behind the task's scope: which repository and branch a call is in.
_SCOPE_PROGRAM = "git"
_SCOPE_TIMEOUT = 5.0  # statewise.workspace's git calls


def _verifier_programs(agent: str, entry: dict[str, Any], root: Path) -> list[Check]:
    """Run each program the contract's verifiers run (and git, which tells the task's scope) as
    the hook would: from PATH, in the project, with the smallest timeout among its bindings. A
    missing or hanging program is reported with what it does to the calls that need it."""
    contract = _loaded_contract(entry, root)
    users: dict[str, tuple[float, set[str]]] = {_SCOPE_PROGRAM: (_SCOPE_TIMEOUT, {"the task's scope"})}
    if contract is not None:
        bindings = [(key, contract.verifier_for(key)) for key in contract.state]
        for key, spec in bindings:
            if spec is None:
                continue
            program = (spec.argv[0] if spec.adapter == "command" and spec.argv
                       else _ADAPTER_PROGRAMS.get(spec.adapter.partition(".")[0]))
            if program is None or "/" in program or "{" in program:
                continue
            timeout, keys = users.get(program, (float(spec.timeout), set()))
            users[program] = (min(timeout, float(spec.timeout)), keys | {key})
    checks = []
    for program, (timeout, keys) in sorted(users.items()):
        needed = ", ".join(sorted(keys)[:4]) + (f" and {len(keys) - 4} more" if len(keys) > 4 else "")
        if shutil.which(program) is None:
            if program == _SCOPE_PROGRAM:
                checks.append(Check(agent, f"program {program}", False,
                                    f"{program} is not on PATH: in a repository the hook cannot tell a call's "
                                    "repository, so it cannot apply the records scoped to it and denies the call",
                                    f"install {program}, or put it on the PATH the agent client runs with",
                                    effect=BLOCKED))
            else:
                checks.append(Check(agent, f"program {program}", False,
                                    f"{program} is not on PATH: {needed} cannot be verified, so a call that "
                                    "needs them is asked or blocked", f"install {program} if this project uses it",
                                    fatal=False))
            continue
        if program not in (_SCOPE_PROGRAM, *_ADAPTER_PROGRAMS.values()):
            checks.append(Check(agent, f"program {program}", True, f"{program} is on PATH (for {needed})",
                                fatal=False))
            continue
        done = run_command([program, "--version"], cwd=root, timeout=timeout, env=os.environ)
        if done.ok:
            checks.append(Check(agent, f"program {program}", True,
                                f"`{program} --version` answered in {done.elapsed * 1000:.0f} ms (timeout "
                                f"{timeout:g} s, for {needed})"))
            continue
        if program == _SCOPE_PROGRAM:
            effect = BLOCKED
            detail = (f"`{program} --version` {_failure(done)}: the hook cannot tell a call's repository, so it "
                      "cannot apply the records scoped to it (protected paths and branches) and denies the call, "
                      "after waiting for git; a call that needs a git verifier waits until the hook's deadline")
        else:
            effect = f"guarded calls that need {needed} will be blocked"
            detail = f"`{program} --version` {_failure(done)}: every verifier that runs it is unavailable"
        checks.append(Check(agent, f"program {program}", False, detail,
                            f"find why `{program} --version` does not answer in {shutil.which(program)} (a "
                            "wrapper script, a network mount, a credential prompt)", effect=effect))
    return checks


def _failure(done: CommandResult) -> str:
    """Why ``done`` gave no answer, without repeating the program's name."""
    return done.describe_failure().removeprefix(f"{done.argv[0]} ")
