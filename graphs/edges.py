"""How the graphs register their nodes and their routers (the functions of conditional edges)."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from nodes.state import Node

if TYPE_CHECKING:
    from langgraph.graph import StateGraph

T = TypeVar("T")


def add_nodes(builder: StateGraph[Any, Any, Any, Any], nodes: Mapping[str, Node]) -> None:
    """Add ``nodes`` (name -> node function) to ``builder``, in order.

    A node taking (state, runtime, config), as the model-calling nodes do, is one LangGraph
    runs (it passes ``runtime`` and ``config`` by parameter name) but none of ``add_node``'s
    typed overloads lists; as a ``Node`` it is checked for what the graph needs of it (a
    coroutine function returning its update) instead of failing those overloads.
    """
    for name, node in nodes.items():
        builder.add_node(name, node)


def inline(router: Callable[..., T]) -> Callable[..., Awaitable[T]]:
    """``router`` as a coroutine function, for ``add_conditional_edges``.

    LangGraph runs a plain function it is given in a worker thread when the graph runs
    async: for a router, which only reads state, that is a thread switch per step and a
    wait for the interpreter lock whenever the event loop is busy, several times the cost
    of the routing itself. The wrapper keeps the router's signature (LangGraph reads it to
    pass ``runtime``) and annotations (a ``Literal`` return names the edge's targets), and
    the router stays a plain function to call and test.
    """

    if inspect.iscoroutinefunction(router):
        raise TypeError(f"{router.__name__} is already a coroutine function: register it as it is")

    @functools.wraps(router)
    async def run(*args: Any, **kwargs: Any) -> T:
        return router(*args, **kwargs)

    return run
