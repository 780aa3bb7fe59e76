"""The four methods as LangGraph graphs, and the registry everything else derives from.

Each method module builds its graph(s) and declares ``METHOD = graphs.method.Method(...)``:
names, aliases, the envs it runs on, its defaults, recursion limit, narration, optional
training phase, what ``introspect view`` shows of it, its report and its prompt folder.
Modules are imported when first asked for, so naming a method loads only its own graph (an
alias loads the others to find it).

A method outside this package (a user's own, or a test's) is registered without editing
``METHODS``: ``INTROSPECT_METHODS="react=tests.support.react_method.graph"`` (comma-separated
``name=module`` pairs) adds it after the shipped ones (an entry with a shipped name replaces
that method: a patched copy can be tried under its usual name). An environment variable rather than a
``register()`` call because what must see the method is not only this process: the CLI a
test starts as a child, ``langgraph dev`` serving Studio and the spawned ``eval --workers``
processes all inherit the environment, and none would see a call made in the parent. It is
read at every look-up, not cached at import, so a test that sets it with
``monkeypatch.setenv`` has the method for that test alone and leaves nothing behind.
"""

from __future__ import annotations

import importlib
import os
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
EXTRA = "INTROSPECT_METHODS"  # more name=module pairs, comma-separated (module docstring)


class UnknownMethodError(UserError, ValueError):
    """A method name that is none of the registry's (nor an alias)."""


def registry() -> dict[str, str]:
    """Every registered method: name -> the module that declares it (the shipped ones first,
    then those ``INTROSPECT_METHODS`` adds)."""
    extra: dict[str, str] = {}
    for pair in os.environ.get(EXTRA, "").split(","):
        name, sep, module = pair.partition("=")
        if not pair.strip():
            continue
        if not sep or not name.strip() or not module.strip():
            raise UnknownMethodError(f"{EXTRA} expects NAME=MODULE pairs separated by commas, got {pair!r}")
        extra[name.strip()] = module.strip()
    return {**METHODS, **extra}


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
        if exc.name is None or not module.startswith(exc.name):  # a module it imports is missing: not ours to say
            raise
        raise UnknownMethodError(f"no method module {module!r} (check {EXTRA})") from None
    if not hasattr(declared, "METHOD"):
        raise UnknownMethodError(f"module {module!r} declares no METHOD")
    return declared.METHOD
