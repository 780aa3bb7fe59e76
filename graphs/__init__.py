"""The four methods as LangGraph graphs, and the registry the CLI and harness use.

Every method module exports ``graph`` (compiled without a checkpointer, for Studio),
``build_graph(checkpointer=None)``, ``DEFAULT_ENV``, ``ENVS`` (the envs it runs on) and
``result(state) -> dict`` (the per-task fields it adds to evaluation results).
"""

from __future__ import annotations

import importlib
from types import ModuleType

# canonical name -> module; aliases map short names users type.
METHODS: dict[str, str] = {
    "laser": "graphs.laser",
    "structured_reflection": "graphs.structured_reflection",
    "devils_advocate": "graphs.devils_advocate",
    "autoplan": "graphs.autoplan",
}
# every compiled graph Studio serves (langgraph.json): name -> (method, module attribute)
GRAPHS: dict[str, tuple[str, str]] = {
    **{name: (name, "graph") for name in METHODS},
    "autoplan_training": ("autoplan", "training_graph"),
}
ALIASES: dict[str, str] = {
    "sr": "structured_reflection",
    "structured-reflection": "structured_reflection",
    "da": "devils_advocate",
    "ar": "devils_advocate",
    "devils-advocate": "devils_advocate",
}


class UnknownMethodError(ValueError):
    pass


def canonical(name: str) -> str:
    name = ALIASES.get(name, name)
    if name not in METHODS:
        raise UnknownMethodError(
            f"unknown method {name!r}; choose one of: {', '.join(sorted(METHODS))}"
        )
    return name


def load_method(name: str) -> ModuleType:
    """The graph module of method ``name`` (or an alias)."""
    return importlib.import_module(METHODS[canonical(name)])
