"""The layout's rules that import-linter does not state (docs/architecture.md).

import-linter (``lint-imports``, run by CI) checks the contracts between
packages; these tests check the whole module graph for cycles, the sizes the
architecture promises, and that no attribute is reached around the Store protocol.
"""

from __future__ import annotations

import runpy
from pathlib import Path

import grimp
import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "memloom"
CYCLES = runpy.run_path(str(SRC.parents[1] / "scripts" / "import_cycles.py"))


@pytest.mark.parametrize("type_checking", [False, True], ids=["runtime", "with-type-checking"])
def test_no_import_cycle_among_memlooms_modules(type_checking: bool) -> None:
    """Every import statement counts, those inside functions too (grimp reads them all)."""
    graph = grimp.build_graph(
        "memloom", cache_dir=None, exclude_type_checking_imports=not type_checking
    )
    found = CYCLES["components"](graph)
    loops = [" -> ".join(CYCLES["loop"](graph, comp)) for comp in found]
    assert loops == []


def test_the_facade_is_small_and_no_module_is_large() -> None:
    sizes = {
        str(p.relative_to(SRC)): len(p.read_text(encoding="utf-8").splitlines())
        for p in SRC.rglob("*.py")
    }
    assert sizes["engine.py"] <= 500
    assert {name: n for name, n in sizes.items() if n > 900} == {}


def test_nothing_reaches_past_a_protocol() -> None:
    """A ``type: ignore[attr-defined]`` means a call the Store (or another) protocol lacks."""
    offenders = [
        f"{p.relative_to(SRC)}:{i}"
        for p in SRC.rglob("*.py")
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1)
        if "type: ignore[attr-defined]" in line
    ]
    assert offenders == []
