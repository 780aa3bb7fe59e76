"""Plan revision (paper 3.3.3, eq. 10): P_new ~ G_plan(T, S_0, H_t) after a failed episode.

When the stack is empty and the task is not complete, the agent reviews the failed
plan, the actions it executed in every episode so far and its notes, and writes a new
plan for the initial state. An unusable answer keeps the old plan for the next episode.
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from graphs.context import Context
from nodes.da.ask import ask, caller, plan_steps
from nodes.da.state import DAState, Settings
from nodes.da.summarise import shown
from nodes.da.views import experience_text, notes_text, plan_text
from prompts import render


async def reflect(state: DAState, runtime: Runtime[Context], config: RunnableConfig) -> dict[str, Any]:
    llm = caller(runtime.context, state)
    prompt = render(
        "devils_advocate/plan_revision",
        **state["site"],
        starting_screen=shown(state["initial"]),
        task=state["goal"],
        failed_plan=plan_text(state),
        history=experience_text(state),
        notes=notes_text(state),
    )
    answer = await ask(llm, prompt, plan_steps, reasks=Settings.of(runtime.context).reasks)
    steps = answer.value or list(state["plan"])
    return {"plan": steps, "plans": [*(state.get("plans") or []), steps], "usage": llm.usage}
