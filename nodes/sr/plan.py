"""The planner (paper 002, Sec. 4.3 and Appendices A-B).

Staged plan-and-follow: one model call lists every action executable on the current
screen; they are executed in order, and the next screen gets a new plan. The iterative
baseline (Sec. 4.1) asks for one action per call. The planner sees the current screen, the
goal and paraphrases of the trial's past actions (not the past screens, Eq. 4); at a step
where the memory holds a lesson it cannot enforce, it sees that lesson and is asked to follow
it. In the ablation without structured memory (Sec. 7.1) every reflection so far is shown at
every planning call, as sticky entries (the prior work the paper contrasts in Sec. 5.2; the
paper's code joins them one per line), and it is asked to follow them at the step they name.
No action in the reply ends the trial (status incomplete unless the task is done). On MiniWoB the
plan is read line by line as the paper's code executes it (``plan_reading="code"``,
nodes/sr/actions.py); elsewhere, and with ``plan_reading="actions"``, it is read for its actions.

The prompt is the paper's on MiniWoB and the generic one elsewhere (nodes/sr/prompting.py); on a
text env each observation is a screen, so a stage is the actions planned on one observation.
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

import prompts
from envs.base import Interface
from nodes.runtime.environment import env_interface
from nodes.runtime.llm import Caller, caller_for
from nodes.runtime.node import model_node
from nodes.sr.actions import ParsedLine, read_plan, read_plan_as_code
from nodes.sr.context import SRContext
from nodes.sr.memory import entry_at
from nodes.sr.model import ask, token_limit
from nodes.sr.prompting import actions_text, paper_view, render, sticky_lessons
from nodes.sr.stage import status
from nodes.sr.state import PlannedAction, SRState, StepRecord


def ordinal(n: int) -> str:
    """1 -> 1st, 2 -> 2nd, 11 -> 11th."""
    suffix = "th" if 11 <= n % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def history(steps: list[StepRecord]) -> str:
    """The trial so far, one paraphrase per action."""
    if not steps:
        return "You have not taken any actions yet."
    return "\n".join(f"{ordinal(i)} action: {s.get('description') or s['action']}" for i, s in enumerate(steps, 1))


def lessons(state: SRState, structured: bool, sticky: list[str]) -> str:
    """The lessons block of the planning prompt ("" when there is none): the task's sticky
    lessons, then the memory's entry at this step (or, without structured memory, every
    reflection so far), as the original code lists them."""
    if structured:
        entry = entry_at(state["memory"], len(state.get("steps", [])))
        shown = "\n".join(f"- {lesson}" for lesson in [*sticky, *([entry["reflection"]] if entry else [])])
    else:
        shown = "\n".join([*sticky, *state["memory"].get("reflections", [])])
    return prompts.render("structured_reflection/lessons", lessons=shown) + "\n\n" if shown else ""


def planning_prompt(state: SRState, context: SRContext, interface: Interface) -> str:
    follow = entry_at(state["memory"], len(state.get("steps", []))) is not None
    planning = context.planning
    task = state.get("task_name", "")
    return render(
        interface,
        "plan",
        context,
        task,
        task_name=task,
        intro=state.get("intro", interface.intro),
        actions=actions_text(interface),
        screen=state.get("observation", ""),
        goal=state.get("goal", ""),
        history=history(state.get("steps", [])),
        lessons=lessons(state, context.structured_memory, sticky_lessons(interface, context, task)),
        instruction=prompts.load(f"structured_reflection/{'plan_lesson' if follow else f'plan_{planning}'}"),
    )


def planned(line: ParsedLine) -> PlannedAction:
    """A plan line waiting to be executed (with what the paper's code reading adds to it)."""
    action = PlannedAction(action=line.action, source="plan")
    if line.error:
        action["error"] = line.error
    if line.written:
        action["written"] = line.written
    if line.reading:
        action["reading"] = line.reading
    return action


@model_node(caller_for)
async def plan(state: SRState, runtime: Runtime[SRContext], config: RunnableConfig, llm: Caller) -> dict[str, Any]:
    """Ask for this screen's actions (all of them, or one in the iterative baseline)."""
    ctx = runtime.context
    interface = await env_interface(ctx)
    reply = await ask(llm, planning_prompt(state, ctx, interface), token_limit(ctx, interface))
    as_code = ctx.plan_reading == "code" and paper_view(interface)
    lines = read_plan_as_code(reply, interface) if as_code else read_plan(reply, interface)
    if ctx.planning == "iterative":
        lines = lines[:1]
    update: dict[str, Any] = {
        "planning_calls": state.get("planning_calls", 0) + 1,
        "pending": [planned(line) for line in lines],
    }
    if not lines:
        update["status"] = status(state, ctx, interface, exception=False, stopped=True)
        llm.unreadable("no action in the plan: the trial ends")
    elif wrong := next((line.error for line in lines if line.error), ""):
        llm.unreadable(f"{wrong}: the trial ends as an exception at that line")
    elif idle := sum(line.reading == "noop" for line in lines):
        llm.unreadable(f"{idle} line(s) name no action: each executes nothing, as the code's noop")
    return update
