"""Reading inside recipes, scripts and inline programs (statewise.commands.recipes, .scripts,
.inline): the analyzer on real files in a real repository, variant by variant. The hook-level
behaviour is tests/commands/test_inside_hook.py."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from statewise.commands import analyze_command
from statewise.commands.inside import MAX_INSIDE_BYTES


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    subprocess.run(["git", "init", "-q", "-b", "main", str(tmp_path)], check=True)
    return tmp_path


def found(repo: Path, command: str, cwd: Path | None = None) -> list[tuple[str, str | None]]:
    analysis = analyze_command(command, cwd=cwd or repo, workspace=repo)
    return [(action.operation, action.target) for action in analysis.actions]


def unresolved(repo: Path, command: str) -> tuple[str, ...]:
    return analyze_command(command, cwd=repo, workspace=repo).unresolved


def write(repo: Path, name: str, text: str) -> Path:
    path = repo / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


# --- make ---


def test_make_variables_command_line_overrides_and_the_default_goal(repo):
    write(repo, "Makefile", "OUT ?= dist\nDIRS = $(OUT) cache\n\nfirst:\n\trm -rf $(DIRS)\n\nother:\n\trm -f x\n")
    assert found(repo, "make") == [("fs.delete", "dist"), ("fs.delete", "cache")]
    assert found(repo, "make OUT=migrations") == [("fs.delete", "migrations"), ("fs.delete", "cache")]
    assert found(repo, "make other") == [("fs.delete", "x")]


def test_make_default_goal_variable_and_simple_assignment(repo):
    write(repo, "Makefile", "A := one\nB := $(A)-two\n.DEFAULT_GOAL := second\nfirst:\n\ttouch a\nsecond:\n"
                            "\ttouch $(B)\n")
    assert found(repo, "make") == [("fs.write", "one-two")]


def test_make_pattern_rules_and_automatic_variables(repo):
    write(repo, "Makefile", "%.out: %.in\n\tcp $< $@\n\trm -f $*.tmp\n")
    write(repo, "a.in", "x")
    assert found(repo, "make a.out") == [("fs.write", "a.out"), ("fs.delete", "a.tmp")]
    assert found(repo, "make b.out") == []  # b.in does not exist: no rule applies


def test_make_functions_that_are_static_are_expanded(repo):
    write(repo, "Makefile", "SRC = a.c b.c\nOBJ = $(patsubst %.c,%.o,$(SRC))\nclean:\n\trm -f $(OBJ) "
                            "$(addprefix build/,$(notdir x/y.bin)) $(SRC:.c=.d)\n")
    assert found(repo, "make clean") == [("fs.delete", p) for p in ("a.o", "b.o", "build/y.bin", "a.d", "b.d")]


def test_make_shell_function_is_only_known_when_make_runs(repo):
    write(repo, "Makefile", "DIR = $(shell cat .target)\nclean:\n\trm -rf $(DIR)\nshow:\n\techo $(DIR)\n"
                            "quoted:\n\trm -rf '$(DIR)'\n")
    assert any("only known at run time" in why for why in unresolved(repo, "make clean"))
    assert unresolved(repo, "make show") == ()  # echo does not care what the value is
    assert any("only known when it runs" in why for why in unresolved(repo, "make quoted"))


def test_make_directory_files_and_recursion(repo):
    write(repo, "sub/Makefile", "wipe:\n\trm -rf data\n")
    write(repo, "mk/other.mk", "go:\n\trm -rf gone\n")
    write(repo, "Makefile", "all:\n\t$(MAKE) -C sub wipe\n\tcd sub && $(MAKE) wipe\n")
    assert found(repo, "make -C sub wipe") == [("fs.delete", "sub/data")]
    assert found(repo, "make --directory=sub") == [("fs.delete", "sub/data")]
    assert found(repo, "make -f mk/other.mk go") == [("fs.delete", "gone")]
    assert found(repo, "make") == [("fs.delete", "sub/data"), ("fs.delete", "sub/data")]


def test_make_recursion_stops_at_the_depth_bound(repo):
    write(repo, "Makefile", "loop:\n\t$(MAKE) loop\n")
    assert any("nested deeper" in why for why in unresolved(repo, "make loop"))


def test_make_prerequisites_run_first_and_includes_are_read(repo):
    write(repo, "common.mk", "TRASH = tmp\n")
    write(repo, "Makefile", "include common.mk\n-include missing.mk\ndeploy: clean build\n\techo deploy\n"
                            "clean:\n\trm -rf $(TRASH)\nbuild:\n\ttouch out\n")
    assert found(repo, "make deploy") == [("fs.delete", "tmp"), ("fs.write", "out")]


def test_make_conditionals_read_both_branches_and_define_blocks(repo):
    write(repo, "Makefile", "ifeq ($(OS),Windows)\nRM = del\nelse\nRM = rm -f\nendif\n"
                            "define BANNER\nhello\nendef\nclean:\n\t$(RM) junk\n\t@echo done\n")
    assert found(repo, "make clean") == [("fs.delete", "junk")]


def test_make_oneshell_keeps_the_directory_across_lines(repo):
    write(repo, "Makefile", ".ONESHELL:\nclean:\n\tcd build\n\trm -rf out\n")
    (repo / "build").mkdir()
    assert found(repo, "make clean") == [("fs.delete", "build/out")]
    write(repo, "Makefile", "clean:\n\tcd build\n\trm -rf out\n")
    assert found(repo, "make clean") == [("fs.delete", "out")]  # each line is its own shell


def test_make_test_is_one_test_run_and_a_dry_run_reads_nothing(repo):
    write(repo, "Makefile", "test:\n\tpytest -q\n\trm -rf .pytest_cache\n")
    assert [op for op, _ in found(repo, "make test")] == ["fs.delete", "test.run"]
    assert found(repo, "make -n test") == []
    assert found(repo, "make nothing-here") == []


def test_a_makefile_too_large_is_not_read(repo):
    write(repo, "Makefile", "x:\n\techo x\n" + "# filler\n" * (MAX_INSIDE_BYTES // 8))
    assert any("larger than" in why for why in unresolved(repo, "make x"))


def test_make_from_standard_input_cannot_be_checked(repo):
    assert any("standard input" in why for why in unresolved(repo, "make -f - all"))


# --- package.json ---


def test_npm_scripts_with_pre_and_post_in_the_package_directory(repo):
    write(repo, "package.json", json.dumps({"scripts": {"preclean": "rm -rf .cache", "clean": "rimraf dist",
                                                        "postclean": "touch .cleaned", "build": "tsc"}}))
    assert found(repo, "npm run clean") == [("fs.delete", ".cache"), ("fs.delete", "dist"), ("fs.write", ".cleaned"),
                                            ("npm.run_script", "clean")]
    assert found(repo, "npm run build") == [("npm.run_script", "build")]
    (repo / "src").mkdir()
    assert found(repo, "npm run clean", cwd=repo / "src")[:2] == [("fs.delete", ".cache"), ("fs.delete", "dist")]


def test_npm_test_start_and_the_other_managers(repo):
    write(repo, "package.json", json.dumps({"scripts": {"test": "rm -f junit.xml && jest", "start": "rm -rf tmp",
                                                        "wipe": "rm -rf data"}}))
    assert [op for op, _ in found(repo, "npm test")] == ["fs.delete", "test.run"]
    assert found(repo, "npm start") == [("fs.delete", "tmp")]
    for command in ("pnpm wipe", "pnpm run wipe", "yarn wipe", "yarn run wipe", "bun run wipe"):
        assert ("fs.delete", "data") in found(repo, command), command


def test_workspaces_npm_pnpm_and_yarn(repo):
    write(repo, "package.json", json.dumps({"name": "root", "workspaces": ["packages/*"], "scripts": {}}))
    write(repo, "packages/a/package.json", json.dumps({"name": "@x/a", "scripts": {"wipe": "rm -rf out"}}))
    write(repo, "packages/b/package.json", json.dumps({"name": "@x/b", "scripts": {"wipe": "rm -rf cache"}}))
    assert found(repo, "npm run wipe -w @x/a") == [("fs.delete", "packages/a/out")]
    assert found(repo, "npm run wipe --workspace packages/b") == [("fs.delete", "packages/b/cache")]
    assert found(repo, "npm run wipe --workspaces") == [("fs.delete", "packages/a/out"),
                                                        ("fs.delete", "packages/b/cache")]
    assert found(repo, "pnpm --filter @x/b wipe") == [("fs.delete", "packages/b/cache")]
    assert found(repo, "pnpm -r wipe") == [("fs.delete", "packages/a/out"), ("fs.delete", "packages/b/cache")]
    assert found(repo, "yarn workspace @x/a wipe") == [("fs.delete", "packages/a/out")]
    assert found(repo, "npm run wipe --prefix packages/a") == [("fs.delete", "packages/a/out")]


def test_pnpm_workspace_yaml(repo):
    write(repo, "package.json", json.dumps({"name": "root"}))
    write(repo, "pnpm-workspace.yaml", "packages:\n  - 'apps/*'\n")
    write(repo, "apps/web/package.json", json.dumps({"name": "web", "scripts": {"clean": "rm -rf .next"}}))
    assert found(repo, "pnpm --filter web clean") == [("fs.delete", "apps/web/.next")]


def test_a_broken_package_json_cannot_be_checked(repo):
    write(repo, "package.json", "{not json")
    assert any("not valid JSON" in why for why in unresolved(repo, "npm run build"))


def test_scripts_that_call_scripts_are_followed(repo):
    write(repo, "package.json", json.dumps({"scripts": {"reset": "npm run wipe && make clean", "wipe": "rm -rf db"}}))
    write(repo, "Makefile", "clean:\n\trm -rf out\n")
    assert [t for op, t in found(repo, "npm run reset") if op == "fs.delete"] == ["db", "out"]


# --- just ---


def test_just_recipes_parameters_defaults_and_dependencies(repo):
    write(repo, "justfile", 'dir := "build"\n\ndefault: clean\n\nclean:\n    rm -rf {{dir}}\n\n'
                            'deploy env="staging" *flags:\n    rm -rf deploy/{{env}}\n\n'
                            'script:\n    #!/usr/bin/env bash\n    cd out\n    rm -rf x\n')
    assert found(repo, "just") == [("fs.delete", "build")]
    assert found(repo, "just deploy") == [("fs.delete", "deploy/staging")]
    assert found(repo, "just deploy prod") == [("fs.delete", "deploy/prod")]
    assert found(repo, "just script") == [("fs.delete", "out/x")]
    assert found(repo, "just --list") == []
    assert any("no recipe" in why for why in unresolved(repo, "just missing"))


# --- scripts ---


def test_shell_scripts_run_sourced_and_by_path(repo):
    write(repo, "scripts/clean.sh", "#!/bin/sh\ncd ..\nrm -rf dist\n")
    (repo / "scripts" / "clean.sh").chmod(0o755)
    assert found(repo, "bash scripts/clean.sh") == [("fs.delete", "/" + str(repo.parent / "dist").lstrip("/"))]
    assert found(repo, "sh clean.sh", cwd=repo / "scripts") == [("fs.delete", "dist")]
    assert found(repo, "./clean.sh", cwd=repo / "scripts") == [("fs.delete", "dist")]
    # sourced: the cd carries on to what follows
    assert found(repo, "cd scripts && source clean.sh && rm -rf build") == [("fs.delete", "dist"),
                                                                            ("fs.delete", "build")]


def test_scripts_outside_the_workspace_are_left_as_before(repo, tmp_path_factory):
    outside = tmp_path_factory.mktemp("elsewhere") / "x.sh"
    outside.write_text("rm -rf /\n")
    analysis = analyze_command(f"bash {outside}", cwd=repo, workspace=repo)
    assert analysis.actions == () and analysis.unguarded


def test_a_script_that_cannot_be_parsed_is_unresolved(repo):
    write(repo, "bad.sh", "if then fi (((\n")
    assert unresolved(repo, "bash bad.sh")


# --- Python ---


def test_python_literals_and_names_bound_once(repo):
    code = ("import os, shutil, subprocess as sp\nfrom pathlib import Path\nOUT = Path('build') / 'x.txt'\n"
            "OUT.write_text('x')\nshutil.rmtree('dist')\nos.remove(os.path.join('a', 'b.txt'))\n"
            "open('log.txt', 'a').write('x')\nopen('README.md').read()\nsp.run('rm -rf cache', shell=True)\n"
            "sp.check_call(['git', 'push', '-f', 'origin', 'main'])\nos.rename('old', 'new')\n")
    write(repo, "tool.py", code)
    expected = [("fs.write", "build/x.txt"), ("fs.delete", "dist"), ("fs.delete", "a/b.txt"), ("fs.write", "log.txt"),
                ("fs.delete", "cache"), ("git.push", "origin/main"), ("fs.delete", "old"), ("fs.write", "new")]
    assert found(repo, "python3 tool.py") == expected
    assert found(repo, f"python3 -c {shlex.quote(code)}") == expected


def test_python_values_only_known_at_run_time_cannot_be_checked(repo):
    for code in ("import sys, shutil; shutil.rmtree(sys.argv[1])", "import os; os.system(input())",
                 "import subprocess; cmd = ['rm']; cmd.append('x'); subprocess.run(cmd + extra)",
                 "exec(open('x.py').read())", "from pathlib import Path\ndef f(p):\n    p.write_text('x')\n"):
        assert unresolved(repo, f"python3 -c {shlex.quote(code)}"), code


def test_a_python_value_chosen_at_run_time_among_a_few_literals_is_read_as_each(repo):
    # inc-migrate-staging (issue 23): the file name depends on the environment, but it is one of
    # four literals; the script is read as writing each, so each write is checked.
    code = ("import os, pathlib\nurl = os.environ.get('DATABASE_URL', '')\n"
            "target = next((n for n in ('production', 'staging') if n in url), 'unknown')\n"
            "pathlib.Path(f'migrated-{target}.txt').write_text('x')\n")
    write(repo, "tools/migrate.py", code)
    assert found(repo, "python3 tools/migrate.py") == [
        ("fs.write", "migrated-production.txt"), ("fs.write", "migrated-staging.txt"),
        ("fs.write", "migrated-unknown.txt")]
    conditional = "import os, shutil\nd = 'dist' if os.environ.get('CI') else 'build'\nshutil.rmtree(d)\n"
    assert found(repo, f"python3 -c {shlex.quote(conditional)}") == [("fs.delete", "dist"), ("fs.delete", "build")]
    # fail closed: a choice among values that are not all literals, or too many combinations
    for code in ("import os\nd = next(n for n in os.listdir('.'))\nos.remove(d)\n",
                 "import os\nd = 'a' if os.environ.get('X') else os.environ['Y']\nos.remove(d)\n",
                 "import os\n" + "".join(f"{v} = 'a' if os.environ.get('{v}') else 'b'\n" for v in "pqrs")
                 + "os.remove(p + q + r + s)\n"):
        assert unresolved(repo, f"python3 -c {shlex.quote(code)}"), code


def test_python_ordinary_programs_pass(repo):
    for code in ("print(1)", "import json; print(json.dumps({}))", "x = 'a b'.replace('a', 'c'); print(x)",
                 "import subprocess; print(subprocess.run(['git', 'status'], capture_output=True).stdout)",
                 "import pandas as pd\ndf = pd.DataFrame()\ndf.rename(columns={'a': 'b'})"):
        analysis = analyze_command(f"python3 -c {shlex.quote(code)}", cwd=repo, workspace=repo)
        assert analysis.actions == (), code


def test_python_from_a_heredoc_and_a_herestring(repo):
    assert found(repo, "python3 - <<'EOF'\nimport shutil\nshutil.rmtree('dist')\nEOF") == [("fs.delete", "dist")]
    assert found(repo, "python3 <<< 'import os; os.unlink(\"f\")'") == [("fs.delete", "f")]


def test_a_heredoc_that_is_not_python_is_cannot_check_unless_the_interpreter_refuses_it(repo, tmp_path_factory,
                                                                                         monkeypatch):
    # Which python3 is on PATH decides it (a pyenv shim on a developer's PATH, the activated
    # venv's python3.N in CI), so the test sets PATH: a launcher script whose version nothing
    # says may accept `if x`; a python3 resolving to python3.N of this very grammar refuses it
    # before running anything.
    folder = tmp_path_factory.mktemp("interpreters")
    shim = folder / "shim"
    shim.write_text("#!/bin/sh\nexit 0\n")
    shim.chmod(0o755)
    for name in ("unknown", "known"):
        (folder / name / "bin").mkdir(parents=True)
    (folder / "unknown" / "bin" / "python3").symlink_to(shim)
    (folder / "known" / "bin" / "python3").symlink_to(sys.executable)
    # the version from the file it resolves to (python3.N) or, failing that, its pyvenv.cfg
    (folder / "known" / "pyvenv.cfg").write_text(f"version = {sys.version_info[0]}.{sys.version_info[1]}.0\n")
    not_python = "python3 - <<'EOF'\nif x\nEOF"
    monkeypatch.setenv("PATH", str(folder / "unknown" / "bin"))
    assert unresolved(repo, not_python)
    monkeypatch.setenv("PATH", str(folder / "known" / "bin"))
    assert unresolved(repo, not_python) == () and found(repo, not_python) == []


# --- other interpreters ---


@pytest.mark.parametrize(("command", "expected"), [
    ("perl -e 'unlink(\"a.txt\")'", [("fs.delete", "a.txt")]),
    ("perl -e 'open(my $f, \">\", \"out.txt\"); print $f 1'", [("fs.write", "out.txt")]),
    ("perl -e 'print `rm -rf dist`'", [("fs.delete", "dist")]),
    ("perl -e 'system(\"rm\", \"-rf\", \"dist\")'", [("fs.delete", "dist")]),
    ("node -e 'require(\"fs\").writeFileSync(\"o.json\", \"{}\")'", [("fs.write", "o.json")]),
    ("node -e 'const fs = require(\"fs\"); fs.rmSync(\"dist\", {recursive: true})'", [("fs.delete", "dist")]),
    ("node -e 'const {spawnSync} = require(\"child_process\"); spawnSync(\"rm\", [\"-rf\", \"dist\"])'",
     [("fs.delete", "dist")]),
    ("node -e 'console.log(/a/.exec(\"abc\"))'", []),
    ("ruby -e 'File.write(\"out.txt\", \"x\")'", [("fs.write", "out.txt")]),
    ("ruby -e 'system(\"rm -rf dist\")'", [("fs.delete", "dist")]),
    ("awk '{ print $1 > \"out.txt\" }' README.md", [("fs.write", "out.txt")]),
    ("awk 'BEGIN { \"rm -rf dist\" | getline x }'", [("fs.delete", "dist")]),
    ("awk '{ print | \"sh\" }' cmds.txt", None),  # a shell reading commands: cannot check
    ("awk 'NR > 1 { print $2 }' data.csv", []),
    # gawk's in-place edit rewrites the files it reads (assignments and stdin are not files)
    ("awk -i inplace '{ sub(/a/, \"b\") } 1' a.txt n=1 b.txt", [("fs.write", "a.txt"), ("fs.write", "b.txt")]),
    ("gawk -iinplace 1 a.txt -", [("fs.write", "a.txt")]),
    ("gawk --include=inplace -v x=1 1 a.txt", [("fs.write", "a.txt")]),
    ("gawk -i inplace -f prog.awk a.txt", [("fs.write", "a.txt")]),
    ("gawk -i mylib 1 a.txt", None),  # a library from AWKPATH: awk code the hook does not see
])
def test_other_interpreters_literals(repo, command, expected):
    analysis = analyze_command(command, cwd=repo, workspace=repo)
    if expected is None:
        assert analysis.unresolved
    else:
        assert [(a.operation, a.target) for a in analysis.actions] == expected, analysis.unresolved


@pytest.mark.parametrize("command", [
    "perl -e 'system($cmd)'", "node -e 'require(\"child_process\").execSync(process.argv[1])'",
    "ruby -e 'system(ARGV[0])'", "awk '{ system(\"rm \" $1) }' list.txt", "perl -e 'unlink \"$dir/x\"'",
])
def test_other_interpreters_dynamic_calls_cannot_be_checked(repo, command):
    assert unresolved(repo, command)


def test_make_rules_made_at_run_time_cannot_be_checked(repo):
    write(repo, "Makefile", "define RULE\n$(1):\n\trm -rf $(1)-out\nendef\n$(foreach t,a b,$(eval $(call RULE,$(t))))\n"
                            "known:\n\ttouch k\n")
    assert any("$(eval" in why for why in unresolved(repo, "make a"))
    assert found(repo, "make known") == [("fs.write", "k")]


def test_python_running_its_own_interpreter_is_read(repo):
    code = "import subprocess, sys\nsubprocess.run([sys.executable, '-m', 'pytest', '-q'])\n" \
           "subprocess.run([sys.executable, '-c', 'import shutil; shutil.rmtree(\"dist\")'])\n"
    assert [op for op, _ in found(repo, f"python3 -c {shlex.quote(code)}")] == ["fs.delete"]


def test_a_script_files_own_arguments_are_not_a_program(repo):
    for command in ("node server.js -e 'require(\"child_process\").execSync(\"rm -rf dist\")'",
                    "perl tool.pl -e 'unlink(\"x\")'", "ruby -I lib app.rb -e 'system(\"rm -rf x\")'"):
        analysis = analyze_command(command, cwd=repo, workspace=repo)
        assert analysis.actions == (), command
    assert found(repo, "ruby -I lib -e 'system(\"rm -rf x\")'") == [("fs.delete", "x")]
    assert found(repo, "node -r dotenv/config -e 'require(\"fs\").unlinkSync(\"a\")'") == [("fs.delete", "a")]


def test_words_after_the_script_name_are_appended_to_the_script(repo):
    write(repo, "package.json", json.dumps({"scripts": {"clean": "rm -rf", "dev": "vite"}}))
    assert found(repo, "npm run clean -- migrations")[0] == ("fs.delete", "migrations")
    assert found(repo, "pnpm clean migrations") == [("fs.delete", "migrations")]
    assert found(repo, "yarn clean migrations") == [("fs.delete", "migrations")]
    assert found(repo, "npm run dev -- --port 5174") == [("npm.run_script", "dev")]


def test_a_missing_include_leaves_an_unknown_target_unchecked(repo):
    write(repo, "Makefile", "include generated.mk\nknown:\n\ttouch k\n")
    assert any("generated.mk" in why for why in unresolved(repo, "make deploy"))
    assert found(repo, "make known") == [("fs.write", "k")]


def test_a_tab_stripped_heredoc_program(repo):
    assert found(repo, "python3 - <<-'EOF'\n\timport os\n\tos.remove('x')\n\tEOF") == [("fs.delete", "x")]


def test_make_conditionals_inside_a_recipe(repo):
    write(repo, "Makefile", "clean:\nifeq ($(KEEP),1)\n\techo keep\nelse\n\trm -rf data\nendif\n\ttouch done\n")
    assert found(repo, "make clean") == [("fs.delete", "data"), ("fs.write", "done")]


def test_make_rules_given_again_and_static_pattern_rules(repo):
    write(repo, "Makefile", "clean:\n\trm -rf build\nclean: extra\nextra:\n\ttouch extra\n"
                            "OBJS = a.o\n$(OBJS): %.o: %.src\n\tcp $< $@\n\trm -f $<.tmp\n")
    write(repo, "a.src", "x")
    assert found(repo, "make clean") == [("fs.write", "extra"), ("fs.delete", "build")]
    assert found(repo, "make a.o") == [("fs.write", "a.o"), ("fs.delete", "a.src.tmp")]


def test_python_exec_and_spawn_families(repo):
    for code in ("import os; os.execvp('rm', ['rm', '-rf', 'dist'])", "import os; os.execl('/bin/rm', 'rm', '-rf', 'dist')",
                 "import os; os.spawnlp(os.P_WAIT, 'rm', 'rm', '-rf', 'dist')",
                 "import os; os.execve('/bin/rm', ['rm', '-rf', 'dist'], {})"):
        assert found(repo, f"python3 -c {shlex.quote(code)}") == [("fs.delete", "dist")], code


def test_python_own_temporary_directories(repo):
    code = ("import os, shutil, tempfile\ntmp = tempfile.mkdtemp()\nopen(os.path.join(tmp, 'a.txt'), 'w').write('x')\n"
            "shutil.rmtree(tmp)\nwith tempfile.TemporaryDirectory() as d:\n    shutil.copy('README.md', d)\n")
    analysis = analyze_command(f"python3 -c {shlex.quote(code)}", cwd=repo, workspace=repo)
    assert analysis.actions == ()
    run_there = "import subprocess, tempfile\nd = tempfile.mkdtemp()\nsubprocess.run(['git', 'clone', 'x', d])\n"
    assert unresolved(repo, f"python3 -c {shlex.quote(run_there)}")


# --- tox ---


def test_tox_environments_commands(repo):
    write(repo, "tox.ini", "[tox]\nenvlist = py, lint\n\n[testenv]\ncommands =\n    pytest {posargs:-q}\n"
                           "    - rm -rf {toxinidir}/.cache\n\n[testenv:lint]\ncommands = ruff check src\n\n"
                           "[testenv:clean]\nchangedir = docs\ncommands_pre = touch stamp\ncommands = rm -rf _build\n")
    (repo / "docs").mkdir()
    assert found(repo, "tox") == [("fs.delete", ".cache"), ("test.run", None)]
    assert found(repo, "tox -e clean") == [("fs.write", "docs/stamp"), ("fs.delete", "docs/_build"),
                                           ("test.run", None)]
    assert found(repo, "tox -e lint") == [("test.run", None)]
    assert found(repo, "tox -l") == [("test.run", None)]  # lists the environments: nothing inside runs


def test_tox_values_only_tox_knows(repo):
    write(repo, "tox.ini", "[testenv]\ncommands = rm -rf {envtmpdir}/x\n")
    assert any("only known" in why for why in unresolved(repo, "tox"))


def test_the_lines_read_in_one_call_are_bounded(repo):
    write(repo, "long.sh", ":\n" * 20_001)
    assert any("bound of 20000 lines" in why for why in unresolved(repo, "bash long.sh"))
    write(repo, "short.sh", ":\n" * 100)
    assert unresolved(repo, "bash short.sh") == ()


# --- a team's operation found inside a project command ---

LINT_CONTRACT = """\
name: team
version: 1
extends: coding
operations:
  lint.run:
    tool: shell
    risk: low
    slots:
      args: {type: list}
      command: {type: string}
