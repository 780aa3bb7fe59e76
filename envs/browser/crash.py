"""Env resets and steps that outlive a Chromium crash (the browser killed, or a page's renderer crashed)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from playwright.async_api import Error as PlaywrightError

from envs.base import Env, EnvError, StepResult
from envs.browser.launch import BrowserDiedError

T = TypeVar("T")


class CrashGuard:
    """Lets an env's resets and steps outlive a Chromium crash: a step that finds the browser dead,
    or kills it, is run again on an env restored from the last snapshot taken while the browser
    lived (restoring relaunches the browser); a reset is simply run again.

    Why remember snapshots: once Chromium is gone its pages are gone too, and a snapshot taken
    then has lost the tabs and what the pages held. So the guard snapshots the env before each
    step while the browser lives (the env may have changed since the last step), after each
    completed step, and when the env calls ``remember()`` (after a reset or a restore). An env
    whose snapshots need no browser (``offline_snapshots``: MiniWoB keeps its actions in Python)
    is always snapshotted afresh. An action that had already reached a server before the crash
    (a form posted) reaches it a second time: only what the snapshot holds is rebuilt.
    """

    def __init__(self, env: Env, alive: Callable[[], bool], *, offline_snapshots: bool = False) -> None:
        self.env, self.alive, self.offline = env, alive, offline_snapshots
        self._last: dict[str, Any] | None = None

    async def remember(self) -> None:
        if self.offline or self.alive():
            self._last = await self.env.snapshot()

    async def reset(self, run: Callable[[], Awaitable[T]]) -> T:
        """Run a reset; if Chromium died under it, run it once more (relaunching the browser).
        A reset rebuilds the task from its id alone, so it needs no snapshot to be run again;
        its failure is an EnvError when it wraps a page that could not load."""
        try:
            return await run()
        except (PlaywrightError, EnvError) as exc:
            if not self._died(exc):
                raise
        return await run()

    async def step(self, run: Callable[[], Awaitable[StepResult]]) -> StepResult:
        await self.remember()
        try:
            result = await run()
            if self.alive():
                await self.remember()
                return result
        except PlaywrightError as exc:
            if not self._died(exc):
                raise
        await self.env.restore(self._last if self._last is not None else await self.env.snapshot())
        result = await run()
        await self.remember()
        return result

    def _died(self, exc: Exception) -> bool:
        """Whether ``exc`` came of Chromium dying (the pages can be gone a moment before
        Playwright sees the browser disconnect: BrowserDiedError says so at once)."""
        return isinstance(exc, BrowserDiedError) or not self.alive()
