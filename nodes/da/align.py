"""C_tau ~ G_align(S_t, a_t, S_{t+1}, tau) (Algorithm 1, line 9).

A NO sends the agent back to the stack, i.e. to the next remedy, possibly in an
earlier state (backtracking). A refused action is not aligned without asking, and an
answer that never says YES or NO counts as NO: trying an alternative is the safe side.
``alignment=False`` (an ablation, introspect ablate) takes every accepted action as aligned.
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from nodes.da.ask import ask, yes_no
from nodes.da.context import DAContext
from nodes.da.describe import last_step_refused
from nodes.da.state import DAState
from nodes.da.summarise import shown
from nodes.da.views import plan_text, prompt_name, subtask_text
from nodes.runtime.environment import env_interface
from nodes.runtime.llm import Caller, caller_for
from nodes.runtime.node import model_node
from nodes.runtime.verdicts import Place
from prompts import render

ALIGNED = Place("aligned", "align", "the action served its subtask (G_align: YES)")


@model_node(caller_for)
async def align(state: DAState, runtime: Runtime[DAContext], config: RunnableConfig, llm: Caller) -> dict[str, Any]:
    if last_step_refused(state) is not None:
        return {"aligned": False}
    if not runtime.context.alignment:  # the ablation without the judgement
        return {"aligned": True}
    prompt = render(
        prompt_name(await env_interface(runtime.context), "align"),
        step=subtask_text(state),
        plan=plan_text(state),
        action=state["episode_actions"][-1][-1],
        screen_before=shown(state["previous"]),
        screen_after=shown(state["current"]),
    )
    answer = await ask(llm, prompt, yes_no, reasks=runtime.context.reasks)
    if answer.value is not None:
        llm.verdict(ALIGNED, "YES" if answer.value else "NO", answer.value)
    return {"aligned": bool(answer.value)}
