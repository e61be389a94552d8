"""The layers import downwards only: tlm_core <- sample_models <- app, benchmarks.

tlm_core reaches the sample models through the entry points "tlm_core.samples" (tlm_core.frontend.samples),
never by name. Every import statement counts, also those inside functions or under TYPE_CHECKING.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# each package, and the packages above it that it must not import
ABOVE = {"tlm_core": {"sample_models", "app", "benchmarks"}, "sample_models": {"app", "benchmarks"}}


def imported(path: Path, root: Path = ROOT) -> list[tuple[str, int]]:
    """(absolute module name, line) of every import in the file; relative imports resolved."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    package = parts[:-1]  # a module's package (for __init__.py, the package itself)
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            found.append((".".join([*base, *([node.module] if node.module else [])]), node.lineno))
    return found


@pytest.mark.parametrize("package", sorted(ABOVE))
def test_no_upward_import(package: str) -> None:
    upward = [
        f"{path.relative_to(ROOT)}:{line} imports {name}"
        for path in sorted((ROOT / package).rglob("*.py"))
        for name, line in imported(path)
        if name.split(".")[0] in ABOVE[package]
    ]
    assert not upward, "\n".join(upward)


def test_the_check_sees_relative_and_nested_imports(tmp_path: Path) -> None:
    pkg = tmp_path / "tlm_core" / "sub"
    pkg.mkdir(parents=True)
    (pkg / "mod.py").write_text("def f():\n    from sample_models import SAMPLES\n    from ..frontend import x\n")
    assert imported(pkg / "mod.py", tmp_path) == [("sample_models", 2), ("tlm_core.frontend", 3)]
