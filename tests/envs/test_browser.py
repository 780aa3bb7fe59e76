"""The shared browser core against local file:// pages in the real Chromium."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from envs import browser
from envs.browser import BrowserSession, UrlPolicy, click
from tests.support.chromium import kill_chromium

pytestmark = pytest.mark.browser

PAGE = """<html><body>
<button id="free" onclick="window.clicks = (window.clicks || 0) + 1">Free</button>
<div style="position: relative; width: 200px; height: 40px">
  <button id="under" style="position: absolute; top: 0; left: 0"
          onclick="window.underClicked = true">Under</button>
  <div id="cover" style="position: absolute; top: 0; left: 0; width: 200px; height: 40px;
       background: white; z-index: 5" onclick="window.coverClicked = true">cover</div>
</div>
<button id="hidden" style="display: none" onclick="window.hiddenClicked = true">Hidden</button>
<button id="ghost" style="opacity: 0" onclick="window.ghostClicked = true">Ghost</button>
<button id="off" disabled onclick="window.offClicked = true">Off</button>
<div style="width: 20ch; font: 16px monospace">aaaaaaaaaaaaaaa <a id="wrapped" href="#followed">bbb ccc</a></div>
<button id="popup" onclick="window.open('page.html')">Pop</button>
<a id="escape" href="../secret/secret.html">secret</a>
</body></html>"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("site")
    (root / "allowed").mkdir()
    (root / "secret").mkdir()
    (root / "allowed" / "page.html").write_text(PAGE)
    (root / "secret" / "secret.html").write_text("<p>SECRET</p>")
    (root / "linked").mkdir()
    (root / "linked" / "page.html").write_text('<a id="leak" href="leak.html">leak</a>')
    (root / "linked" / "leak.html").symlink_to(root / "secret" / "secret.html")
    return root


async def open_page(site: Path) -> BrowserSession:
    session = await BrowserSession.open(UrlPolicy(file_roots=(str(site / "allowed"),)))
    ok, feedback = await session.goto((site / "allowed" / "page.html").as_uri())
    assert ok, feedback
    return session


def test_policy_allows_only_its_origins_and_directories(tmp_path: Path) -> None:
    policy = UrlPolicy(origins=("http://localhost:7770",), file_roots=(str(tmp_path / "a"),))
    assert policy.allows("http://localhost:7770/shop?q=1")
    assert not policy.allows("http://localhost:7771/")
    assert not policy.allows("https://example.com/")
    assert policy.allows((tmp_path / "a" / "x.html").as_uri())
    assert not policy.allows((tmp_path / "ab" / "x.html").as_uri())
    assert not policy.allows((tmp_path / "a" / ".." / "b.html").as_uri())
    assert policy.allows("about:blank")
    assert not policy.allows("javascript:alert(1)")
    assert not policy.allows((tmp_path / "a" / "x.html").as_uri() + "%00.html")  # a NUL names no file
    assert "not allowed" in (policy.refusal("https://example.com/") or "")
    # Chromium writes no default port: an origin given with one still matches
    assert UrlPolicy(origins=("http://LocalHost:80",)).allows("http://localhost/x")
    assert UrlPolicy(origins=("https://example.com",)).allows("https://example.com:443/")


def test_only_urls_outside_the_allowlist_reach_the_route_filter(tmp_path: Path) -> None:
    plain, linked = tmp_path / "plain", tmp_path / "linked"
    plain.mkdir()
    linked.mkdir()
    (linked / "elsewhere").symlink_to(tmp_path)
    routed = UrlPolicy(origins=("http://127.0.0.1:7770",), file_roots=(str(plain), str(linked))).routed()
    assert not routed.search("http://127.0.0.1:7770/shop?q=1")
    assert not routed.search((plain / "page.html").as_uri())
    assert routed.search((linked / "page.html").as_uri())  # its links are resolved by the filter
    for url in (
        "http://127.0.0.1:7771/",
        "http://127.0.0.1:7770.evil.com/",
        "file:///etc/passwd",
        (tmp_path / "plainer" / "x.html").as_uri(),
        "about:blank",
    ):
        assert routed.search(url), url


async def test_accessibility_tree_and_dom_snapshot(site: Path) -> None:
    session = await open_page(site)
    try:
        names = {n.get("name", {}).get("value") for n in await session.ax_tree()}
        assert {"Free", "Under"} <= names
        snap = await session.dom_snapshot()
        layout = snap["documents"][0]["layout"]
        assert layout["bounds"] and all(len(b) == 4 for b in layout["bounds"])
        assert "Free" in snap["strings"]
        assert (await session.screenshot())[:4] == b"\x89PNG"
    finally:
        await session.close()


