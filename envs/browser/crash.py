"""Env calls that outlive a Chromium crash (the browser killed, or a page's renderer crashed).

Why every entry point and not only steps: an evaluation calls a browser env's reset, step,
snapshot, restore and screenshot, and Chromium can die under any of them (or between two of
them, unnoticed until the next one reads a page). A call that Chromium died under may fail
with any Playwright error (``TargetClosedError`` most often, but also a timeout, or an error
the env turned into feedback or an unreadable screen and returned), and Playwright may not
have seen the browser disconnect yet when it fails. So the guard never judges by the error:
after every call, failed or not, it asks whether the browser still answers (``alive``, a
round trip to Chromium), and when it does not, the call is run again on a relaunched browser.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from playwright.async_api import Browser
from playwright.async_api import Error as PlaywrightError

from envs.base import EnvError, Observation, StepResult
from envs.browser.core import BrowserSession
from envs.browser.launch import answers, current_browser

T = TypeVar("T")
R = TypeVar("R", StepResult, Observation)

# How often a call is run in all: Chromium dying under a call, then again under its rerun (an
# evaluation's tasks relaunch the browser together, and a loaded machine makes reruns long).
RUNS = 3


class CrashGuard:
    """Runs an env's resets, steps, restores and reads (snapshot, screenshot, observe) so that
    they outlive a Chromium crash.

    ``snapshot`` and ``restore`` are the env's own, unguarded (a snapshot here may hold more
    than the env's public one: it stays in memory; None when no task runs); ``session`` is the env's browser session
    now (or None). A reset that Chromium died under is simply run again; a step, a restore or a
    read is run again on an env restored from the last snapshot taken while the browser lived
    (restoring relaunches the browser).

    Why remember snapshots: once Chromium is gone its pages are gone too, and a snapshot taken
    then has lost the tabs and what the pages held. So the guard snapshots the env before each
    step (the env may have changed since the last step), after each completed step, reset and
    restore, and keeps a snapshot only when the browser answered after it was taken. An env
    whose snapshots need no browser (``offline_snapshots``: MiniWoB keeps its actions in
    Python) is always snapshotted afresh. An action that had already reached a server before
    the crash (a form posted) reaches it a second time: only what the snapshot holds is rebuilt.
    """

    def __init__(
        self,
        *,
        snapshot: Callable[[], Awaitable[dict[str, Any] | None]],
        restore: Callable[[dict[str, Any]], Awaitable[Observation]],
        session: Callable[[], BrowserSession | None],
        offline_snapshots: bool = False,
    ) -> None:
        self.snapshot, self.restore, self.session = snapshot, restore, session
        self.offline = offline_snapshots
        self._last: dict[str, Any] | None = None

    async def alive(self, since: Browser | None = None) -> bool:
        """Whether nothing the env uses died: its page neither crashed nor closed, and the
        browser its session is on, the process-wide one and ``since`` (the live browser when a
        call began: the env may have no session left when a crash ends its call) answer now
        (``answers``)."""
        session = self.session()
        if session is not None and (not session.alive or session.page.is_closed()):
            return False
        used = {since, current_browser(), session.context.browser if session is not None else None}
        for browser in used:
            if browser is not None and not await answers(browser):
                return False
        return True

    async def remember(self) -> bool:
        """Keep the env's snapshot if the browser lived through taking it; False if it did not."""
        since = _live_browser()
        try:
            snapshot = await self.snapshot()
        except (PlaywrightError, EnvError):
            if await self.alive(since):
                raise
            return False  # taken as Chromium died: the last one stays
        if snapshot is None:
            self._last = None  # no task runs: a rerun starts from nothing, as the run did
            return True
        if self.offline or await self.alive(since):
            self._last = snapshot
            return True
        return False

    async def reset(self, run: Callable[[], Awaitable[T]]) -> T:
        """Run a reset; while Chromium dies under it, run it again (relaunching the browser).
        A reset starts the task from its id alone, so it needs no snapshot."""
        return await self._runs(run, None, remember=True)

    async def step(self, run: Callable[[], Awaitable[R]]) -> R:
        """Run a step, or a restore; while Chromium dies under it, restore the env to where it
        was before and run it again. (A restore moves a live env from where it is, as a step
        does: a WebArena task keeps its context and cookies, so its rerun must start there.)"""
        lives = await self.remember()  # if not, the env is brought back before the first run too
        return await self._runs(run, self._before_step, remember=True, back_first=not lives)

    async def read(self, run: Callable[[], Awaitable[T]]) -> T:
        """Run a read of the env (snapshot, screenshot, observation); while Chromium dies under
        it, restore the env to where it last was and read it again."""
        return await self._runs(run, self._where_it_is, remember=False)

    async def _runs(
        self,
        run: Callable[[], Awaitable[T]],
        back: Callable[[], Awaitable[None]] | None,
        *,
        remember: bool,
        back_first: bool = False,
    ) -> T:
        """``run`` until it ends with the browser alive (at most RUNS times, ``back`` before
        each rerun, and before the first run with ``back_first``); the last run's result or
        error is the call's, whatever the browser."""
        for attempt in range(1, RUNS + 1):
            last, since = attempt == RUNS, _live_browser()
            try:
                if (attempt > 1 or back_first) and back is not None:
                    await back()
                result = await run()
            except (PlaywrightError, EnvError):
                if last or await self.alive(since):
                    raise
                continue
            # Chromium dying as the result is being remembered loses what the call did: run it again
            if (last or await self.alive(since)) and (not remember or await self.remember() or last):
                return result
        raise AssertionError("unreachable: the last run returns or raises")

    async def _before_step(self) -> None:
        """Restore the env to where it was before the step (what ``remember`` kept then: the
        step may have recorded its action before Chromium died under it)."""
        await self._back_to(self._last)

    async def _where_it_is(self) -> None:
        """Restore the env to where it is: an offline snapshot says so at any time; otherwise
        the last snapshot taken while the browser lived does."""
        await self._back_to(await self.snapshot() if self.offline else self._last)

    async def _back_to(self, snapshot: dict[str, Any] | None) -> None:
        if snapshot is not None:  # else no task ran: the rerun starts from nothing, as the run did
            await self.restore(snapshot)


def _live_browser() -> Browser | None:
    """The process-wide browser if it is connected: one that died before a call began tells
    nothing about the call (the call relaunches it)."""
    browser = current_browser()
    return browser if browser is not None and browser.is_connected() else None
