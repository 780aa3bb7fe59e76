"""Trial boundaries: a trial starts with an env reset (same task, same seed), the run ends
by releasing the env.

Every trial starts from the task's first screen, so the replay prefix of the memory leads
to the same screens again. That needs a deterministic reset (same task id, same start), which
each env gives: MiniWoB's task id carries its seed; WebShop's goal index, ALFWorld's game file
and HotpotQA's question start the same episode every time; WebArena opens a fresh browser
context per reset (no cookies of the last trial, e.g. the local shop's recently viewed list), the
local shop's catalogue and orders never change (a posted form is only recorded), and a page's
elements are numbered in tree order, so the same page gets the same ids. A live WebArena site
keeps what a trial submitted (an order placed, a post written): it is not reset between trials
here, so a replay there may not reach the same screen.
``actions`` counts every executed action of the run, across trials (the cost the evaluation
reports); the step budget applies per trial.
"""

from __future__ import annotations

from typing import Any, Unpack

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from envs.base import Observation
from nodes.runtime.channels import edit
from nodes.runtime.environment import env_interface, release, start_task
from nodes.sr.context import SRContext
from nodes.sr.state import Reflected, SRState, TrialRecord, empty_memory


def task_name(task_id: str, observation: Observation) -> str:
    """The task's type when the env names one (ALFWorld), else the id before its first ``/``:
    MiniWoB ids are ``<task>/<seed>`` and the paper's prompts name the task (``click-button``)."""
    return str(observation.info.get("task_type") or task_id.split("/", 1)[0])


async def start_trial(state: SRState, runtime: Runtime[SRContext], config: RunnableConfig) -> dict[str, Any]:
    """Reset the env to the task and open trial ``trial + 1`` with an empty trajectory."""
    actions_so_far = state.get("actions", 0)
    _, observation, update = await start_task(state, runtime.context, config)
    update.update(
        goal=str(observation.info["goal"]),
        task_name=task_name(str(state["task_id"]), observation),
        intro=str(observation.info.get("intro") or (await env_interface(runtime.context)).intro),
        actions=actions_so_far,
        trial=state.get("trial", 0) + 1,
        screens=edit(state.get("screens", []), [observation.text]),  # a new trial may open on the same screen
        steps=[],
        pending=[],
        planning_calls=0,
        status="",
        disabled=[],
    )
    if not state.get("memory"):  # the first trial (an unwritten record reads as {})
        update.update(memory=empty_memory(), trials=[])
    return update


def record(state: SRState, **extra: Unpack[Reflected]) -> TrialRecord:
    """The record of the trial that just ended."""
    steps = state.get("steps", [])
    return TrialRecord(
        trial=int(state["trial"]),
        status=state["status"],
        actions=[s["action"] for s in steps],
        sources=[s.get("source", "plan") for s in steps],
        planning_calls=state.get("planning_calls", 0),
        reward=state.get("reward", 0.0),
        **extra,
    )


async def finish(state: SRState, runtime: Runtime[SRContext], config: RunnableConfig) -> dict[str, Any]:
    """Record the last trial, say why the run stopped, and release the env."""
    await release(state, config)
    status = state.get("status", "")
    reason = "correct" if status == "correct" else f"{status} after {state.get('trial', 0)} trial(s)"
    trials = state.get("trials", [])
    return {"trials": edit(trials, [*trials, record(state)]), "stop_reason": reason}
