"""The process-wide Chromium: launched lazily through Playwright, relaunched if it died.

Why one per process: launching costs seconds, a context costs milliseconds, so every task gets
a fresh BrowserContext on one shared browser (envs/browser/core.py). Debian's Chromium is launched
with ``executable_path`` (``playwright install`` cannot download browsers everywhere).
"""

from __future__ import annotations

import asyncio
import os
import weakref
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import TypeVar

from playwright.async_api import Browser, CDPSession, Playwright, async_playwright
from playwright.async_api import Error as PlaywrightError

from envs.browser.processes import OWNER_FLAG, kill_browser_processes
from errors import IntrospectError

T = TypeVar("T")

DEFAULT_CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium_path() -> str:
    """The Chromium binary: $INTROSPECT_CHROMIUM, else Debian's /usr/bin/chromium."""
    return os.environ.get("INTROSPECT_CHROMIUM") or DEFAULT_CHROMIUM


@dataclass
class _Shared:
    """The process-wide Playwright driver and browser, bound to the event loop that made them."""

    loop: asyncio.AbstractEventLoop | None = None
    playwright: Playwright | None = None
    browser: Browser | None = None
    lock: asyncio.Lock | None = None
    launches: int = 0


_SHARED = _Shared()


async def get_browser() -> Browser:
    """The process-wide browser; launched on first use and relaunched if it died or disconnected.

    Playwright objects belong to one event loop; if a new loop asks (a second ``asyncio.run``),
    the old browser is abandoned (its processes killed) and a new one is launched for that loop.
    """
    loop = asyncio.get_running_loop()
    if _SHARED.loop is not loop:  # taken over before any await: callers arriving together share the lock
        _SHARED.loop, _SHARED.playwright, _SHARED.browser = loop, None, None
        _SHARED.lock = asyncio.Lock()
    assert _SHARED.lock is not None
    async with _SHARED.lock:
        browser = _SHARED.browser
        if browser is not None and browser.is_connected():
            return browser
        # What is left of a browser that died, or of another loop's: nothing of it may keep running.
        await asyncio.to_thread(kill_browser_processes)  # reads /proc: off the event loop
        if _SHARED.playwright is None:
            _SHARED.playwright = await async_playwright().start()
        _SHARED.browser = await _SHARED.playwright.chromium.launch(
            executable_path=chromium_path(), headless=True, args=[*CHROMIUM_ARGS, OWNER_FLAG]
        )
        _SHARED.launches += 1
        return _SHARED.browser


def current_browser() -> Browser | None:
    """The process-wide browser of the running event loop, if one was launched (alive or not)."""
    return _SHARED.browser if _SHARED.loop is asyncio.get_running_loop() else None


def launch_count() -> int:
    """How many times this process launched Chromium (a relaunch after a crash adds one)."""
    return _SHARED.launches


async def close_browser() -> None:
    """Close the shared browser and stop the Playwright driver, if this loop owns them."""
    if _SHARED.loop is not asyncio.get_running_loop():
        await asyncio.to_thread(kill_browser_processes)
        _SHARED.loop, _SHARED.playwright, _SHARED.browser = None, None, None
        return
    browser, playwright = _SHARED.browser, _SHARED.playwright
    _SHARED.browser, _SHARED.playwright = None, None
    if browser is not None:
        try:
            await browser.close()
        except PlaywrightError:
            pass
    if playwright is not None:
        await playwright.stop()


class BrowserDiedError(PlaywrightError, IntrospectError):
    """Chromium died or disconnected while a call to it was under way. A Playwright ``Error``
    first: every handler of a failed page call (an action that failed, a crash to recover
    from) must take it as one; ours too, though no command words it for the user."""


async def while_connected(browser: Browser, call: Awaitable[T]) -> T:
    """``call``'s result, or BrowserDiedError as soon as ``browser`` disconnects.

    Playwright answers most calls with an error when Chromium dies under them, but not all:
    ``BrowserContext.new_page`` stays pending for ever if the browser is killed while the page
    is being made. Racing the call against the browser's ``disconnected`` event bounds it."""
    gone = asyncio.get_running_loop().create_future()

    def on_disconnected(_: Browser) -> None:
        if not gone.done():
            gone.set_result(None)

    browser.on("disconnected", on_disconnected)
    running = asyncio.ensure_future(call)
    try:
        if not browser.is_connected():
            on_disconnected(browser)
        await asyncio.wait((running, gone), return_when=asyncio.FIRST_COMPLETED)
        if running.done():
            return running.result()
        raise BrowserDiedError("Chromium died while it was being asked for a page")
    finally:
        browser.remove_listener("disconnected", on_disconnected)
        if not running.done():
            running.cancel()


ANSWER_TIMEOUT_S = 20.0  # Chromium answers a round trip in milliseconds; a loaded machine may take seconds
GONE_TIMEOUT_S = 10.0  # Playwright sees a killed Chromium disconnect within this

# One browser-level DevTools session per browser, for ``answers`` (made once, by its first caller).
_PROBES: weakref.WeakKeyDictionary[Browser, asyncio.Future[CDPSession]] = weakref.WeakKeyDictionary()


async def answers(browser: Browser) -> bool:
    """Whether ``browser`` answers a DevTools round trip now. False once Chromium died, and then
    only after Playwright has seen it disconnect (or ``GONE_TIMEOUT_S`` passed), so that the next
    ``get_browser()`` launches a new one instead of handing out the dead one.

    Why ask Chromium rather than ``is_connected()``: a call that Chromium died under fails (with
    ``TargetClosedError``, say) a moment before Playwright reports the disconnect, and on a loaded
    machine that moment is long enough for a caller to go on with the dead browser. Playwright
    answers a call made after Chromium died only once it knows, so a round trip settles it."""
    if not browser.is_connected():
        return False
    probe = _PROBES.get(browser)
    if probe is None:
        probe = _PROBES[browser] = asyncio.ensure_future(browser.new_browser_cdp_session())
    try:
        session = await asyncio.wait_for(while_connected(browser, asyncio.shield(probe)), ANSWER_TIMEOUT_S)
        await asyncio.wait_for(while_connected(browser, session.send("Browser.getVersion")), ANSWER_TIMEOUT_S)
        return True
    except (PlaywrightError, TimeoutError):
        _PROBES.pop(browser, None)
        await disconnected(browser, GONE_TIMEOUT_S)
        return False


async def disconnected(browser: Browser, timeout_s: float) -> None:
    """Return once ``browser`` is disconnected, or after ``timeout_s``."""
    gone = asyncio.Event()

    def on_disconnected(_: Browser) -> None:
        gone.set()

    browser.on("disconnected", on_disconnected)
    try:
        if browser.is_connected():
            await asyncio.wait_for(gone.wait(), timeout_s)
    except TimeoutError:
        pass
    finally:
        browser.remove_listener("disconnected", on_disconnected)
