"""Issue 25 item 6: a command that starts a program reading and running what is typed into its
terminal, for a client that can type into it later with no hook call (Codex's ``write_stdin``).

The command model lists such starts as ``sessions`` (analyze_command(..., typed_input=True));
the installed hook asks at the start for Codex, saying that later input is not checked (Codex
renders the question as a block: it has no ask). Other clients cannot type into a running
command, and their answers are unchanged. Ordinary non-interactive commands stay quiet. A real
repository with a real bare origin, driven through the installed wrapper."""

from __future__ import annotations

import pytest

from statewise.commands import analyze_command
from tests.integrations.installed import make_project

#: Each starts a program that reads what is typed into it and runs it.
TYPED = [
    ("python3 -c 'exec(input())'", "`python3 -c` runs a program that reads what is typed into it (input())"),
    ("python3 -c 'import sys; exec(sys.stdin.read())'", "(sys.stdin.read())"),
    ("python3 -c 'import code; code.interact()'", "(code.interact())"),
    ("python3", "`python3` opens an interactive interpreter"),
    ("python3 -i", "`python3` opens an interactive interpreter (-i)"),
    ("python3 -m code", "`python3` opens an interactive console (-m code)"),
    ("node", "`node` opens an interactive interpreter"),
    ("bash -i", "`bash` opens an interactive shell"),
    ("sh", "`sh` opens an interactive shell"),
    ("perl -e 'eval <STDIN>'", "`perl -e` runs a program that reads what is typed into it (<STDIN>)"),
    ("ruby -e 'eval gets'", "`ruby -e` runs a program that reads what is typed into it (gets)"),
    ("node -e 'eval(require(\"fs\").readFileSync(0, \"utf8\"))'", "`node -e` runs a program that reads"),
    ("python3 manage.py shell", "`python3` opens Django's interactive shell (manage.py shell)"),
    ("python3 manage.py dbshell", "`python3` opens the database's client shell (manage.py dbshell)"),
]
QUIET = ["python3 script.py", "python -c 'print(1)'", "python3 -c 'name = input(); print(name)'",
         "python3 manage.py shell -c 'print(1)'", "python3 manage.py runserver --noreload",
         "node -e 'console.log(1)'", "perl -e 'eval { 1 }; print 2'", "ruby -e 'puts 1'", "git status", "ls -la"]


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    return make_project(tmp_path_factory.mktemp("typed"), protected=["migrations"])


@pytest.mark.parametrize(("command", "said"), TYPED)
def test_the_command_model_lists_each_start_as_a_session_only_with_typed_input(project, command, said):
    typed = analyze_command(command, cwd=project.work, typed_input=True)
    assert len(typed.sessions) == 1 and said in typed.sessions[0], typed.sessions
    assert not typed.unresolved and not typed.read_only
    plain = analyze_command(command, cwd=project.work)
    assert plain.sessions == () and plain.unresolved, plain  # without it: cannot check, as before


@pytest.mark.parametrize(("command", "said"), TYPED)
def test_codex_is_asked_at_the_start_and_told_later_input_is_not_checked(project, command, said):
    answer = project.bash(command, agent="codex")
    assert answer.decision == "deny" and answer.exit_code == 2  # Codex has no ask: the question blocks
    assert answer.reason.startswith("StateWise asks the developer: ") and said in answer.reason
    assert ("The agent can type into it later (write_stdin), which runs no hook: nothing typed into it is checked "
            "by StateWise.") in answer.reason


@pytest.mark.parametrize("command", [command for command, _ in TYPED[:3]] + ["python3", "bash -i"])
def test_clients_that_cannot_type_into_a_command_keep_their_answer(project, command):
    for agent in ("claude-code", "gemini"):
        answer = project.bash(command, agent=agent)
        assert answer.decision == "deny" and "StateWise cannot check" in answer.reason, (agent, answer)
        assert "write_stdin" not in answer.reason


@pytest.mark.parametrize("command", QUIET)
def test_ordinary_non_interactive_commands_stay_quiet_for_codex(project, command):
    assert analyze_command(command, cwd=project.work, typed_input=True).sessions == ()
    answer = project.bash(command, agent="codex")
    assert answer.decision == "defer", answer


def test_input_from_a_file_or_a_here_document_is_not_a_session(project):
    for command in ("python3 < script.py", "python3 -m code < /dev/null", "python3 - <<'EOF'\nprint(1)\nEOF",
                    "perl -e 'eval <STDIN>' < /dev/null"):
        analysis = analyze_command(command, cwd=project.work, typed_input=True)
        assert analysis.sessions == (), (command, analysis)


def test_eval_of_code_only_known_at_run_time_cannot_be_checked_for_every_client(project):
    # The general rule behind `perl -e 'eval <STDIN>'`: eval is exec; a literal is read as a program.
    for command in ("perl -e 'eval $ARGV[0]' x", "ruby -e 'eval ARGV[0]' x", "node -e 'eval(process.argv[1])' x"):
        analysis = analyze_command(command, cwd=project.work)
        assert any("eval" in reason and "only known at run time" in reason for reason in analysis.unresolved), \
            (command, analysis.unresolved)
    deleting = analyze_command("""perl -e 'eval "unlink q(migrations/0001.sql)"'""", cwd=project.work)
    assert deleting.first("fs.delete") is not None, deleting


def test_a_django_shell_program_is_read_like_python_c_for_every_client(project):
    # `manage.py shell -c CODE` is a Python interpreter in the project's settings: its program is
    # read with ast like `python -c`'s (it passed unread before), and so is one from a heredoc.
    for command in ("python3 manage.py shell -c \"import shutil; shutil.rmtree('migrations')\"",
                    "python3 manage.py shell <<'EOF'\nimport os\nos.remove('migrations/0001.sql')\nEOF"):
        for agent in ("claude-code", "codex", "gemini"):
            answer = project.bash(command, agent=agent)
            assert answer.decision == "deny" and "migrations" in answer.reason, (agent, command, answer)
