"""Action paraphrase (paper 002, Sec. 4.3 and Appendix C).

A plain-language statement of what an executed action achieved stands for the state-action
pair in later planning prompts and in the reflection prompt. Key presses describe
themselves (as in the paper's code) and replayed or refused actions already carry a
description, so only clicks and text entries cost a model call.
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

import prompts
from nodes.channels import edit
from nodes.context import Context
from nodes.llm import caller_for
from nodes.sr.model import ask
from nodes.sr.stage import DEFAULTS
from nodes.sr.state import SRState, StepRecord


def needs_description(step: StepRecord) -> bool:
    """Does this executed step still need a paraphrase from the model?"""
    return not step.get("description")


async def describe(state: SRState, runtime: Runtime[Context], config: RunnableConfig) -> dict[str, Any]:
    """Paraphrase the last executed action, on the screen it was taken on."""
    steps = list(state["steps"])
    screen = steps[-1].get("screen", "")
    llm = caller_for(runtime.context, state, temperature=DEFAULTS["temperature"])
    summary = await ask(llm, prompts.render("structured_reflection/paraphrase", screen=screen, action=steps[-1]["action"]))
    steps[-1] = StepRecord(**steps[-1], description=summary.strip().removeprefix("Summary:").strip())
    return {"steps": edit(state["steps"], steps), "usage": llm.usage}