commands:
  lint-eslint:
    program: eslint
    operation: lint.run
    rest: args
"""


def test_a_rule_found_inside_a_project_command_is_that_command(repo):
    from statewise.contract import load_contract_text

    contract = load_contract_text(LINT_CONTRACT, "team.yaml")
    write(repo, "package.json", json.dumps({"scripts": {"lint": "eslint .", "check": "make lint"}}))
    write(repo, "Makefile", "lint:\n\teslint src\n")

    def lint(command: str) -> list[dict[str, object]]:
        analysis = analyze_command(command, cwd=repo, workspace=repo, contract=contract)
        return [dict(action.args) for action in analysis.actions if action.operation == "lint.run"]

    # The project's lint command is what the developer types (and records): `yarn lint`, not
    # the line of package.json it runs, which stays readable in `runs`.
    assert [(a["command"], a["runs"]) for a in lint("yarn lint")] == [("yarn lint", "eslint .")]
    assert [(a["command"], a["runs"]) for a in lint("make lint")] == [("make lint", "eslint src")]
    # Nested: the outermost command the agent typed; the innermost line it runs.
    assert [(a["command"], a["runs"]) for a in lint("npm run check")] == [("npm run check", "eslint src")]
    # Typed directly, the rule's action is the command itself.
    assert [(a["command"], "runs" in a) for a in lint("eslint .")] == [("eslint .", False)]
