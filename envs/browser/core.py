"""The shared Playwright core of the browser environments (MiniWoB++, WebArena).

Why one module: both browser envs need the same guarantees, and they must hold the same way in
both. One Chromium per process (launching costs seconds, a context costs milliseconds), a fresh
BrowserContext per task (no cookies or storage leak between tasks), navigation limited to the
task's own origins (an agent must not wander off to the internet or read other local files),
no downloads or pop-ups, and clicks that are real mouse clicks behind Playwright's actionability
checks, so that a covered or invisible element is refused with feedback instead of being clicked
through JavaScript as no user could.

Public API:
- ``chromium_path()``, ``CHROMIUM_ARGS``: what is launched (``INTROSPECT_CHROMIUM`` overrides the path).
- ``await get_browser()``: the process-wide browser, launched lazily, relaunched if it died.
- ``await close_browser()``: close it and stop Playwright (tests, benchmarks, CLI exit).
- ``browser_pids()`` / ``browser_memory_bytes()``: the Chromium process tree of this process' browser.
- ``UrlPolicy``: which URLs a task may load; ``allows(url)`` and ``refusal(url)`` (feedback or None).
- ``BrowserSession.open(policy)``: a context + page for one task, with ``goto``, ``ax_tree``,
  ``dom_snapshot``, ``screenshot``, ``close``, and ``pending_requests`` (requests in flight).
- ``await click(locator)`` -> ``(ok, feedback)``: a real click, refused with feedback when the
  target is missing, hidden, disabled or covered.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import urllib.parse
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable

from playwright.async_api import (
    Browser,
    BrowserContext,
    Error as PlaywrightError,
    Locator,
    Page,
    Playwright,
    Request,
    Route,
    TimeoutError as PlaywrightTimeoutError,
    async_playwright,
)

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
# An unknown switch Chromium ignores; it marks the browser process as ours in /proc so the
# benchmark can sum its memory and a test can kill exactly this browser.
_OWNER_FLAG = f"--introspect-owner={os.getpid()}"
DEFAULT_CLICK_TIMEOUT_MS = 2000.0
DEFAULT_VIEWPORT = {"width": 1280, "height": 800}


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
    if _SHARED.loop is not loop:
        await asyncio.to_thread(_kill_processes)  # reads /proc: off the event loop
        _SHARED.loop, _SHARED.playwright, _SHARED.browser = loop, None, None
        _SHARED.lock = asyncio.Lock()
    assert _SHARED.lock is not None
    async with _SHARED.lock:
        browser = _SHARED.browser
        if browser is not None and browser.is_connected():
            return browser
        if browser is not None:  # died: make sure nothing of it is left running
            await asyncio.to_thread(_kill_processes)
        if _SHARED.playwright is None:
            _SHARED.playwright = await async_playwright().start()
        _SHARED.browser = await _SHARED.playwright.chromium.launch(
            executable_path=chromium_path(), headless=True, args=[*CHROMIUM_ARGS, _OWNER_FLAG]
        )
        _SHARED.launches += 1
        return _SHARED.browser


def launch_count() -> int:
    """How many times this process launched Chromium (a relaunch after a crash adds one)."""
    return _SHARED.launches


async def close_browser() -> None:
    """Close the shared browser and stop the Playwright driver, if this loop owns them."""
    if _SHARED.loop is not asyncio.get_running_loop():
        _kill_processes()
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


# --- the browser's processes, read from /proc --------------------------------------------------


def _proc_table() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, command line) for every readable process."""
    table: dict[int, tuple[int, str]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                stat = fh.read().decode(errors="replace")
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                cmdline = fh.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        table[int(entry)] = (ppid, cmdline)
    return table


def browser_pids() -> list[int]:
    """The pids of this process' Chromium: the marked browser process and all its descendants."""
    table = _proc_table()
    roots = [pid for pid, (_, cmd) in table.items() if _OWNER_FLAG in cmd and "--type=" not in cmd]
    found, frontier = set(roots), list(roots)
    while frontier:
        parent = frontier.pop()
        for pid, (ppid, _) in table.items():
            if ppid == parent and pid not in found:
                found.add(pid)
                frontier.append(pid)
    return sorted(found)


def browser_memory_bytes() -> dict[str, int]:
    """This process' Chromium memory: ``rss`` (sum of resident sets, counts shared pages once per
    process) and ``pss`` (proportional set size, shared pages split; the fairer total)."""
    totals = {"rss": 0, "pss": 0, "processes": 0}
    for pid in browser_pids():
        try:
            with open(f"/proc/{pid}/smaps_rollup") as fh:
                fields = dict(line.split(":", 1) for line in fh if ":" in line)
        except OSError:
            continue
        totals["rss"] += int(fields.get("Rss", "0 kB").split()[0]) * 1024
        totals["pss"] += int(fields.get("Pss", "0 kB").split()[0]) * 1024
        totals["processes"] += 1
    return totals


def _kill_processes() -> None:
    for pid in browser_pids():
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            continue


# --- where a task may go ------------------------------------------------------------------------


def _origin(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


@dataclass(frozen=True)
class UrlPolicy:
    """The URLs one task may load: http(s) origins and local directories served over file://.

    ``origins`` are like ``"http://localhost:7770"``; ``file_roots`` are absolute directories whose
    files (and only those) may be loaded. about:, data: and blob: URLs of an allowed origin are
    always allowed, since pages create them themselves.
    """

    origins: tuple[str, ...] = ()
    file_roots: tuple[str, ...] = ()
    _roots: tuple[str, ...] = field(init=False, repr=False, compare=False, default=())

    def __post_init__(self) -> None:
        object.__setattr__(self, "origins", tuple(_origin(o) for o in self.origins))
        roots = tuple(os.path.realpath(r) for r in self.file_roots)
        object.__setattr__(self, "_roots", roots)

    def allows(self, url: str) -> bool:
        """Whether a page of this task may load ``url``."""
        scheme = urllib.parse.urlsplit(url).scheme.lower()
        if scheme in ("about", "data"):
            return True
        if scheme == "blob":
            return self.allows(url[len("blob:") :])
        if scheme == "file":
            path = os.path.realpath(urllib.parse.unquote(urllib.parse.urlsplit(url).path))
            return any(path == r or path.startswith(r.rstrip("/") + "/") for r in self._roots)
        if scheme in ("http", "https", "ws", "wss"):
            return _origin(url) in self.origins
        return False

    def refusal(self, url: str) -> str | None:
        """Feedback for the agent when ``url`` is not allowed, else None."""
        if self.allows(url):
            return None
        allowed = ", ".join([*self.origins, *(f"file://{r}/" for r in self._roots)]) or "nothing"
        return f"navigation to {url} is not allowed for this task (allowed: {allowed})"


# --- one task's context ---------------------------------------------------------------------------


@dataclass
class BrowserSession:
    """A fresh BrowserContext and its single page for one task; close it when the task ends."""

    policy: UrlPolicy
    context: BrowserContext
    page: Page
    blocked: list[str] = field(default_factory=list)
    pending_requests: int = 0  # requests in flight (images a page adds after load, XHR, ...)

    @classmethod
    async def open(
        cls,
        policy: UrlPolicy,
        *,
        viewport: dict[str, int] | None = None,
        allow_tabs: bool = False,
        storage_state: dict[str, Any] | None = None,
    ) -> "BrowserSession":
        """A new context on the shared browser (relaunching it once if it died meanwhile).

        Pages the site opens (pop-ups, ``target=_blank``) are closed unless ``allow_tabs``:
        WebArena has tabs, MiniWoB does not. ``storage_state`` (Playwright's: cookies and local
        storage) starts the context signed in, as WebArena starts its tasks."""
        for attempt in (1, 2):
            browser = await get_browser()
            try:
                context = await browser.new_context(
                    accept_downloads=False,
                    service_workers="block",
                    viewport=viewport or DEFAULT_VIEWPORT,
                    storage_state=storage_state,  # type: ignore[arg-type]
                )
                break
            except PlaywrightError:
                if attempt == 2 or browser.is_connected():
                    raise
        page = await context.new_page()
        session = cls(policy, context, page)
        if not allow_tabs:
            context.on("page", session._close_popup)
        context.on("request", session._request_started)
        context.on("requestfinished", session._request_ended)
        context.on("requestfailed", session._request_ended)
        await context.route("**/*", session._filter)
        return session

    async def _close_popup(self, page: Page) -> None:
        if page is not self.page:
            try:
                await page.close()
            except PlaywrightError:
                pass

    def _request_started(self, request: Request) -> None:
        self.pending_requests += 1

    def _request_ended(self, request: Request) -> None:
        self.pending_requests = max(0, self.pending_requests - 1)

    async def _filter(self, route: Route, request: Request) -> None:
        if self.policy.allows(request.url):
            await route.fallback()
        else:
            self.blocked.append(request.url)
            await route.abort("blockedbyclient")

    async def goto(self, url: str, *, timeout_ms: float = 30000) -> tuple[bool, str]:
        """Navigate the task's page; a URL outside the policy is refused with feedback."""
        reason = self.policy.refusal(url)
        if reason is not None:
            return False, reason
        try:
            await self.page.goto(url, timeout=timeout_ms)
        except PlaywrightError as exc:
            return False, f"could not load {url}: {_first_line(exc)}"
        return True, ""

    async def cdp(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send one Chrome DevTools Protocol command for the page and return its result."""
        session = await self.context.new_cdp_session(self.page)
        try:
            return await session.send(method, params or {})
        finally:
            await session.detach()

    async def ax_tree(self) -> list[dict[str, Any]]:
        """The full accessibility tree (CDP Accessibility.getFullAXTree), as its list of nodes."""
        return (await self.cdp("Accessibility.getFullAXTree"))["nodes"]

    async def dom_snapshot(self, computed_styles: list[str] | None = None) -> dict[str, Any]:
        """The DOM with layout (CDP DOMSnapshot.captureSnapshot: documents with bounds, styles)."""
        return await self.cdp(
            "DOMSnapshot.captureSnapshot",
            {
                "computedStyles": computed_styles or ["display", "visibility", "opacity"],
                "includeDOMRects": True,
                "includePaintOrder": True,
            },
        )

    async def screenshot(self, path: str | None = None, *, full_page: bool = False) -> bytes:
        """A PNG of the page (also written to ``path`` when given)."""
        return await self.page.screenshot(path=path, full_page=full_page)

    async def close(self) -> None:
        """Close the context; harmless if the browser already died."""
        try:
            await self.context.close()
        except PlaywrightError:
            pass


# --- grounded clicks ------------------------------------------------------------------------------

_INTERCEPT = re.compile(r"(<[^\n]*?>)[^\n]*? intercepts pointer events")


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


async def click(
    locator: Locator,
    *,
    timeout_ms: float = DEFAULT_CLICK_TIMEOUT_MS,
    modifiers: list[str] | None = None,
    after_hover: Callable[[], Awaitable[None]] | None = None,
) -> tuple[bool, str]:
    """Click ``locator`` as a user would; ``(True, "")`` or ``(False, feedback)``.

    Playwright's actionability checks (attached, visible, stable, enabled, receives the pointer at
    the click point) decide; a target that fails them is never clicked, and the feedback says why.
    With ``after_hover``, the pointer first moves onto the target and the callback runs (e.g. to
    wait for the page's hover effects, such as an icon swapped on :hover, to finish) before the
    press, as a person sees the hover before clicking.
    """
    try:
        count = await locator.count()
        if count == 0:
            return False, "the element is not on the page"
        if count > 1:
            return False, "the target matches several elements"
        if not await locator.is_visible():
            return False, "the element is not visible"
        if not await locator.is_enabled():
            return False, "the element is disabled"
        if after_hover is not None:
            await locator.hover(timeout=timeout_ms, modifiers=modifiers)  # type: ignore[arg-type]
            await after_hover()
        await locator.click(timeout=timeout_ms, modifiers=modifiers)  # type: ignore[arg-type]
    except PlaywrightTimeoutError as exc:
        covering = _INTERCEPT.findall(str(exc))
        if covering:
            return False, f"the element is covered by {covering[-1]} and cannot be clicked"
        return False, f"the element could not be clicked: {_first_line(exc)}"
    except PlaywrightError as exc:
        return False, f"the element could not be clicked: {_first_line(exc)}"
    return True, ""
