"""benchmarks/memory_repos/peers.py on a repository and a peer the test writes itself.

The real peers are npm and PyPI packages run by hand; here a real subprocess prints an
agnix-shaped JSON report, and the script must keep memory-file findings apart from the
others, name each line by its sha256, score it with hand labels, and report a failing
tool as an error rather than as no findings.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.verifiers.helpers import git, make_repo

ROOT = Path(__file__).resolve().parents[2]


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("memory_repos_peers", ROOT / "benchmarks" / "memory_repos" /
                                                  "peers.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["memory_repos_peers"] = module
    spec.loader.exec_module(module)
    return module


REPORT = {"diagnostics": [
    {"rule": "REF-9", "file": "AGENTS.md", "line": 3, "message": "AGENTS.md references missing file `src/old.py`"},
    {"rule": "PE-4", "file": "AGENTS.md", "line": 4, "message": "Ambiguous term 'usually'"},
    {"rule": "HK-1", "file": ".claude/settings.json", "line": 2, "message": "a hook by a relative path"},
    {"rule": "VER-1", "file": "", "line": 1, "message": "No versions pinned"},
    {"rule": "RULE-2", "file": ".cursor/rules/style.mdc", "line": 1, "message": "front matter"},
]}


def test_peer_findings_are_split_labelled_and_scored(tmp_path: Path) -> None:
    peers = _load()
    repo = make_repo(tmp_path / "project")
    notes = "# Notes\n\nThe old entry point is `src/old.py`.\nTests usually run with `pytest`.\n"
    (repo.work / "AGENTS.md").write_text(notes)
    git(repo.work, "add", "-A")
    git(repo.work, "commit", "-q", "-m", "notes")
    tool = tmp_path / "peer.py"
    tool.write_text(f"import json, sys\nprint('checking...')\nprint(json.dumps({REPORT!r}))\nsys.exit(1)\n")
    peer = peers.Peer("fake", lambda w: [sys.executable, str(tool)], peers.parse_agnix)
    run = peers.run_peer(peer, "acme/tool", repo.work)
    assert run.error == ""
    assert [(f.file, f.line, f.rule) for f in run.findings] == [
        ("AGENTS.md", 3, "REF-9"), ("AGENTS.md", 4, "PE-4"), (".cursor/rules/style.mdc", 1, "RULE-2")]
    assert run.findings[0].sha256 == hashlib.sha256(b"The old entry point is `src/old.py`.").hexdigest()
    assert (run.other_files, run.unlocated) == (1, 1)
    labels_path = tmp_path / "peer_labels.yaml"
    labels_path.write_text(json.dumps({
        "rules": [{"tool": "fake", "rule": "PE-4", "verdict": "advice"}],
        "labels": [{"tool": "fake", "repo": "acme/tool", "file": "AGENTS.md", "line": 3, "rule": "REF-9",
                    "sha256": run.findings[0].sha256, "verdict": "true-fact"}]}))
    labels, by_rule = peers.load_peer_labels(labels_path)
    (row,) = peers.score([run], labels, by_rule).values()
    assert (row["findings"], row["true-fact"], row["false-fact"], row["advice"], row["unlabelled"]) == (3, 1, 0, 1, 1)
    # a whole rule can only be advice: a fact is judged one finding at a time
    labels_path.write_text(json.dumps({"rules": [{"tool": "fake", "rule": "REF-9", "verdict": "true-fact"}]}))
    with pytest.raises(ValueError, match="one by one"):
        peers.load_peer_labels(labels_path)


def test_a_failing_peer_is_an_error_not_an_empty_report(tmp_path: Path) -> None:
    peers = _load()
    repo = make_repo(tmp_path / "project")
    tool = tmp_path / "broken.py"
    tool.write_text("import sys\nprint('Segmentation fault', file=sys.stderr)\nsys.exit(139)\n")
    run = peers.run_peer(peers.Peer("fake", lambda w: [sys.executable, str(tool)], peers.parse_agnix), "acme/tool",
                         repo.work)
    assert run.error.startswith("exit 139") and run.findings == []
    (row,) = peers.score([run], {}, {}).values()
    assert row["errors"] == [f"acme/tool: {run.error}"] and row["findings"] == 0
    assert peers.is_memory_file("pkg/CLAUDE.local.md") and peers.is_memory_file(".claude/rules/x.md")
    assert not peers.is_memory_file("docs/rules/x.md") and not peers.is_memory_file("README.md")
