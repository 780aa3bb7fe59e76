"""S_{t+1} = E(a_t) (Algorithm 1, line 8): run the popped action and look at the result.

The new screen is summarised when it exceeds the budget, so that every model-facing
prompt after this step (describe, align, complete, act) reads the same view of it.
``note_down`` actions also go to the notes the prompts show as {notes}.
"""

from __future__ import annotations

import re
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.runtime import Runtime

from graphs.context import Context
from nodes.da.ask import caller
from nodes.da.state import DAState, Screen, Settings
from nodes.da.summarise import model_view
from nodes.environment import execute, live_env

_NOTE = re.compile(r"\Anote_down \[(.*)\]\Z", re.DOTALL)


async def execute_action(state: DAState, runtime: Runtime[Context], config: RunnableConfig) -> dict[str, Any]:
    entry = state["popped"]
    assert entry is not None and entry["action"]  # routed here only with an action to run
    action = entry["action"]
    env = await live_env(state, runtime.context, config)
    result, update = await execute(env, state, config, action, node="execute")
    llm = caller(runtime.context, state)
    budget = Settings.of(runtime.context).observation_budget
    obs = result.observation
    after = Screen(
        snapshot=update["env_snapshot"],
        observation=obs.text,
        screen=await model_view(llm, state.get("goal", ""), obs.text, budget),
        url=obs.url or "",
    )
    episodes = [list(actions) for actions in state.get("episode_actions") or [[]]]
    episodes[-1].append(action)
    note = _NOTE.match(action) if result.info.get("valid", True) else None
    return {
        **update,
        "previous": state["current"],
        "current": after,
        "episode_actions": episodes,
        "notes": [*(state.get("notes") or []), note.group(1)] if note else list(state.get("notes") or []),
        "usage": llm.usage,
    }