async def test_navigation_outside_the_policy_is_refused(site: Path) -> None:
    session = await open_page(site)
    try:
        ok, feedback = await session.goto((site / "secret" / "secret.html").as_uri())
        assert not ok and "not allowed" in feedback
        ok, feedback = await session.goto("https://example.com/")
        assert not ok and "not allowed" in feedback
        # A link the page itself follows is aborted by the context's route filter.
        assert (await click(session.page.locator("#escape")))[0]
        for _ in range(100):
            if session.blocked:
                break
            await asyncio.sleep(0.05)
        assert any(url.endswith("secret/secret.html") for url in session.blocked)
        # the page stays as it was (no error page commits later) and the agent hears why
        await asyncio.sleep(0.3)
        await session.settle()
        assert session.page.url.endswith("allowed/page.html")
        assert "SECRET" not in await session.page.content() and await session.page.locator("#escape").count()
        assert [r for r in session.take_reports() if "secret/secret.html is not allowed" in r and "stayed" in r]
    finally:
        await session.close()


async def test_a_symlink_out_of_an_allowed_directory_is_refused(site: Path) -> None:
    session = await BrowserSession.open(UrlPolicy(file_roots=(str(site / "linked"),)))
    try:
        ok, feedback = await session.goto((site / "linked" / "page.html").as_uri())
        assert ok, feedback
        assert (await click(session.page.locator("#leak")))[0]
        for _ in range(100):
            if session.blocked:
                break
            await asyncio.sleep(0.05)
        assert any(url.endswith("linked/leak.html") for url in session.blocked)
        await session.settle()
        assert session.page.url.endswith("linked/page.html")
        assert "SECRET" not in await session.page.content()
    finally:
        await session.close()


async def test_click_lands_on_what_lies_on_top_and_refuses_only_what_has_no_box(site: Path) -> None:
    session = await open_page(site)
    try:
        page = session.page
        assert await click(page.locator("#free")) == (True, "")
        assert await page.evaluate("window.clicks") == 1

        # asked to (Selenium's element click, before typing), a covered target is refused
        ok, feedback = await click(page.locator("#under"), refuse_covered=True)
        assert not ok and 'covered by <div id="cover"' in feedback
        assert await page.evaluate("[window.coverClicked, window.underClicked]") == [None, None]
        # a covered target is clicked where it is: the element on top receives the click
        assert await click(page.locator("#under")) == (True, "")
        assert await page.evaluate("[window.coverClicked, window.underClicked]") == [True, None]
        # an invisible but rendered target is clicked; a disabled one takes the click and ignores it
        assert await click(page.locator("#ghost")) == (True, "")
        assert await page.evaluate("window.ghostClicked")
        assert await click(page.locator("#off")) == (True, "")
        assert await page.evaluate("window.offClicked") is None

        ok, feedback = await click(page.locator("#hidden"))
        assert not ok and "not rendered" in feedback
        assert await page.evaluate("window.hiddenClicked") is None
        ok, feedback = await click(page.locator("#nope"))
        assert not ok and "not on the page" in feedback
    finally:
        await session.close()


async def test_a_link_wrapped_onto_two_lines_is_clicked_on_its_first_line(site: Path) -> None:
    session = await open_page(site)
    try:
        page = session.page
        # the centre of the link's box lies between its two line boxes, on no part of the link
        at_centre = """() => { const r = document.getElementById('wrapped').getBoundingClientRect();
            const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
            return document.getElementById('wrapped').getClientRects().length === 2
                && !document.getElementById('wrapped').contains(hit); }"""
        assert await page.evaluate(at_centre)
        assert await click(page.locator("#wrapped")) == (True, "")
        assert await page.evaluate("location.hash") == "#followed"
    finally:
        await session.close()


async def test_click_scrolls_to_its_target(site: Path) -> None:
    session = await open_page(site)
    try:
        page = session.page
        await page.evaluate(
            """() => {
            const far = document.createElement('button');
            far.id = 'far'; far.textContent = 'Far'; far.style.cssText = 'position: absolute; top: 3000px';
            far.onclick = () => { window.farClicked = true; };
            document.body.appendChild(far);
            }"""
        )
        assert await click(page.locator("#far")) == (True, "")
        assert await page.evaluate("window.farClicked") and await page.evaluate("window.scrollY") > 0
    finally:
        await session.close()


