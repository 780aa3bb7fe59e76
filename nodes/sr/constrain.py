"""Constraining the action space (paper 002, Sec. 5.2): failed click targets are disabled.

The memory keeps a disabled set per step. Where the set takes effect is where the paper and its
code part. The original code (``hide_failed_clicks="reflection"``, the default) removes the ids
from the screens of the reflection prompt only (nodes/sr/reflect.py): the planner sees every id,
and the env takes a click on any of them. The paper (``hide_failed_clicks="planning"``, what this
module does): when a trial reaches step t, the env's disabled
ids are set to the memory's set for t (the env's ``DisablesElements``): a failed target stays on
the screen the model sees but loses its ``id=N``, and the env refuses actions on it. At a
step without failed targets nothing is disabled, so an element that was the wrong choice at
one step (a Submit clicked too early) is available again at the next. The env's snapshot
carries the disabled ids, so a resumed run sees the same screen.

Only an env that implements ``DisablesElements`` (MiniWoB) has its ids disabled. Elsewhere the
screen stays as it is (WebArena's ids are not removed, and WebShop, ALFWorld and HotpotQA have
no element ids): the memory still replays the steps before A, enforces B at A and keeps the
failed actions at A, so a failed action is never enforced again, as the paper's memory says.

Figure 7's ablations turn this off: "w/o action constraint" (Sec. 7.2) keeps every id on the
screen and lets the env take every action, and so does "w/o structured mem" (Sec. 7.1, whose
footnote 8 counts constraining the action space as part of the structured thought management).
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig

from nodes.runtime.environment import disable_elements
from nodes.sr.context import SRContext
from nodes.sr.memory import disabled_ids
from nodes.sr.state import SRState


def constrains(context: SRContext) -> bool:
    """Are failed click targets disabled at all? In the method; in neither ablation."""
    return context.structured_memory and context.action_constraint


def constrains_planning(context: SRContext) -> bool:
    """Are they disabled on the planner's screen and in the env (the paper), not only in the
    reflection prompt (the original code)?"""
    return constrains(context) and context.hide_failed_clicks == "planning"


async def constrain_step(state: SRState, context: SRContext, config: RunnableConfig, step: int) -> dict[str, Any]:
    """Disable exactly the memory's failed click ids for ``step``; the state update if it changed
    (``screens`` as a whole list: callers merge it, and write ``edit(...)`` of it)."""
    ids = disabled_ids(state["memory"], step) if constrains_planning(context) else []
    if ids == state.get("disabled", []):
        return {}
    disabled = await disable_elements(state, context, config, ids)
    if disabled is None:  # an env without element ids to disable: the screen stays as it is
        return {}
    observation, snapshot = disabled
    screens = list(state.get("screens", []))
    screens[-1:] = [observation.text]
    return {"observation": observation.text, "env_snapshot": snapshot, "screens": screens, "disabled": ids}
