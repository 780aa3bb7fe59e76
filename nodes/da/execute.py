"""S_{t+1} = E(a_t) (Algorithm 1, line 8): run the popped action and look at the result.

The new screen is summarised when it exceeds the budget, so that every model-facing
prompt after this step (describe, align, complete, act) reads the same view of it.
An action that notes something down (the Interface's ``noted``: WebArena's ``note_down``)
also adds it to the notes the prompts show as {notes}.

A run resumed in a new process has no live env: it is rebuilt from the snapshot in
state, and a rebuilt page may number its elements differently from the screen the
action was chosen on. The action's element then goes through element mapping first,
exactly as after a backtrack.
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from envs.base import Env
from nodes.da.context import DAContext
from nodes.da.map_element import mapped_action, same_element
from nodes.da.state import DAState, Screen
from nodes.da.summarise import look
from nodes.runtime.channels import edit
from nodes.runtime.environment import env_interface, execute, sync_env
from nodes.runtime.llm import Caller, caller_for
from nodes.runtime.node import model_node


async def _rebuilt_env(
    state: DAState, context: DAContext, config: RunnableConfig, llm: Caller, settings: DAContext
) -> tuple[Env, Screen | None]:
    """The live env; after a rebuild also the screen it shows now (else None)."""
    env, obs, snapshot = await sync_env(state, context, config)
    if obs is None or snapshot is None:
        return env, None
    return env, await look(llm, state.get("goal", ""), obs, snapshot, settings.observation_budget, state["current"])


@model_node(caller_for)
async def execute_action(
    state: DAState, runtime: Runtime[DAContext], config: RunnableConfig, llm: Caller
) -> dict[str, Any]:
    entry = state["popped"]
    assert entry and entry["action"]  # routed here only with an action to run
    action = entry["action"]
    settings = runtime.context
    before = state["current"]
    interface = await env_interface(runtime.context)
    env, rebuilt = await _rebuilt_env(state, runtime.context, config, llm, settings)
    if rebuilt is not None:
        if interface.element_ids and not same_element(interface, action, before["observation"], rebuilt["observation"]):
            action = await mapped_action(llm, interface, action, before, rebuilt, settings.reasks) or action
        before = rebuilt
    result, update = await execute(env, state, config, action, node="execute", caller=llm)
    after = await look(
        llm, state.get("goal", ""), result.observation, update["env_snapshot"], settings.observation_budget, before
    )
    episodes = [list(actions) for actions in state.get("episode_actions") or [[]]]
    episodes[-1].append(action)
    note = interface.noted(action) if result.valid else None
    notes = state.get("notes") or []
    return {
        **update,
        "previous": before,
        "current": after,
        "episode_actions": edit(state.get("episode_actions") or [], episodes),
        "notes": edit(notes, [*notes, note] if note is not None else notes),
    }
