"""Test helpers: crash the shared Chromium the way a real crash would, at once (``kill_chromium``)
or at seeded random points of an env's calls (``RandomKills``)."""

from __future__ import annotations

import asyncio
import os
import random
import signal
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import pytest
from playwright._impl.connection import Connection

from envs import browser


def kill_now() -> bool:
    """SIGKILL every Chromium process of this process; False if none was running."""
    pids = browser.browser_pids()
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:  # a child that died with its parent
            pass
    return bool(pids)


async def kill_chromium(connected) -> None:
    """SIGKILL every Chromium process and wait until ``connected`` (a Playwright Browser) sees it."""
    kill_now()
    for _ in range(100):
        if not connected.is_connected():
            return
        await asyncio.sleep(0.05)


# The env call under way in this task: an env's public methods set it, its ``_observe`` (the
# page read after a reset or a step) sets "observe" within them.
_PHASE: ContextVar[str] = ContextVar("chromium_kill_phase", default="")
ENTRY_POINTS = ("reset", "step", "snapshot", "restore", "screenshot")


@dataclass
class RandomKills:
    """Kills Chromium once in each of ``phases`` of an env class's calls, just before a seeded
    random one (the first to the ``most_calls``-th) of the Playwright calls made in that phase.

    Every Playwright call passes through ``Connection.send_message_to_server`` (its message goes
    out when it is called): killing there, the call is on its way to a browser that is dying,
    whichever call it is (a page read, a click, a screenshot, a context opening, a probe).
    ``killed`` lists (phase, Playwright method) for each kill, in order."""

    seed: int
    phases: tuple[str, ...]
    most_calls: int = 6
    killed: list[tuple[str, str]] = field(default_factory=list)
    _countdown: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        rng = random.Random(self.seed)
        self._countdown = {phase: rng.randint(1, self.most_calls) for phase in self.phases}

    def install(self, monkeypatch: pytest.MonkeyPatch, env_class: type) -> None:
        for name in ENTRY_POINTS:
            if name in vars(env_class):
                monkeypatch.setattr(env_class, name, _in_phase(vars(env_class)[name], name))
        monkeypatch.setattr(env_class, "_observe", _in_phase(vars(env_class)["_observe"], "observe"))
        send = Connection.send_message_to_server

        def killing(connection: Connection, owner: Any, method: str, params: Any, options: dict[str, Any]) -> Any:
            self._call(method)
            return send(connection, owner, method, params, options)

        monkeypatch.setattr(Connection, "send_message_to_server", killing)

    def _call(self, method: str) -> None:
        phase = _PHASE.get()
        if method == "__waitInfo__" or self._countdown.get(phase, 0) <= 0:
            return
        self._countdown[phase] -= 1
        if self._countdown[phase] == 0 and not kill_now():  # no Chromium to kill yet: at the next call
            self._countdown[phase] = 1
        elif self._countdown[phase] == 0:
            self.killed.append((phase, method))


def _in_phase(method: Callable[..., Awaitable[Any]], phase: str) -> Callable[..., Awaitable[Any]]:
    async def in_phase(*args: Any, **kwargs: Any) -> Any:
        token = _PHASE.set(phase)
        try:
            return await method(*args, **kwargs)
        finally:
            _PHASE.reset(token)

    return in_phase
