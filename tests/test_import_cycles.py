"""No import circle among the project's own files.

import-linter keeps the layers apart, but a circle inside one layer still says that a Protocol or a type
lives on the wrong side of a seam. This check reads every module of agent/, adapters/ and bots/ with `ast`
and counts every import: module level, inside functions and under `if TYPE_CHECKING:`, since each of
those is a dependency a reader has to follow. It fails with each circle spelled out.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("agent", "adapters", "bots")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def project_modules() -> dict[str, Path]:
    """Every module of the three packages, by dotted name."""
    return {_module_name(p): p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))}


def _imported(name: str, node: ast.AST, modules: dict[str, Path]) -> set[str]:
    """The project modules one import statement in module `name` depends on."""
    found: set[str] = set()
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name in modules:
                found.add(alias.name)
    elif isinstance(node, ast.ImportFrom):
        if node.level:
            package = name if modules[name].name == "__init__.py" else name.rpartition(".")[0]
            for _ in range(node.level - 1):
                package = package.rpartition(".")[0]
            base = f"{package}.{node.module}" if node.module else package
        else:
            base = node.module or ""
        for alias in node.names:
            if f"{base}.{alias.name}" in modules:
                found.add(f"{base}.{alias.name}")
            elif base in modules:
                found.add(base)
    found.discard(name)
    return found


def import_graph() -> dict[str, set[str]]:
    modules = project_modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            edges |= _imported(name, node, modules)
        graph[name] = edges
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One shortest circle through each strongly connected group of modules (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group: set[str] = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.add(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(group)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return [_shortest_circle(graph, group) for group in groups]


def _shortest_circle(graph: dict[str, set[str]], group: set[str]) -> list[str]:
    """The shortest circle inside one group, found by a breadth-first walk back to each start."""
    best: list[str] = []
    for start in sorted(group):
        paths = {start: [start]}
        frontier = [start]
        closed: list[str] = []
        while frontier and not closed:
            following = []
            for v in frontier:
                for w in sorted(graph[v] & group):
                    if w == start and not closed:
                        closed = [*paths[v], start]
                    elif w not in paths:
                        paths[w] = [*paths[v], w]
                        following.append(w)
            frontier = following
        if closed and (not best or len(closed) < len(best)):
            best = closed
    return best


def test_no_import_circle_among_project_files() -> None:
    found = circles(import_graph())
    assert not found, "import circles:\n" + "\n".join("  " + " -> ".join(c) for c in found)


if __name__ == "__main__":
    for circle in circles(import_graph()):
        print(" -> ".join(circle))
