"""The tree index names the same entry whatever the interpreter's hash seed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.memory.history import commit
from tests.verifiers.helpers import make_repo

_LOCATE = (
    "import sys; from pathlib import Path; from statewise.memory.paths import TreeIndex; "
    "print(TreeIndex(Path(sys.argv[1])).locate('pyproject.toml', ['docs']).where)"
)


def test_a_name_found_in_several_folders_names_the_one_nearest_the_root_whatever_the_hash_seed(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    commit(repo, "three projects", {
        "libs/zeta/pyproject.toml": "[project]\n", "libs/alpha/pyproject.toml": "[project]\n",
        "tools/pyproject.toml": "[project]\n", "docs/index.md": "docs\n",
    })
    seen = set()
    for seed in ("0", "1", "2", "3", "4", "5"):
        done = subprocess.run([sys.executable, "-c", _LOCATE, str(repo.work)], capture_output=True, text=True,
                              check=True, env={**os.environ, "PYTHONHASHSEED": seed})
        seen.add(done.stdout.strip())
    assert seen == {"tools/pyproject.toml"}
