"""P ~ G_plan(T, S_0) (Algorithm 1, line 2) and tau = P.next() (line 7).

The plan is the numbered list the paper's plan prompt asks for; a model that never
produces one gets the task itself as a one-step plan, so the episode can still run. On
WebArena the prompt is the appendix's; elsewhere the generic one tells the env's actions
with its Interface's grammar.
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from nodes.da.ask import ask, plan_steps
from nodes.da.context import DAContext
from nodes.da.state import DAState
from nodes.da.summarise import shown
from nodes.da.views import prompt_name
from nodes.runtime.channels import edit
from nodes.runtime.environment import env_interface
from nodes.runtime.llm import Caller, caller_for
from nodes.runtime.node import model_node
from prompts import render


@model_node(caller_for)
async def plan(state: DAState, runtime: Runtime[DAContext], config: RunnableConfig, llm: Caller) -> dict[str, Any]:
    interface = await env_interface(runtime.context)
    prompt = render(
        prompt_name(interface, "plan"),
        **state["site"],
        grammar=interface.grammar,
        starting_screen=shown(state["initial"]),
        task=state["goal"],
    )
    answer = await ask(llm, prompt, plan_steps, reasks=runtime.context.reasks)
    steps = answer.value or [state["goal"]]
    plans = state.get("plans") or []
    return {"plan": steps, "plans": edit(plans, [*plans, steps])}


async def next_subtask(state: DAState) -> dict[str, Any]:
    """The root entry has no subtask: C_tau = 1 and tau = P.next()."""
    entry = state["popped"]
    assert entry
    return {"aligned": True, "subtask": int(entry["subtask"]) + 1}
