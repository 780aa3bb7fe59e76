"""The shared Playwright core of the browser environments (MiniWoB++, WebArena).

Why one core: both browser envs need the same guarantees, and they must hold the same way in
both. One Chromium per process (envs/browser/launch.py), a fresh BrowserContext per task (no
cookies or storage leak between tasks), nothing sent anywhere outside the task's own origins,
whatever part of the page sends it (envs/browser/gate.py), no downloads or pop-ups, no wait
without a bound (a page that never answers, never finishes loading or opens a dialog becomes a
sentence for the agent), and clicks that are real mouse clicks at the element, as a person and the
original harnesses make them (whatever lies on top receives the click), never through JavaScript.

Public API (import it from ``envs.browser``; these modules are its parts):
- ``chromium_path()``, ``CHROMIUM_ARGS``: what is launched (``INTROSPECT_CHROMIUM`` overrides the path).
- ``await get_browser()``: the process-wide browser, launched lazily, relaunched if it died;
  ``await close_browser()`` closes it and stops Playwright (tests, benchmarks, CLI exit).
- ``browser_pids()`` / ``browser_memory_bytes()``: the Chromium process tree of this process' browser.
- ``UrlPolicy``: which URLs a task may load; ``allows(url)`` and ``refusal(url)`` (feedback or None).
- ``BrowserSession.open(policy)``: a context + page for one task, with ``goto``, ``settle``,
  ``take_reports``, ``alive``, ``ax_tree``, ``dom_snapshot``, ``cdp``, ``screenshot``, ``close``.
- ``await click(locator)`` -> ``(ok, feedback)``: a real mouse click at the element's centre (of
  its first line box) after scrolling it into view, refused with feedback only when the target
  is missing or not rendered; ``evaluate_all(locator, selector, script)``.
- ``reported(result, reports)``: a step's result with the page's reports as its feedback.
- ``CrashGuard(snapshot=, restore=, session=)``: env calls that outlive a Chromium crash
  (``await guard.reset(run)``, ``guard.step(run)``, ``guard.read(run)``; envs/browser/crash.py).
- ``answers(browser)``: whether Chromium answers a round trip now (False once it died).
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import Any

from playwright.async_api import (
    BrowserContext,
    CDPSession,
    Dialog,
    Page,
    Request,
    Route,
    StorageState,
    ViewportSize,
)
from playwright.async_api import (
    Error as PlaywrightError,
)
from playwright.async_api import (
    TimeoutError as PlaywrightTimeoutError,
)

from envs.base import StepResult
from envs.browser.click import first_line
from envs.browser.gate import Gate, UrlPolicy
from envs.browser.launch import BrowserDiedError, get_browser, while_connected
from errors import IntrospectError

DEFAULT_LOAD_TIMEOUT_MS = 15000.0  # a navigation's response, then its page's load event
DEFAULT_READ_TIMEOUT_MS = 20000.0  # one DevTools read of a page
# A page with more elements is not read (a WebArena page has a few thousand; 50,000 links take
# Chromium minutes to turn into an accessibility tree).
DEFAULT_MAX_ELEMENTS = 50_000


class PageTooLarge(PlaywrightError, IntrospectError):
    """The page has more elements than a session reads; the message is the agent's feedback."""


DEFAULT_VIEWPORT: ViewportSize = {"width": 1280, "height": 800}


# --- one task's context ---------------------------------------------------------------------------

# Pages may not open WebRTC peer connections: their STUN/TURN traffic is UDP, which no proxy
# carries, and Chrome ignores --force-webrtc-ip-handling-policy (only content_shell reads it).
# Init scripts run in every frame before its own scripts, fresh about:blank frames included.
_NO_PEER_CONNECTIONS = """
for (const name of ['RTCPeerConnection', 'webkitRTCPeerConnection']) {
  try { delete window[name]; } catch (e) {}
}
"""
_MESSAGE_CHARS = 300  # a dialog's message in feedback is cut here


