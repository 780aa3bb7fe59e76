"""Executing the next queued action and judging the trial (paper 002, Sec. 3.3-3.4, 4.3).

One action per node run, so every step is checkpointed. Before the action, the env's
disabled ids are set to the failed click targets the memory holds for this step, and the
step keeps the screen it was taken on as shown (for the reflection prompt, Appendix E). A
malformed plan line is not sent to the env: it is recorded as an invalid action with the
parser's explanation, which ends the trial with status exception (the paper halts a plan
that holds non-executable actions and resorts to reflection). After the action the trial
status is computed from the current stage's screens (nodes/sr/stage.py). Every executed action
adds the screen after it, hold and release too: the paper judges "no change" by comparing
screens (Sec. 3.4) and its code does so after every action, so a plan that starts with
"hold CTRL" ends there with "no change", as it does in that code. Only key presses describe
themselves; hold and release are paraphrased like clicks, as that code does.

Read as the paper's code reads a plan (``plan_reading="code"``, nodes/sr/actions.py), a line
executed as nothing is sent to no env: its step keeps the screen as it is, so the trial ends with
"no change" (or "cycle"), as in that code; a click without a number first asks the model which id
to click, with the code's grounding prompt on the current screen, and clicks the id its reply
starts with (the code's ``parse_int`` and vote, over one reply); a reply without a number ends the
trial as an exception (the code's run stops there with a ValueError).
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

import prompts
from nodes.runtime.channels import edit
from nodes.runtime.environment import env_interface, execute, live_env
from nodes.runtime.llm import Caller, caller_for
from nodes.runtime.node import model_node
from nodes.runtime.state import Step, updated
from nodes.sr.actions import kind, original_click
from nodes.sr.constrain import constrain_step
from nodes.sr.context import SRContext
from nodes.sr.model import ask, token_limit
from nodes.sr.prompting import render
from nodes.sr.stage import status
from nodes.sr.state import PlannedAction, SRState, StepRecord

SELF_DESCRIBING = ("press",)  # key presses (MiniWoB's verb) need no paraphrase (the paper's code)


def invalid_description(action: str, feedback: str) -> str:
    """What the planner reads about a refused action (no model call needed)."""
    return prompts.render("structured_reflection/invalid_action", action=action, feedback=feedback)


async def grounded(item: PlannedAction, state: SRState, context: SRContext, llm: Caller) -> PlannedAction:
    """A click without a number, as the code grounds it: the model names the id on the current
    screen (the code's grounding prompt), and the click is on the first number of its reply."""
    interface = await env_interface(context)
    task = state.get("task_name", "")
    prompt = render(interface, "ground", context, task, screen=state.get("observation", ""), action=item["action"])
    reply = await ask(llm, prompt, token_limit(context, interface))
    click = original_click(f"click {reply}", interface)  # the first number of the reply
    if click is None:
        problem = f'"{item["action"]}" names no element, and the model asked for one named none'
        llm.unreadable(f"{problem}: the trial ends as an exception")
        return PlannedAction(action=item["action"], source=item["source"], error=problem)
    return PlannedAction(action=click, source=item["source"])


@model_node(caller_for)
async def execute_action(
    state: SRState, runtime: Runtime[SRContext], config: RunnableConfig, llm: Caller
) -> dict[str, Any]:
    """Execute the head of ``pending`` and compute the trial status."""
    ctx = runtime.context
    before = state
    pending = list(state["pending"])
    item = pending.pop(0)
    if item.get("reading") == "ground":
        item = await grounded(item, state, ctx, llm)
    steps = list(state.get("steps", []))
    update: dict[str, Any] = await constrain_step(state, ctx, config, len(steps))
    state = updated(state, update)
    screens = list(state.get("screens", []))
    record = StepRecord(
        action=item["action"],
        source=item["source"],
        valid=True,
        screen=state.get("observation", ""),
        disabled=list(state.get("disabled", [])),
        stage=state.get("stage", 0),
    )
    if item.get("written"):
        record["written"] = item["written"]
    if item.get("description") or kind(item["action"]) in SELF_DESCRIBING:
        record["description"] = item.get("description") or item.get("written") or item["action"]
    if item.get("reading") == "noop":  # the code executes such a line as nothing: the screen stays
        update["trajectory"] = [
            unexecuted(item, state, True, "not an action: executed as nothing, as the original code executes it")
        ]
        update["actions"] = state.get("actions", 0) + 1
        screens.append(state.get("observation", ""))
    elif item.get("error"):
        record.update({"valid": False, "feedback": item["error"]})
        update["trajectory"] = [unexecuted(item, state, False, item["error"])]
        update["actions"] = state.get("actions", 0) + 1
    else:
        env = await live_env(state, ctx, config)
        result, executed = await execute(
            env, state, config, item["action"], node="execute", caller=llm, rationale=item["source"]
        )
        update.update(executed)
        if not executed["trajectory"][0].get("valid", True):
            record.update({"valid": False, "feedback": executed["trajectory"][0].get("feedback", "")})
        screens.append(result.observation.text)
    if not record["valid"]:
        record["description"] = invalid_description(record["action"], record["feedback"])
    steps.append(record)
    update.update(pending=pending, steps=steps, screens=screens)
    after = updated(state, update)
    interface = await env_interface(ctx)
    update["status"] = status(after, ctx, interface, exception=not record["valid"], stopped=False)
    update.update(steps=edit(before.get("steps", []), steps), screens=edit(before.get("screens", []), screens))
    return update


def unexecuted(item: PlannedAction, state: SRState, valid: bool, feedback: str) -> Step:
    """The step of a plan line the env never ran (a noop line, or one that is no action): the
    screen stays as it was."""
    return Step(
        node="execute",
        action=item["action"],
        rationale=item["source"],
        observation=state.get("observation", ""),
        reward=0.0,
        valid=valid,
        feedback=feedback,
    )
