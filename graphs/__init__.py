"""The four methods as LangGraph graphs, and the registry everything else derives from.

Each method module builds its graph(s) and declares ``METHOD = graphs.method.Method(...)``:
names, aliases, the envs it runs on, its defaults, recursion limit, narration, optional
training phase, what ``introspect view`` shows of it, its report and its prompt folder.
Modules are imported when first asked for, so naming a method loads only its own graph (an
alias loads the others to find it).

A method outside this repository (a user's own package, or a test's) is registered without
editing ``METHODS``: its distribution declares a Python entry point in the group
``introspect.methods``, named for the method, whose value is the module that declares ``METHOD``::

    [project.entry-points."introspect.methods"]
    react = "mypkg.react"

Entry-point methods come after the shipped ones (one with a shipped name replaces that method: a
patched copy can be tried under its usual name). An entry point rather than a ``register()``
call because what must see the method is not only this process: the CLI a test starts as a
child, ``langgraph dev`` serving Studio and the spawned ``eval --workers`` processes all see
the installed distributions, and none would see a call made in the parent. The entry points
are read once per ``sys.path`` (scanning the installed distributions takes some 20 ms), so a
test that puts a distribution's ``.dist-info`` folder on the path sees its method.
"""

from __future__ import annotations

import importlib
import sys
from functools import cache
from importlib.metadata import EntryPoint, entry_points
from typing import TYPE_CHECKING, Any

from errors import UserError

if TYPE_CHECKING:
    from graphs.method import Method

# canonical name -> the module that declares its METHOD
METHODS: dict[str, str] = {
    "laser": "graphs.laser",
    "structured_reflection": "graphs.structured_reflection",
    "devils_advocate": "graphs.devils_advocate",
    "autoplan": "graphs.autoplan",
}
GROUP = "introspect.methods"  # the entry-point group of methods kept elsewhere (module docstring)


class UnknownMethodError(UserError, ValueError):
    """A method name that is none of the registry's (nor an alias)."""


def registry() -> dict[str, str]:
    """Every registered method: name -> the module that declares it (the shipped ones first,
    then those the ``introspect.methods`` entry points add)."""
    return {**METHODS, **{name: point.module for name, point in _entry_points(tuple(sys.path)).items()}}


@cache
def _entry_points(path: tuple[str, ...]) -> dict[str, EntryPoint]:
    """The ``introspect.methods`` entry points of the distributions on ``path`` (the key of
    the cache: a look-up after ``sys.path`` changed reads them again)."""
    points: dict[str, EntryPoint] = {}
    for point in entry_points(group=GROUP):
        if point.attr not in (None, "METHOD"):
            message = f"{_named(point)}: its value names the module that declares METHOD, not {point.attr!r}"
            raise UnknownMethodError(message)
        points.setdefault(point.name, point)  # the first on the path wins, as an import would
    return points


def _named(point: EntryPoint) -> str:
    return f"entry point {point.name} = {point.value!r} ({GROUP})"


def method_named(name: str) -> Method:
    """The method called ``name``, one of its aliases, or either with hyphens (``devils-advocate``)."""
    key = name.strip().replace("-", "_")
    known = registry()
    if key in known:
        return _declared(known[key])
    for module in known.values():
        method = _declared(module)
        if key in method.aliases:
            return method
    raise UnknownMethodError(f"unknown method {name!r}; choose one of: {', '.join(sorted(known))}")


def methods() -> list[Method]:
    """Every method, in the registry's order."""
    return [_declared(module) for module in registry().values()]


def module_of(method: Method) -> str:
    """The module that declares ``method`` (``graphs.laser``)."""
    return registry()[method.name]


def matrix() -> list[tuple[Method, str, bool]]:
    """Every method x environment cell that runs: (method, env, whether it is the paper's own
    setting), in the registry's order and each method's env order."""
    return [(method, env, env in method.paper_envs) for method in methods() for env in method.envs]


def matrix_rows() -> tuple[list[str], list[list[str]]]:
    """The matrix as a table: a header (method, each env, baselines) and a row per method whose
    cells read "paper" (the paper's own setting), "yes" (runs) or "" (does not)."""
    from envs.base import ENV_CLASSES

    envs = list(ENV_CLASSES)
    rows = [
        [
            method.title,
            *("paper" if env in method.paper_envs else "yes" if env in method.envs else "" for env in envs),
            "; ".join(f"{name}: {how}" for name, how in method.baselines.items()),
        ]
        for method in methods()
    ]
    return ["method", *envs, "baselines (same graph, other settings)"], rows


def studio_graphs() -> dict[str, tuple[Method, str]]:
    """Every compiled graph Studio serves: graph name -> (its method, its module attribute)."""
    return {graph: (method, attribute) for method in methods() for graph, attribute in method.studio_graphs.items()}


def compiled(method: Method, attribute: str) -> Any:
    """A compiled graph of ``method``'s module (``studio_graphs``' attribute), as Studio loads it."""
    return getattr(importlib.import_module(module_of(method)), attribute)


def _declared(module: str) -> Method:
    try:
        declared = importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name is not None and module.startswith(exc.name):
            raise UnknownMethodError(f"{_origin(module)}: no module {module!r}") from None
        if module in METHODS.values():  # a shipped method's dependency is missing: the install is broken
            raise
        # an installed method's dependency is missing: its entry point is broken, not every command
        raise UnknownMethodError(f"{_origin(module)}: its module {module!r} cannot be imported: {exc}") from None
    if not hasattr(declared, "METHOD"):
        raise UnknownMethodError(f"{_origin(module)}: module {module!r} declares no METHOD")
    return declared.METHOD


def _origin(module: str) -> str:
    """Where ``module`` was registered, for an error that must say what to fix."""
    points = [point for point in _entry_points(tuple(sys.path)).values() if point.module == module]
    return _named(points[0]) if points else "graphs.METHODS"
