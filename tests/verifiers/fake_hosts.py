"""A real HTTP server on 127.0.0.1 that answers as GitHub's and GitLab's REST APIs do.

The response bodies follow the shapes documented at docs.github.com/rest/branches,
docs.github.com/rest/repos/rules and docs.gitlab.com/api/protected_branches (trimmed to the
fields a client reads). Routes are exact request paths (with the query string); anything
else gets the provider's own 404.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

GITHUB_DOCS = "https://docs.github.com/rest"


def github_not_protected() -> tuple[int, dict[str, Any]]:
    return 404, {"message": "Branch not protected",
                 "documentation_url": f"{GITHUB_DOCS}/branches/branch-protection#get-branch-protection",
                 "status": "404"}


def github_not_found() -> tuple[int, dict[str, Any]]:
    return 404, {"message": "Not Found", "documentation_url": GITHUB_DOCS, "status": "404"}


def github_bad_credentials() -> tuple[int, dict[str, Any]]:
    return 401, {"message": "Bad credentials", "documentation_url": GITHUB_DOCS, "status": "401"}


def github_protection(owner_repo: str, branch: str) -> tuple[int, dict[str, Any]]:
    url = f"https://api.github.com/repos/{owner_repo}/branches/{branch}/protection"
    return 200, {
        "url": url,
        "required_pull_request_reviews": {"url": f"{url}/required_pull_request_reviews",
                                          "dismiss_stale_reviews": False, "require_code_owner_reviews": False,
                                          "required_approving_review_count": 1},
        "enforce_admins": {"url": f"{url}/enforce_admins", "enabled": True},
        "required_linear_history": {"enabled": False},
        "allow_force_pushes": {"enabled": False},
        "allow_deletions": {"enabled": False},
    }


def github_rule(rule_type: str, owner_repo: str = "acme/app", ruleset_id: int = 42) -> dict[str, Any]:
    return {"type": rule_type, "ruleset_source_type": "Repository", "ruleset_source": owner_repo,
            "ruleset_id": ruleset_id}


def github_branch(name: str, protected: bool) -> tuple[int, dict[str, Any]]:
    return 200, {"name": name, "commit": {"sha": "6dcb09b5b57875f334f61aebed695e2e4193db5e"},
                 "protected": protected,
                 "protection_url": f"https://api.github.com/repos/acme/app/branches/{name}/protection"}


def gitlab_protected(name: str, *, push: int = 40, force: bool = False, inherited: bool = False) -> dict[str, Any]:
    describe = {0: "No one", 30: "Developers + Maintainers", 40: "Maintainers"}
    return {"id": abs(hash(name)) % 1000, "name": name,
            "push_access_levels": [{"id": 1, "access_level": push, "access_level_description": describe[push]}],
            "merge_access_levels": [{"id": 2, "access_level": 40, "access_level_description": "Maintainers"}],
            "allow_force_push": force, "code_owner_approval_required": False, "inherited": inherited}


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        server: Any = self.server
        server.seen.append((self.path, dict(self.headers.items())))
        answer = server.routes.get(self.path)
        if answer is None:
            answer = (404, {"message": "404 Project Not Found"}) if "/projects/" in self.path else github_not_found()
        status, body = answer
        if status == "slow":
            time.sleep(body)
            status, body = 200, []
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout test)
            pass

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass


@contextmanager
def api_server(routes: dict[str, tuple[Any, Any]]) -> Iterator[Any]:
    """Serve ``routes`` on 127.0.0.1 (a free port); ``server.url``, ``server.seen``."""
    server: Any = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    server.routes = routes
    server.seen = []
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        server.url = f"http://127.0.0.1:{server.server_address[1]}"
        yield server
    finally:
        server.shutdown()
        server.server_close()


def dead_port() -> str:
    """A loopback URL on which nothing listens (connection refused at once)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@contextmanager
def silent_server() -> Iterator[str]:
    """A loopback socket that accepts connections and never answers (an API that hangs)."""
    import socket

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        sock.close()
