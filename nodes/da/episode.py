"""The mechanical frame of a run: start the task, open an episode, finish the run.

An episode starts from S_0 (eq. 10: a revised plan is made for the initial state), so
its root stack entry carries the initial snapshot and the first pop backtracks there.
``finish`` ends a run the way WebArena's harness does: when the agent did not deliver an
answer it sends ``stop [Early stop: <reason>]`` (the env's answer action, its Interface's
``answer_action``) so the env still evaluates the final state (url_match and program_html
tasks can pass without an answer). An env without an answer action (its tasks end through
ordinary actions) is left as it is: a run that ends before the env is done has failed.
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from nodes.da.context import DAContext
from nodes.da.state import DAState, StackEntry
from nodes.da.summarise import look
from nodes.da.views import site_of
from nodes.runtime.channels import edit
from nodes.runtime.environment import env_interface, execute, live_env, release, start_task
from nodes.runtime.llm import Caller, caller_for
from nodes.runtime.node import model_node


@model_node(caller_for)
async def start(state: DAState, runtime: Runtime[DAContext], config: RunnableConfig, llm: Caller) -> dict[str, Any]:
    """Reset the env to the task; S_0 is the first screen (summarised if too long)."""
    settings = runtime.context
    _, obs, update = await start_task(state, runtime.context, config)
    goal = str(obs.info["goal"])
    initial = await look(llm, goal, obs, update["env_snapshot"], settings.observation_budget)
    return {
        **update,
        "goal": goal,
        "site": site_of(obs, await env_interface(runtime.context), settings.site_instructions),
        "initial": initial,
        "current": initial,
        "plan": [],
        "plans": [],
        "subtask": -1,
        "stack": [],
        "popped": {},
        "proposal": [],
        "aligned": False,
        "task_done": False,
        "history": [],
        "notes": [],
        "episode": 0,
        "episode_actions": [],
        "backtracks": [],
        "answer": "",
        "stop_reason": "",
    }


async def new_episode(state: DAState) -> dict[str, Any]:
    """Stack = [(S_0, empty action, empty subtask)] (Algorithm 1, line 3)."""
    root = StackEntry(state=state["initial"], action="", subtask=-1, origin="root")
    episodes = state.get("episode_actions") or []
    return {
        "episode": state.get("episode", 0) + 1,
        "episode_actions": edit(episodes, [*episodes, []]),
        "stack": edit(state.get("stack") or [], [root]),
        "subtask": -1,
        "popped": {},
        "proposal": [],
    }


def stop_reason(state: DAState, settings: DAContext) -> str:
    """Why the run ends, in the order the graph checks it."""
    if state.get("task_done"):
        return "task_completed"
    if state.get("done"):
        return "env_done"
    if state.get("actions", 0) >= settings.max_actions:
        return "max_actions"
    if not settings.plan_revision:
        return "plan_failed"
    return "max_episodes"


@model_node(caller_for)
async def finish(state: DAState, runtime: Runtime[DAContext], config: RunnableConfig, llm: Caller) -> dict[str, Any]:
    """End the run: an early stop when no answer was delivered, then release the env."""
    reason = stop_reason(state, runtime.context)
    update: dict[str, Any] = {"stop_reason": reason}
    answer_action = (await env_interface(runtime.context)).answer_action
    if not state.get("done") and answer_action is not None:
        env = await live_env(state, runtime.context, config)
        early_stop = answer_action.format(answer=f"Early stop: {reason}")
        _, stepped = await execute(
            env, state, config, early_stop, node="finish", caller=llm, harness=True
        )  # the budget is spent: there is nothing else to choose
        stepped["actions"] = state.get("actions", 0)  # stopping is not one of the agent's actions
        update.update(stepped)
    await release(state, config)
    return update
