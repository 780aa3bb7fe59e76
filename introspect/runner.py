"""Running one task as a checkpointed thread, and resuming it.

A thread records which method ran it and its Context (as JSON in the checkpoint
metadata; the Context never holds keys), so ``introspect resume THREAD_ID`` needs
nothing but the thread id. The live env is rebuilt from the snapshot in state.

Graphs are compiled once per process (each ``Method.graph``) and bound to a
checkpointer with ``Pregel.copy``, which shares the compiled nodes and channels: about
0.03 ms instead of 4-11 ms of compiling per run, and nothing that keeps a closed
checkpointer alive.

Runs are ``durability="sync"`` (``DURABILITY``): LangGraph's default, ``"async"``, saves a
step's checkpoint while the next step already runs, so a kill could land after the next
node had acted but before the step before it was on disk. With ``"sync"`` a step's writes
and its checkpoint are committed before the next step starts, at no more CPU or wall time
per step than ``"async"`` in benchmarks/orchestration.py (the saver does the same work, and
with nothing else to run the loop only waits for the commit).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from envs.sessions import SESSIONS
from errors import UserError
from graphs import UnknownMethodError, method_named
from graphs.method import DEFAULT_RECURSION_LIMIT, Method
from introspect.checkpoint import copy_thread
from nodes.runtime.context import Context

if TYPE_CHECKING:  # langgraph is imported with the method's graph module, not before
    from langchain_core.runnables import RunnableConfig
    from langgraph.checkpoint.base import BaseCheckpointSaver
    from langgraph.runtime import RunControl
    from langgraph.types import Durability

OnUpdate = Callable[[str, dict[str, Any]], Awaitable[None] | None]
Pending = list[tuple[str, Any]]  # a paused graph's questions: (interrupt id, question)
OnQuestion = Callable[[Pending], Awaitable[dict[str, Any] | None]]  # answers by id, or None: stay paused


class ThreadError(UserError, ValueError):
    """An unknown thread, or a thread this version cannot resume."""


@dataclass
class Outcome:
    """How a thread ended (or stopped), from its final state."""

    thread_id: str
    method: Method
    state: dict[str, Any]
    finished: bool


DURABILITY: Durability = "sync"  # every step on disk before the next one runs (module docstring)


def bound(graph: Any, checkpointer: BaseCheckpointSaver | None) -> Any:
    """A graph compiled once, bound to ``checkpointer`` (no recompilation)."""
    return graph.copy(update={"checkpointer": checkpointer})


def graph_for(method: Method, checkpointer: BaseCheckpointSaver | None) -> Any:
    """The method's compiled graph bound to ``checkpointer``."""
    return bound(method.graph, checkpointer)


def run_config(thread_id: str, method: Method, context: Context, marks: dict[str, str] | None = None) -> RunnableConfig:
    """The thread's config; its metadata (the method's name, the Context) makes the thread
    resumable by id alone, and names the recording its calls go to (``--record``), if any;
    ``marks``: more of it (an ablation's fork says what it is the fork of)."""
    from nodes.runtime.recording import RECORDER

    metadata = {"introspect_method": method.name, "introspect_context": json.dumps(context.to_dict()), **(marks or {})}
    if (recorder := RECORDER.get()) is not None:  # where `introspect view` finds the calls' record
        metadata["introspect_recording"] = str(recorder.path.resolve())
    return {
        "configurable": {"thread_id": thread_id},
        "metadata": metadata,
        "recursion_limit": max(method.recursion_limit(context), DEFAULT_RECURSION_LIMIT),
    }


async def drive(
    method: Method,
    context: Context,
    thread_id: str,
    checkpointer: BaseCheckpointSaver,
    graph_input: Any,
    on_update: OnUpdate | None = None,
    on_question: OnQuestion | None = None,
    control: RunControl | None = None,
    marks: dict[str, str] | None = None,
) -> Outcome:
    """Run (``graph_input``) or continue (None, or a ``Command``) a thread to its end, streaming
    node updates. A graph paused for a person (Context.confirm) is answered by ``on_question``
    and continued, also when it was paused before this call; without one, or when it answers
    None, the thread is left paused and the outcome is unfinished. A drain asked of ``control``
    (introspect.stopping) ends the run at a step boundary, checkpointed: unfinished too.
    ``marks``: metadata its new checkpoints carry besides its method and Context."""
    from langgraph.errors import GraphDrained
    from langgraph.types import Command

    graph = graph_for(method, checkpointer)
    config = run_config(thread_id, method, context, marks)
    pending = await questions(graph, config) if graph_input is None and on_question else []
    try:
        while True:
            if pending:
                answers = await on_question(pending) if on_question else None
                if answers is None:
                    break
                graph_input = Command(resume=answers)
            updates = graph.astream(
                graph_input, config, context=context, stream_mode="updates", durability=DURABILITY, control=control
            )
            try:
                async for chunk in updates:
                    for node, update in chunk.items():
                        if on_update is not None and isinstance(update, dict) and not node.startswith("__"):
                            maybe = on_update(node, update)
                            if maybe is not None:
                                await maybe
            except GraphDrained:
                break  # stopped at a step boundary; the thread waits at its checkpoint
            pending = await questions(graph, config) if on_question else []
            if not pending:
                break
    finally:
        await SESSIONS.release(thread_id)
    return await outcome_of(method, thread_id, checkpointer)


