"""No import circles among the project's packages, lazy imports included.

lint-imports checks that imports run one way between layers, but not within a layer, and a
circle is easily hidden by an import moved into a function (it then runs, and breaks, only on
the path that calls it). This builds the graph from the source: every ``import`` and ``from ...
import``, at module level or inside a function, from each module to the project module it
names (``from a import b`` is an edge to ``a.b`` when that is a module, else to ``a``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("introspect", "graphs", "nodes", "envs", "prompts", "errors")


def modules(root: Path) -> dict[str, tuple[Path, bool]]:
    """Every module of PACKAGES under ``root``: its dotted name -> (file, is a package)."""
    found = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


def named(name: str, known: dict[str, tuple[Path, bool]]) -> str | None:
    """The project module ``name`` is, or is inside (a function or class of it)."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def imported(module: str, path: Path, is_package: bool, known: dict[str, tuple[Path, bool]]) -> Iterator[str]:
    """The project modules ``module`` imports, wherever in its file the import is."""
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(parent + ([node.module] if node.module else []))
            names = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        for name in names:
            target = named(name, known)
            if target is not None and target != module:
                yield target


def import_graph(root: Path) -> dict[str, set[str]]:
    known = modules(root)
    return {module: set(imported(module, path, is_package, known)) for module, (path, is_package) in known.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_the_graph_is_built_from_every_kind_of_import():
    graph = import_graph(ROOT)
    assert "nodes.runtime.spec" in graph["nodes.runtime.context"]  # module level
    assert "introspect.evaluate" in graph["introspect.view"]  # inside a function only
    assert "introspect.report.tasks" in graph["introspect.report.index"]  # from a package import a module


def test_circles_are_found_through_lazy_imports(tmp_path):
    (tmp_path / "errors").mkdir()
    (tmp_path / "errors" / "__init__.py").write_text("from errors import a\n")
    (tmp_path / "errors" / "a.py").write_text("def f():\n    from errors.b import g\n")
    (tmp_path / "errors" / "b.py").write_text("from . import a\n")
    assert circles(import_graph(tmp_path)) == [["errors.a", "errors.b"]]


def test_no_module_imports_itself_through_others():
    found = circles(import_graph(ROOT))
    assert not found, "import circles: " + "; ".join(" <-> ".join(c) for c in found)
