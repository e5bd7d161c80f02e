"""Scope parsing and the containment algebra."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from statewise.errors import ScopeError
from statewise.scopes import Scope, ScopeLevel, TaskScope, normalize_repo_identity

segment = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_-", min_size=1, max_size=6)
paths = st.lists(segment, min_size=0, max_size=4).map(lambda parts: "/" + "/".join(parts))
repos = st.lists(segment, min_size=1, max_size=3).map("/".join)
branches = st.lists(segment.filter(lambda s: s[0].isalnum()), min_size=1, max_size=2).map("/".join)
users = segment.filter(lambda s: s[0].isalnum())


@st.composite
def scopes(draw) -> Scope:
    level = draw(st.sampled_from(list(ScopeLevel)))
    if level is ScopeLevel.GLOBAL:
        return Scope.parse("global")
    if level is ScopeLevel.USER:
        return Scope.user(draw(users))
    if level is ScopeLevel.WORKSPACE:
        return Scope.workspace(draw(paths))
    repo = draw(st.sampled_from(["github.com/acme/app", "github.com/acme/lib", draw(repos)]))
    if level is ScopeLevel.REPO:
        return Scope.repo(repo)
    return Scope.repo(repo, draw(st.sampled_from(["main", "dev", draw(branches)])))


@st.composite
def tasks(draw) -> TaskScope:
    repo = draw(st.none() | st.sampled_from(["github.com/acme/app", "github.com/acme/lib"]))
    return TaskScope(
        user=draw(st.none() | users),
        workspace=draw(st.none() | paths),
        repo=repo,
        branch=draw(st.sampled_from(["main", "dev"])) if repo and draw(st.booleans()) else None,
    )


@pytest.mark.parametrize(
    "text",
    ["global", "user:alice", "workspace:/home/alice/src/app", "workspace:/", "repo:github.com/acme/app",
     "repo:github.com/acme/app@main", "repo:github.com/acme/app@feature/x-1", "repo:local/tmp/origin"],
)
def test_canonical_scopes_round_trip(text):
    assert str(Scope.parse(text)) == text


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "missing"), ("globals", "missing"), ("user:", "nothing after"), ("user:al ice", "user name"),
        ("workspace:relative/path", "absolute"), ("workspace:/a/../b", "'..'"), ("repo:", "nothing after"),
        ("repo:github.com/a@", "branch"), ("repo:github.com/a@bad..name", "branch"), ("repo:a@b c", "branch"),
        ("team:core", "unknown scope kind"), ("repo:git@github.com:a/b", "branch"),
    ],
)
def test_bad_scopes_are_rejected_with_the_accepted_forms(text, problem):
    with pytest.raises(ScopeError) as info:
        Scope.parse(text)
    assert problem in str(info.value)
    assert "accepted forms: global, user:<name>" in str(info.value)


def test_workspace_paths_are_normalized():
    assert str(Scope.parse("workspace:/home/alice/src/")) == "workspace:/home/alice/src"
    assert str(Scope.parse("workspace://home//alice")) == "workspace:/home/alice"


@pytest.mark.parametrize(
    ("url", "identity"),
    [
        ("git@github.com:acme/app.git", "github.com/acme/app"),
        ("https://github.com/acme/app", "github.com/acme/app"),
        ("https://user:token@GitHub.com/acme/app.git/", "github.com/acme/app"),
        ("ssh://git@github.com:22/acme/app.git", "github.com/acme/app"),
        ("/tmp/remotes/origin.git", "local/tmp/remotes/origin"),
        ("file:///tmp/remotes/origin.git", "local/tmp/remotes/origin"),
    ],
)
def test_remote_urls_normalize_to_one_identity(url, identity):
    assert normalize_repo_identity(url) == identity
    assert str(Scope.repo(identity)) == f"repo:{identity}"


@pytest.mark.parametrize(
    ("url", "identity"),
    [
        ("ssh://git@GitLab.example.com:2222/group/sub/app.git", "gitlab.example.com/group/sub/app"),
        ("git@gitlab.example.com:group/sub/app.git", "gitlab.example.com/group/sub/app"),
        ("https://oauth2:glpat-xyz@gitlab.example.com:8443/group/sub/app.git?ref=1#frag", "gitlab.example.com/group/sub/app"),
        ("git://gitlab.example.com/group/sub/app", "gitlab.example.com/group/sub/app"),
        ("https://dev.azure.com/org/My%20Project/_git/My%20Repo", "dev.azure.com/org/My%20Project/_git/My%20Repo"),
        ("git@ssh.dev.azure.com:v3/org/My%20Project/My%20Repo", "dev.azure.com/org/My%20Project/_git/My%20Repo"),
        ("https://host/a%2fb/c%7Ed", "host/a/b/c~d"),  # escapes decoded, then re-encoded canonically
        ("https://host/team/caf%C3%A9", "host/team/caf%C3%A9"),
        ("https://host/team/café", "host/team/caf%C3%A9"),
        ("https://host/a@b/c,d", "host/a%40b/c%2Cd"),  # '@' would end the identity, ',' a task scope
        ("/tmp/my repo/.git", "local/tmp/my%20repo"),
        ("/tmp/50%/x.git", "local/tmp/50%25/x"),  # a literal '%' in a path is itself encoded
    ],
)
def test_odd_characters_have_one_canonical_spelling(url, identity):
    assert normalize_repo_identity(url) == identity
    assert str(Scope.repo(identity, "main")) == f"repo:{identity}@main"
    assert normalize_repo_identity(identity) == identity  # normalizing an identity changes nothing


def test_relative_remotes_resolve_against_the_given_root():
    assert normalize_repo_identity("../origin.git", base="/srv/work/app") == "local/srv/work/origin"
    assert normalize_repo_identity("remotes/origin.git", base="/srv/work/app") == "local/srv/work/app/remotes/origin"


def test_escapes_in_a_scope_are_upper_case_and_a_bare_percent_is_refused():
    assert str(Scope.parse("repo:host/my%2dproj%c3%a9@main")) == "repo:host/my%2Dproj%C3%A9@main"
    for bad in ("repo:host/50%", "repo:host/a%zz", "repo:host/a b"):
        with pytest.raises(ScopeError, match="percent-encoded"):
            Scope.parse(bad)


@given(st.text(max_size=40))
@example("/")  # the file system's root: found by hypothesis, "local/" did not read back as itself
@example("file:///")
@example("::")  # found by hypothesis: "%3A:" was then read as an scp-like host with no path
@example("a:")
@example("[:0")  # and "%5B:0" as an scp-like host "%5B"
@example("/\x00")  # found by hypothesis: the path's NUL raised ValueError from realpath
@example("0:\n0")  # "0:%0A0" was read as an scp-like remote
@example("0@~:0")  # the identity "~/0" was read as a home-relative path
@example("A://~")  # the same, from a URL whose host is "~"
def test_any_remote_text_gives_a_valid_identity_or_nothing_odd(text):
    identity = normalize_repo_identity(text)
    if identity:
        assert Scope.repo(identity).name == identity
        assert normalize_repo_identity(identity) == identity


def test_applies_to_follows_each_level():
    task = TaskScope(user="alice", workspace="/home/alice/src/app", repo="github.com/acme/app", branch="main")
    applies = {
        "global": True, "user:alice": True, "user:bob": False, "workspace:/home/alice": True,
        "workspace:/home/alice/src/app": True, "workspace:/home/alice/src/app/sub": False,
        "workspace:/home/alice/src/application": False, "repo:github.com/acme/app": True,
        "repo:github.com/acme/app@main": True, "repo:github.com/acme/app@dev": False,
        "repo:github.com/acme/lib": False,
    }
    for text, expected in applies.items():
        assert Scope.parse(text).applies_to(task) is expected, text


def test_task_scope_parse_and_render():
    task = TaskScope.parse("user:alice,workspace:/w,repo:github.com/acme/app@main")
    assert task == TaskScope(user="alice", workspace="/w", repo="github.com/acme/app", branch="main")
    assert TaskScope.parse(str(task)) == task
    assert str(TaskScope()) == "global"
    with pytest.raises(ScopeError):
        TaskScope.parse("user:a,user:b")
    with pytest.raises(ScopeError):
        TaskScope(branch="main")


def test_task_scope_is_an_immutable_value_checked_when_built():
    # A named tuple since the command line's start-up lost dataclasses: still checked and
    # normalised by its constructor (positional or by name), immutable, hashable, picklable.
    task = TaskScope("alice", "/w//x/", "github.com/acme/app", "main")
    assert task.workspace == "/w/x" and task == TaskScope(user="alice", workspace="/w/x", repo="github.com/acme/app",
                                                          branch="main")
    with pytest.raises(AttributeError):
        task.user = "bob"  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(task)) == task and len({task, TaskScope.parse(str(task))}) == 1
    for bad in ({"workspace": "relative/path"}, {"user": "no body"}, {"repo": "github.com/acme/app", "branch": "a..b"}):
        with pytest.raises(ScopeError):
            TaskScope(**bad)
    with pytest.raises(AttributeError):
        Scope.parse("global").level = ScopeLevel.USER  # type: ignore[misc]


@given(scopes())
def test_parse_of_str_is_identity(scope):
    assert Scope.parse(str(scope)) == scope


@given(scopes())
def test_containment_is_reflexive(scope):
    assert scope.contains(scope)


@given(scopes(), scopes(), scopes())
def test_containment_is_transitive(a, b, c):
    if a.contains(b) and b.contains(c):
        assert a.contains(c)


@given(scopes(), scopes())
def test_containment_is_antisymmetric(a, b):
    if a.contains(b) and b.contains(a):
        assert a == b


@given(scopes(), scopes(), tasks())
def test_a_containing_scope_applies_wherever_the_contained_one_does(outer, inner, task):
    if outer.contains(inner) and inner.applies_to(task):
        assert outer.applies_to(task)


@given(tasks())
def test_applicable_scopes_are_exactly_those_that_apply(task):
    listed = task.applicable_scopes()
    assert all(scope.applies_to(task) for scope in listed)
    assert listed == sorted(listed, key=lambda s: s.specificity, reverse=True)
    assert len(set(listed)) == len(listed)


@given(tasks(), scopes())
def test_every_applying_scope_is_listed(task, scope):
    if scope.applies_to(task):
        assert scope in task.applicable_scopes()
