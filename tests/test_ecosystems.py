"""Issue 22 item 6: a repository can be several ecosystems. install_with_project_package_manager
checks a Python install against the Python side's manager and a Node install against the Node
side's; the one repository-wide project.package_manager only speaks for its own ecosystem."""

from __future__ import annotations

from statewise.contract import builtin_contract

CHECK = "install_with_project_package_manager"


def stops(operation: str, tool: str, state: dict[str, object]) -> bool:
    action = {"tool": tool, "operation": operation, "args": {"package": "x"}}
    return any(r.name == CHECK and not r.holds for r in builtin_contract().check_invariants(action, state))


def test_each_install_is_checked_against_its_own_side():
    mixed = {"project.package_manager": "npm", "python.package_manager": "pip", "node.package_manager": "npm"}
    assert not stops("pip.install", "pip", mixed)
    assert not stops("npm.install", "npm", mixed)
    assert stops("yarn.add", "yarn", mixed)
    assert stops("poetry.add", "poetry", mixed)
    uv_and_pnpm = {"project.package_manager": "uv", "python.package_manager": "uv", "node.package_manager": "pnpm"}
    assert stops("pip.install", "pip", uv_and_pnpm)  # bypasses uv.lock
    assert stops("npm.install", "npm", uv_and_pnpm)  # a second lock file beside pnpm's
    assert not stops("uv.add", "uv", uv_and_pnpm)
    assert not stops("pnpm.add", "pnpm", uv_and_pnpm)


def test_the_repository_wide_value_only_speaks_for_its_ecosystem():
    assert not stops("pip.install", "pip", {"project.package_manager": "npm"})
    assert not stops("npm.install", "npm", {"project.package_manager": "poetry"})
    assert stops("pip.install", "pip", {"project.package_manager": "uv"})
    assert stops("pnpm.add", "pnpm", {"project.package_manager": "npm"})
    assert not stops("pip.install", "pip", {})


def test_environment_installs_fit_a_pip_project():
    pip_side = {"python.package_manager": "pip", "project.package_manager": "pip"}
    assert not stops("uv.pip_install", "uv", pip_side)
    assert not stops("conda.install", "conda", pip_side)
    assert stops("uv.add", "uv", pip_side)  # writes pyproject.toml and a uv.lock: another manager
    assert stops("conda.install", "conda", {"python.package_manager": "poetry"})
