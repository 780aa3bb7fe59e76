"""The planner (paper 002, Sec. 4.3 and Appendices A-B).

Staged plan-and-follow: one model call lists every action executable on the current
screen; they are executed in order, and the next screen gets a new plan. The iterative
baseline (Sec. 4.1) asks for one action per call. The planner sees the current screen, the
goal and paraphrases of the trial's past actions (not the past screens, Eq. 4); at a step
where the memory holds a lesson it cannot enforce, it sees the lesson too. No action in the
reply ends the trial (status incomplete unless the task is done).
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

import prompts
from envs.miniwob_status import trial_status
from graphs.context import Context
from nodes.llm import caller_for
from nodes.sr.actions import read_plan
from nodes.sr.memory import entry_at
from nodes.sr.model import TEMPERATURE, ask
from nodes.sr.state import PlannedAction, SRState, StepRecord

DEFAULT_MAX_ACTIONS = 20  # per trial; the paper does not state its budget


def ordinal(n: int) -> str:
    """1 -> 1st, 2 -> 2nd, 11 -> 11th."""
    suffix = "th" if 11 <= n % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def history(steps: list[StepRecord]) -> str:
    """The trial so far, one paraphrase per action."""
    if not steps:
        return "You have not taken any actions yet."
    return "\n".join(f"{ordinal(i)} action: {s.get('description') or s['action']}" for i, s in enumerate(steps, 1))


def planning_prompt(state: SRState, planning: str) -> str:
    step = len(state.get("steps", []))
    entry = entry_at(state["memory"], step)
    lessons = prompts.render("structured_reflection/lessons", lessons=f"- {entry['reflection']}") + "\n\n" if entry else ""
    instruction = "plan_lesson" if entry else f"plan_{planning}"
    return prompts.render(
        "structured_reflection/plan",
        task_name=state.get("task_name", ""),
        screen=state.get("observation", ""),
        goal=state.get("goal", ""),
        history=history(state.get("steps", [])),
        lessons=lessons,
        instruction=prompts.load(f"structured_reflection/{instruction}"),
    )


async def plan(state: SRState, runtime: Runtime[Context], config: RunnableConfig) -> dict[str, Any]:
    """Ask for this screen's actions (all of them, or one in the iterative baseline)."""
    ctx = runtime.context
    llm = caller_for(ctx, state, temperature=TEMPERATURE)
    reply = await ask(llm, planning_prompt(state, ctx.planning))
    lines = read_plan(reply)
    if ctx.planning == "iterative":
        lines = lines[:1]
    update: dict[str, Any] = {
        "usage": llm.usage,
        "planning_calls": int(state.get("planning_calls", 0)) + 1,
        "pending": [PlannedAction(action=line.action, source="plan", **({"error": line.error} if line.error else {}))
                    for line in lines],
    }
    if not lines:
        status = trial_status(
            state.get("screens", []),
            reward=float(state.get("reward", 0.0)),
            done=bool(state.get("done", False)),
            steps=len(state.get("steps", [])),
            max_steps=ctx.limit("max_actions", DEFAULT_MAX_ACTIONS),
            exception=False,
            stopped=True,
        )
        update["status"] = status.value if status else ""
    return update
