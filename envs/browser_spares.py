"""Browser sessions opened ahead of time, so that a new task's context is ready when it asks.

Why: a fresh context per task is the rule (nothing leaks between tasks), and opening one costs a
context and a renderer process (about 300 ms on a busy 2-core machine). An env that opens
sessions of one kind after another (MiniWoB: each task in a context of its own) gets the next one
opened in the background, shortly after it took one, while its task runs. A spare has loaded
nothing, so it is as fresh as a session opened on demand. There is at most one spare per kind;
one whose browser died, or that belongs to another event loop, is dropped; ``close_spares()``
closes them (``envs.browser.close_browser`` calls it).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Hashable, Protocol, TypeVar

from playwright.async_api import Error as PlaywrightError

DELAY_S = 0.5  # the next spare waits this long, so that it does not slow the task that just started


class Reusable(Protocol):
    @property
    def alive(self) -> bool: ...

    async def close(self) -> None: ...


S = TypeVar("S", bound=Reusable)


@dataclass
class _Spare:
    loop: asyncio.AbstractEventLoop
    task: asyncio.Task[Any] | None = None
    opening: asyncio.Event = field(default_factory=asyncio.Event)  # past the delay: opening


_SPARES: dict[Hashable, _Spare] = {}


async def take(key: Hashable, open_one: Callable[[], Awaitable[S]]) -> S:
    """The spare for ``key`` if one is ready or already opening, else a new session; then the
    next spare for ``key`` starts (after ``DELAY_S``) in the background."""
    session = await _claim(key)
    if session is None:
        session = await open_one()
    if key not in _SPARES:
        spare = _SPARES[key] = _Spare(asyncio.get_running_loop())
        spare.task = spare.loop.create_task(_open_later(spare, open_one))
    return session


async def _claim(key: Hashable) -> Any:
    spare = _SPARES.pop(key, None)
    if spare is None or spare.task is None or spare.loop is not asyncio.get_running_loop():
        return None
    if not spare.opening.is_set():  # still waiting out its delay: opening one now is faster
        spare.task.cancel()
        return None
    session = await spare.task
    if session is not None and not session.alive:
        await session.close()
        return None
    return session


async def _open_later(spare: _Spare, open_one: Callable[[], Awaitable[S]]) -> S | None:
    await asyncio.sleep(DELAY_S)
    spare.opening.set()
    try:
        return await open_one()
    except PlaywrightError:
        return None  # the next take opens a session itself, and fails loudly if it must


async def close_spares() -> None:
    """Close every spare of the running event loop (and forget the others)."""
    loop = asyncio.get_running_loop()
    spares = list(_SPARES.values())
    _SPARES.clear()
    for spare in spares:
        if spare.task is None or spare.loop is not loop:
            continue
        if not spare.opening.is_set():
            spare.task.cancel()
            continue
        session = await spare.task
        if session is not None:
            await session.close()
