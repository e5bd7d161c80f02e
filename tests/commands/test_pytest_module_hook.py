"""``python -m pytest PATH`` read as ``pytest PATH`` (the contract's command rule for pytest, data)
through the installed hook: the test-path invariant (test_paths_exist) checks its path alike."""

from __future__ import annotations

import pytest

from tests.integrations.installed import make_project


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    made = make_project(tmp_path_factory.mktemp("pytest-module"), protected=None)
    (made.work / "tests").mkdir()
    (made.work / "tests" / "test_app.py").write_text("def test_one():\n    assert 1\n")
    return made


FORMS = ["pytest", "python -m pytest", "python3 -m pytest", "python3 -m pytest -q -k one", "python3 -mpytest"]


@pytest.mark.parametrize("form", FORMS)
def test_a_test_path_that_is_gone_is_stopped_in_every_form(project, form):
    answer = project.bash(f"{form} tests/test_moved.py")
    assert answer.decision in ("deny", "ask"), (form, answer)
    assert "test path" in answer.reason and "tests/test_moved.py" in answer.reason, (form, answer)


@pytest.mark.parametrize("form", FORMS)
def test_a_test_path_that_exists_passes_in_every_form(project, form):
    assert project.bash(f"{form} tests/test_app.py").decision not in ("deny", "ask"), form
