"""The package's shape: the checked layers, no import cycles, no private names across packages,
no oversized modules, and docs/architecture.md drawing the layers the checker enforces."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "src" / "statewise"


def _contracts() -> dict[str, dict[str, object]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    return {contract["id"]: contract for contract in config["contracts"]}


def _documented_layers(heading: str) -> list[str]:
    """The lines of the first fenced block after ``heading`` in docs/architecture.md."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split(heading, 1)[1]
    block = re.search(r"```[a-z]*\n(.*?)```", section, re.DOTALL)
    assert block is not None, f"no fenced block after {heading!r}"
    return [" | ".join(part.strip() for part in line.split("|")) for line in block.group(1).splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


def test_the_layers_drawn_in_the_docs_are_the_ones_lint_imports_checks() -> None:
    contracts = _contracts()
    assert _documented_layers("## Layers") == contracts["layers"]["layers"]
    assert _documented_layers("### The hook's layers") == contracts["hook-layers"]["layers"]


def test_lint_imports_keeps_every_contract() -> None:
    program = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run([str(program), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{len(_contracts())} kept, 0 broken" in done.stdout


def test_no_module_imports_one_that_imports_it_back() -> None:
    # grimp counts every import, function-level ones too; only `if TYPE_CHECKING:` blocks never run.
    graph = grimp.build_graph("statewise", exclude_type_checking_imports=True)
    cycles = sorted(
        (module, imported)
        for module in graph.modules
        for imported in graph.find_modules_directly_imported_by(module)
        if graph.chain_exists(importer=imported, imported=module)
    )
    assert cycles == []


def test_no_python_file_is_over_a_thousand_lines() -> None:
    # The package, its tests and the benchmark scripts alike (the house rule is for every file
    # we write; data files such as case sets and labels are not code).
    paths = [path for folder in (SOURCE, ROOT / "tests", ROOT / "benchmarks") for path in folder.rglob("*.py")]
    sizes = {str(path.relative_to(ROOT)): len(path.read_text(encoding="utf-8").splitlines()) for path in paths}
    assert len(sizes) > 300
    assert {name: lines for name, lines in sizes.items() if lines > 1000} == {}


def test_no_module_imports_a_private_name_from_another_package() -> None:
    crossing = []
    for path in SOURCE.rglob("*.py"):
        package = path.relative_to(SOURCE).parts[0].removesuffix(".py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module
                    and node.module.startswith("statewise.")):
                continue
            if node.module.split(".")[1] == package:
                continue
            crossing += [f"{path.relative_to(SOURCE)}: {node.module}.{alias.name}" for alias in node.names
                         if alias.name.startswith("_") and not alias.name.startswith("__")]
    assert crossing == []
