"""SIR reflection (paper 3.2.2): Summary, flaw Identification, plan Revision of one experience.

The three prompts continue the experience's own chat, one after the other, so the model
reflects on H^j ⊕ R^j (the whole interaction and how it ended): the summary s_j first,
then the flaws f_j of the plan and actions, then a revision r_j of only the flawed part
of the plan, which reads the flaws it just named. Where there is no plan yet (the first
iteration starts from none) there is nothing to revise: the Rev prompt is not asked, nor
HotpotQA's Flaw prompt, which asks about the plan only (as the original). The ablation of
Figure 3(b) (Context.reflect_flaw_revision=False) keeps the summary only. Reflection is greedy.
"""

from __future__ import annotations

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from nodes.autoplan import prompting as text
from nodes.autoplan.batch import reflect_caller
from nodes.autoplan.context import AutoPlanContext
from nodes.autoplan.decoding import ask
from nodes.autoplan.state import ReflectInput, Reflection, Turn
from nodes.runtime.llm import Caller
from nodes.runtime.node import model_node


async def _answer(llm: Caller, env: str, turns: list[Turn], prompt: str) -> tuple[list[Turn], str]:
    """Ask ``prompt`` after ``turns``; returns the chat including the reply, and the reply."""
    asked = text.with_user(turns, prompt)
    reply = (await ask(llm, text.chat(env, asked), env, "reflect")).strip()
    return [*asked, Turn(role="assistant", content=reply)], reply


@model_node(reflect_caller)  # at the phase's count (nodes.autoplan.batch)
async def reflect(state: ReflectInput, runtime: Runtime[AutoPlanContext], config: RunnableConfig, llm: Caller) -> dict:
    """s_j, f_j and r_j for one experience (one Send branch per experience)."""
    env = runtime.context.env
    experience = state["experience"]
    summary_prompt = text.render(env, "summary", outcome=experience.get("outcome", ""))
    turns, summary = await _answer(llm, env, list(experience.get("messages", [])), summary_prompt)
    flaw = revision = ""
    plan = str(experience.get("plan", ""))
    if runtime.context.reflect_flaw_revision and text.asks_flaw(env, plan):
        turns, flaw = await _answer(llm, env, turns, text.worded(env, "flaw", runtime.context.prompt_wording))
    if runtime.context.reflect_flaw_revision and text.asks_revision(plan):
        turns, revision = await _answer(llm, env, turns, text.render(env, "revision"))
    reflection = Reflection(
        iteration=int(experience.get("iteration", 0)),
        index=int(experience.get("index", 0)),
        task_id=str(experience.get("task_id", "")),
        summary=summary,
        flaw=flaw,
        revision=revision,
        usage=llm.usage,
    )
    return {"reflections": [reflection]}
