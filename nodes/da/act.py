"""a_t ~ G_action(tau, S_t, H_{t-1}) (Algorithm 1, line 14): one action for the subtask.

The prompt is the paper's action prompt, its "Note:" list the env's action grammar in words
(on WebArena the appendix's prompt with its own list; elsewhere the generic one, which names
the env instead of WebArena's sandbox of websites); the reply is read by the env's interface.
``action_prompt`` is shared with ``remedy``, which continues the same conversation with the
devil's-advocate question.
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from envs.base import Interface
from nodes.da.ask import ask
from nodes.da.context import DAContext
from nodes.da.state import DAState
from nodes.da.summarise import shown
from nodes.da.views import (
    history_text,
    notes_text,
    plan_text,
    prompt_name,
    subtask_text,
)
from nodes.runtime.environment import env_interface
from nodes.runtime.llm import Caller, caller_for
from nodes.runtime.node import model_node
from prompts import render


def action_prompt(state: DAState, interface: Interface) -> str:
    return render(
        prompt_name(interface, "act"),
        websites=state["site"]["websites"],
        task=state["goal"],
        plan=plan_text(state),
        history=history_text(state, episode=state.get("episode", 1)),
        step=subtask_text(state),
        screen=shown(state["current"]),
        notes=notes_text(state),
        grammar=interface.grammar,
    )


@model_node(caller_for)
async def act(state: DAState, runtime: Runtime[DAContext], config: RunnableConfig, llm: Caller) -> dict[str, Any]:
    """``proposal`` = [a_t], or [] when the model gave no usable action."""
    interface = await env_interface(runtime.context)
    prompt = action_prompt(state, interface)
    answer = await ask(llm, prompt, interface.parse_action, reasks=runtime.context.reasks)
    return {"proposal": [answer.value] if answer.value else []}
