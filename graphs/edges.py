"""How the graphs register their nodes and their routers (the functions of conditional edges,
or of nodes that route themselves: ``add_routed_node``)."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable, Hashable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast, get_type_hints

from langgraph.types import Command
from langgraph.typing import ContextT, NodeInputT, StateT

from nodes.runtime.channels import check_edits, edited_lists, reducers
from nodes.runtime.node import ConfigNode, Node, Update

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig
    from langgraph.graph import StateGraph
    from langgraph.runtime import Runtime

T = TypeVar("T")


def add_nodes(builder: StateGraph[StateT, ContextT, Any, Any], nodes: Mapping[str, Node[StateT, ContextT]]) -> None:
    """Add ``nodes`` (name -> node function) to ``builder``, in order. The type checker holds
    each to being a ``Node`` of the graph's state and Context (nodes.runtime.node); at run time its
    updates are checked for lists written whole (``writing_edits``).

    A node taking (state, runtime, config), as the model-calling nodes do, is one LangGraph
    runs (it passes ``runtime`` and ``config`` by parameter name) but none of ``add_node``'s
    typed overloads lists, hence the untyped handover in ``_add``.
    """
    for name, node in nodes.items():
        _add(builder, name, node)


def add_sent_node(builder: StateGraph[Any, ContextT, Any, Any], name: str, node: Node[NodeInputT, ContextT]) -> None:
    """Add a node that only a ``Send`` starts, with its own input instead of the graph's state
    (LangGraph reads its type from the node's ``state`` annotation)."""
    _add(builder, name, node)


def _add(builder: StateGraph[Any, Any, Any, Any], name: str, node: Any) -> None:
    lists = edited_lists(builder.state_schema)
    builder.add_node(name, writing_edits(name, node, lists) if lists else node)


def add_routed_node(
    builder: StateGraph[StateT, ContextT, Any, Any],
    name: str,
    node: ConfigNode[StateT, ContextT],
    router: Callable[[StateT, Runtime[ContextT]], str],
    targets: Mapping[Hashable, str],
) -> None:
    """Add ``node`` routed from inside it: its update goes out as LangGraph's ``Command`` with
    ``goto`` the node ``router`` names for the state after that update, instead of a
    conditional edge. ``targets`` is the edge's path map (``path_map``: its labels are drawn).

    Why: a conditional edge reads the state back after the node, and LangGraph's read copies
    every channel of the state and applies the node's writes to the copies, once per step: on
    LASER's thirty fields about a tenth of the framework's time per step. Here the router reads
    the state the node was given with its update folded in, field by field as the state's
    reducers fold it (``nodes.runtime.channels.reducers``), which is what that read returns.
    The checkpoint is the same (both write LangGraph's ``branch:to:`` channel of the target),
    so a thread checkpointed under one resumes under the other."""
    lists = edited_lists(builder.state_schema)
    folds = reducers(builder.state_schema)
    inner: Any = writing_edits(name, node, lists) if lists else node

    async def run(state: Any, runtime: Runtime[ContextT], config: RunnableConfig) -> Any:
        update = await inner(state, runtime=runtime, config=config)
        after = dict(state)
        for key, value in update.items():
            after[key] = folds[key](state.get(key), value) if key in folds else value
        return Command(update=update, goto=targets[router(cast(StateT, after), runtime)])

    # LangGraph passes runtime and config by these names, and reads the state's type off the annotation
    hints = get_type_hints(node)
    run.__annotations__ = {key: hints[key] for key in ("state", "runtime", "config") if key in hints}
    run.__name__, run.__qualname__ = getattr(node, "__name__", name), getattr(node, "__qualname__", name)
    untyped: StateGraph[Any, Any, Any, Any] = builder  # a (state, runtime, config) node: as in ``_add``
    untyped.add_node(name, cast(Any, run), destinations={target: str(key) for key, target in targets.items()})


def writing_edits(name: str, node: Callable[..., Awaitable[Update]], lists: frozenset[str]) -> Any:
    """``node``, its updates checked for lists written whole (nodes.runtime.channels.check_edits).

    ``functools.wraps`` shows LangGraph the node's own signature (it passes ``runtime`` and
    ``config`` by the names there) and annotations (a Send target's input type)."""

    @functools.wraps(node)
    async def run(state: Any, **passed: Any) -> Update:
        update = await node(state, **passed)
        check_edits(name, state, update, lists)
        return update

    return run


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


class _Drawn(str):
    """A path map key: equal to (and hashed as) its target node's name, drawn as ``label``.

    LangGraph looks a router's answer up among the path map's keys and draws each edge with
    ``str(key)``: it has no label apart from the key. Keys that are labels make routing depend
    on labels being distinct, which display text need not be (two LASER states no tool leads
    to were both "refused", and one of them dropped out of the routing table). This key
    routes by the node and shows the label.
    """

    label: str

    def __new__(cls, node: str, label: str) -> Self:
        key = super().__new__(cls, node)
        key.label = label
        return key

    def __str__(self) -> str:
        return self.label


def path_map(targets: Iterable[str], labels: Mapping[str, str] | None = None) -> dict[Hashable, str]:
    """``add_conditional_edges``'s path map for a router that answers node names: each of
    ``targets`` by its name, its edge drawn with ``labels[target]`` when it has one."""
    drawn = labels or {}
    return {(_Drawn(node, drawn[node]) if node in drawn else node): node for node in targets}
