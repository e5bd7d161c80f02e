"""The hook's shared files read without importing os: paths, the environment, the contract's digest."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from statewise.contract.loading import BUILTIN_PARTS, builtin_part_texts
from statewise.integrations import hook_entry, hook_files
from statewise.integrations.hook_files import DIGEST_MEMO, contract_digest, realpath, sha256_hex


def test_realpath_resolves_as_os_path_realpath_does(tmp_path):
    base = tmp_path.resolve()
    (base / "real" / "deep").mkdir(parents=True)
    (base / "relative").symlink_to("real")
    (base / "absolute").symlink_to(base / "real" / "deep")
    (base / "real" / "up").symlink_to("..")
    (base / "loop").symlink_to("loop")
    (base / "a").symlink_to("b")
    (base / "b").symlink_to("a")
    (base / "dangling").symlink_to("nowhere/else")
    (base / "chain").symlink_to("relative/deep")
    for tail in ("real", "relative", "relative/deep", "absolute", "absolute/..", "relative/deep/../..",
                 "real/up/relative/up", "loop", "loop/x", "loop/x/../y", "loop/./z//w/.", "a/b/../c", "chain/a/../../loop/..", "dangling", "dangling/more", "chain",
                 "chain/../deep", "missing/../real", "./real//deep/.", "relative/../absolute/../../x"):
        path = f"{base}/{tail}"
        assert realpath(path) == os.path.realpath(path), tail
    for path in ("/", "//", "/..", "/../tmp", "relative/path"):
        assert realpath(path) == os.path.realpath(path), path


def test_the_environment_and_the_cache_folder_are_read_as_os_reads_them(tmp_path):
    code = ("import sys; sys.path.append(sys.argv[1]); from statewise.integrations import hook_files as h; "
            "before = 'os' in sys.modules; found = [h.environ('STATEWISE_X'), h.environ('STATEWISE_NONE'), "
            "h._cache_root()]; import os; "
            "expected = [os.environ.get('STATEWISE_X'), None, os.environ.get('STATEWISE_CACHE_DIR') or "
            "os.path.join(os.environ.get('XDG_CACHE_HOME') or os.path.join(os.path.expanduser('~'), '.cache'), "
            "'statewise')]; print(before, found == expected, found)")
    src = str(Path(hook_files.__file__).resolve().parents[2])
    clean = {key: value for key, value in os.environ.items() if key not in ("STATEWISE_CACHE_DIR", "XDG_CACHE_HOME")}
    for extra in ({"HOME": str(tmp_path)}, {"HOME": f"{tmp_path}//"}, {"HOME": "/"}, {"HOME": ""},
                  {"XDG_CACHE_HOME": "relative/cache"}, {"XDG_CACHE_HOME": f"{tmp_path}/x/"},
                  {"STATEWISE_CACHE_DIR": str(tmp_path / "c")}):
        env = {**clean, "STATEWISE_X": "caf\u00e9 \udcff", **extra}
        done = subprocess.run([sys.executable, "-I", "-S", "-c", code, src], capture_output=True, text=True,
                              env=env, timeout=60)
        assert done.stdout.split(maxsplit=2)[:2] == ["False", "True"], (extra, done.stdout, done.stderr)


def _old_file(path: Path, text: str, moment: float) -> None:
    path.write_text(text)
    os.utime(path, (moment, moment))


def test_the_contract_digest_is_remembered_by_the_files_state_and_never_outlives_a_change(tmp_path, monkeypatch):
    monkeypatch.setenv("STATEWISE_CACHE_DIR", str(tmp_path / "cache"))
    contract = tmp_path / "contract.yaml"
    moment = time.time() - 3600
    _old_file(contract, "name: one\n", moment)
    first = contract_digest(str(contract))
    assert first == sha256_hex(b"name: one\n")
    assert not (tmp_path / "cache" / DIGEST_MEMO).exists()  # changed a moment ago (its change time): not kept
    time.sleep(2.1)
    assert contract_digest(str(contract)) == first
    memo = json.loads((tmp_path / "cache" / DIGEST_MEMO).read_text())
    assert memo[str(contract)]["digest"] == first  # remembered: the file has not changed for two seconds
    assert contract_digest(str(contract)) == first
    # The same size and the modification time set back: the change time still moved.
    _old_file(contract, "name: two\n", moment)
    assert contract_digest(str(contract)) == sha256_hex(b"name: two\n")
    time.sleep(2.1)
    assert contract_digest(str(contract)) == sha256_hex(b"name: two\n")  # now kept with its new state
    # A memo that lies about a file's state is not believed: its state is compared, not its key.
    memo = json.loads((tmp_path / "cache" / DIGEST_MEMO).read_text())
    memo[str(contract)]["digest"] = "0" * 64
    memo[str(contract)]["files"][0][3] += 1
    (tmp_path / "cache" / DIGEST_MEMO).write_text(json.dumps(memo))
    assert contract_digest(str(contract)) == sha256_hex(b"name: two\n")
    assert contract_digest(str(tmp_path / "missing.yaml")) is None
    # Without the cache nothing is written or read.
    monkeypatch.setenv("STATEWISE_NO_CACHE", "1")
    (tmp_path / "cache" / DIGEST_MEMO).write_text("{garbage")
    assert contract_digest(str(contract)) == sha256_hex(b"name: two\n")


def test_the_built_in_contract_digest_covers_every_file_the_loader_merges(tmp_path, monkeypatch):
    # Its sections (coding/*.yaml) and its command catalogue (catalogue/*.yaml), as the loader
    # reads them, each framed by its path under the contracts folder.
    monkeypatch.setenv("STATEWISE_CACHE_DIR", str(tmp_path))
    assert hook_files.BUILTIN_PART_FOLDERS == BUILTIN_PARTS["coding"]  # the front door's copy of the table
    parts = builtin_part_texts("coding")
    assert [path.partition("/")[0] for path, _ in parts] == ["coding"] * 6 + ["catalogue"] * 9
    data = Path(hook_files.builtin_contract_path()).read_bytes()
    for path, text in parts:
        data += b"\0" + path.encode() + b"\0" + text.encode()
    assert contract_digest(None) == sha256_hex(data)
    assert contract_digest(None) == sha256_hex(data)  # from the memo, or hashed again if a file is new


def test_a_finished_command_on_the_fast_path_imports_neither_os_nor_sha256(tmp_path):
    # As the installed wrapper runs it: -I -S, the package directory appended; the second call
    # of a session (the first wrote the observation index and the digest's memo).
    src = str(Path(hook_entry.__file__).resolve().parents[2])
    cache = tmp_path / "cache"
    from statewise.integrations.hooks import run_hook

    after = json.dumps({"cwd": str(tmp_path), "hook_event_name": "PostToolUse", "tool_name": "Bash",
                        "tool_input": {"command": "git status"}, "tool_response": {"stdout": ""}})
    os.environ["STATEWISE_CACHE_DIR"] = str(cache)
    try:
        run_hook("claude-code", after, event="post", store_location=str(tmp_path / "store.db"))
    finally:
        del os.environ["STATEWISE_CACHE_DIR"]
    code = (f"import sys; sys.path.append({src!r}); from statewise.integrations import hook_entry as h; "
            f"post = h.quick_outcome('claude-code', 'post', {after!r}, None); "
            "print(post, sorted(m for m in ('os', '_sha256', '_sha2', 'hashlib') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "STATEWISE_CACHE_DIR": str(cache)})
    assert done.stdout.split() == ["{}", "[]"], done.stderr
