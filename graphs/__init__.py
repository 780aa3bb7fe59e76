"""The four methods as LangGraph graphs, and the registry everything else derives from.

Each method module builds its graph(s) and declares ``METHOD = graphs.method.Method(...)``:
names, aliases, the envs it runs on, its defaults, recursion limit, narration and optional
training phase. Modules are imported when first asked for, so naming a method loads only
its own graph (an alias loads the others to find it).
"""

from __future__ import annotations

import importlib
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


class UnknownMethodError(UserError, ValueError):
    """A method name that is none of the registry's (nor an alias)."""


def method_named(name: str) -> Method:
    """The method called ``name``, one of its aliases, or either with hyphens (``devils-advocate``)."""
    key = name.strip().replace("-", "_")
    if key in METHODS:
        return _declared(key)
    for candidate in METHODS:
        method = _declared(candidate)
        if key in method.aliases:
            return method
    raise UnknownMethodError(f"unknown method {name!r}; choose one of: {', '.join(sorted(METHODS))}")


def methods() -> list[Method]:
    """Every method, in the registry's order."""
    return [_declared(name) for name in METHODS]


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
    return getattr(importlib.import_module(METHODS[method.name]), attribute)


def _declared(name: str) -> Method:
    return importlib.import_module(METHODS[name]).METHOD
