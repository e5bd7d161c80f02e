"""The strings a program names where StateWise cannot show the program only reads them
(commands/named.py): what the hook's self-protection checks against StateWise's own paths."""

from __future__ import annotations

import pytest

from statewise.commands import analyze_command
from statewise.commands.inline import PY_MODELLED
from statewise.commands.named import Named, program_names, python_names


def values(names):
    return [(name.value, name.prefix) for name in names]


@pytest.mark.parametrize(("code", "named"), [
    ("import socket; socket.socket(socket.AF_UNIX).bind('/run/x.sock')", [("/run/x.sock", False)]),
    ("p = '/run/x.sock'\nimport os\nos.mkfifo(p)", [("/run/x.sock", False)]),
    ("import os\nos.mkfifo(os.path.join('/run', 'x'))", [("/run", False), ("x", False)]),
    ("import os\nos.mkfifo(f'/tmp/statewise-{os.getuid()}/x.sock')", [("/tmp/statewise-", True)]),
    ("import sqlite3\nsqlite3.connect('.statewise/store.db')", [(".statewise/store.db", False)]),
])
def test_a_string_given_to_a_call_statewise_does_not_know_is_named(code, named):
    assert values(python_names(code, PY_MODELLED)) == named


@pytest.mark.parametrize("code", [
    "print(open('.statewise/config.toml').read())",
    "import json\nprint(json.load(open('.claude/settings.json')))",
    "from pathlib import Path\nprint(Path('.statewise/config.toml').read_text())",
    "import os\nprint(os.listdir('/run/statewise'))",
    "p = '.statewise/config.toml'\nprint(open(p).read())",
    "import subprocess\nsubprocess.run(['cat', '.claude/settings.json'])",  # analyzed as the command it runs
    "open('.statewise/config.toml', 'w')",  # a write the analyzer reports as an action
    '"""Reads .statewise/config.toml."""',
    "if name == '.statewise/config.toml':\n    pass",
])
def test_a_string_only_read_or_already_an_action_is_not_named(code):
    assert python_names(code, PY_MODELLED) == []


def test_a_program_that_does_not_parse_is_left_to_the_analyzer():
    assert python_names("def (:") is None


@pytest.mark.parametrize(("code", "language", "named"), [
    ("require('net').createServer().listen('/run/x.sock')", "node", [("net", False), ("/run/x.sock", False)]),
    ("console.log(require('fs').readFileSync('/run/x.json', 'utf8'))", "node", [("fs", False), ("utf8", False)]),
    ("const d = `/tmp/statewise-${process.getuid()}/x.sock`", "node", [("/tmp/statewise-", True)]),
    ('IO::Socket::UNIX->new(Local => "/run/x.sock")', "perl", [("/run/x.sock", False)]),
    ('print "/run/x.sock"', "perl", []),
    ('UNIXServer.new("/run/x.sock")', "ruby", [("/run/x.sock", False)]),
])
def test_other_languages_name_every_literal_not_given_to_a_known_read(code, language, named):
    assert values(program_names(code, language)) == named


def test_the_analysis_carries_the_names_with_the_folder_the_program_runs_in(tmp_path):
    analysis = analyze_command("cd src && python3 -c \"import socket; socket.socket().bind('x.sock')\"", cwd=tmp_path)
    assert analysis.named == (Named("x.sock", False, str(tmp_path / "src"), "the program of `python3 -c`"),)
    assert analyze_command("python3 -c \"print('hello')\"", cwd=tmp_path).named == ()


@pytest.mark.parametrize("code", [
    "import os, socket\nsocket.socket().bind('/tmp/statewise-{}/x.sock'.format(os.getuid()))",
    "import os, socket\nsocket.socket().bind('/tmp/statewise-%d/x.sock' % os.getuid())",
    "import os, socket\nsocket.socket().bind('/tmp/statewise-' + str(os.getuid()) + '/x.sock')",
    "import os, socket\nsocket.socket().bind(os.path.expanduser('/tmp/statewise-' + str(os.getuid())))",
])
def test_a_string_filled_in_at_run_time_is_named_by_its_start(code):
    assert ("/tmp/statewise-", True) in values(python_names(code, PY_MODELLED))


@pytest.mark.parametrize(("code", "language"), [
    ("require('net').createServer().listen('/tmp/statewise-' + process.getuid() + '/x.sock')", "node"),
    ('IO::Socket::UNIX->new(Local => "/tmp/statewise-" . $< . "/x.sock")', "perl"),
    ('UNIXServer.new("/tmp/statewise-" + Process.uid.to_s)', "ruby"),
])
def test_a_literal_joined_with_what_follows_is_named_by_its_start(code, language):
    assert ("/tmp/statewise-", True) in values(program_names(code, language))
