"""G_completed for the task and the subtask, and the answer delivery (Algorithm 1, 11-12).

After an aligned action the agent first asks whether the whole task is done (early
stop, whatever is left of the plan); if so it answers the task with the paper's answer
prompt (``###Answer ...``) and delivers it to the env in the env's answer action (the
Interface's ``answer_action``: WebArena's ``stop [answer]``, where it evaluates; HotpotQA's
``finish[answer]``). Otherwise it asks whether the current subtask is done and, if so,
moves tau to the next one.

An env without an answer action (WebShop, MiniWoB, ALFWorld) ends its task through ordinary
actions (buying, submitting, reaching the goal) and says so itself: the run ends when the
env is done, so the task question is not asked there, only the subtask question.
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from nodes.da.ask import ask, final_answer, yes_no
from nodes.da.context import DAContext
from nodes.da.describe import refusal
from nodes.da.state import DAState
from nodes.da.summarise import shown
from nodes.da.views import (
    history_text,
    notes_text,
    plan_text,
    prompt_name,
    subtask_text,
)
from nodes.runtime.channels import edit
from nodes.runtime.environment import env_interface, execute, live_env
from nodes.runtime.llm import Caller, caller_for
from nodes.runtime.node import model_node
from nodes.runtime.verdicts import Place
from prompts import render

TASK_DONE = Place("task_done", "complete", "the task is done (G_completed on the task: YES)")
SUBTASK_DONE = Place(
    "subtask_done",
    "complete",
    "the current subtask is done (G_completed on the subtask: YES); graded: the share of the plan done after it",
    graded=True,
)


def _fields(state: DAState) -> dict[str, str]:
    return {
        "task": state["goal"],
        "plan": plan_text(state),
        "history": history_text(state, episode=state.get("episode", 1)),
        "notes": notes_text(state),
        "screen": shown(state["current"]),
    }


def delivered(answer_action: str, action: str) -> str | None:
    """The answer ``action`` delivers in the env's ``answer_action`` form (``stop [Gold]``: Gold),
    or None when it is another action."""
    head, _, tail = answer_action.partition("{answer}")
    if len(action) < len(head) + len(tail) or not (action.startswith(head) and action.endswith(tail)):
        return None
    return action[len(head) : len(action) - len(tail)]


@model_node(caller_for)
async def complete(state: DAState, runtime: Runtime[DAContext], config: RunnableConfig, llm: Caller) -> dict[str, Any]:
    reasks = runtime.context.reasks
    fields = _fields(state)
    interface = await env_interface(runtime.context)
    answer_action = interface.answer_action
    verdict = None
    if answer_action is not None:  # only a task that ends with an answer is asked whether it is done
        verdict = await ask(llm, render(prompt_name(interface, "complete_task"), **fields), yes_no, reasks=reasks)
        if verdict.value is not None:
            llm.verdict(TASK_DONE, "YES" if verdict.value else "NO", verdict.value)
    if answer_action is not None and verdict is not None and verdict.value:
        reply = await ask(
            llm,
            render(prompt_name(interface, "answer"), **{k: fields[k] for k in ("task", "history", "notes", "screen")}),
            final_answer,
            reasks=reasks,
        )
        answer = reply.value if reply.value is not None else " ".join(reply.text.split())
        env = await live_env(state, runtime.context, config)
        deliver = answer_action.format(answer=answer)
        result, update = await execute(env, state, config, deliver, node="complete", caller=llm, rationale=verdict.text)
        update["actions"] = state.get("actions", 0)  # delivering the answer is not an action
        if not result.valid:  # a person rejected the answer (Context.confirm): go on,
            history = state.get("history") or []  # with the reason in H, which the next prompts show
            refused = refusal(state, deliver, result.feedback)
            return {**update, "history": edit(history, [*history, refused]), "task_done": False}
        answer = delivered(answer_action, update["trajectory"][-1]["action"]) or answer  # as a person edited it
        return {**update, "task_done": True, "answer": answer}
    subtask_done = await ask(
        llm,
        render(prompt_name(interface, "complete_subtask"), **fields, step=subtask_text(state)),
        yes_no,
        reasks=reasks,
    )
    subtask = state.get("subtask", 0) + (1 if subtask_done.value else 0)
    if subtask_done.value is not None:
        steps = len(state.get("plan") or [])
        done = subtask_done.value
        llm.verdict(SUBTASK_DONE, "YES" if done else "NO", done, graded=subtask / steps if steps else None)
    return {"task_done": False, "subtask": subtask}