@dataclass
class BrowserSession:
    """A fresh BrowserContext and its single page for one task; close it when the task ends.

    Everything the context sends to the network passes through its ``gate`` (envs/browser/gate.py)
    and its route filter; ``blocked`` lists what they refused. What a page does on its own that
    the agent must hear about (a dialog it opened and how it was answered, a load that was
    stopped) is collected in ``reports`` as sentences; ``take_reports()`` hands them over, and
    ``reported(result, reports)`` turns them into the step's feedback.
    """

    policy: UrlPolicy
    context: BrowserContext
    page: Page
    gate: Gate | None = None
    blocked: list[str] = field(default_factory=list)
    reports: list[str] = field(default_factory=list)
    pending_requests: int = 0  # requests in flight (images a page adds after load, XHR, ...)
    load_timeout_ms: float = DEFAULT_LOAD_TIMEOUT_MS
    max_elements: int = DEFAULT_MAX_ELEMENTS
    crashed: bool = False
    _navigations: dict[Page, tuple[str, asyncio.Event]] = field(default_factory=dict, repr=False)
    _stopped: set[Page] = field(default_factory=set, repr=False)  # loading stopped on this document
    _cdp: dict[Page, CDPSession] = field(default_factory=dict, repr=False)

    @classmethod
    async def open(
        cls,
        policy: UrlPolicy,
        *,
        viewport: ViewportSize | None = None,
        allow_tabs: bool = False,
        storage_state: StorageState | None = None,
        load_timeout_ms: float = DEFAULT_LOAD_TIMEOUT_MS,
        init_script: str = "",
    ) -> BrowserSession:
        """A new context on the shared browser (relaunching it once if it died meanwhile).

        Pages the site opens (pop-ups, ``target=_blank``) are closed unless ``allow_tabs``:
        WebArena has tabs, MiniWoB does not. ``storage_state`` (Playwright's: cookies and local
        storage) starts the context signed in, as WebArena starts its tasks. ``init_script`` runs
        in every document of the context before the page's own scripts. ``load_timeout_ms`` bounds both the wait for a
        navigation's response and the wait for its page to finish loading; past it, loading is
        stopped (as the Esc key does) and a report says so.

        A cancelled open (a stopped eval, a timeout) still ends, shielded, and closes what it
        opened: Playwright finishes a context it was asked for even when its caller is gone,
        and a context left behind is a renderer running for the rest of the process."""
        opening = asyncio.ensure_future(
            cls._open(
                policy,
                viewport=viewport,
                allow_tabs=allow_tabs,
                storage_state=storage_state,
                load_timeout_ms=load_timeout_ms,
                init_script=init_script,
            )
        )
        try:
            return await asyncio.shield(opening)
        except asyncio.CancelledError:
            opening.add_done_callback(_close_unclaimed)
            raise

    @classmethod
    async def _open(
        cls,
        policy: UrlPolicy,
        *,
        viewport: ViewportSize | None,
        allow_tabs: bool,
        storage_state: StorageState | None,
        load_timeout_ms: float,
        init_script: str,
    ) -> BrowserSession:
        blocked: list[str] = []
        gate = await Gate.start(policy.origins, blocked.append)

        async def attempt() -> BrowserSession:
            browser = await get_browser()
            context: BrowserContext | None = None
            try:  # each call bounded by the browser's life: a call made as it dies may never end
                context = await while_connected(
                    browser,
                    browser.new_context(
                        accept_downloads=False,
                        service_workers="block",
                        viewport=viewport or DEFAULT_VIEWPORT,
                        proxy={"server": gate.url},
                        storage_state=storage_state,
                    ),
                )
                script = _NO_PEER_CONNECTIONS + ";\n" + init_script
                await while_connected(browser, context.add_init_script(script=script))
                page = await while_connected(browser, context.new_page())
                session = cls(policy, context, page, gate, blocked, load_timeout_ms=load_timeout_ms)
                session._watch(page)
                context.on("page", session._new_page if allow_tabs else session._close_popup)
                context.on("request", session._request_started)
                context.on("requestfinished", session._request_ended)
                context.on("requestfailed", session._request_ended)
                context.on("dialog", session._answer_dialog)
                routed = await asyncio.to_thread(policy.routed)  # walks the file roots once
                await while_connected(browser, context.route(routed, session._filter))
                return session
            except BaseException as exc:
                if context is not None:
                    with contextlib.suppress(PlaywrightError):
                        await context.close()
                if (
                    isinstance(exc, PlaywrightError)
                    and not isinstance(exc, BrowserDiedError)
                    and not browser.is_connected()
                ):
                    raise BrowserDiedError(f"Chromium died while a context was opening: {first_line(exc)}") from exc
                raise

        try:
            try:
                return await attempt()
            except BrowserDiedError:  # not the open's own fault: once more, on a relaunched browser
                return await attempt()
        except BaseException:
            await gate.close()
            raise

    @property
    def alive(self) -> bool:
        """False once Chromium died, disconnected, or a page of this session crashed."""
        browser = self.context.browser
        return browser is not None and browser.is_connected() and not self.crashed

    def take_reports(self) -> list[str]:
        """The reports collected since the last call (and forget them)."""
        reports, self.reports = self.reports, []
        return reports

    # --- what the pages do -------------------------------------------------------------------

    def _watch(self, page: Page) -> None:
        page.on("framenavigated", lambda frame: self._navigated(page, frame))
        page.on("crash", lambda _: setattr(self, "crashed", True))
        page.on("close", lambda _: self._forget(page))

    def _forget(self, page: Page) -> None:
        """A closed page's records go with it."""
        self._cdp.pop(page, None)
        self._navigations.pop(page, None)
        self._stopped.discard(page)

    def _new_page(self, page: Page) -> None:
        self._watch(page)

    async def _close_popup(self, page: Page) -> None:
        if page is not self.page:
            try:
                await page.close()
            except PlaywrightError:
                pass

    def _navigated(self, page: Page, frame: Any) -> None:
        if frame == page.main_frame:
            self._stopped.discard(page)  # a new document, which loads anew
            if page in self._navigations:
                self._navigations[page][1].set()

    def _request_started(self, request: Request) -> None:
        self.pending_requests += 1
        page = _navigated_page(request)
        if page is not None:
            self._navigations[page] = (request.url, asyncio.Event())

    def _request_ended(self, request: Request) -> None:
        self.pending_requests = max(0, self.pending_requests - 1)
        page = _navigated_page(request)
        url, done = self._navigations.get(page, ("", None)) if page is not None else ("", None)
        if done is not None and url == request.url:
            done.set()

    async def _answer_dialog(self, dialog: Dialog) -> None:
        """A dialog is answered at once (it blocks the page until then): alerts with OK, leaving
        the page (beforeunload) with Leave since the agent's own action asked to go, confirm and
        prompt with Cancel, the choice that changes nothing, as Playwright does by default."""
        kind, message = dialog.type, " ".join(dialog.message.split())[:_MESSAGE_CHARS]
        try:
            if kind in ("alert", "beforeunload"):
                await dialog.accept()
            else:
                await dialog.dismiss()
        except PlaywrightError:
            pass
        self.reports.append(
            {
                "alert": f"The page showed an alert: {message!r}; it was closed with OK.",
                "beforeunload": "The page asked whether to leave it; it was left.",
                "confirm": f"The page asked to confirm: {message!r}; it was answered Cancel.",
            }.get(kind, f"The page asked for input: {message!r}; it was answered Cancel.")
        )

    async def _filter(self, route: Route, request: Request) -> None:
        """Refuse what the policy does not allow. A refused navigation of the page itself (a
        link, a form, a script setting ``location``) is aborted as cancelled, so the page stays
        as it was and the agent is told why: any other error makes Chromium commit its error page
        a moment later, after the step's observation was read (or while it was being read)."""
        if self.policy.allows(request.url):
            await route.fallback()
            return
        self.blocked.append(request.url)
        if _navigated_page(request) is None:
            await route.abort("blockedbyclient")
            return
        await route.abort("aborted")
        self.reports.append(f"{self.policy.refusal(request.url)}; the page stayed as it was.")

    # --- loading -------------------------------------------------------------------------------

    async def goto(self, url: str, *, page: Page | None = None) -> tuple[bool, str]:
        """Navigate (the task's page by default) and settle; a URL outside the policy, or one that
        does not respond within the load timeout, is refused with feedback."""
        page = page or self.page
        reason = self.policy.refusal(url)
        if reason is not None:
            return False, reason
        try:
            await page.goto(url, wait_until="commit", timeout=self.load_timeout_ms)
        except PlaywrightTimeoutError:
            await self.stop_loading(page)
            return False, f"{url} did not respond within {self.load_timeout_ms / 1000:g} s; loading was stopped"
        except PlaywrightError as exc:
            return False, f"could not load {url}: {first_line(exc)}"
        await self.settle(page)
        return True, ""

    async def settle(self, page: Page | None = None) -> None:
        """Wait until the page's pending navigation has its response and the page has loaded,
        each at most the load timeout; past it, stop loading and add a report. A page with a
        navigation in flight answers neither scripts nor DevTools until it commits, so nothing
        may read a page before this returns."""
        page = page or self.page
        seconds = self.load_timeout_ms / 1000
        url, responded = self._navigations.get(page, ("", None))
        if responded is not None and not responded.is_set():
            try:
                await asyncio.wait_for(responded.wait(), seconds)
            except TimeoutError:
                await self.stop_loading(page)
                self.reports.append(f"{url} did not respond within {seconds:g} s; loading was stopped.")
                return
        if page in self._stopped:
            return  # a document whose loading was stopped never fires load
        try:
            await page.wait_for_load_state("load", timeout=self.load_timeout_ms)
        except PlaywrightTimeoutError:
            await self.stop_loading(page)
            self._stopped.add(page)
            self.reports.append(
                f"{page.url} did not finish loading within {seconds:g} s; loading was stopped and "
                "the page shows what had loaded."
            )
        except PlaywrightError:
            pass  # closed or crashed: whoever reads the page next finds out

    async def stop_loading(self, page: Page | None = None) -> None:
        """Stop every load of the page (the Esc key; DevTools answers even mid-navigation)."""
        try:
            await self.cdp("Page.stopLoading", page=page, timeout_ms=5000)
        except PlaywrightError:
            pass

    # --- reading -------------------------------------------------------------------------------

    async def cdp(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        page: Page | None = None,
        timeout_ms: float = DEFAULT_READ_TIMEOUT_MS,
    ) -> dict[str, Any]:
        """Send one Chrome DevTools Protocol command for the page (one session per page, kept);
        a command unanswered within ``timeout_ms`` raises Playwright's TimeoutError."""
        page = page or self.page
        for attempt in (1, 2):
            session = self._cdp.get(page)
            if session is None:
                session = self._cdp[page] = await self.context.new_cdp_session(page)
            try:
                return await asyncio.wait_for(session.send(method, params or {}), timeout_ms / 1000)
            except TimeoutError:
                raise PlaywrightTimeoutError(
                    f"{method}: the page did not answer within {timeout_ms / 1000:g} s"
                ) from None
            except PlaywrightError:
                self._cdp.pop(page, None)  # a detached session; a second one may do
                if attempt == 2 or page.is_closed():
                    raise
        raise AssertionError("unreachable")

    async def check_size(self) -> None:
        """Raise PageTooLarge (and report it) when the page has more than ``max_elements``
        elements: Chromium takes minutes to build such a page's accessibility tree, and no
        model could read it, so it is not read at all."""
        count = await self.page.evaluate("document.getElementsByTagName('*').length")
        if count > self.max_elements:
            sentence = (
                f"The page has {count:,} elements, more than the {self.max_elements:,} that are read; it was not read."
            )
            self.reports.append(sentence)
            raise PageTooLarge(sentence)

    async def ax_tree(self) -> list[dict[str, Any]]:
        """The full accessibility tree (CDP Accessibility.getFullAXTree), as its list of nodes."""
        await self.check_size()
        return (await self.cdp("Accessibility.getFullAXTree"))["nodes"]

    async def dom_snapshot(self, computed_styles: list[str] | None = None) -> dict[str, Any]:
        """The DOM with layout (CDP DOMSnapshot.captureSnapshot: documents with bounds, styles)."""
        await self.check_size()
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
        """Close the context and its gate; harmless if the browser already died."""
        try:
            await self.context.close()
        except PlaywrightError:
            pass
        if self.gate is not None:
            await self.gate.close()


_CLOSING: set[asyncio.Task[None]] = set()  # closes of sessions nobody claimed (kept referenced until done)


def _close_unclaimed(opening: asyncio.Future[BrowserSession]) -> None:
    """Close the session an open whose caller was cancelled went on to make."""
    if opening.cancelled() or opening.exception() is not None:
        return
    closing = asyncio.ensure_future(opening.result().close())
    _CLOSING.add(closing)
    closing.add_done_callback(_CLOSING.discard)


def _navigated_page(request: Request) -> Page | None:
    """The page whose main frame ``request`` navigates, if it does (a new tab's first request
    comes before its frame exists: nothing reads that page before it has one)."""
    if not request.is_navigation_request():
        return None
    try:
        frame = request.frame
    except PlaywrightError:
        return None
    return frame.page if frame.parent_frame is None else None


def reported(result: StepResult, reports: list[str]) -> StepResult:
    """``result`` with the page's reports as its feedback. The step is then not valid: the action
    ran, but what it led to was not what it asked for (a dialog answered for the agent, a page
    that did not load), and the agent must read why."""
    if reports:
        result.feedback = " ".join(filter(None, [result.feedback, *reports]))
        result.valid = False
    return result
