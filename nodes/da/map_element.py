"""Element mapping after a backtrack (paper 3.3.2, "Element Mapping" prompt).

The restored page may number its elements differently from the page the action was
chosen on. The model is shown both screens and asked for the new id of the same
element; the id must be on the restored screen. When it never names one, the entry
is dropped (``popped`` None) and the agent pops the next alternative.
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from graphs.context import Context
from nodes.da.ask import ask, caller
from nodes.da.grammar import element_id, parse_element_id, with_element
from nodes.da.state import DAState, Settings
from prompts import render


async def map_element(state: DAState, runtime: Runtime[Context], config: RunnableConfig) -> dict[str, Any]:
    entry = state["popped"]
    assert entry is not None
    current = state["current"]
    llm = caller(runtime.context, state)
    prompt = render(
        "devils_advocate/map_element",
        element_id=element_id(entry["action"]),
        screen_before=entry["state"]["screen"],
        screen_after=current["screen"],
    )
    answer = await ask(
        llm,
        prompt,
        lambda text: parse_element_id(text, current["observation"]),
        reasks=Settings.of(runtime.context).reasks,
    )
    if answer.value is None:
        return {"popped": None, "usage": llm.usage}
    mapped = with_element(entry["action"], answer.value)
    backtracks = [dict(b) for b in state.get("backtracks") or []]
    if backtracks:
        backtracks[-1]["mapped_action"] = mapped
    return {"popped": {**entry, "action": mapped}, "backtracks": backtracks, "usage": llm.usage}
