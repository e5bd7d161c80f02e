"""What extracting an archive or applying a diff writes (statewise.commands.unpack): ``tar -x``,
``unzip``, ``patch`` and ``git apply`` on real archives and diffs in a real git repository."""

from __future__ import annotations

import io
import subprocess
import tarfile
import zipfile
from pathlib import Path

import pytest

from statewise.commands import analyze_command
from statewise.commands.unpack import MAX_ARCHIVE_BYTES, MAX_EXACT_MEMBERS, MAX_MEMBERS


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    subprocess.run(["git", "init", "-q", "-b", "main", str(tmp_path)], check=True)
    return tmp_path


def actions(repo: Path, command: str, cwd: Path | None = None) -> list[tuple[str, str | None, str | None]]:
    analysis = analyze_command(command, cwd=cwd or repo, workspace=repo)
    return [(a.operation, a.target, a.args.get("via")) for a in analysis.actions]


def unresolved(repo: Path, command: str) -> str:
    return " ".join(analyze_command(command, cwd=repo, workspace=repo).unresolved)


def make_tar(path: Path, members: dict[str, bytes], mode: str = "w", links: dict[str, str] | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, mode) as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(name)
            info.type = tarfile.SYMTYPE
            info.linkname = target
            archive.addfile(info)


def make_zip(path: Path, members: dict[str, bytes]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)


SETTINGS_DIFF = ("--- a/.claude/settings.json\t2026-01-01\n+++ b/.claude/settings.json\t2026-01-01\n"
                 "@@ -1 +1 @@\n-{}\n+{\"hooks\": {}}\n")


def test_tar_extract_writes_each_member_under_the_directory(repo):
    make_tar(repo / "in" / "x.tar", {".claude/settings.json": b"{}", "pkg/a.py": b"1"})
    assert actions(repo, "tar xf in/x.tar") == [("fs.write", ".claude/settings.json", "tar -x"),
                                                ("fs.write", "pkg/a.py", "tar -x")]
    assert actions(repo, "tar -x -f in/x.tar -C out") == [("fs.write", "out/.claude/settings.json", "tar -x"),
                                                          ("fs.write", "out/pkg/a.py", "tar -x")]
    assert actions(repo, "tar --extract --file=in/x.tar --directory=out --strip-components=1") == [
        ("fs.write", "out/a.py", "tar -x"), ("fs.write", "out/settings.json", "tar -x")]


def test_tar_extract_of_a_compressed_archive_from_a_subfolder(repo):
    make_tar(repo / "in" / "hooks.tgz", {"hooks/pre-push": b"#!/bin/sh\n"}, "w:gz")
    assert actions(repo, "tar -xzf ../in/hooks.tgz -C ../.git", cwd=(repo / "in")) == [
        ("fs.write", ".git/hooks/pre-push", "tar -x")]


def test_tar_extract_from_standard_input(repo):
    make_tar(repo / "x.tar", {".statewise/config.toml": b""})
    assert actions(repo, "tar -x < x.tar") == [("fs.write", ".statewise/config.toml", "tar -x")]
    assert "standard input" in unresolved(repo, "curl -s https://example.com/x.tar | tar -x")


def test_an_unseen_archive_is_cannot_check_only_where_it_can_reach_what_statewise_protects(repo, tmp_path):
    (repo / "build").mkdir()
    (repo / ".claude").mkdir()
    elsewhere = tmp_path / "tools"
    elsewhere.mkdir()
    for destination in ("", " -C .", " -C .claude", f" -C {tmp_path}"):  # the root, a protected folder, above both
        command = f"curl -sL https://example.com/t.tgz | tar xz{destination}"
        assert "standard input" in unresolved(repo, command), command
    for destination in (" -C build", f" -C {elsewhere}"):  # a folder holding nothing StateWise protects
        command = f"curl -sL https://example.com/t.tgz | tar xz{destination}"
        analysis = analyze_command(command, cwd=repo, workspace=repo)
        assert analysis.unresolved == () and command.split(" | ")[1] in analysis.unguarded, command


def test_tar_listing_and_to_stdout_write_nothing(repo):
    make_tar(repo / "x.tar", {".claude/settings.json": b"{}"})
    for command in ("tar tf x.tar", "tar -xOf x.tar", "tar -xf x.tar --to-stdout"):
        analysis = analyze_command(command, cwd=repo, workspace=repo)
        assert analysis.actions == () or list(analysis.actions) == [], command
        assert command in analysis.unguarded


def test_tar_transform_is_cannot_check(repo):
    make_tar(repo / "x.tar", {"a": b""})
    assert "only known at run time" in unresolved(repo, "tar -xf x.tar --transform s/a/b/")


def test_an_escaping_member_is_cannot_check(repo):
    make_tar(repo / "up.tar", {"../outside.txt": b"x"})
    assert "leaves the folder" in unresolved(repo, "tar xf up.tar")
    make_tar(repo / "abs.tar", {"/etc/x": b"x"})
    assert "leaves the folder" in unresolved(repo, "tar xf abs.tar")
    make_tar(repo / "link.tar", {}, links={"escape": "../../.."})
    assert "points outside" in unresolved(repo, "tar xf link.tar")
    make_tar(repo / "through.tar", {"ok/settings.json": b"{}"}, links={"ok": ".claude"})
    assert "through the link" in unresolved(repo, "tar xf through.tar")
    make_zip(repo / "up.zip", {"../../.bashrc": b"x"})
    assert "leaves the folder" in unresolved(repo, "unzip up.zip")


