"""Secrets are protected without records (issue 25): with no fs.protected_paths record, writes
and deletes of .env files, private keys and cloud credential files are denied, reads are asked,
and templates (.env.example) are ordinary files; a contract's `secrets:` section changes the
effects. Through the installed hook, in a real repository."""

from __future__ import annotations

import pytest

from statewise.protection import SecretRules, is_secret_name
from tests.integrations.installed import make_project

DENIED = [
    ("rm .env", ".env"),
    ("echo x > .env", ".env"),
    ("mv .env .env.bak", ".env"),
    ("cp README.md .env", ".env"),
    ("rm -f ~/.ssh/id_ed25519", "id_ed25519"),
    ("echo x > certs/tls.key", "tls.key"),
    ("rm certs/tls.key", "tls.key"),
    ("echo '[default]' >> ~/.aws/credentials", ".aws/credentials"),
    ("rm ~/.kube/config", ".kube/config"),
    ("echo '{}' > ~/.docker/config.json", ".docker/config.json"),
    ("echo x > ~/.pypirc", ".pypirc"),
    ("rm -rf ~/.config/gcloud", ".config/gcloud"),
    ("GIT_TRACE=$PWD/.env git status", ".env"),
    ("GIT_INDEX_FILE=.env git read-tree HEAD", ".env"),
    # awk's print redirection is read as the write it is (the command model reads inside awk
    # programs), so it is denied like any other write of a secret, no longer only asked.
    ("awk '{print > \".env\"}' README.md", ".env"),
]
ASKED = [
    ("cat .env", ".env"),
    ("grep SECRET .env", ".env"),
    ("cat ~/.aws/credentials", ".aws/credentials"),
    ("source .env && echo $SECRET", ".env"),
    # a here-document that may run something, or that a program reads as more than a file's text
    ("cat <<EOF > notes.txt\n$(cat .env)\nEOF", ".env"),
    ("python3 - <<'EOF'\nprint(open('.env').read())\nEOF", ".env"),
    # issue 22 real traffic: a pattern is not a file, but what a search's matches are fed to
    # reads them, and a file a search searches is read
    ("find . -name '*.env' | xargs cat", "*.env"),
    ("find . -name '*.env' -exec cat {} \\;", "*.env"),
    ("grep -r --include='*.env' KEY .", "*.env"),
    ("grep -e KEY .env", ".env"),
    ("grep -rn 'x' -- .env", ".env"),
    ("sudo grep KEY .env", ".env"),
]
PASSED = ["cat .env.example", "cp .env.example .env.sample", "echo X= >> .env.example", "cat README.md",
          "cp .env.example .env.local",  # a new file: no credentials are overwritten
          "echo registry=https://example.invalid > .npmrc", "ls ~/.ssh/known_hosts", "git status",
          # issue 22 real traffic: the text of a file an agent writes through a here-document
          # names no file read (`self.env` is an attribute), and `~name` of no user stays a word
          "cat <<'EOF' > repro.py\nclass App:\n    def __init__(self):\n        self.env = {}\nEOF\npython3 repro.py",
          "cat > index.rst <<'EOF'\n:param ~.mod.A a:\nEOF",
          # chmod +x changes the mode, not the program: the script is read as it is on disk
          "chmod +x run.sh && ./run.sh",
          # issue 22 real traffic: find's name tests and grep's patterns match names and text, they
          # are not files read; a program bash cannot find (a typing slip) runs nothing
          "find / -name '*.env' 2>/dev/null", "find . -iname '*.key' -o -name '*.pem'",
          "ls -R | grep -E '.*\\.env|.*\\.conf'", "grep -rn 'self.env' src/", "grep -e .env -r src/",
          "git grep -n id_rsa", "grep -r --exclude='*.env' KEY .",
          "find. -name '*.env' -o -name '*.conf'"]


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    made = make_project(tmp_path_factory.mktemp("secrets"), protected=None)
    for name in ("deploy", "certs"):
        (made.work / name).mkdir()
    (made.work / "certs" / "tls.key").write_text("KEY\n")
    (made.work / "run.sh").write_text("#!/bin/sh\npython3 -m pytest -q\n")
    home = made.home
    for relative in (".ssh/id_ed25519", ".aws/credentials", ".kube/config", ".docker/config.json", ".pypirc",
                     ".config/gcloud/credentials.db"):
        (home / relative).parent.mkdir(parents=True, exist_ok=True)
        (home / relative).write_text("secret\n")
    return made


