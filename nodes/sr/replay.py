"""The memory's part at the start of a stage (paper 002, Sec. 5.1, "Interplay with Staged
Planning"): steps before A are replayed, B is enforced at A, without calling the planner.

At step 0 of a trial the whole replay prefix is queued, followed by B when it may be
enforced. At a later step with a memory entry, B is queued when it may be enforced; when it
may not (B already failed there, or was not an action of the grammar) the planner is asked
instead, with the entry as a lesson and the failed click targets disabled on its screen.
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from graphs.context import Context
from nodes.sr.constrain import constrain_step
from nodes.sr.memory import enforced_action
from nodes.sr.state import PlannedAction, SRState


def queued_from_memory(state: SRState) -> list[PlannedAction]:
    """What the memory prescribes from the current step on (possibly nothing)."""
    memory = state["memory"]
    step = len(state.get("steps", []))
    queue: list[PlannedAction] = []
    if step == 0:
        queue = [PlannedAction(action=s["action"], source="replay", description=s.get("description", ""))
                 for s in memory["replay"]]
    enforce_at = step + len(queue)
    if action := enforced_action(memory, enforce_at):
        queue.append(PlannedAction(action=action, source="enforce"))
    return queue


async def replay(state: SRState, runtime: Runtime[Context], config: RunnableConfig) -> dict[str, Any]:
    """Queue the memory's actions for this stage; otherwise prepare the screen for the planner."""
    queue = queued_from_memory(state)
    if queue:
        return {"pending": queue}
    update = await constrain_step(state, runtime.context, config, len(state.get("steps", [])))
    return {"pending": [], **update}