async def test_click_can_hover_first_and_wait_for_the_page(site: Path) -> None:
    session = await open_page(site)
    try:
        await session.page.evaluate(
            """() => { window.seen = []; const b = document.getElementById('free');
            for (const t of ['mouseover', 'mousedown', 'click']) b.addEventListener(t, () => seen.push(t)); }"""
        )
        waited: list[list[str]] = []

        async def after_hover() -> None:
            waited.append(await session.page.evaluate("window.seen.slice()"))

        assert await click(session.page.locator("#free"), after_hover=after_hover) == (True, "")
        assert waited == [["mouseover"]]  # the page saw the hover before the press
        assert await session.page.evaluate("window.seen") == ["mouseover", "mousedown", "click"]
    finally:
        await session.close()


async def test_popups_are_closed(site: Path) -> None:
    session = await open_page(site)
    try:
        assert (await click(session.page.locator("#popup")))[0]
        for _ in range(50):
            if len(session.context.pages) == 1:
                break
            await asyncio.sleep(0.05)
        assert session.context.pages == [session.page]
    finally:
        await session.close()


async def test_browser_is_relaunched_after_it_dies(site: Path) -> None:
    first = await browser.get_browser()
    launches = browser.launch_count()
    assert browser.browser_pids() and browser.browser_memory_bytes()["rss"] > 0
    await kill_chromium(first)
    assert not first.is_connected()

    session = await open_page(site)  # launches a new browser
    try:
        assert browser.launch_count() == launches + 1
        assert (await browser.get_browser()).is_connected()
        assert await click(session.page.locator("#free")) == (True, "")
    finally:
        await session.close()


async def test_an_open_cancelled_at_any_point_leaves_no_context_behind(site: Path) -> None:
    """A task cancelled while its browser context opens (an eval stopped, a timeout) must not
    leave that context, a renderer process, running in the shared browser."""
    chromium = await browser.get_browser()
    policy = UrlPolicy(file_roots=(str(site / "allowed"),))
    before, cancelled = list(chromium.contexts), 0
    for delay_ms in (0, 5, 15, 30, 60, 120, 240, 480):
        opening = asyncio.ensure_future(BrowserSession.open(policy))
        await asyncio.sleep(delay_ms / 1000)
        if opening.done():
            await (await opening).close()
            break
        opening.cancel()
        with pytest.raises(asyncio.CancelledError):
            await opening
        cancelled += 1
        for _ in range(1200):  # whatever the open had made is closed behind it (slowly on a loaded machine)
            if chromium.contexts == before:
                break
            await asyncio.sleep(0.05)
        assert chromium.contexts == before, f"cancelled after {delay_ms} ms, a context was left open"
    assert cancelled >= 3  # the open was caught at several points, not only before it began


async def test_chromium_dying_while_a_page_is_made_ends_the_open_on_a_relaunched_browser(
    site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Playwright never answers a ``new_page`` whose browser is killed under it: the open must
    notice the browser is gone, and open again on a new one, instead of waiting for ever."""
    from playwright.async_api import BrowserContext

    made = BrowserContext.new_page
    kills: list[int] = []

    async def killed_meanwhile(self: BrowserContext) -> object:
        if kills:
            return await made(self)
        making = asyncio.ensure_future(made(self))
        await asyncio.sleep(0)  # the request is on its way to Chromium
        kills.append(browser.launch_count())
        await kill_chromium(self.browser)
        return await making

    monkeypatch.setattr(BrowserContext, "new_page", killed_meanwhile)
    await browser.get_browser()
    session = await asyncio.wait_for(BrowserSession.open(UrlPolicy(file_roots=(str(site / "allowed"),))), 60)
    try:
        assert kills and browser.launch_count() == kills[0] + 1 and session.alive
        assert (await session.goto((site / "allowed" / "page.html").as_uri()))[0]
    finally:
        await session.close()


def test_tasks_starting_together_on_a_new_event_loop_share_one_launch() -> None:
    """``eval --concurrency N``'s first tasks all ask for the browser at once, on a loop that has
    none yet: one Chromium is launched for all of them, and none kills another's."""

    async def first_use() -> tuple[int, int]:
        before = browser.launch_count()
        try:
            got = await asyncio.gather(*(browser.get_browser() for _ in range(6)))
            return len({id(b) for b in got if b.is_connected()}), browser.launch_count() - before
        finally:
            await browser.close_browser()

    assert asyncio.run(first_use()) == (1, 1)
