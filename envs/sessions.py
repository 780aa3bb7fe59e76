"""The registry of live environments, keyed by thread id.

Graph state holds only JSON; the live environment (a browser page, a game process)
lives here. Before a node touches the env it asks for it with the state's latest
snapshot: if the registry has no env for the thread (a resumed run, a new process)
or its env has moved away from that snapshot (a Studio fork, a backtrack), the env is
restored from the snapshot. That single rule is what makes resume and time travel work.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

from envs.base import Env, JournaledEnv, Observation, env_class, make_env


def _fingerprint(snapshot: dict[str, Any] | None) -> str:
    return json.dumps(snapshot, sort_keys=True, default=str) if snapshot else ""


@dataclass
class _Session:
    env: Env
    env_name: str
    synced: str  # fingerprint of the snapshot the env is known to be at


class EnvSessions:
    """Live envs per thread; one instance per process (``SESSIONS``)."""

    def __init__(self) -> None:
        self._sessions: dict[str, _Session] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    def _lock(self, thread_id: str) -> asyncio.Lock:
        return self._locks.setdefault(thread_id, asyncio.Lock())

    async def start(
        self, thread_id: str, env_name: str, options: dict[str, Any], task_id: str
    ) -> tuple[Env, Observation, dict[str, Any]]:
        """Reset a (new or reused) env for the thread to ``task_id``.

        Returns the env, its first observation and the snapshot to put in state.
        """
        async with self._lock(thread_id):
            session = await self._ensure_env(thread_id, env_name, options)
            obs = await session.env.reset(task_id)
            snap = await session.env.snapshot()
            session.synced = _fingerprint(snap)
            return session.env, obs, snap

    async def get(
        self,
        thread_id: str,
        env_name: str,
        options: dict[str, Any],
        snapshot: dict[str, Any] | None,
    ) -> Env:
        """The thread's env, brought to ``snapshot`` if it is not already there."""
        env, _ = await self.sync(thread_id, env_name, options, snapshot)
        return env

    async def sync(
        self,
        thread_id: str,
        env_name: str,
        options: dict[str, Any],
        snapshot: dict[str, Any] | None,
    ) -> tuple[Env, Observation | None]:
        """Like ``get``, and also the observation of a restore when one was needed (else
        None): after a restore a page may be rebuilt, and element ids shown before may
        no longer be valid."""
        async with self._lock(thread_id):
            session = await self._ensure_env(thread_id, env_name, options)
            wanted = _fingerprint(snapshot)
            restored = None
            if snapshot and session.synced != wanted:
                restored = await session.env.restore(snapshot)
                session.synced = wanted
            return session.env, restored

    def mark(self, thread_id: str, snapshot: dict[str, Any]) -> None:
        """Record that the thread's env is now at ``snapshot`` (after a step)."""
        if thread_id in self._sessions:
            self._sessions[thread_id].synced = _fingerprint(snapshot)

    async def _ensure_env(self, thread_id: str, env_name: str, options: dict[str, Any]) -> _Session:
        session = self._sessions.get(thread_id)
        if session is not None and session.env_name == env_name:
            return session
        if session is not None:
            await session.env.close()
        await asyncio.to_thread(env_class, env_name)  # the env's module is imported off the event loop
        session = _Session(make_env(env_name, **options), env_name, "")
        self._sessions[thread_id] = session
        return session

    async def release(self, thread_id: str, *, finished: bool = False) -> None:
        """Close and forget the thread's env (end of a run; ``finished``: the run is over, not
        stopped by an error, so what the env kept to resume it can go)."""
        session = self._sessions.pop(thread_id, None)
        self._locks.pop(thread_id, None)
        if session is not None:
            if finished and isinstance(session.env, JournaledEnv):
                await session.env.finish()
            await session.env.close()

    async def close_all(self) -> None:
        for thread_id in list(self._sessions):
            await self.release(thread_id)

    def __contains__(self, thread_id: str) -> bool:
        return thread_id in self._sessions


SESSIONS = EnvSessions()
