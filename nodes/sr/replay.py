"""The memory's part at the start of a stage (paper 002, Sec. 5.1, "Interplay with Staged
Planning"): steps before A are replayed, B is enforced at A, without calling the planner.

Every run of this node starts a stage (nodes/sr/stage.py). While the trial is before A, the
stage is the next stage of the replay prefix: the replayed steps that were one stage in the
trial they come from, "deterministically replayed" as the paper's footnote 7 says (the paper's
code calls its planner again for them, at its temperature 0.5, so its stages before A may differ
from the last trial's; a row of the fidelity ledger). At A, the stage is B alone when it may be
enforced: always, as the original code enforces it, or (``enforce_failed=False``, the paper's
Sec. 5.2) only if it has not failed at A before. When it may not (B failed there before, or is a
click on an id the env refuses there, or was not an action of the grammar, or the run is the
ablation without structured memory, which never enforces) the planner is asked instead, with the
lessons (and, in the paper's setting ``hide_failed_clicks="planning"``, the failed click targets
disabled on its screen).
"""

from __future__ import annotations

from itertools import takewhile
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from envs.base import Interface
from nodes.runtime.channels import edit
from nodes.runtime.environment import env_interface
from nodes.sr.constrain import constrain_step, constrains_planning
from nodes.sr.context import SRContext
from nodes.sr.memory import enforced_action
from nodes.sr.stage import begin
from nodes.sr.state import PlannedAction, SRState


def queued_from_memory(state: SRState, interface: Interface, context: SRContext) -> list[PlannedAction]:
    """What the memory prescribes for the stage starting at the current step (maybe nothing;
    nothing at all in the ablation without replay, ``replay=False``)."""
    if not context.replay:
        return []
    memory = state["memory"]
    step = len(state.get("steps", []))
    prefix = memory["replay"][step:]
    if prefix:
        stage = prefix[0].get("stage", 0)
        return [
            PlannedAction(action=s["action"], source="replay", description=s.get("description", ""))
            for s in takewhile(lambda s: s.get("stage", 0) == stage, prefix)
        ]
    action = (
        enforced_action(memory, step, interface, again=context.enforce_failed, refused=constrains_planning(context))
        if context.structured_memory
        else ""
    )
    return [PlannedAction(action=action, source="enforce")] if action else []


async def replay(state: SRState, runtime: Runtime[SRContext], config: RunnableConfig) -> dict[str, Any]:
    """Start a stage: queue the memory's actions, or prepare the screen for the planner."""
    update: dict[str, Any] = dict(begin(state))
    interface = await env_interface(runtime.context)
    queue = queued_from_memory(state, interface, runtime.context)
    if queue:
        return {**update, "pending": queue}
    update.update(await constrain_step(state, runtime.context, config, len(state.get("steps", []))))
    if "screens" in update:
        update["screens"] = edit(state.get("screens", []), update["screens"])
    return {**update, "pending": []}