def test_unzip_writes_each_member(repo):
    make_zip(repo / "x.zip", {".statewise/config.toml": b"", "lib/m.py": b""})
    assert actions(repo, "unzip -o x.zip") == [("fs.write", ".statewise/config.toml", "unzip"),
                                               ("fs.write", "lib/m.py", "unzip")]
    assert actions(repo, "unzip -o x.zip -d vendor") == [("fs.write", "vendor/.statewise/config.toml", "unzip"),
                                                         ("fs.write", "vendor/lib/m.py", "unzip")]
    assert actions(repo, "unzip -l x.zip") == []


def test_an_archive_outside_the_workspace_is_left_as_before(repo, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("elsewhere") / "x.tar"
    make_tar(elsewhere, {".claude/settings.json": b"{}"})
    analysis = analyze_command(f"tar xf {elsewhere}", cwd=repo, workspace=repo)
    assert list(analysis.actions) == [] and analysis.unguarded


def test_archive_bounds(repo):
    (repo / "big.tar").write_bytes(b"\0" * (MAX_ARCHIVE_BYTES + 1))
    assert "larger than" in unresolved(repo, "tar xf big.tar")
    (repo / "broken.zip").write_bytes(b"not a zip")
    assert "cannot be listed" in unresolved(repo, "unzip broken.zip")
    make_zip(repo / "many.zip", {f"f{i}": b"" for i in range(MAX_MEMBERS + 1)})
    assert f"more than {MAX_MEMBERS} members" in unresolved(repo, "unzip many.zip")


def test_many_members_collapse_but_a_protected_file_inside_stays_exact(repo):
    members = {f"dist/f{i}.js": b"" for i in range(MAX_EXACT_MEMBERS + 1)}
    members["dist/sub/.claude/settings.json"] = b"{}"
    members["config/prod.yaml"] = b"x"
    (repo / "config").mkdir()
    (repo / "config" / "prod.yaml").write_text("db: prod\n")
    make_tar(repo / "many.tgz", members, "w:gz")
    assert actions(repo, "tar xzf many.tgz") == [
        ("fs.write", "config", "tar -x"), ("fs.write", "config/prod.yaml", "tar -x"), ("fs.write", "dist", "tar -x"),
        ("fs.write", "dist/sub/.claude/settings.json", "tar -x")]


def test_patch_writes_the_files_the_diff_changes(repo):
    (repo / "x.diff").write_text(SETTINGS_DIFF)
    expected = [("fs.write", ".claude/settings.json", "patch")]
    assert actions(repo, "patch -p1 < x.diff") == expected
    assert actions(repo, "patch -p1 -i x.diff") == expected
    assert actions(repo, "patch --strip=1 --input=x.diff -d sub") == [("fs.write", "sub/.claude/settings.json",
                                                                         "patch")]
    # without -p patch takes the base name; a git-style a/ b/ name may be read as -p1: both listed
    assert actions(repo, "patch < x.diff") == [("fs.write", "settings.json", "patch"), expected[0]]
    assert actions(repo, "patch -p1 --dry-run < x.diff") == []
    assert actions(repo, "patch -p1 app.py x.diff") == [("fs.write", "app.py", "patch")]


def test_git_apply_reads_git_diffs_with_new_deleted_and_renamed_files(repo):
    (repo / "x.diff").write_text(
        "diff --git a/.claude/settings.json b/.claude/settings.json\n" + SETTINGS_DIFF +
        "diff --git a/old.py b/old.py\ndeleted file mode 100644\n--- a/old.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"
        "diff --git a/new.py b/new.py\nnew file mode 100644\n--- /dev/null\n+++ b/new.py\n@@ -0,0 +1 @@\n+x\n"
        "diff --git a/a.py b/.git/hooks/pre-push\nsimilarity index 100%\nrename from a.py\n"
        "rename to .git/hooks/pre-push\n")
    assert actions(repo, "git apply x.diff") == [
        ("fs.write", ".claude/settings.json", "git apply"), ("fs.delete", "old.py", "git apply"),
        ("fs.write", "new.py", "git apply"), ("fs.write", "a.py", "git apply"),
        ("fs.write", ".git/hooks/pre-push", "git apply")]
    assert actions(repo, "git apply --check x.diff") == []
    assert actions(repo, "git apply --cached x.diff") == []


def test_git_apply_paths_are_from_the_top_of_the_working_tree(repo):
    (repo / "src").mkdir()
    (repo / "x.diff").write_text(SETTINGS_DIFF)
    assert actions(repo, "git apply ../x.diff", cwd=repo / "src") == [
        ("fs.write", ".claude/settings.json", "git apply")]
    assert actions(repo, "git apply --directory=vendor x.diff") == [
        ("fs.write", "vendor/.claude/settings.json", "git apply")]


def test_an_escaping_or_unreadable_diff_is_cannot_check(repo):
    (repo / "up.diff").write_text("--- a/../../.bashrc\n+++ b/../../.bashrc\n@@ -1 +1 @@\n-a\n+b\n")
    assert "leaves the folder" in unresolved(repo, "patch -p1 < up.diff")
    (repo / "quoted.diff").write_text('--- "a/x\\ty"\n+++ "b/x\\ty"\n')
    assert "quoted" in unresolved(repo, "git apply quoted.diff")
    assert "standard input" in unresolved(repo, "cat x.diff | patch -p1")
