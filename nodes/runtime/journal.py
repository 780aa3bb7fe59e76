"""Every model reply made durable the moment it arrives, so that a step run again asks nothing twice.

LangGraph commits a node's update only when the node returns: a reply that came back inside a
step that never finished (the process killed, a server worker dead or restarted, a browser
crash that failed the step) was lost with it, and the step run again after resume asked the
model again, paying twice. The Caller (nodes.runtime.llm) therefore keeps each reply, as the record of
nodes.runtime.calls (redacted), in the run's own checkpointer, before it hands it to the node; a node
run again finds its replies there, by position, and asks the model only from the first one it
does not find. The journal is also where a call's whole record stays: the state's call log
holds each journaled call without its request and reply, and where the journal keeps them
(``Journal.where``), so checkpoints do not grow with every call's messages; the viewer and
the exporter read them back from here (``journaled``).

Where: as pending writes of the checkpoint the step runs from (``aput_writes``, which every
LangGraph checkpointer has: SQLite, Postgres, the server's), under a task id of their own, one
per reply: the step's task id (LangGraph derives it from the checkpoint, the node and its
path, so the step run again has the same one) and the call's position. LangGraph reapplies a
checkpoint's writes only to the tasks they name, so these are never mistaken for a node's
output; and they are kept, and copied with a thread (``fork``), with the checkpoint they
belong to.

Why not LangGraph's own ``@task`` (whose result is kept the same way): its write is saved in
the background after the task returns, and cancelled with the step. Here the write is
awaited before the node sees the reply, and a call under way when the step is cancelled (a
server stopping with SIGTERM) is still received and kept (``outlasting``).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from nodes.runtime.calls import Kept, ModelCall

CHANNEL = "introspect:reply"  # the writes' channel: no graph has one of that name
FINISH = 4.0  # seconds a cancelled step still waits for its reply (LangGraph's server allows 5)

T = TypeVar("T")


@dataclass
class Journal:
    """The replies of one step (one task of one checkpoint), in the checkpointer."""

    saver: Any  # a langgraph BaseCheckpointSaver
    config: dict[str, Any]  # thread_id, checkpoint_ns and checkpoint_id of the step's checkpoint
    task_id: str
    resuming: bool = True  # whether the step may have run before (see ``reply``)
    _kept: dict[int, ModelCall] | None = field(default=None, repr=False)

    def _key(self, position: int) -> str:
        return f"{self.task_id}:reply:{position}"

    async def reply(self, position: int) -> ModelCall | None:
        """The reply kept for call ``position`` of this step, if it was answered before. Only the
        first step of a run that resumes a thread can have run before (a step run again after a
        crash, a failure or a cancellation is that one); any later step starts from a checkpoint
        this run has just made, so it is not read back: that read was a trip to the database
        for every model call, about a quarter of the framework's time per step."""
        if not self.resuming:
            return None
        if self._kept is None:
            found = await self.saver.aget_tuple(self.config)
            prefix = f"{self.task_id}:reply:"
            self._kept = {
                int(task_id.removeprefix(prefix)): value
                for task_id, channel, value in (found.pending_writes or [] if found else [])
                if channel == CHANNEL and task_id.startswith(prefix)
            }
        return self._kept.get(position)

    async def keep(self, call: ModelCall) -> None:
        """Store ``call`` (a redacted record) before the node reads it."""
        await self.saver.aput_writes(self.config, [(CHANNEL, dict(call))], self._key(int(call["position"])))

    def where(self, position: int) -> Kept:
        """Where the record of call ``position`` of this step is kept, for the state's log."""
        configurable = self.config["configurable"]
        return Kept(
            checkpoint_ns=configurable["checkpoint_ns"],
            checkpoint_id=configurable["checkpoint_id"],
            key=self._key(position),
        )


async def journaled(saver: Any, thread_id: str) -> dict[tuple[str, str, str], ModelCall]:
    """Every record the journal keeps for thread ``thread_id`` (all its checkpoints and
    namespaces), by where the state's log says it is (``Journal.where``): what the viewer
    and the exporter read a call's request and reply from (nodes.runtime.calls.whole)."""
    found: dict[tuple[str, str, str], ModelCall] = {}
    async for item in saver.alist({"configurable": {"thread_id": thread_id}}):
        configurable = item.config["configurable"]
        where = (str(configurable.get("checkpoint_ns", "")), str(configurable["checkpoint_id"]))
        for key, channel, value in item.pending_writes or []:
            if channel == CHANNEL:
                found.setdefault((*where, key), value)
    return found


def journal_here() -> Journal | None:
    """The journal of the step under way; None outside a graph or without a checkpointer."""
    from langgraph._internal._constants import (
        CONFIG_KEY_CHECKPOINT_MAP,
        CONFIG_KEY_CHECKPOINTER,
        CONFIG_KEY_RESUMING,
        CONFIG_KEY_RUNTIME,
    )
    from langgraph.checkpoint.base import BaseCheckpointSaver
    from langgraph.config import get_config

    try:
        configurable = get_config().get("configurable") or {}
    except RuntimeError:  # not inside a graph
        return None
    saver = configurable.get(CONFIG_KEY_CHECKPOINTER)
    info = getattr(configurable.get(CONFIG_KEY_RUNTIME), "execution_info", None)
    if not isinstance(saver, BaseCheckpointSaver) or info is None or not info.thread_id:
        return None
    # the namespace the step's checkpoint is stored under: the one LangGraph maps to its id
    owners = [
        ns for ns, id_ in (configurable.get(CONFIG_KEY_CHECKPOINT_MAP) or {}).items() if id_ == info.checkpoint_id
    ]
    namespace = max(owners, key=len) if owners else ""
    config = {
        "configurable": {"thread_id": info.thread_id, "checkpoint_ns": namespace, "checkpoint_id": info.checkpoint_id}
    }
    # LangGraph sets the flag for the first step of a run that continues a checkpointed thread
    # (to its subgraphs too) and drops it after that step
    return Journal(saver, config, info.task_id, bool(configurable.get(CONFIG_KEY_RESUMING)))


async def outlasting(work: Awaitable[T]) -> T:
    """``work``'s result; if the caller is cancelled meanwhile, ``work`` still runs to its end
    (``FINISH`` seconds at most) before the cancellation goes on: a model call under way is
    paid for, so its reply is received and journaled instead of being dropped and asked again."""
    task = asyncio.ensure_future(work)
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(asyncio.shield(task), FINISH)
        task.cancel()
        raise
