"""MiniWoB++ in Chromium: the task pages of the ``miniwob`` package, seen as paper 002's compact
screen and driven with its action grammar (envs/miniwob/actions.py).

Episodes start as MiniWoB++'s own Python driver starts them: load the task page, set
``core.EPISODE_MAX_TIME`` (raised, default one hour, so model latency does not time the task
out), ``Math.seedrandom(seed)``, ``core.setDataMode("train")``, ``core.startEpisodeReal()``; the
goal is ``core.getUtterance()`` and the reward is read from the page's ``WOB_*`` globals
(success = positive raw reward). A new task opens a fresh browser context on the process-wide
Chromium (envs/browser/) that may load only the miniwob package's html directory; a new trial
of the same task reloads the page in its context.

After each action the env waits until the page settles (no request in flight, no running
animation, no animation frame requested in the last 50 ms, no pending short timer; at most
``settle_ms_max``) before reading the screen, so that what the agent sees is the page's result
of the action, not a frame of its animation. A click first moves the pointer onto its target and
lets hover effects settle, then presses, as a person sees the hover before clicking.

Observation: ``text`` is the compact screen (envs/miniwob/screen.py); ``info`` holds
``utterance`` (the goal; also as ``goal``), ``fields`` (the task's structured goal fields, if
any), ``task``, ``seed``, ``category`` (paper 002's, or None), ``ids`` (actionable ids on the
screen), ``disabled_ids``, ``done``, ``reward`` (raw), ``steps``, and ``success`` once done.
StepResult info: ``valid``, ``feedback`` (when refused), ``action`` (canonical form), ``done``,
``raw_reward``, ``env_reward`` (MiniWoB's time-scaled reward), ``reason``, ``success`` when done.
"""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any

from playwright.async_api import Error as PlaywrightError, Page

from envs.base import EnvError, Env, Observation, StepResult, invalid
from envs.browser import BrowserSession, UrlPolicy, click
from envs.miniwob.actions import Action, ActionError, Click, Enter, Hold, Press, canonical, parse_action
from envs.miniwob.interface import INTERFACE
from envs.miniwob.screen import ID_ATTR, Screen, locator_for, read_screen
from envs.miniwob.tasks import HTML_ROOT, category, parse_task_id, split_ids, task_url

# Tracks pending short timers, animation frames and CSS/jQuery animations, so that a step can
# wait until the page has settled.
_SETTLE_INIT = """
(() => {
  const pending = new Set();
  const setT = window.setTimeout.bind(window), clearT = window.clearTimeout.bind(window);
  window.setTimeout = function (fn, ms, ...args) {
    if (typeof fn !== 'function' || (Number(ms) || 0) > 2000) return setT(fn, ms, ...args);
    const id = setT(function () { pending.delete(id); return fn.apply(this, arguments); }, ms, ...args);
    pending.add(id);
    return id;
  };
  window.clearTimeout = function (id) { pending.delete(id); return clearT(id); };
  let lastFrame = -1000;  // script-driven animations (Raphael, jQuery) request frames
  const raf = window.requestAnimationFrame.bind(window);
  window.requestAnimationFrame = function (cb) { lastFrame = performance.now(); return raf(cb); };
  window.__introspectBusy = () => pending.size > 0
    || performance.now() - lastFrame < 50
    || (window.jQuery && window.jQuery(':animated').length > 0)
    || document.getAnimations().some((a) => a.playState === 'running');
})();
"""

_START = """
([maxTime, seed]) => {
  core.EPISODE_MAX_TIME = maxTime;
  Math.seedrandom(seed);
  core.setDataMode('train');
  core.startEpisodeReal();
}
"""

_STATUS = """() => ({done: WOB_DONE_GLOBAL, reward: WOB_REWARD_GLOBAL,
  raw: WOB_RAW_REWARD_GLOBAL, reason: WOB_REWARD_REASON == null ? null : String(WOB_REWARD_REASON),
  ready: WOB_TASK_READY})"""

ENDED_SCREEN = "(the episode is over)"


