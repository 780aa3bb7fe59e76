"""The declared state spaces, by the env they run on: the one a default LASER graph takes per run
(``Context.env``). A graph built with ``graphs.laser.build_graph(space=...)`` uses its own."""

from __future__ import annotations

from collections.abc import Callable

from envs.base import EnvError
from nodes.laser.shop import LOCAL_SHOP
from nodes.laser.space import StateSpace
from nodes.laser.webshop import WEBSHOP
from nodes.runtime.context import Context

SPACES: dict[str, StateSpace] = {"webshop": WEBSHOP, "webarena": LOCAL_SHOP}

Picker = Callable[[Context], StateSpace]  # the space of a run


def space_for(context: Context) -> StateSpace:
    """The declared space of the run's env."""
    try:
        return SPACES[context.env]
    except KeyError:
        raise EnvError(
            f"LASER has no state space for env {context.env!r}; "
            f"declared: {', '.join(SPACES)} (or build the graph with space=...)"
        ) from None


def fixed(space: StateSpace) -> Picker:
    """A picker that always answers ``space`` (a graph built for one space)."""
    return lambda context: space
