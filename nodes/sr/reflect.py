"""Structured self-reflection (paper 002, Sec. 5 and Appendices D-E).

After a trial that did not end correct, the model reads the trajectory as Appendix E lays it
out: for every index k, the screen the k-th action was taken on, without the ids the memory
disables at that step (as the original code removes them here, and only here; in the paper's
setting ``hide_failed_clicks="planning"`` the planner was shown the screen so), then the action
itself; then the prompt of the trial's end status. It answers "For action index=A, you should
B." which updates the structured memory. The layout and whitespace are those of the paper's
code (``prompt_for_reflective_replay``).

Options: ``reflection_screens="first"`` shows the trial's first screen only, then the actions
(Sec. 7.5: on social-media-all the full trace overruns the model's input, and its screens
barely change); the ablation without structured memory (Sec. 7.1) also lists every earlier
reflection before the status, as the paper's code does for it. A trial that ended before its
first action shows the screen it ended on.

The reply is read as the paper's code reads it (nodes/sr/memory.py): the whole reply is the
lesson kept at A. A reply without ``index=A``, or with an A outside the trajectory, leaves the
memory as it was (the paper's code drops it too) and is kept in the trial record as
``reflection_error``: the next trial runs with what the memory already holds, and the run does
not crash.

Outside MiniWoB the generic prompt (nodes/sr/prompting.py) adds the screen after the last action
(on a text env, what the last action returned: "Nothing happens.", the answer's verdict) and the
env's actions, in which B is to be written so that it can be enforced.

``reflect_past_end=True`` (an addition) lets A name the action after the last one
when the trial ended incomplete; ``disable_clicks`` picks which failed click is disabled.
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

import prompts
from envs.base import Interface
from nodes.runtime.channels import edit
from nodes.runtime.environment import env_interface
from nodes.runtime.llm import Caller, caller_for
from nodes.runtime.node import model_node
from nodes.runtime.verdicts import Place
from nodes.sr import memory as mem
from nodes.sr.constrain import constrains, constrains_planning
from nodes.sr.context import SRContext
from nodes.sr.model import ask, longest, token_limit
from nodes.sr.prompting import actions_text, render, sticky_lessons
from nodes.sr.state import SRState, StepRecord, shown
from nodes.sr.status import TrialStatus
from nodes.sr.trial import record

STATUS = Place(
    "status",
    "reflect",
    "the trial succeeded (status correct); the status a reflection is asked about says it did not (failed, "
    "cycle, no change, exception, incomplete, in progress), so these verdicts say failure",
)


def trajectory(steps: list[StepRecord], screen_now: str, first_screen_only: bool) -> str:
    """The trajectory block: every screen and action (Appendix E), or the first screen only."""
    if not steps:
        return f"<screen>\n{screen_now}\n</screen>\nYou did not take any action.\n"
    if first_screen_only:
        return f"<screen>\n{steps[0].get('screen', '')}\n</screen>\n" + "".join(
            f"Your index={k} action: {shown(step)}\n" for k, step in enumerate(steps, 1)
        )
    return "".join(
        f"The index={k} screen:\n<screen>\n{step.get('screen', '')}\n</screen>\n"
        f"Your index={k} action: {shown(step)}\n\n"
        for k, step in enumerate(steps, 1)
    )


def shown_steps(state: SRState, context: SRContext, interface: Interface) -> list[StepRecord]:
    """The trial's steps with the screens the reflection prompt shows: in the original code's
    setting (``hide_failed_clicks="reflection"``) each without the ids the memory disables at
    its step (``disable_clicks_in_html``); in the paper's, the planner already saw them so."""
    steps = state.get("steps", [])
    if not constrains(context) or constrains_planning(context):
        return steps
    memory = state["memory"]
    hidden = [interface.without_elements(s.get("screen", ""), mem.disabled_ids(memory, k)) for k, s in enumerate(steps)]
    return [StepRecord(**{**step, "screen": screen}) for step, screen in zip(steps, hidden, strict=True)]


def reflection_prompt(state: SRState, context: SRContext, interface: Interface) -> str:
    task = state.get("task_name", "")
    earlier = (
        []
        if context.structured_memory
        else [*sticky_lessons(interface, context, task), *state["memory"].get("reflections", [])]
    )
    previous = prompts.render("structured_reflection/previous_reflections", reflections="\n".join(earlier)) + "\n\n\n"
    return render(
        interface,
        "reflect",
        context,
        task,
        task_name=task,
        intro=state.get("intro", interface.intro),
        actions=actions_text(interface),
        last_screen=state.get("observation", ""),
        trajectory=trajectory(
            shown_steps(state, context, interface), state.get("observation", ""), context.reflection_screens == "first"
        ),
        goal=state.get("goal", ""),
        previous=previous if earlier else "",
        status=prompts.load(f"structured_reflection/status_{state['status'].replace(' ', '_')}"),
    )


@model_node(caller_for)
async def reflect(state: SRState, runtime: Runtime[SRContext], config: RunnableConfig, llm: Caller) -> dict[str, Any]:
    """Ask where the trial went wrong and update the memory for the next trial."""
    ctx = runtime.context
    interface = await env_interface(ctx)
    prompt, limit = reflection_prompt(state, ctx, interface), token_limit(ctx, interface)
    reply = longest([(await ask(llm, prompt, limit)).strip() for _ in range(ctx.reflection_samples)])
    llm.verdict(STATUS, state["status"], state["status"] == TrialStatus.CORRECT.value)
    steps, trials = state.get("steps", []), state.get("trials", [])
    update: dict[str, Any] = {}
    past_end = ctx.reflect_past_end and state["status"] == TrialStatus.INCOMPLETE.value
    try:
        suggestion = mem.parse_reflection(
            reply, len(steps), interface, past_end=past_end, reading=ctx.suggestion_reading
        )
    except mem.ReflectionError as problem:
        update["trials"] = edit(trials, [*trials, record(state, reflection=reply, reflection_error=str(problem))])
        return update
    update["memory"] = mem.update(state["memory"], suggestion, steps, reply, ctx.disable_clicks, interface=interface)
    update["trials"] = edit(trials, [*trials, record(state, reflection=reply)])
    return update
