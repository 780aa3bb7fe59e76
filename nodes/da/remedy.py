"""a_t^(r) ~ G_remedy(tau, S_t, H_{t-1}, a_t) for r = 1..R (Algorithm 1, lines 15-16).

Anticipatory reflection: after the action prompt and the model's first answer, the
model is asked "If your answer above is not correct, instead, the next action should
be:" (the paper's question; Context ``remedy_hint`` adds "(give one different action, in
the same format)"). Each further remedy continues the same conversation, so it sees the
alternatives already proposed. The paper pushes whatever the model answers; with Context
``distinct_remedies`` a repeated action is sent back as feedback instead (a duplicate on the
stack only repeats a known step).
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from envs.base import Interface
from nodes.da.act import action_prompt
from nodes.da.ask import ask
from nodes.da.context import DAContext
from nodes.da.state import DAState
from nodes.runtime.environment import env_interface
from nodes.runtime.llm import Caller, caller_for
from nodes.runtime.node import model_node
from nodes.runtime.parse import ParseError
from prompts import render


def _new_action(text: str, proposed: list[str], interface: Interface, distinct: bool) -> str:
    action = interface.parse_action(text)
    if distinct and action in proposed:
        raise ParseError(f"{action} was already proposed; give a different action")
    return action


@model_node(caller_for)
async def remedy(state: DAState, runtime: Runtime[DAContext], config: RunnableConfig, llm: Caller) -> dict[str, Any]:
    """``proposal`` = [a_t, a_t^(1), ..., a_t^(R)] (fewer when a remedy stays malformed)."""
    settings = runtime.context
    proposal = list(state["proposal"])
    interface = await env_interface(runtime.context)
    prompt = action_prompt(state, interface)
    messages: list[BaseMessage] = [HumanMessage(prompt), AIMessage(proposal[0])]
    question = render("devils_advocate/remedy")
    if settings.remedy_hint:  # not in the paper: an option
        question += "\n" + render("devils_advocate/remedy_hint")
    for _ in range(settings.remedies_per_action):
        messages.append(HumanMessage(question))
        answer = await ask(
            llm,
            messages,
            lambda text: _new_action(text, proposal, interface, settings.distinct_remedies),
            reasks=settings.reasks,
        )
        messages = answer.messages
        if answer.value:
            proposal.append(answer.value)
    return {"proposal": proposal}
