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
animation, no animation frame requested, no pending short timer; at most ``settle_ms_max``)
before reading the screen, so that what the agent sees is the page's result of the action, not a
frame of its animation. The page itself says when it has settled (a promise, no fixed sleep), so
a quiet page costs one round trip. A click moves the pointer onto its target, lets the page's
hover effects settle and presses, as the SR code's ``move_to_element().click()`` does (Selenium
moves the pointer over 250 ms before it presses, so social-media's "more" icon, swapped on
:hover, is clicked); whatever lies on top receives it (envs/browser/click.py).
``hover_first=False`` presses at once. A dialog the page opens is answered and reported
(envs.browser): that step has ``valid`` False and says what happened.

Typing (``enter "text" to id=N``) is the SR code's ``enter_by_ref`` (``typing="selenium"``, the
default): Selenium's element click (a covered field is refused, as that click refuses it), then
its ``clear()``, then the keys. ``clear()`` refuses a target that is not a text field (a textarea,
a content-editable element, an input of type text, search, tel, url, email, password or number;
not read-only, not disabled): the step is refused after the click, and the SR trial ends as an
exception, as the code's WebDriverException ends it. On a field that holds text ``clear()`` sets
the value to "", fires ``change`` and blurs the field (ChromeDriver 2.43 and later), so the keys
that follow reach no field: the field is left empty, as in the code. Text that names a key
("Enter", "down", "tab") is that key, as the code's ``keys`` maps it. ``typing="replace"`` clicks
any target, empties a field that holds text with select-all and Backspace, and types into it.