class MiniWoBEnv(Env):
    """MiniWoB++ tasks ``<task>/<seed>`` in Chromium with paper 002's screen and actions."""

    name = "miniwob"
    interface = INTERFACE

    def __init__(
        self,
        *,
        episode_seconds: float = 3600.0,
        settle_ms: float = 50.0,
        settle_ms_max: float = 1500.0,
        click_timeout_ms: float = 1500.0,
    ) -> None:
        if episode_seconds <= 0 or settle_ms < 0 or settle_ms_max < settle_ms or click_timeout_ms <= 0:
            raise EnvError("miniwob options must be positive (settle_ms_max >= settle_ms)")
        self.episode_ms = int(episode_seconds * 1000)
        self.settle_s = settle_ms / 1000
        self.settle_max_s = settle_ms_max / 1000
        self.click_timeout_ms = click_timeout_ms
        self._session: BrowserSession | None = None
        self._task_id = ""
        self._task = ""
        self._seed = 0
        self._utterance: Any = ""
        self._actions: list[str] = []
        self._disabled: set[str] = set()
        self._held: set[str] = set()
        self._screen = Screen([])
        self._status: dict[str, Any] = {"done": False, "reward": 0.0, "raw": 0.0, "reason": None}

    # --- protocol --------------------------------------------------------------------------

    def task_ids(self, split: str | None = None) -> list[str]:
        """All 130 tasks (seed 0) by default; ``paper-43``, a category, a task; ``@N`` / ``@START:STOP`` seeds."""
        return split_ids(split)

    def check_task(self, task_id: str) -> None:
        parse_task_id(task_id)  # any seed of a known task is a task

    async def reset(self, task_id: str) -> Observation:
        task, seed = parse_task_id(task_id)
        session = await self._session_for(task)
        self._task_id, self._task, self._seed = f"{task}/{seed}", task, seed
        self._actions, self._disabled = [], set()
        ok, feedback = await session.goto(task_url(task))
        if not ok:
            raise EnvError(f"could not open miniwob task {task!r}: {feedback}")
        await session.page.evaluate(_START, [self.episode_ms, seed])
        deadline = time.monotonic() + 5
        while not (await session.page.evaluate(_STATUS))["ready"] and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        await self._settle()
        self._utterance = await session.page.evaluate("core.getUtterance()")
        return await self._observe()

    async def step(self, action: str) -> StepResult:
        """One action; if Chromium died meanwhile, the episode is rebuilt by replay first."""
        self._page()
        before = await self.snapshot()
        try:
            return await self._step(action)
        except PlaywrightError:
            if self._alive():
                raise
        await self.restore(before)
        return await self._step(action)

    async def _step(self, action: str) -> StepResult:
        # The page may have ended the episode on its own (time limit): never act on its cover.
        self._status = await self._page().evaluate(_STATUS)
        if self._status["done"]:
            return invalid(self._observation(), "the episode is over; reset to start again")
        try:
            parsed = parse_action(action)
        except ActionError as exc:
            return invalid(self._observation(), str(exc))
        refusal = self._refusal(parsed)
        if refusal is None:
            ok, feedback = await self._perform(parsed)
            refusal = None if ok else feedback
        if refusal is not None:
            return invalid(await self._observe(), refusal, action=canonical(parsed))
        self._actions.append(canonical(parsed))
        await self._settle()
        obs = await self._observe()
        info: dict[str, Any] = {
            "valid": True,
            "action": canonical(parsed),
            "done": obs.info["done"],
            "raw_reward": float(self._status["raw"]),
            "env_reward": float(self._status["reward"]),
            "reason": self._status["reason"],
        }
        if obs.info["done"]:
            info["success"] = obs.info["success"]
        return StepResult(obs, float(self._status["raw"]), bool(obs.info["done"]), info)

    async def snapshot(self) -> dict[str, Any]:
        """Task, seed, disabled ids and executed actions: a replay rebuilds the same state."""
        return {
            "task_id": self._task_id,
            "actions": list(self._actions),
            "disabled_ids": self._disabled_list(),
        }

    async def restore(self, snapshot: dict[str, Any]) -> Observation:
        """Reset to the snapshot's task and seed, replay its actions, then disable its ids.

        Replayed actions are not checked against the disabled ids: they were executed before
        those ids were disabled. An action that no longer replays is listed in
        ``info["replay_failures"]`` (a task whose page depends on wall-clock time, say).
        """
        try:
            task_id = str(snapshot["task_id"])
            actions = [str(a) for a in snapshot.get("actions", [])]
            disabled = [str(i) for i in snapshot.get("disabled_ids", [])]
        except (KeyError, TypeError) as exc:
            raise EnvError(f"not a miniwob snapshot: {exc}") from None
        await self.reset(task_id)
        failures: list[str] = []
        for action in actions:
            try:
                parsed = parse_action(action)
            except ActionError:
                failures.append(action)
                continue
            ok = self._refusal(parsed) is None and (await self._perform(parsed))[0]
            if not ok:
                failures.append(action)
                continue
            self._actions.append(canonical(parsed))
            await self._settle()
            await self._observe()
        obs = await self.disable_ids(disabled)
        if failures:
            obs.info["replay_failures"] = failures
        return obs

    async def close(self) -> None:
        await self._close_session()

    # --- Structured Reflection's action-space constraint (paper 002, 5.2) ------------------

    async def disable_ids(self, ids: list[str]) -> Observation:
        """Disable click targets: their lines stay on the screen without ``id=N``; actions on
        them are refused. They stay disabled until the next reset. Returns the new screen."""
        self._disabled.update(str(i).strip() for i in ids)
        self._screen = Screen(self._screen.items, frozenset(self._disabled))
        return self._observation()

    async def set_disabled_ids(self, ids: list[str]) -> Observation:
        """Replace the disabled set (e.g. per step, as the paper's memory keeps it)."""
        self._disabled = set()
        return await self.disable_ids(ids)

    async def observe(self) -> Observation:
        """Read the current screen again (the page may have changed on its own)."""
        self._page()
        return await self._observe()

    @property
    def page(self) -> Page:
        """The task's live page (for tests, debugging and screenshots; agents act via step)."""
        return self._page()

    async def screenshot(self, path: str | None = None) -> bytes:
        """A PNG of the task area (for humans: the agent never sees pixels)."""
        return await self._page().screenshot(path=path, clip={"x": 0, "y": 0, "width": 160, "height": 210})

    # --- internals --------------------------------------------------------------------------

    def _page(self) -> Page:
        if self._session is None:
            raise EnvError("miniwob env: call reset(task_id) first")
        return self._session.page

    def _alive(self) -> bool:
        session = self._session
        browser = session.context.browser if session is not None else None
        return session is not None and not session.page.is_closed() and browser is not None \
            and browser.is_connected()

    def _disabled_list(self) -> list[str]:
        return sorted(self._disabled, key=lambda i: (len(i), i))

    def _refusal(self, action: Action) -> str | None:
        target = getattr(action, "id", None)
        if target is None:
            return None
        if target in self._disabled:
            return f"id={target} is disabled: that target failed before; choose another element"
        if target not in self._screen.ids:
            return f"there is no element with id={target} on the current screen"
        return None

    async def _perform(self, action: Action) -> tuple[bool, str]:
        """Execute one parsed action with real input; (ok, feedback)."""
        page = self._page()
        if isinstance(action, (Click, Enter)):
            target = locator_for(page, action.id)
            ok, feedback = await click(target, timeout_ms=self.click_timeout_ms,
                                       after_hover=lambda: self._settle(minimum_s=0.02))
            if not ok:
                feedback = re.sub(rf'{ID_ATTR}="(\d+)"', r"id=\1", feedback)
                return False, f"cannot click id={action.id}: {feedback}"
            if isinstance(action, Enter):
                if await target.evaluate("(el) => 'value' in el && el.value !== ''"):
                    await page.keyboard.press("ControlOrMeta+a")
                    await page.keyboard.press("Backspace")
                await page.keyboard.type(action.text)
        elif isinstance(action, Press):
            for _ in range(action.count):
                await page.keyboard.press(action.key)
        elif isinstance(action, Hold):
            if action.down:
                await page.keyboard.down(action.key)
                self._held.add(action.key)
            else:
                await page.keyboard.up(action.key)
                self._held.discard(action.key)
        return True, ""

    async def _settle(self, minimum_s: float | None = None) -> None:
        page = self._page()
        assert self._session is not None
        minimum = self.settle_s if minimum_s is None else minimum_s
        await asyncio.sleep(minimum)
        deadline = time.monotonic() + self.settle_max_s - minimum
        while time.monotonic() < deadline and (
            self._session.pending_requests > 0 or await page.evaluate("window.__introspectBusy()")
        ):
            await asyncio.sleep(0.025)

    async def _observe(self) -> Observation:
        page = self._page()
        self._status = await page.evaluate(_STATUS)
        if self._status["done"]:
            self._screen = Screen([])
        else:
            self._screen = await read_screen(page, frozenset(self._disabled))
        return self._observation()

    def _observation(self) -> Observation:
        utterance = self._utterance
        fields: dict[str, Any] = {}
        if isinstance(utterance, dict):
            fields = dict(utterance.get("fields") or {})
            utterance = utterance.get("utterance", "")
        done = bool(self._status["done"])
        info: dict[str, Any] = {
            "utterance": str(utterance),
            "goal": str(utterance),
            "fields": fields,
            "task": self._task,
            "seed": self._seed,
            "category": category(self._task),
            "ids": list(self._screen.ids),
            "disabled_ids": self._disabled_list(),
            "done": done,
            "reward": float(self._status["raw"]),
            "steps": len(self._actions),
        }
        if done:
            info["success"] = float(self._status["raw"]) > 0
        text = ENDED_SCREEN if done else self._screen.text
        return Observation(text, task_url(self._task) if self._task else None, info)

    async def _session_for(self, task: str) -> BrowserSession:
        """A fresh context for a new task; a new trial of the same task reloads its page.

        On reuse, held keys are released and the mouse parked on the goal box, so the first
        screen of every trial is the same (no key held, no element hovered).
        """
        session = self._session
        if session is not None and task == self._task and self._alive():
            for key in sorted(self._held):
                await session.page.keyboard.up(key)
            await session.page.mouse.move(0, 0)
        else:
            await self._close_session()
            session = await BrowserSession.open(UrlPolicy(file_roots=(str(HTML_ROOT),)))
            await session.page.add_init_script(script=_SETTLE_INIT)
            self._session = session
        self._held = set()
        return session

    async def _close_session(self) -> None:
        if self._session is not None:
            session, self._session = self._session, None
            await session.close()