@pytest.mark.parametrize(("command", "target"), DENIED, ids=[c for c, _ in DENIED])
def test_writes_and_deletes_of_secrets_are_denied_without_a_record(project, command, target):
    answer = project.bash(command)
    assert answer.decision == "deny", answer
    assert target in answer.reason and "secret" in answer.reason, answer


@pytest.mark.parametrize(("command", "target"), ASKED, ids=[c for c, _ in ASKED])
def test_reads_of_secrets_are_asked(project, command, target):
    answer = project.bash(command)
    assert answer.decision == "ask", answer
    assert target in answer.reason, answer


def test_codex_and_gemini_cannot_ask_so_a_read_is_denied_with_the_question(project):
    for agent in ("codex", "gemini"):
        answer = project.bash("cat .env", agent=agent)
        assert answer.decision == "deny" and ".env" in answer.reason, (agent, answer)


@pytest.mark.parametrize("command", PASSED)
def test_templates_and_ordinary_files_pass(project, command):
    answer = project.bash(command)
    assert answer.decision not in ("deny", "ask"), answer


def test_an_npmrc_holding_a_token_is_a_secret(project):
    (project.work / ".npmrc").write_text("//registry.npmjs.org/:_authToken=abc\n")
    try:
        answer = project.bash("echo x >> .npmrc")
        assert answer.decision == "deny" and ".npmrc" in answer.reason, answer
    finally:
        (project.work / ".npmrc").unlink()


def test_file_tools_on_secrets_are_denied(project):
    answer = project.call(project.work, "Write", {"file_path": ".env", "content": "X=1\n"})
    assert answer.decision == "deny", answer
    patch = "*** Begin Patch\n*** Delete File: .env\n*** End Patch\n"
    answer = project.call(project.work, "apply_patch", {"input": patch}, agent="codex")
    assert answer.decision == "deny" and ".env" in answer.reason, answer


def test_the_contract_chooses_the_effects(tmp_path):
    project = make_project(tmp_path, protected=None)
    (project.work / "team.yaml").write_text(
        "name: team\nversion: 1\nextends: coding\nsecrets:\n  read: allow\n  write: ask\n  delete: deny\n"
        "  names: ['*.secret']\n  exempt: ['.env.test']\n")
    (project.work / ".statewise" / "config.toml").write_text('contract = "team.yaml"\n')
    (project.work / "api.secret").write_text("token\n")
    assert project.bash("cat .env").decision not in ("deny", "ask")
    assert project.bash("echo x > .env").decision == "ask"
    assert project.bash("rm .env").decision == "deny"
    assert project.bash("rm api.secret").decision == "deny"
    assert project.bash("echo x > .env.test").decision not in ("deny", "ask")
    # the contract in effect is itself protected: the agent cannot loosen it
    answer = project.bash("echo '  read: allow' >> team.yaml")
    assert answer.decision == "deny" and "team.yaml" in answer.reason


def test_secret_names():
    for name in (".env", ".env.local", "prod.env", "id_rsa", "server.pem", "tls.key", ".pypirc", ".netrc"):
        assert is_secret_name(name), name
    for name in (".env.example", ".env.sample", ".env.template", "id_rsa.pub", "environment.py", "keys.py",
                 "README.md", ".envrc"):
        assert not is_secret_name(name), name
    assert not is_secret_name(".env.test", SecretRules(exempt=(".env.test",)))


def test_a_read_tool_on_a_secret_is_asked_and_other_reads_pass_at_the_front_door(project):
    answer = project.call(project.work / "src", "Read", {"file_path": str(project.work / ".env")})
    assert answer.decision == "ask" and ".env" in answer.reason, answer
    answer = project.call(project.work, "read_file", {"absolute_path": str(project.home / ".aws" / "credentials")},
                          agent="gemini")
    assert answer.decision == "deny" and ".aws/credentials" in answer.reason, answer  # Gemini cannot ask
    for path in ("README.md", ".env.example", "src/app.py"):
        assert project.call(project.work, "Read", {"file_path": path}).decision == "defer", path


def test_the_front_door_hints_cover_every_secret_name():
    from statewise.integrations.hook_files import SECRET_HINTS
    from statewise.protection import SECRET_HOME_FILES, SECRET_NAMES

    samples = [name.replace("*", "x") for name in SECRET_NAMES] + [f"~/{p.rstrip('/')}" for p in SECRET_HOME_FILES]
    for sample in samples:
        assert any(hint in sample for hint in SECRET_HINTS), sample
