"""Constraining the action space (paper 002, Sec. 5.2): failed click targets are disabled.

When a trial reaches a step whose memory entry has disabled ids, they are disabled in the
env (``env.disable_ids``): the element stays on the screen the model sees but loses its
``id=N``, and the env refuses actions on it. The env keeps them disabled until the next
reset, and its snapshot carries them, so a resumed run sees the same screen.
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig

from envs.sessions import SESSIONS
from nodes.environment import live_env, session_key
from nodes.sr.memory import disabled_ids
from nodes.sr.state import SRState


async def disable_failed_targets(state: SRState, context: Any, config: RunnableConfig, step: int) -> dict[str, Any]:
    """Disable the memory's failed click ids for ``step``; the state update for the new screen."""
    ids = disabled_ids(state["memory"], step)
    if not ids:
        return {}
    env = await live_env(state, context, config)
    observation = await env.disable_ids(ids)  # type: ignore[attr-defined]
    snapshot = await env.snapshot()
    SESSIONS.mark(session_key(config, state), snapshot)
    screens = list(state.get("screens", []))
    screens[-1:] = [observation.text]
    return {"observation": observation.text, "env_snapshot": snapshot, "screens": screens}