async def questions(graph: Any, config: RunnableConfig) -> Pending:
    """The questions a paused thread waits on (nodes.runtime.confirm), oldest first."""
    snapshot = await graph.aget_state(config)
    return [(item.id, item.value) for item in snapshot.interrupts]


async def outcome_of(method: Method, thread_id: str, checkpointer: BaseCheckpointSaver) -> Outcome:
    """Where a thread stands now: its latest state and whether it has finished.

    A thread has finished when its latest checkpoint has no task at all. A process killed
    after a node's writes were saved but before the next checkpoint leaves a checkpoint whose
    task has completed: LangGraph then shows no ``next`` node (and the writes in ``values``),
    yet the run goes on from there when resumed."""
    snapshot = await graph_for(method, checkpointer).aget_state({"configurable": {"thread_id": thread_id}})
    finished = has_finished(snapshot.values, snapshot.next, snapshot.tasks)
    return Outcome(thread_id, method, dict(snapshot.values), finished=finished)


def has_finished(values: Any, next_nodes: Any, tasks: Any) -> bool:
    """A thread's state (local or a server's) is at the graph's end: it has values and no
    next node or task (pending writes or a question for a person count as tasks)."""
    return bool(values) and not next_nodes and not tasks


async def thread_metadata(checkpointer: BaseCheckpointSaver, thread_id: str) -> dict[str, Any]:
    """The metadata of a thread's latest checkpoint (what introspect recorded at its start)."""
    found = await checkpointer.aget_tuple({"configurable": {"thread_id": thread_id}})
    if found is None:
        raise ThreadError(f"no checkpointed thread {thread_id!r}")
    meta = dict(found.metadata or {})
    if not meta.get("introspect_context") or not (meta.get("introspect_method") or meta.get("introspect_training")):
        raise ThreadError(f"thread {thread_id!r} was not started by introspect")
    return meta


async def thread_context(checkpointer: BaseCheckpointSaver, thread_id: str) -> tuple[Method, Context]:
    """The method and Context a run thread was started with."""
    meta = await thread_metadata(checkpointer, thread_id)
    if not meta.get("introspect_method"):
        raise ThreadError(f"thread {thread_id!r} is a training thread; continue it with introspect resume")
    method = thread_method(meta, "introspect_method")
    return method, method.context.from_dict(json.loads(meta["introspect_context"]))


def thread_method(meta: dict[str, Any], key: str) -> Method:
    """The method a thread's metadata names under ``key`` (a thread stores the name; a method
    no longer registered cannot continue it)."""
    try:
        return method_named(str(meta[key]))
    except UnknownMethodError:
        raise ThreadError(
            f"the thread ran {meta[key]!r}, a method not registered here"
            " (graphs.METHODS or an introspect.methods entry point)"
        ) from None


async def resume(
    checkpointer: BaseCheckpointSaver,
    thread_id: str,
    on_update: OnUpdate | None = None,
    on_question: OnQuestion | None = None,
) -> Outcome:
    """Continue an interrupted run thread from its last checkpoint (a question it paused at
    first goes to ``on_question``)."""
    method, context = await thread_context(checkpointer, thread_id)
    return await drive(method, context, thread_id, checkpointer, None, on_update, on_question)


async def fork(checkpointer: BaseCheckpointSaver, source: str, target: str, at: str | None = None) -> None:
    """Copy run thread ``source`` to ``target``, whose latest checkpoint is then ``source``'s
    (or checkpoint ``at``, before the step that followed it ran): ``drive(..., target, None)``
    continues the copy, its env restored from the snapshot in that checkpoint's state, and
    leaves ``source`` as it was."""
    await thread_context(checkpointer, source)  # a run thread introspect started
    await copy_thread(checkpointer, source, target, upto=at)