Observation: ``text`` is the compact screen (envs/miniwob/screen.py); ``info`` holds
``utterance`` (the goal; also as ``goal``), ``fields`` (the task's structured goal fields, if
any), ``task``, ``seed``, ``category`` (paper 002's, or None), ``ids`` (actionable ids on the
screen), ``disabled_ids``, ``done``, ``reward`` (raw), ``steps``, and ``success`` once done.
StepResult: ``valid``, ``feedback`` (when refused), ``success`` (positive raw reward) when done;
``info`` has ``action`` (canonical form), ``done``, ``raw_reward``, ``env_reward`` (MiniWoB's
time-scaled reward) and ``reason``.
"""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any

from playwright.async_api import FloatRect, Page

from envs.base import Env, EnvError, Observation, StepResult, invalid
from envs.browser import (
    BrowserSession,
    CrashGuard,
    UrlPolicy,
    click,
    evaluate_all,
    reported,
)
from envs.miniwob.actions import (
    Action,
    ActionError,
    Click,
    Enter,
    Hold,
    Press,
    canonical,
    parse_action,
)
from envs.miniwob.interface import INTERFACE
from envs.miniwob.screen import ID_ATTR, SCREEN_JS, Screen, locator_for, selector_for
from envs.miniwob.tasks import HTML_ROOT, category, parse_task_id, split_ids, task_url

# The page tells when it has settled: a promise that resolves once no short timer is pending, no
# animation frame is requested, no fetch/XHR is in flight, every <img> and CSS content image has
# loaded and no CSS or jQuery animation runs (or after ``maxMs``). It is checked at once and then every 5 ms, so a
# quiet page answers in one round trip instead of a fixed sleep. Wrapping the page's own timer
# and frame functions is what makes "pending" exact: a task that reacts 300 ms after a click, or
# animates an accordion open, is waited for; one that does nothing costs nothing.
_SETTLE_INIT = """
(() => {
  const timers = new Set(), frames = new Set();
  let requests = 0;
  const setT = window.setTimeout.bind(window), clearT = window.clearTimeout.bind(window);
  window.setTimeout = function (fn, ms, ...args) {
    if (typeof fn !== 'function' || (Number(ms) || 0) > 2000) return setT(fn, ms, ...args);
    const id = setT(function () { timers.delete(id); return fn.apply(this, arguments); }, ms, ...args);
    timers.add(id);
    return id;
  };
  window.clearTimeout = function (id) { timers.delete(id); return clearT(id); };
  const raf = window.requestAnimationFrame.bind(window), caf = window.cancelAnimationFrame.bind(window);
  window.requestAnimationFrame = function (cb) {
    const id = raf(function (t) { frames.delete(id); return cb(t); });
    frames.add(id);
    return id;
  };
  window.cancelAnimationFrame = function (id) { frames.delete(id); return caf(id); };
  const send = XMLHttpRequest.prototype.send;
  XMLHttpRequest.prototype.send = function (...args) {
    requests++;
    this.addEventListener('loadend', () => { requests--; }, {once: true});
    return send.apply(this, args);
  };
  const fetch0 = window.fetch;
  window.fetch = function (...args) {
    requests++;
    return fetch0.apply(this, args).finally(() => { requests--; });
  };
  const busy = () => timers.size > 0 || frames.size > 0 || requests > 0
    || Array.prototype.some.call(document.images, (img) => !img.complete && img.loading !== 'lazy')
    || (window.jQuery && window.jQuery(':animated').length > 0)
    || document.getAnimations().some((a) => a.playState === 'running')
    || waitingContent();
  // An element shown as a CSS image (content: url(...), email-inbox's send icon) has no width
  // until its image loads: a request the page cannot see, and may not yet have started.
  const waitingContent = () => Array.prototype.some.call(document.getElementsByTagName('*'), (el) => {
    if (!getComputedStyle(el).content.startsWith('url(')) return false;
    const rects = el.getClientRects();
    return rects.length > 0 && rects[0].width === 0;
  });
  window.__introspectSettle = (maxMs) => new Promise((resolve) => {
    const start = performance.now();
    const check = () => (!busy() || performance.now() - start >= maxMs) ? resolve() : setT(check, 5);
    check();
  });
})();
"""

_STATUS_JS = """({done: WOB_DONE_GLOBAL, reward: WOB_REWARD_GLOBAL,
  raw: WOB_RAW_REWARD_GLOBAL, reason: WOB_REWARD_REASON == null ? null : String(WOB_REWARD_REASON),
  ready: WOB_TASK_READY})"""
_STATUS = f"() => {_STATUS_JS}"
# [status, screen items] in one round trip, after settling when ``maxMs`` > 0.
_SCREEN = f"""async ([maxMs, idAttr, annotated]) => {{
  if (maxMs > 0) await window.__introspectSettle(maxMs);
  const status = {_STATUS_JS};
  return [status, status.done ? [] : ({SCREEN_JS})(idAttr, annotated)];
}}"""

# Selenium's element clear() on the (single) target, as ChromeDriver runs it (its editable check,
# then the clear atom): null, or why it refuses. A field that holds text is emptied, gets a change
# event and loses the focus to the body (the atom's "unfocus after clearing").
_CLEAR = """(els) => {
  const el = els[0];
  const TEXT = ['text', 'search', 'tel', 'url', 'email', 'password', 'number'];
  const editable = el instanceof HTMLTextAreaElement || el.isContentEditable
    || (el instanceof HTMLInputElement && TEXT.includes(el.type.toLowerCase()));
  if (!editable || el.readOnly) return 'invalid element state: Element must be user-editable in order to clear it';
  if (el.disabled || getComputedStyle(el).pointerEvents === 'none') {
    return 'element not interactable: Element is not currently interactable and may not be manipulated';
  }
  const focusOn = (target) => {
    const active = document.activeElement;
    if (target === active) return;
    if (active && typeof active.blur === 'function') active.blur();
    target.focus();
  };
  if (el.value) {
    focusOn(el);
    el.value = '';
    el.dispatchEvent(new Event('change', {bubbles: true}));
    focusOn(document.body);
  } else if (el instanceof HTMLInputElement && el.type.toLowerCase() === 'number') {
    focusOn(el);
    el.value = '';
  } else if (el.isContentEditable) {
    focusOn(el);
    el.textContent = '';
    focusOn(document.body);
  }
  return null;
}"""

# The SR code's keys(): typed text that names one of these keys (upper case, spaces removed) is
# that key (util.SPECIAL_KEY_MAP), in Playwright's names.
_SPECIAL_KEYS = {
    **dict.fromkeys(("BACKSPACE",), "Backspace"),
    **dict.fromkeys(("RIGHTARROW", "ARROWRIGHT"), "ArrowRight"),
    **dict.fromkeys(("LEFTARROW", "ARROWLEFT"), "ArrowLeft"),
    **dict.fromkeys(("DOWNARROW", "ARROWDOWN", "DOWN"), "ArrowDown"),
    **dict.fromkeys(("UPARROW", "ARROWUP", "UP"), "ArrowUp"),
    "TAB": "Tab",
    "SPACE": "Space",
    "ENTER": "Enter",
}
SCREENS = ("code", "annotated")
TYPINGS = ("selenium", "replace")

# MiniWoB++'s own start (its Python driver does the same), then: wait until the task says it is
# ready and has settled, and return the goal. One round trip.
_START = """
async ([maxTime, seed, settleMs]) => {
  core.EPISODE_MAX_TIME = maxTime;
  Math.seedrandom(seed);
  core.setDataMode('train');
  core.startEpisodeReal();
  const start = performance.now();
  while (!WOB_TASK_READY && performance.now() - start < 5000) {
    await new Promise((resolve) => requestAnimationFrame(resolve));
  }
  await window.__introspectSettle(settleMs);
  return core.getUtterance();
}
"""

ENDED_SCREEN = "(the episode is over)"


class MiniWoBEnv(Env):
    """MiniWoB++ tasks ``<task>/<seed>`` in Chromium with paper 002's screen and actions."""

    name = "miniwob"
    interface = INTERFACE

    def __init__(
        self,
        *,
        episode_seconds: float = 3600.0,
        settle_ms_max: float = 1500.0,
        hover_first: bool = True,
        screen: str = "code",
        typing: str = "selenium",
    ) -> None:
        if episode_seconds <= 0 or settle_ms_max < 0:
            raise EnvError("miniwob options must be positive")
        if not isinstance(hover_first, bool):
            raise EnvError(f"miniwob option hover_first must be true or false, not {hover_first!r}")
        if screen not in SCREENS or typing not in TYPINGS:
            raise EnvError(
                f"miniwob option screen must be one of {', '.join(SCREENS)} and typing one of "
                f"{', '.join(TYPINGS)}, not {screen!r} and {typing!r}"
            )
        self.episode_ms = int(episode_seconds * 1000)
        self.settle_max_ms = float(settle_ms_max)
        self.hover_first = hover_first
        self.annotated = screen == "annotated"
        self.selenium_typing = typing == "selenium"
        self._clicked_only: str | None = None  # a typing refused after its click: that click
        self._session: BrowserSession | None = None
        self._guard = CrashGuard(
            snapshot=self._running_snapshot,
            restore=self._restore,
            session=lambda: self._session,
            offline_snapshots=True,
        )
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
        """A new episode of the task; if Chromium died meanwhile, it is started once more."""
        return await self._guard.reset(lambda: self._reset(task_id))

    async def _reset(self, task_id: str) -> Observation:
        task, seed = parse_task_id(task_id)
        session = await self._session_for(task)
        self._task_id, self._task, self._seed = f"{task}/{seed}", task, seed
        self._actions, self._disabled = [], set()
        ok, feedback = await session.goto(task_url(task))
        if not ok:
            raise EnvError(f"could not open miniwob task {task!r}: {feedback}")
        # Playwright injects its script into a page on the first locator call there (about 20 ms):
        # done while the episode starts and settles, it is not paid by the trial's first action.
        self._utterance, _ = await asyncio.gather(
            session.page.evaluate(_START, [self.episode_ms, seed, self.settle_max_ms]),
            session.page.locator("body").count(),
        )
        await self._wait_for_requests()
        obs = await self._observe()
        session.take_reports()
        return obs

    async def step(self, action: str) -> StepResult:
        """One action; if Chromium died meanwhile, the episode is rebuilt by replay first."""
        self._page()
        return await self._guard.step(lambda: self._step(action))

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
        self._clicked_only = None
        if refusal is None:
            ok, feedback = await self._perform(parsed)
            refusal = None if ok else feedback
        if refusal is not None:
            if self._clicked_only:  # the click before a refused typing happened: a replay makes it too
                self._actions.append(self._clicked_only)
            return invalid(await self._observe(settle=bool(self._clicked_only)), refusal, action=canonical(parsed))
        self._actions.append(canonical(parsed))
        obs = await self._observe(settle=True)
        info: dict[str, Any] = {
            "action": canonical(parsed),
            "done": obs.info["done"],
            "raw_reward": float(self._status["raw"]),
            "env_reward": float(self._status["reward"]),
            "reason": self._status["reason"],
        }
        done = bool(obs.info["done"])
        result = StepResult(obs, float(self._status["raw"]), done, info, success=done and bool(obs.info["success"]))
        return reported(result, self._session.take_reports() if self._session else [])

    async def snapshot(self) -> dict[str, Any]:
        """Task, seed, disabled ids and executed actions: a replay rebuilds the same state."""
        return {
            "task_id": self._task_id,
            "actions": list(self._actions),
            "disabled_ids": self._disabled_list(),
        }

    async def _running_snapshot(self) -> dict[str, Any] | None:
        """The snapshot for the crash guard: None before a task runs (a fresh env restored)."""
        return await self.snapshot() if self._task_id else None

    async def restore(self, snapshot: dict[str, Any]) -> Observation:
        """Reset to the snapshot's task and seed, replay its actions, then disable its ids; if
        Chromium died meanwhile, the episode is rebuilt where it was and restored once more.

        Replayed actions are not checked against the disabled ids: they were executed before
        those ids were disabled. An action that no longer replays is listed in
        ``info["replay_failures"]`` (a task whose page depends on wall-clock time, say).
        """
        return await self._guard.step(lambda: self._restore(snapshot))

    async def _restore(self, snapshot: dict[str, Any]) -> Observation:
        try:
            task_id = str(snapshot["task_id"])
            actions = [str(a) for a in snapshot.get("actions", [])]
            disabled = [str(i) for i in snapshot.get("disabled_ids", [])]
        except (KeyError, TypeError) as exc:
            raise EnvError(f"not a miniwob snapshot: {exc}") from None
        await self._reset(task_id)
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
            await self._observe(settle=True)
        obs = await self.disable_ids(disabled)
        if self._session is not None:
            self._session.take_reports()
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
        """Read the current screen again (the page may have changed on its own); if Chromium
        died meanwhile, from the episode rebuilt by replay."""
        self._page()
        return await self._guard.read(self._observe)

    @property
    def page(self) -> Page:
        """The task's live page (for tests, debugging and screenshots; agents act via step)."""
        return self._page()

    async def screenshot(self, path: str | None = None) -> bytes:
        """A PNG of the task area (for humans: the agent never sees pixels); if Chromium died
        meanwhile, of the episode rebuilt by replay."""
        self._page()
        clip: FloatRect = {"x": 0, "y": 0, "width": 160, "height": 210}
        return await self._guard.read(lambda: self._page().screenshot(path=path, clip=clip))

    # --- internals --------------------------------------------------------------------------

    def _page(self) -> Page:
        if self._session is None:
            raise EnvError("miniwob env: call reset(task_id) first")
        return self._session.page

    def _alive(self) -> bool:
        session = self._session
        return session is not None and session.alive and not session.page.is_closed()

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
            # With hover_first (the default), a click lets hover effects (a menu opening, an icon
            # swapped on :hover) settle before the press, as the SR code's move_to_element().click()
            # lets them during Selenium's 250 ms move; without, it presses at once. Typing clicks
            # the field as the SR code does (Selenium's element click): no hover, and a covered
            # field is refused.
            typing = isinstance(action, Enter)
            ok, feedback = await click(
                target,
                selector=selector_for(action.id),
                after_hover=self._settle if self.hover_first and not typing else None,
                refuse_covered=typing,
            )
            if not ok:
                feedback = re.sub(rf'{ID_ATTR}="(\d+)"', r"id=\1", feedback)
                return False, f"cannot {'type into' if typing else 'click'} id={action.id}: {feedback}"
            if isinstance(action, Enter):
                return await self._type(action)
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

    async def _type(self, action: Enter) -> tuple[bool, str]:
        """The keys of ``enter`` into the field just clicked, after clearing it (see the module
        docstring: Selenium's ``clear()`` by default, select-all and Backspace with ``replace``)."""
        page = self._page()
        target, selector = locator_for(page, action.id), selector_for(action.id)
        if self.selenium_typing:
            refusal = await evaluate_all(target, selector, _CLEAR)
            if refusal:
                self._clicked_only = canonical(Click(action.id))
                return False, f"cannot type into id={action.id}: {refusal}"
            special = _SPECIAL_KEYS.get(action.text.upper().replace(" ", ""))
            await (page.keyboard.press(special) if special else page.keyboard.type(action.text))
            return True, ""
        has_text = "(els) => els.some((el) => 'value' in el && el.value !== '')"
        if await evaluate_all(target, selector, has_text):
            await page.keyboard.press("ControlOrMeta+a")
            await page.keyboard.press("Backspace")
        await page.keyboard.type(action.text)
        return True, ""

    async def _settle(self) -> None:
        """Wait until the page has settled (the page-side promise of ``_SETTLE_INIT``, at most
        ``settle_ms_max``), and for requests the page cannot see."""
        await self._page().evaluate("(maxMs) => window.__introspectSettle(maxMs)", self.settle_max_ms)
        await self._wait_for_requests()

    async def _wait_for_requests(self) -> bool:
        """Requests the page cannot see itself (a CSS image, a stylesheet) are counted by the
        session; wait for those still in flight, within ``settle_ms_max``. True if it waited."""
        session = self._session
        deadline = time.monotonic() + self.settle_max_ms / 1000
        waited = False
        while session is not None and session.pending_requests > 0 and time.monotonic() < deadline:
            waited = True
            await asyncio.sleep(0.005)
        return waited

    async def _observe(self, settle: bool = False) -> Observation:
        """Read the status and the screen (one round trip); with ``settle``, once the page has
        settled, and again if requests the page cannot see were still in flight."""
        page = self._page()
        status, items = await page.evaluate(_SCREEN, [self.settle_max_ms if settle else 0, ID_ATTR, self.annotated])
        if settle and await self._wait_for_requests():
            status, items = await page.evaluate(_SCREEN, [0, ID_ATTR, self.annotated])
        self._status = status
        self._screen = Screen(items, frozenset(self._disabled))
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
            # The old context closes while the new one opens: neither waits for the other.
            _, opened = await asyncio.gather(
                self._close_session(),
                BrowserSession.open(UrlPolicy(file_roots=(str(HTML_ROOT),)), init_script=_SETTLE_INIT),
            )
            session = self._session = opened
        self._held = set()
        return session

    async def _close_session(self) -> None:
        if self._session is not None:
            session, self._session = self._session, None
            await session.close()
