"""The pinned clients are downloaded only when a run may do so (CI, or STATEWISE_E2E=1)."""

from __future__ import annotations

import pytest

from tests.e2e.clients import InstallProblem, installed_clients


def test_without_leave_to_install_an_empty_cache_is_a_problem_that_says_how_to_install(tmp_path, monkeypatch):
    monkeypatch.setenv("STATEWISE_E2E_CACHE", str(tmp_path / "empty-cache"))
    with pytest.raises(InstallProblem) as raised:
        installed_clients(may_install=False)
    assert raised.value.not_allowed and not raised.value.missing_tool
    assert "STATEWISE_E2E=1" in str(raised.value) and "760 MB" in str(raised.value)
    assert not (tmp_path / "empty-cache").exists()  # nothing was downloaded or even made
