"""H.add(G_describe(S_t, a_t, S_{t+1})) (Algorithm 1, line 8).

The description says what the action did and what was learned from the new screen; H
is what the action, completion and answer prompts show as the executed actions, and
what plan revision reviews. A refused action is described from the env's feedback
without asking the model.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from nodes.da.context import DAContext
from nodes.da.state import DAState, HistoryItem
from nodes.da.summarise import shown
from nodes.da.views import prompt_name
from nodes.runtime.channels import edit
from nodes.runtime.environment import env_interface
from nodes.runtime.llm import Caller, caller_for
from nodes.runtime.node import model_node
from prompts import render


def last_step_refused(state: DAState) -> str | None:
    """The env's feedback when the last executed action was invalid, else None."""
    steps = state.get("trajectory") or []
    if steps and not steps[-1].get("valid", True):
        return steps[-1].get("feedback") or "the action was refused"
    return None


def refusal(state: DAState, action: str, feedback: str) -> HistoryItem:
    """H's item for an action the env (or a person, Context.confirm) refused: its feedback."""
    text = f"The action {action} could not be executed: {feedback}"
    return HistoryItem(episode=state.get("episode", 1), action=action, text=text)


@model_node(caller_for)
async def describe(state: DAState, runtime: Runtime[DAContext], config: RunnableConfig, llm: Caller) -> dict[str, Any]:
    action = state["episode_actions"][-1][-1]
    refused = last_step_refused(state)
    if refused is not None:
        item = refusal(state, action, refused)
    else:
        prompt = render(
            prompt_name(await env_interface(runtime.context), "describe"),
            task=state["goal"],
            action=action,
            screen_before=shown(state["previous"]),
            screen_after=shown(state["current"]),
        )
        reply = await llm([HumanMessage(prompt)])
        text = " ".join(reply.text.split()) or f"Executed {action}."
        item = HistoryItem(episode=state.get("episode", 1), action=action, text=text)
    history = state.get("history") or []
    return {"history": edit(history, [*history, item])}
