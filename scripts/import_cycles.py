"""Every import cycle among memloom's modules: top-level and function-level imports.

Run: PYTHONPATH=src python scripts/import_cycles.py (exit status 1 while any cycle remains).

grimp reads every import statement of a module, those inside functions too.
Prints each strongly connected component (a set of modules that import each
other round a loop) and one loop through it, with and without the imports
under ``if TYPE_CHECKING:``.
"""

from __future__ import annotations

import sys

import grimp


def components(graph: grimp.ImportGraph) -> list[list[str]]:
    """Tarjan's strongly connected components with more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = 0

    def visit(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.find_modules_directly_imported_by(v)):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10_000)
    for v in sorted(graph.modules):
        if v not in index:
            visit(v)
    return out


def loop(graph: grimp.ImportGraph, comp: list[str]) -> list[str]:
    """One shortest cycle through the component's first module."""
    start = comp[0]
    members = set(comp)
    prev: dict[str, str] = {}
    frontier = [start]
    seen = {start}
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph.find_modules_directly_imported_by(v)):
                if w == start:
                    path = [start]
                    while v != start:
                        path.append(v)
                        v = prev[v]
                    return [start, *reversed(path[1:]), start]
                if w in members and w not in seen:
                    seen.add(w)
                    prev[w] = v
                    nxt.append(w)
        frontier = nxt
    return comp


def main() -> int:
    found = 0
    for skip_tc in (False, True):
        graph = grimp.build_graph(
            "memloom",
            include_external_packages=False,
            exclude_type_checking_imports=skip_tc,
            cache_dir=None,
        )
        label = "without TYPE_CHECKING imports" if skip_tc else "all imports"
        comps = components(graph)
        print(f"{len(graph.modules)} modules, {label}: {len(comps)} cycle(s)")
        for comp in comps:
            print("  component: " + ", ".join(comp))
            print("    e.g. " + " -> ".join(loop(graph, comp)))
            for importer in comp:
                for imported in sorted(graph.find_modules_directly_imported_by(importer)):
                    if imported in comp:
                        lines = graph.get_import_details(importer=importer, imported=imported)
                        where = ", ".join(str(d["line_number"]) for d in lines)
                        print(f"      {importer} -> {imported} (line {where})")
        found += len(comps)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
