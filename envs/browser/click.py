"""Grounded clicks: a real mouse click on the element, as a user makes it, or a refusal that says why.

Why not a JavaScript click: an agent must not do what no user could, so a covered, invisible or
disabled target is refused with feedback (docs/architecture.md, "Environments") and Playwright's actionability
checks decide, as they do for a person's pointer.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Locator
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

DEFAULT_CLICK_TIMEOUT_MS = 2000.0
_INTERCEPT = re.compile(r"(<[^\n]*?>)[^\n]*? intercepts pointer events")


def first_line(exc: BaseException) -> str:
    """The first line of an error's message (Playwright's carry a call log below it)."""
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


# What Playwright's is_visible / is_enabled read, for all matches in one round trip.
_TARGET_STATE = """(els) => els.map((el) => {
  const box = el.getBoundingClientRect();
  return {
    visible: box.width > 0 && box.height > 0 && getComputedStyle(el).visibility !== 'hidden',
    enabled: !el.matches(':disabled') && !el.closest('[aria-disabled="true"]'),
  };
})"""
# Whether the pointer rests on the element, nothing in between: :hover holds for the element under
# the pointer and its ancestors only. An <option> of a list box is hovered through its <select>.
_UNDER_POINTER = """(els) => els.length === 1 && ((els[0].tagName === 'OPTION' || els[0].tagName === 'OPTGROUP')
  ? (els[0].closest('select') || els[0]) : els[0]).matches(':hover')"""


async def evaluate_all(locator: Locator, selector: str | None, script: str) -> Any:
    """``script`` (a function of the matching elements) run in the page. Given the locator's CSS
    ``selector``, it runs as a plain page script: Playwright's own locator evaluation first
    injects its script into the page's main world, about 20 ms once per document."""
    if selector is None:
        return await locator.evaluate_all(script)
    return await locator.page.evaluate(f"(s) => ({script})(Array.from(document.querySelectorAll(s)))", selector)


async def click(
    locator: Locator,
    *,
    selector: str | None = None,
    timeout_ms: float = DEFAULT_CLICK_TIMEOUT_MS,
    after_hover: Callable[[], Awaitable[Any]] | None = None,
) -> tuple[bool, str]:
    """Click ``locator`` as a user would; ``(True, "")`` or ``(False, feedback)``.

    Playwright's actionability checks (attached, visible, stable, enabled, receives the pointer at
    the click point) decide; a target that fails them is never clicked, and the feedback says why.
    With ``after_hover``, the pointer first moves onto the target (those checks run for the
    hover) and the callback runs (e.g. to wait for the page's hover effects, such as a menu that
    opens or an icon swapped on :hover, to finish) before the press, as a person sees the hover
    before clicking. If the pointer still rests on the target then, the button is pressed where
    it is; if the page moved or covered the target meanwhile, a full click runs the checks again.
    ``selector``, the locator's CSS selector when the caller has it, makes the checks cheaper.
    A navigation the click starts is not waited for here (``no_wait_after``): the envs wait for
    it themselves, bounded (BrowserSession.settle), and Playwright's wait costs every click a
    round trip even when nothing navigates.
    """
    try:
        states = await evaluate_all(locator, selector, _TARGET_STATE)
        if not states:
            return False, "the element is not on the page"
        if len(states) > 1:
            return False, "the target matches several elements"
        if not states[0]["visible"]:
            return False, "the element is not visible"
        if not states[0]["enabled"]:
            return False, "the element is disabled"
        if after_hover is not None:
            await locator.hover(timeout=timeout_ms, no_wait_after=True)
            await after_hover()
            if await evaluate_all(locator, selector, _UNDER_POINTER):
                await locator.page.mouse.down()
                await locator.page.mouse.up()
                return True, ""
        await locator.click(timeout=timeout_ms, no_wait_after=True)
    except PlaywrightTimeoutError as exc:
        covering = _INTERCEPT.findall(str(exc))
        if covering:
            return False, f"the element is covered by {covering[-1]} and cannot be clicked"
        return False, f"the element could not be clicked: {first_line(exc)}"
    except PlaywrightError as exc:
        return False, f"the element could not be clicked: {first_line(exc)}"
    return True, ""
