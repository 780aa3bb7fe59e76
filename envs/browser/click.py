"""Grounded clicks: a real mouse click at the element, as a person and the original harnesses make it.

Why a mouse click at a point and not Playwright's ``locator.click``: WebArena clicks with
``page.mouse.click`` at the element's centre (browser_env/actions.py) and Structured Reflection's
code with Selenium's ``move_to_element().click()``; neither asks what lies on top. So a covered
target is clicked where it is and the element on top receives the click, as it would for a person
(MiniWoB++'s click-pie: the pie's spreader lies under its own "+" label, which passes the click
on). Only
an element that is not rendered (no box: nowhere to click) is refused. Never a JavaScript click:
an agent does only what a pointer can.

Where: the target is first scrolled into view (nearest edge, in every scrolling ancestor), then
clicked at the centre of its first non-empty line box (``getClientRects()``). For most elements
that is the centre of their box; a link that wraps onto two lines has its box's centre in blank
space between the lines, where a click misses it (WebArena's does), so it is clicked on its first
line, where a person would. A box larger than the viewport is clicked at the centre of its part
in view. That point is WebDriver's "in-view centre point", where Selenium's ``move_to_element``
aims.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Locator


def first_line(exc: BaseException) -> str:
    """The first line of an error's message (Playwright's carry a call log below it)."""
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


# [number of matches, the click point or null when the single match has no box, the element on
# top at that point when it is not the target or inside it (as ``<tag a="b">``) or null]; scrolls
# the target into view first. One round trip.
_AIM = """(els) => {
  if (els.length !== 1) return [els.length, null, null];
  const el = els[0];
  const line = () => Array.from(el.getClientRects()).find((r) => r.width > 0 && r.height > 0);
  if (!line()) return [1, null, null];
  el.scrollIntoView({block: 'nearest', inline: 'nearest', behavior: 'instant'});
  const r = line();
  const mid = (lo, hi, size) => (Math.max(lo, 0) + Math.min(hi, size)) / 2;
  const x = mid(r.left, r.right, innerWidth), y = mid(r.top, r.bottom, innerHeight);
  const hit = document.elementFromPoint(x, y);
  const cover = !hit || el.contains(hit) ? null : '<' + [hit.tagName.toLowerCase(),
    ...Array.from(hit.attributes).slice(0, 3).map((a) => `${a.name}="${a.value}"`)].join(' ') + '>';
  return [1, [x, y], cover];
}"""


async def evaluate_all(locator: Locator, selector: str | None, script: str) -> Any:
    """``script`` (a function of the matching elements) run in the page. Given the locator's CSS
    ``selector``, it runs as a plain page script: Playwright's own locator evaluation first
    injects its script into the page's main world, about 20 ms once per document."""
    if selector is None:
        return await locator.evaluate_all(script)
    return await locator.page.evaluate(f"(s) => ({script})(Array.from(document.querySelectorAll(s)))", selector)


async def _aim(locator: Locator, selector: str | None, refuse_covered: bool) -> tuple[float, float] | str:
    """The point to click (the target scrolled into view), or why there is none."""
    count, point, cover = await evaluate_all(locator, selector, _AIM)
    if count == 0:
        return "the element is not on the page"
    if count > 1:
        return "the target matches several elements"
    if point is None:
        return "the element is not rendered (it has no box on the page)"
    if refuse_covered and cover is not None:
        return f"the element is covered by {cover}, which would take the click"
    return float(point[0]), float(point[1])


async def click(
    locator: Locator,
    *,
    selector: str | None = None,
    after_hover: Callable[[], Awaitable[Any]] | None = None,
    refuse_covered: bool = False,
) -> tuple[bool, str]:
    """Click ``locator`` with the mouse as a person would; ``(True, "")`` or ``(False, feedback)``.

    Whatever lies at the click point receives the click (a covered target's cover, a disabled
    button's nothing); only a target that is missing or not rendered is refused. With
    ``refuse_covered``, a target another element lies on at the click point is refused too, as
    Selenium's element click refuses it ("element click intercepted"; the SR code clicks a field
    so before typing into it). With ``after_hover``, the pointer first moves onto the target and
    the callback runs (e.g. to wait for the page's hover effects, such as a menu that opens or an
    icon swapped on :hover, to finish) before the press, as a person sees the hover before
    clicking; if the target moved meanwhile, the pointer follows it. ``selector``, the locator's
    CSS selector when the caller has it, makes the aiming cheaper. A navigation the click starts
    is not waited for here: the envs wait for it themselves, bounded (BrowserSession.settle).
    """
    mouse = locator.page.mouse
    try:
        point = await _aim(locator, selector, refuse_covered)
        if isinstance(point, str):
            return False, point
        if after_hover is None:
            await mouse.click(*point)
            return True, ""
        await mouse.move(*point)
        await after_hover()
        moved = await _aim(locator, selector, refuse_covered)
        if isinstance(moved, str):
            return False, f"{moved} once the pointer rested on it"
        if moved != point:
            await mouse.move(*moved)
        await mouse.down()
        await mouse.up()
    except PlaywrightError as exc:
        return False, f"the element could not be clicked: {first_line(exc)}"
    return True, ""


async def hover(locator: Locator, *, selector: str | None = None) -> tuple[bool, str]:
    """Move the mouse onto ``locator``'s click point, as WebArena hovers (``page.mouse.move`` to the
    element's centre): whatever lies there is hovered, a covered target's cover too; only a target
    that is missing or not rendered is refused. ``(True, "")`` or ``(False, feedback)``."""
    try:
        point = await _aim(locator, selector, refuse_covered=False)
        if isinstance(point, str):
            return False, point
        await locator.page.mouse.move(*point)
    except PlaywrightError as exc:
        return False, f"the element could not be hovered: {first_line(exc)}"
    return True, ""
