"""The real agent clients, installed from npm at pinned versions and driven offline.

:func:`installed_clients` installs ``@anthropic-ai/claude-code``, ``@openai/codex`` and
``@google/gemini-cli`` at the versions in :data:`PINS` into a cache folder (never globally):
``$STATEWISE_E2E_CACHE``, else ``~/.cache/statewise-e2e/<hash of the pins>``. An install that
is already there with the right versions is reused.

:class:`Workspace` is one run's world: a real git repository whose bare ``origin`` refuses
pushes to ``main`` (StateWise's shipped pre-receive hook), the project's StateWise store, and a
private ``HOME`` (and ``CODEX_HOME``) so nothing reads or writes a real user's settings. Each
client is pointed at a :class:`~tests.e2e.model_server.ModelServer` on 127.0.0.1 and run
non-interactively; :meth:`Workspace.run` returns what it printed and what the server saw.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from statewise.scopes import normalize_repo_identity
from tests.e2e.model_server import FINAL_TEXT, ModelServer, Step

__all__ = ["CLIENTS", "PINS", "ClientRun", "ClientSpec", "InstallProblem", "Workspace", "cache_dir", "clients_cached",
           "installed_clients",
           "settings_commands", "statewise_executable"]

#: The client versions the suite is pinned to (npm package -> version).
PINS: dict[str, str] = {
    "@anthropic-ai/claude-code": "2.1.197",
    "@openai/codex": "0.171.0",
    "@google/gemini-cli": "0.61.0",
}

#: How long one client run may take before the test fails (a hung client is a failure).
RUN_TIMEOUT = 180


@dataclass(frozen=True, slots=True)
class ClientSpec:
    """One client: its npm package, its binary, and the StateWise agent name it installs as."""

    name: str  # claude, codex, gemini
    agent: str  # the statewise install/hook agent name
    package: str
    binary: str
    settings_file: str  # relative to the project


CLIENTS: dict[str, ClientSpec] = {
    "claude": ClientSpec("claude", "claude-code", "@anthropic-ai/claude-code", "claude", ".claude/settings.json"),
    "codex": ClientSpec("codex", "codex", "@openai/codex", "codex", ".codex/hooks.json"),
    "gemini": ClientSpec("gemini", "gemini", "@google/gemini-cli", "gemini", ".gemini/settings.json"),
}


class InstallProblem(RuntimeError):
    """The clients could not be installed; ``missing_tool`` when node or npm is absent,
    ``not_allowed`` when they are absent and this run may not download them."""

    def __init__(self, message: str, *, missing_tool: bool = False, not_allowed: bool = False) -> None:
        super().__init__(message)
        self.missing_tool = missing_tool
        self.not_allowed = not_allowed


def cache_dir() -> Path:
    """Where the pinned clients live."""
    configured = os.environ.get("STATEWISE_E2E_CACHE")
    if configured:
        return Path(configured).expanduser()
    digest = hashlib.sha256(json.dumps(PINS, sort_keys=True).encode()).hexdigest()[:16]
    return Path.home() / ".cache" / "statewise-e2e" / digest


def _installed_version(prefix: Path, package: str) -> str | None:
    manifest = prefix / "node_modules" / package / "package.json"
    try:
        return json.loads(manifest.read_text(encoding="utf-8")).get("version")
    except (OSError, ValueError):
        return None


def _complete(prefix: Path) -> bool:
    return all(_installed_version(prefix, package) == version for package, version in PINS.items()) and all(
        os.access(prefix / "node_modules" / ".bin" / spec.binary, os.X_OK) for spec in CLIENTS.values())


def clients_cached() -> bool:
    """Whether the cache already holds every pinned client (nothing to download)."""
    return _complete(cache_dir())


def installed_clients(*, may_install: bool = True) -> Path:
    """The ``node_modules/.bin`` folder holding the pinned clients, installing them if needed
    (and ``may_install``; else :class:`InstallProblem` with ``not_allowed`` set when they are not
    there yet).

    Raises :class:`InstallProblem` (``missing_tool`` set when node or npm is not on PATH)."""
    if not may_install and not _complete(cache_dir()):
        raise InstallProblem(f"the pinned clients are not in {cache_dir()} and installing them downloads about "
                             "760 MB; set STATEWISE_E2E=1 to install them (CI always does)", not_allowed=True)
    missing = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    if missing:
        raise InstallProblem(f"{' and '.join(missing)} not found on PATH; the real-client tests need Node.js "
                             "and npm to install the pinned clients", missing_tool=True)
    prefix = cache_dir()
    prefix.mkdir(parents=True, exist_ok=True)
    # One install at a time per cache folder: parallel test sessions must not interleave npm runs.
    with open(prefix / ".install.lock", "w", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not _complete(prefix):
            command = ["npm", "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--no-save",
                       "--loglevel=error", *(f"{package}@{version}" for package, version in PINS.items())]
            try:
                done = subprocess.run(command, capture_output=True, text=True, timeout=900,
                                      stdin=subprocess.DEVNULL)
            except subprocess.TimeoutExpired:
                raise InstallProblem(f"`{' '.join(command)}` did not finish in 900 s") from None
            if done.returncode != 0 or not _complete(prefix):
                tail = (done.stderr or done.stdout).strip()[-2000:]
                raise InstallProblem(f"`{' '.join(command)}` failed (exit {done.returncode}): {tail}")
    return prefix / "node_modules" / ".bin"


def statewise_executable() -> Path:
    """The ``statewise`` console script of the interpreter running the tests."""
    beside = Path(sys.executable).parent / "statewise"
    if beside.exists():
        return beside
    found = shutil.which("statewise")
    if found is None:
        raise RuntimeError("the statewise console script is not installed (pip install -e .)")
    return Path(found)


# --- one run's world --------------------------------------------------------------------------


@dataclass
class ClientRun:
    """One non-interactive client run: its exit status, output, wall time and the model's view."""

    client: str
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    server: ModelServer

    def tool_results(self) -> list[str]:
        """What the model received for each tool call, in order."""
        return self.server.tool_results()

    def offered_tools(self) -> list[str]:
        return self.server.offered_tools()

    def describe(self) -> str:
        """Everything a failing assertion should show."""
        return (f"{self.client} exited {self.returncode} after {self.seconds:.1f}s\n--- argv: {self.argv}\n"
                f"--- stdout:\n{self.stdout[-4000:]}\n--- stderr:\n{self.stderr[-4000:]}\n"
                f"--- tool results the model saw:\n{json.dumps(self.tool_results(), indent=1)[-4000:]}")


