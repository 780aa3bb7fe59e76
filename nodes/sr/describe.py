"""Action paraphrase (paper 002, Sec. 4.3 and Appendix C).

A plain-language statement of what an executed action achieved stands for the state-action
pair in later planning prompts and in the reflection prompt. Key presses describe
themselves (as in the paper's code) and replayed or refused actions already carry a
description, so only clicks and text entries cost a model call (on MiniWoB; every other action
of another env's grammar is described by the model).

Outside MiniWoB the generic prompt (nodes/sr/prompting.py) also shows what the action returned:
on a text env the observation after an action is its result (a search's paragraph), which the
paper's web screens show on the next page the planner sees, but which the planner of a text env
would otherwise lose one step later (it reads past actions only as these paraphrases, Eq. 4).
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from envs.base import Interface
from nodes.runtime.channels import edit
from nodes.runtime.environment import env_interface
from nodes.runtime.llm import Caller, caller_for
from nodes.runtime.node import model_node
from nodes.sr.context import SRContext
from nodes.sr.model import ask, token_limit
from nodes.sr.prompting import render
from nodes.sr.state import SRState, StepRecord, shown


def needs_description(step: StepRecord) -> bool:
    """Does this executed step still need a paraphrase from the model?"""
    return not step.get("description")


def paraphrase_prompt(state: SRState, context: SRContext, interface: Interface) -> str:
    """The prompt that paraphrases the last executed action, on the screen it was taken on."""
    step = state["steps"][-1]
    return render(
        interface,
        "paraphrase",
        context,
        state.get("task_name", ""),
        screen=step.get("screen", ""),
        action=shown(step).strip(),
        intro=state.get("intro", interface.intro),
        result=state.get("observation", ""),
    )


@model_node(caller_for)
async def describe(state: SRState, runtime: Runtime[SRContext], config: RunnableConfig, llm: Caller) -> dict[str, Any]:
    """Paraphrase the last executed action, on the screen it was taken on."""
    steps = list(state["steps"])
    ctx = runtime.context
    interface = await env_interface(ctx)
    summary = await ask(llm, paraphrase_prompt(state, ctx, interface), token_limit(ctx, interface))
    steps[-1] = StepRecord(**steps[-1], description=summary.strip().removeprefix("Summary:").strip())
    return {"steps": edit(state["steps"], steps)}
