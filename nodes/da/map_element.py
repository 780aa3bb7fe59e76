"""Element mapping after a backtrack (paper 3.3.2, "Element Mapping" prompt).

The restored page may number its elements differently from the page the action was
chosen on. Whether an id still names the same element is the env interface's call (its
``element_signature``: on WebArena the element's line and the lines above it). When it
does not, the model is shown both screens and asked for the new id of the same element;
the id must be on the restored screen. When it never names one, the entry is dropped
(``popped`` empty) and the agent pops the next alternative.
"""

from __future__ import annotations

import re
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from envs.base import Interface
from nodes.da.ask import ask
from nodes.da.context import DAContext
from nodes.da.state import DAState, Screen
from nodes.da.summarise import shown
from nodes.runtime.channels import edit
from nodes.runtime.environment import env_interface
from nodes.runtime.llm import Caller, caller_for
from nodes.runtime.node import model_node
from nodes.runtime.parse import ParseError
from prompts import render


def same_element(interface: Interface, action: str, before: str, after: str) -> bool:
    """Whether the element ``action`` names is the same element on screen ``after``.

    True for actions without an element. False when the id is gone or now names another
    element (or the same one in another place): then the id must be mapped.
    """
    eid = interface.action_element(action)
    if eid is None:
        return True
    old = interface.element_signature(before, eid)
    return old is not None and old == interface.element_signature(after, eid)


def parse_element_id(interface: Interface, text: str, observation: str) -> str:
    """The element id named in a mapping reply, checked against the screen it is for."""
    candidates = re.findall(r"\[?\b(\d+)\b\]?", text or "")
    for candidate in candidates:
        if interface.element_signature(observation, candidate) is not None:
            return candidate
    if candidates:
        raise ParseError(f"element id {candidates[0]} is not on the new screen; give an id shown there")
    raise ParseError("no element id found; answer with the new element id, e.g. 1234")


async def mapped_action(
    llm: Caller, interface: Interface, action: str, before: Screen, after: Screen, reasks: int
) -> str | None:
    """``action`` with its element id mapped from screen ``before`` to screen ``after``."""
    prompt = render(
        "devils_advocate/map_element",
        element_id=interface.action_element(action),
        screen_before=shown(before),
        screen_after=shown(after),
    )
    answer = await ask(llm, prompt, lambda text: parse_element_id(interface, text, after["observation"]), reasks=reasks)
    return interface.with_element(action, answer.value) if answer.value is not None else None


@model_node(caller_for)
async def map_element(
    state: DAState, runtime: Runtime[DAContext], config: RunnableConfig, llm: Caller
) -> dict[str, Any]:
    entry = state["popped"]
    assert entry
    reasks = runtime.context.reasks
    interface = await env_interface(runtime.context)
    mapped = await mapped_action(llm, interface, entry["action"], entry["state"], state["current"], reasks)
    if mapped is None:
        return {"popped": {}}
    backtracks = [dict(b) for b in state.get("backtracks") or []]
    if backtracks:
        backtracks[-1]["mapped_action"] = mapped
    return {
        "popped": {**entry, "action": mapped},
        "backtracks": edit(state.get("backtracks") or [], backtracks),
    }
