"""Element mapping after a backtrack (paper 3.3.2, "Element Mapping" prompt).

The restored page may number its elements differently from the page the action was
chosen on. The model is shown both screens and asked for the new id of the same
element; the id must be on the restored screen. When it never names one, the entry
is dropped (``popped`` empty) and the agent pops the next alternative.
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from graphs.context import Context
from nodes.channels import edit
from nodes.da.ask import ask, caller
from nodes.da.grammar import element_id, parse_element_id, with_element
from nodes.da.state import DAState, Screen, Settings
from nodes.da.summarise import shown
from nodes.llm import Caller
from prompts import render


async def mapped_action(llm: Caller, action: str, before: Screen, after: Screen, reasks: int) -> str | None:
    """``action`` with its element id mapped from screen ``before`` to screen ``after``."""
    prompt = render(
        "devils_advocate/map_element",
        element_id=element_id(action),
        screen_before=shown(before),
        screen_after=shown(after),
    )
    answer = await ask(llm, prompt, lambda text: parse_element_id(text, after["observation"]), reasks=reasks)
    return with_element(action, answer.value) if answer.value is not None else None


async def map_element(state: DAState, runtime: Runtime[Context], config: RunnableConfig) -> dict[str, Any]:
    entry = state["popped"]
    assert entry
    llm = caller(runtime.context, state)
    reasks = Settings.of(runtime.context).reasks
    mapped = await mapped_action(llm, entry["action"], entry["state"], state["current"], reasks)
    if mapped is None:
        return {"popped": {}, "usage": llm.usage}
    backtracks = [dict(b) for b in state.get("backtracks") or []]
    if backtracks:
        backtracks[-1]["mapped_action"] = mapped
    return {"popped": {**entry, "action": mapped}, "backtracks": edit(state.get("backtracks") or [], backtracks),
            "usage": llm.usage}
