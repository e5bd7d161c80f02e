"""Issue 22, the real-traffic stops read better, through the installed hook: sed scripts read as
sed compiles them (the text of a\\ i\\ c\\ is text; a script sed refuses does nothing), ``$PWD``
and ``$(pwd)`` known as the directory the command runs in, ``PROGRAM --version``/``--help``,
and docker/podman object names that are not paths.

Each command goes through the wrapper ``statewise install`` writes, as Claude Code runs it (a
real subprocess fed the PreToolUse JSON), in a real repository with a bare origin protecting
``main`` and a store holding the developer's ``fs.protected_paths`` (``.env``, ``migrations``,
``data``). The commands marked "real traffic" are the ones of benchmarks/traffic that the hook
stopped before these readings (docs/results-world.md).
"""

from __future__ import annotations

import pytest

from statewise.commands.sed import read_sed_script
from tests.integrations.installed import Project, make_project


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Project:
    made = make_project(tmp_path_factory.mktemp("traffic"), protected=[".env", "migrations", "data"])
    (made.work / "data").mkdir()
    (made.work / "data" / "seed.csv").write_text("sku,qty\nA1,3\n")
    (made.work / "sphinx" / "domains").mkdir(parents=True)
    (made.work / "sphinx" / "domains" / "python.py").write_text("x = 1\n" * 900)
    (made.work / "point.py").write_text("class Point:\n    pass\n" * 200)
    (made.work / "README.md").write_text("# readme\n")
    (made.work / "run.sh").write_text("#!/bin/sh\nrm -rf migrations\n")
    return made


PASSED = [
    # real traffic: the c\ text holds `self.env` (an attribute), and `foo()` (Python, not a function
    # definition of the shell)
    "sed -i '863,865c\\        typ = self.options.get(\"type\")\\\n        if typ:\\\n"
    "            annotations = _parse_annotation(typ, self.env)\\\n            x = foo()' sphinx/domains/python.py",
    # real traffic: the a\ text ends after its first line, so sed reads `"""...` as a command,
    # finds none, and refuses the script: it exits 1 and point.py is left as it was
    "sed -i '280a\\\n    def __rmul__(self, factor):\n        \"\"\"Multiply point'\\''s coordinates.\n"
    "        \"\"\"\n        return self.__mul__(factor)' point.py",
    "sed -i '3i\\\n# rm -rf migrations > .env' point.py",  # text, not a command and not a write
    "sed -e '1a\\' -e 'w .env' README.md",  # GNU joins -e scripts: the second is the a\ text
    # real traffic: the working directory is known
    "docker run -v $(pwd):/apache__dubbo -w /apache__dubbo openjdk:11 ./mvnw test",
    "ls \"$PWD/src\"",
    # real traffic: version and help
    "tox --version", "pytest --help", "some-unknown-tool --version", "git push --help",
    "terraform apply --help",
    # docker object names: a volume called data is not the directory data/
    "docker volume rm data", "podman volume rm -f data", "docker rm -f data", "docker network inspect data",
]


@pytest.mark.parametrize("command", PASSED)
def test_ordinary_commands_pass(project, command):
    answer = project.bash(command)
    assert answer.decision not in ("deny", "ask"), answer


DENIED = [
    ("rm -rf $(pwd)/migrations", "migrations"),
    ("rm -rf \"$PWD/migrations\"", "migrations"),
    ("rm -rf ${PWD}/data", "data"),
    ("rm -rf `pwd`/data", "data"),
    ("cd src && rm -rf $PWD/../migrations", "migrations"),
    ("sed -n 'w .env' README.md", ".env"),
    # GNU sed opens a `w` file while compiling: the script is refused after it, .env is emptied
    ("sed -n 'w .env\n\"' README.md", ".env"),
    ("sed -i '1a\\\nx' .env", ".env"),
    # a workspace script may ignore its arguments: it is read, --version or not
    ("./run.sh --version", "migrations"),
    ("f() { rm -rf migrations; }; f --version", "migrations"),  # a function of the command's own
]


@pytest.mark.parametrize(("command", "target"), DENIED, ids=[c for c, _ in DENIED])
def test_protected_targets_are_still_denied(project, command, target):
    answer = project.bash(command)
    assert answer.decision == "deny", answer
    assert target in answer.reason, answer


ASKED = [
    ("sed -n 'r .env' README.md", ".env"),  # r names a file read
    ("sed -n '1i .env' README.md | xargs cat", ".env"),  # the text printed is fed to a reader
    ("docker run --rm -v ./data:/x alpine ls /x", "data"),  # a bind mount is a path
    ("docker run --rm --mount type=bind,source=./data,target=/x alpine ls", "data"),
]


@pytest.mark.parametrize(("command", "target"), ASKED, ids=[c for c, _ in ASKED])
def test_reads_and_bind_mounts_of_protected_targets_are_asked(project, command, target):
    answer = project.bash(command)
    assert answer.decision in ("ask", "deny"), answer
    assert target in answer.reason, answer


def test_cannot_check_stays_cannot_check(project):
    # a PWD the command sets, a pwd it defines, a directory the walk cannot follow
    for command in ("PWD=/tmp; rm -rf $PWD/migrations", "pwd() { echo /; }; rm -rf $(pwd)/migrations",
                    "cd \"$(mktemp -d)\" && rm -rf $PWD/migrations",
                    "sed -i '/x/e cat extra.py' point.py"):  # `e` runs a command
        answer = project.bash(command)
        assert answer.decision in ("deny", "ask"), (command, answer)
        assert "cannot check" in answer.reason or "only known at run time" in answer.reason, (command, answer)


def test_the_sed_script_reader():
    read = read_sed_script("1r notes.txt\n/x/w out.log\ns/a/b/w log2\n$a\\\ntext w not-a-file\\\nmore")
    assert read is not None
    assert read.reads == ("notes.txt",) and read.writes == ("out.log", "log2") and not read.runs
    assert not read.refused
    assert read_sed_script("s/a/b/e").runs and read_sed_script("1e date").runs
    refused = read_sed_script('1a\\\nline\n"""doc')
    assert refused is not None and refused.refused
    assert read_sed_script("5").refused  # an address with no command
    # a\ text whose line ends in an escaped backslash ends there: the next line is a command
    assert read_sed_script("1a foo\\\\\nw out").writes == ("out",)
    assert read_sed_script("s/a/b") is None  # unterminated: not read
