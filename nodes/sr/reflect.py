"""Structured self-reflection (paper 002, Sec. 5 and Appendices D-E).

After a trial that did not end correct, the model reads the trial's first screen only
(Sec. 7.5: later screens would overrun the input limit and rarely differ much), the
actions it took, each with its paraphrase, and the prompt of the trial's end status; it
answers "For action index=A, you should B." which updates the structured memory. A reply
that does not follow the format, or names an index outside the trajectory, leaves the
memory as it was and is kept in the trial record as ``reflection_error``: the next trial
runs with what the memory already holds, and the run does not crash.
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

import prompts
from envs.miniwob_status import TrialStatus
from graphs.context import Context
from nodes.llm import caller_for
from nodes.sr import memory as mem
from nodes.sr.model import TEMPERATURE, ask
from nodes.sr.state import SRState, StepRecord
from nodes.sr.trial import record


def trajectory(steps: list[StepRecord]) -> str:
    lines = []
    for i, step in enumerate(steps, 1):
        description = step.get("description", "")
        lines.append(f"Your index={i} action: {step['action']}" + (f" ({description})" if description else ""))
    return "\n".join(lines) or "You did not take any action."


def reflection_prompt(state: SRState) -> str:
    first = mem.hide_ids(state["screens"][0], mem.disabled_ids(state["memory"], 0))
    return prompts.render(
        "structured_reflection/reflect",
        task_name=state.get("task_name", ""),
        screen=first,
        trajectory=trajectory(state.get("steps", [])),
        goal=state.get("goal", ""),
        status=prompts.load(f"structured_reflection/status_{state['status'].replace(' ', '_')}"),
    )


async def reflect(state: SRState, runtime: Runtime[Context], config: RunnableConfig) -> dict[str, Any]:
    """Ask where the trial went wrong and update the memory for the next trial."""
    llm = caller_for(runtime.context, state, temperature=TEMPERATURE)
    reply = (await ask(llm, reflection_prompt(state))).strip()
    steps = state.get("steps", [])
    update: dict[str, Any] = {"usage": llm.usage}
    try:
        suggestion = mem.parse_reflection(reply, len(steps), may_extend=state["status"] == TrialStatus.INCOMPLETE.value)
    except mem.ReflectionError as problem:
        update["trials"] = [*state.get("trials", []), record(state, reflection=reply, reflection_error=str(problem))]
        return update
    statement = f"For action index={suggestion.step + 1}, you should {suggestion.text}"
    update["memory"] = mem.update(state["memory"], suggestion, steps, statement)
    update["trials"] = [*state.get("trials", []), record(state, reflection=reply)]
    return update
