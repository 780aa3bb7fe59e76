"""What a node is (its typed signature), and the one way a node that calls the model is made.

LangGraph calls a node with the graph's state and, by parameter name, ``runtime`` (the run's
Context) and ``config``; the node returns its partial update of the state. ``Node`` is the
three shapes the graphs use, so a graph module's mapping of names to nodes is checked for
them, parameter names included (LangGraph passes ``runtime`` and ``config`` by name).

A node that calls the model is written as ``@model_node(caller)`` over a function that also
takes ``llm``, its Caller. The wrapper makes the Caller (``caller(context, state)``: the
method's model settings, its position at the state's model-call count) and merges the
Caller's usage and its record of each call (nodes.runtime.calls: the state's ``calls`` log, what the
viewer and the exporter read) into the node's update, on every return. Usage must reach state: its
``model_calls`` is where the next node's Caller starts, which is how a scripted model knows
its next reply (nodes.runtime.scripted) and a recording its next request (nodes.runtime.recording). A node
that returned without it (an early return was enough) made the next node's Caller start at
the same position: a scripted run repeated a reply, a replayed one failed, and the run's
calls and cost were undercounted. A node that made no call writes no usage. A call that
fails raises ``ModelCallError``, which carries what the node had spent until then (its
earlier calls, the failed call's retries): LangGraph drops a failed node's update, and the
evaluation adds that to the error's row (introspect.evaluate).

AutoPlan's parallel collections count calls the same way, in a counter of their own: a
branch's ``usage`` starts at the phase's count, its model nodes add their Callers' usage to
it, and the batch's fan-in credits each branch's own calls to the run (nodes.autoplan.batch).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias, get_type_hints

from langgraph.typing import ContextT, StateT_contra

from errors import IntrospectError
from nodes.runtime.calls import logged

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig
    from langgraph.runtime import Runtime

    from nodes.runtime.llm import Caller

Update: TypeAlias = dict[str, Any]  # a node's partial state: the keys it writes

# Nodes are generic in the state they read (StateT_contra: the graph's TypedDict, or a Send's
# input) and the run's context (ContextT): LangGraph's own type variables, bounded as its graphs are.


class StateNode(Protocol[StateT_contra]):
    """A node that needs only the state."""

    def __call__(self, state: StateT_contra) -> Awaitable[Update]: ...


class RuntimeNode(Protocol[StateT_contra, ContextT]):
    """A node that reads the run's Context."""

    def __call__(self, state: StateT_contra, runtime: Runtime[ContextT]) -> Awaitable[Update]: ...


class ConfigNode(Protocol[StateT_contra, ContextT]):
    """A node that also needs the run's config (its thread, which keys the env session)."""

    def __call__(
        self, state: StateT_contra, runtime: Runtime[ContextT], config: RunnableConfig
    ) -> Awaitable[Update]: ...


Node: TypeAlias = StateNode[StateT_contra] | RuntimeNode[StateT_contra, ContextT] | ConfigNode[StateT_contra, ContextT]


class ModelCalling(Protocol[StateT_contra, ContextT]):
    """The function under ``model_node``: a ConfigNode that is also given its Caller."""

    def __call__(
        self, state: StateT_contra, runtime: Runtime[ContextT], config: RunnableConfig, llm: Caller
    ) -> Awaitable[Update]: ...


# (context, state) -> the node's Caller: the method's temperature and the position in state
CallerFor: TypeAlias = Callable[[Any, Any], "Caller"]


class UsageWritten(IntrospectError, TypeError):
    """A model node wrote ``usage`` or ``calls`` itself: the wrapper writes them (see the module docstring)."""


def model_node(
    caller: CallerFor,
) -> Callable[[ModelCalling[StateT_contra, ContextT]], ConfigNode[StateT_contra, ContextT]]:
    """The decorator of a model-calling node: the node is called with the Caller that
    ``caller(context, state)`` makes, and its update carries that Caller's usage (see the
    module docstring); what it returns is a ``ConfigNode`` to register."""

    def wrap(node: ModelCalling[StateT_contra, ContextT]) -> ConfigNode[StateT_contra, ContextT]:
        name = getattr(node, "__name__", "node")

        async def run(state: StateT_contra, runtime: Runtime[ContextT], config: RunnableConfig) -> Update:
            llm = caller(runtime.context, state)
            update = await node(state, runtime, config, llm)
            if "usage" in update or "calls" in update:
                raise UsageWritten(f"{name} writes 'usage' or 'calls' itself; model_node merges its Caller's")
            if not llm.usage["model_calls"]:
                return update
            return {**update, "usage": llm.usage, "calls": [logged(call) for call in llm.calls]}

        # Not functools.wraps: LangGraph reads the signature to pass runtime and config, and must
        # see run's, not the wrapped function's (it has no ``llm`` to pass). It reads the state's
        # annotation too (a Send target's input schema): run's annotations are the node's, resolved.
        hints = get_type_hints(node)
        run.__annotations__ = {key: hints[key] for key in ("state", "runtime", "config", "return") if key in hints}
        run.__name__, run.__qualname__, run.__doc__ = name, getattr(node, "__qualname__", name), node.__doc__
        run.__module__ = node.__module__
        return run

    return wrap
