"""Plan revision (paper 3.3.3, eq. 10): P_new ~ G_plan(T, S_0, H_t) after a failed episode.

When the stack is empty and the task is not complete, the agent is shown the failed plan
and the actions it executed in every episode so far (the appendix's plan prompt with its
"previous failed trials" part), and writes a new plan for the initial state. Showing the
notes too and asking first what went wrong are options (Context ``revision_notes``,
``revision_review``), off by default: the appendix has neither. An unusable answer keeps
the old plan for the next episode.
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from nodes.da.ask import ask, plan_steps
from nodes.da.context import DAContext
from nodes.da.state import DAState
from nodes.da.summarise import shown
from nodes.da.views import experience_text, notes_text, plan_text, prompt_name
from nodes.runtime.channels import edit
from nodes.runtime.environment import env_interface
from nodes.runtime.llm import Caller, caller_for
from nodes.runtime.node import model_node
from prompts import render


def additions(state: DAState, settings: DAContext) -> str:
    """The optional blocks after "Past experience" (neither is in the paper's appendix)."""
    blocks = []
    if settings.revision_notes:
        blocks.append(render("devils_advocate/revision_notes", notes=notes_text(state)))
    if settings.revision_review:
        blocks.append(render("devils_advocate/revision_review"))
    return "".join(f"\n\n{block}" for block in blocks)


@model_node(caller_for)
async def reflect(state: DAState, runtime: Runtime[DAContext], config: RunnableConfig, llm: Caller) -> dict[str, Any]:
    settings = runtime.context
    interface = await env_interface(runtime.context)
    prompt = render(
        prompt_name(interface, "plan_revision"),
        **state["site"],
        grammar=interface.grammar,
        starting_screen=shown(state["initial"]),
        task=state["goal"],
        failed_plan=plan_text(state),
        history=experience_text(state),
        additions=additions(state, settings),
    )
    answer = await ask(llm, prompt, plan_steps, reasks=settings.reasks)
    steps = answer.value or list(state["plan"])
    plans = state.get("plans") or []
    return {"plan": steps, "plans": edit(plans, [*plans, steps])}