@dataclass
class Workspace:
    """A repository with a protected bare origin, its StateWise store, and a private HOME."""

    root: Path
    work: Path
    origin: Path
    home: Path
    bin: Path  # the clients' node_modules/.bin
    extra_path: list[Path] = field(default_factory=list)
    _codex_trust: dict[str, str] = field(default_factory=dict)  # hook key -> reviewed hash

    # --- environment ---------------------------------------------------------------------

    @property
    def repo(self) -> str:
        """The repository identity StateWise derives from the origin URL."""
        return normalize_repo_identity(str(self.origin))

    def remote_main(self) -> str:
        """The commit the bare origin holds for main."""
        return subprocess.run(["git", "rev-parse", "refs/heads/main"], cwd=self.origin, capture_output=True,
                              text=True, timeout=30, check=True).stdout.strip()

    @property
    def codex_home(self) -> Path:
        return self.home / ".codex"

    def base_env(self) -> dict[str, str]:
        """A clean environment: nothing of the caller's HOME, store or contract leaks in."""
        node = shutil.which("node")
        # The clients are on the developer's PATH (statewise doctor asks `codex` about trust).
        path = [*map(str, self.extra_path), str(statewise_executable().parent), str(self.bin)]
        if node:
            path.append(str(Path(node).parent))
        path += ["/usr/local/bin", "/usr/bin", "/bin"]
        env = {
            "PATH": os.pathsep.join(dict.fromkeys(path)),
            "HOME": str(self.home),
            "CODEX_HOME": str(self.codex_home),
            "LANG": "C.UTF-8",
            "TERM": "dumb",
            "NO_COLOR": "1",
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_AUTHOR_NAME": "E2E Dev", "GIT_AUTHOR_EMAIL": "dev@statewise.invalid",
            "GIT_COMMITTER_NAME": "E2E Dev", "GIT_COMMITTER_EMAIL": "dev@statewise.invalid",
            "TMPDIR": str(self.root / "tmp"),
        }
        # The hook's warm workers listen in the test run's own folder (tests/conftest.py), which
        # is removed at the end of the run: each worker a client's hook started then exits.
        if os.environ.get("STATEWISE_RUNTIME_DIR"):
            env["STATEWISE_RUNTIME_DIR"] = os.environ["STATEWISE_RUNTIME_DIR"]
        return env

    def statewise(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """Run the statewise CLI in the project, as the developer would."""
        done = subprocess.run([str(statewise_executable()), *args], cwd=self.work, env=self.base_env(),
                              capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
        if check and done.returncode != 0:
            raise AssertionError(f"statewise {' '.join(args)} exited {done.returncode}: {done.stderr}{done.stdout}")
        return done

    def statewise_json(self, *args: str) -> Any:
        return json.loads(self.statewise(*args, "--json").stdout)

    # --- installing the hooks ------------------------------------------------------------

    def install(self, client: str, *options: str, verify_trust: bool = False) -> Path:
        """``statewise install <agent> --project <repo>`` through the CLI, then whatever the
        client needs before it runs project hooks (trust), as a developer would set it up."""
        spec = CLIENTS[client]
        self.statewise("install", spec.agent, "--project", str(self.work), *options)
        settings = self.work / spec.settings_file
        assert settings.exists(), f"statewise install wrote no {settings}"
        if client == "codex":
            self._trust_codex_hooks(verify=verify_trust)
        return settings

    def _codex_config(self, server: ModelServer | None) -> str:
        """CODEX_HOME/config.toml: the loopback provider, the trusted project, reviewed hooks."""
        url = server.url if server else "http://127.0.0.1:9"
        lines = [
            'model = "gpt-5.5"',  # a slug Codex knows, so its tool set includes apply_patch
            'model_provider = "e2e"',
            'approval_policy = "never"',
            # Full access so that only StateWise can stop a command (the git push writes into
            # origin.git, outside the workspace a sandbox would allow).
            'sandbox_mode = "danger-full-access"',
            "check_for_update_on_startup = false",
            "",
            "[model_providers.e2e]",
            'name = "e2e scripted model"',
            f'base_url = "{url}/v1"',
            'wire_api = "responses"',
            'env_key = "E2E_MODEL_KEY"',
            "request_max_retries = 0",
            "stream_max_retries = 0",
            "",
            f"[projects.{json.dumps(str(self.work))}]",
            'trust_level = "trusted"',
            "",
        ]
        for key, digest in sorted(self._codex_trust.items()):
            lines += [f"[hooks.state.{json.dumps(key)}]", f"trusted_hash = {json.dumps(digest)}", ""]
        return "\n".join(lines)

    def _write_codex_config(self, server: ModelServer | None = None) -> None:
        self.codex_home.mkdir(parents=True, exist_ok=True)
        text = self._codex_config(server)
        tomllib.loads(text)  # a typo here would make Codex ignore the file
        (self.codex_home / "config.toml").write_text(text, encoding="utf-8")

    def codex_hooks(self) -> list[dict[str, Any]]:
        """The hooks Codex itself discovers for the project, with their trust status, asked
        through ``codex app-server`` (JSON-RPC ``hooks/list``), the API its ``/hooks`` review uses."""
        self._write_codex_config()
        env = {**self.base_env(), "E2E_MODEL_KEY": "e2e"}
        process = subprocess.Popen([str(self.bin / "codex"), "app-server"], cwd=self.work, env=env, text=True,
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        try:
            assert process.stdin is not None and process.stdout is not None

            def send(message: dict[str, Any]) -> None:
                process.stdin.write(json.dumps({"jsonrpc": "2.0", **message}) + "\n")
                process.stdin.flush()

            def answer(request_id: int) -> dict[str, Any]:
                deadline = time.monotonic() + 60
                while time.monotonic() < deadline:
                    line = process.stdout.readline()
                    if not line:
                        break
                    message = json.loads(line)
                    if message.get("id") == request_id:
                        if "error" in message:
                            raise AssertionError(f"codex app-server: {message['error']}")
                        return message["result"]
                raise AssertionError("codex app-server did not answer")

            send({"id": 1, "method": "initialize", "params": {"clientInfo": {"name": "statewise-e2e",
                                                                              "version": "1"}}})
            answer(1)
            send({"method": "initialized"})
            send({"id": 2, "method": "hooks/list", "params": {"cwds": [str(self.work)]}})
            entries = answer(2)["data"]
        finally:
            process.kill()
            process.wait(timeout=10)
        return [hook for entry in entries for hook in entry.get("hooks", [])]

    def _trust_codex_hooks(self, *, verify: bool) -> None:
        """Mark the installed project hooks as reviewed, exactly as Codex's ``/hooks`` review
        persists it: ``[hooks.state."<key>"] trusted_hash = "<currentHash>"`` in config.toml.
        Without it Codex skips never-reviewed hooks silently (no flag needed with it)."""
        hooks = [h for h in self.codex_hooks() if h.get("source") == "project"]
        assert hooks, "codex discovered no project hooks after statewise install"
        self._codex_trust = {h["key"]: h["currentHash"] for h in hooks}
        if not verify:
            return
        statuses = {h["key"]: h["trustStatus"] for h in self.codex_hooks() if h.get("source") == "project"}
        assert set(statuses.values()) == {"trusted"}, f"codex does not trust the reviewed hooks: {statuses}"

    def forget_hook_reviews(self) -> None:
        """Codex: the project stays trusted, but no hook was ever reviewed."""
        self._codex_trust.clear()

    # --- running a client ------------------------------------------------------------------

    def run(self, client: str, steps: Sequence[Step], *, prompt: str = "Do the task.",
            timeout: float = RUN_TIMEOUT, final_text: str = FINAL_TEXT) -> ClientRun:
        """Run ``client`` once, non-interactively, against a fresh scripted model that ends
        its turn with ``final_text``."""
        env = self.base_env()
        with ModelServer(steps, final_text=final_text) as server:
            argv = self._prepare(client, server, env, prompt)
            started = time.monotonic()
            try:
                done = subprocess.run(argv, cwd=self.work, env=env, capture_output=True, text=True, timeout=timeout,
                                      stdin=subprocess.DEVNULL)
                returncode, stdout, stderr = done.returncode, done.stdout, done.stderr
            except subprocess.TimeoutExpired as expired:
                returncode = -9
                stdout = (expired.stdout or b"").decode("utf-8", "replace") if isinstance(expired.stdout, bytes) \
                    else (expired.stdout or "")
                stderr = f"(killed after {timeout}s)"
            seconds = time.monotonic() - started
        return ClientRun(client, argv, returncode, stdout, stderr, seconds, server)

    def _prepare(self, client: str, server: ModelServer, env: dict[str, str], prompt: str) -> list[str]:
        binary = str(self.bin / CLIENTS[client].binary)
        if client == "claude":
            env.update(ANTHROPIC_BASE_URL=server.url, ANTHROPIC_API_KEY="sk-ant-e2e",
                       CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_AUTOUPDATER="1",
                       DISABLE_TELEMETRY="1", DISABLE_ERROR_REPORTING="1")
            return [binary, "-p", prompt, "--output-format", "json", "--allowedTools", "Bash Write Edit Read"]
        if client == "codex":
            env["E2E_MODEL_KEY"] = "e2e"
            self._write_codex_config(server)
            return [binary, "exec", "--json", "--skip-git-repo-check", prompt]
        if client == "gemini":
            # No self-relaunch with a bigger heap: one start of the bundle instead of two.
            env.update(GOOGLE_GEMINI_BASE_URL=server.url, GEMINI_API_KEY="e2e", GEMINI_CLI_NO_RELAUNCH="true")
            gemini = self.home / ".gemini"
            gemini.mkdir(parents=True, exist_ok=True)
            (gemini / "settings.json").write_text(json.dumps({
                "security": {"auth": {"selectedType": "gemini-api-key"}},
                "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
                "privacy": {"usageStatisticsEnabled": False},
            }), encoding="utf-8")
            # Headless Gemini exits 55 in an untrusted folder; the developer trusts the project.
            (gemini / "trustedFolders.json").write_text(json.dumps({str(self.work): "TRUST_FOLDER"}),
                                                        encoding="utf-8")
            # An explicit model skips the routing classifier's side requests.
            return [binary, "-p", prompt, "--output-format", "json", "--approval-mode", "yolo",
                    "-m", "gemini-2.5-pro"]
        raise ValueError(client)


def settings_commands(settings: Path) -> Mapping[str, list[str]]:
    """event -> the hook commands a settings file holds (for assertions and reports)."""
    data = json.loads(settings.read_text(encoding="utf-8"))
    return {event: [h.get("command", "") for g in groups for h in g.get("hooks", [])]
            for event, groups in data.get("hooks", {}).items()}
