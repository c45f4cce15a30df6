"""No import circles in engine/ or grok_tui/, counting every import: top-level, function-level and TYPE_CHECKING.

The layers between packages are import-linter's contract (pyproject.toml, tests/test_layers.py); this test
keeps what a layers contract cannot say: no two modules, in one package or across several, import each other.

A circle hidden behind a function-level import still ties two modules together: neither can be
understood, tested or changed alone. The graph is read from the source with `ast`, so nothing is
imported and the check takes a fraction of a second.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("engine", "grok_tui")


def modules(root: Path, packages: tuple[str, ...]) -> dict[str, Path]:
    """Dotted module name -> file, for every .py file of the packages."""
    out: dict[str, Path] = {}
    for pkg in packages:
        for f in sorted((root / pkg).rglob("*.py")):
            parts = f.relative_to(root).with_suffix("").parts
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = f
    return out


def _own(name: str, mods: dict[str, Path]) -> str | None:
    """The module of ours that `name` (a module or a name inside one) belongs to, if any."""
    while name and name not in mods:
        name = name.rpartition(".")[0]
    return name or None


def import_graph(root: Path, packages: tuple[str, ...]) -> dict[str, set[str]]:
    """Module -> the modules of ours it imports anywhere in its source."""
    mods = modules(root, packages)
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for m, f in mods.items():
        here = m.split(".") if f.name == "__init__.py" else m.split(".")[:-1]
        for node in ast.walk(ast.parse(f.read_text(), str(f))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # from . import x, from ..sweep import y
                    up = here[: len(here) - (node.level - 1)]
                    base = ".".join([*up, base] if base else up)
                targets = [base, *(f"{base}.{a.name}" for a in node.names)]
            else:
                continue
            for t in targets:
                dep = _own(t, mods)
                # a package's __init__ is loaded before its submodules anyway: that edge is no circle
                if dep and dep != m and not m.startswith(dep + "."):
                    graph[m].add(dep)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One concrete circle (a -> b -> ... -> a) per strongly connected group of modules (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    groups: list[set[str]] = []

    def strong(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while True:
                w = stack.pop()
                on.discard(w)
                group.add(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(group)

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return [_circle(graph, g) for g in groups]


def _circle(graph: dict[str, set[str]], group: set[str]) -> list[str]:
    """A shortest path from the group's first module back to itself, inside the group."""
    start = min(group)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph[v] & group):
                if w == start:
                    return [*paths[v], start]
                if w not in paths:
                    paths[w] = [*paths[v], w]
                    nxt.append(w)
        frontier = nxt
    raise AssertionError(f"no circle through {start} in {sorted(group)}")


def test_no_import_cycles() -> None:
    graph = import_graph(ROOT, PACKAGES)
    assert len(graph) > 60  # every module of both packages was read
    found = [" -> ".join(c) for c in cycles(graph)]
    assert not found, "import cycles:\n" + "\n".join(found)


def test_the_walker_finds_hidden_and_type_only_circles(tmp_path: Path) -> None:
    """The check itself can fail: a circle through a function-level and a TYPE_CHECKING import is found."""
    pkg = tmp_path / "lab"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from lab.sub import b\n")
    (pkg / "sub" / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..c import C\n")
    (pkg / "c.py").write_text("import lab.a as a\n")
    (pkg / "d.py").write_text("from . import c\n")  # into the circle, not part of it
    graph = import_graph(tmp_path, ("lab",))
    assert graph["lab.sub.b"] == {"lab.c"} and graph["lab.d"] == {"lab.c"}
    assert cycles(graph) == [["lab.a", "lab.sub.b", "lab.c", "lab.a"]]
