"""WebArena's action grammar (browser_env/actions.py, id-based) and the element-level actions.

Grammar (the model's text; surrounding backticks and whitespace are ignored):

    click [id]            hover [id]            type [id] [text] [1|0]   (1, the default, presses Enter after)
    press [key_comb]      scroll [up|down]      goto [url]               go_back    go_forward
    new_tab               tab_focus [index]     close_tab                note_down [text]
    stop [answer]         (the Devil's Advocate paper's note_down keeps a note; stop ends the task)

Element actions act on the DOM node behind an id of the last screen: the node is tagged with a
data attribute through CDP and reached through a Playwright locator, so a click is a real mouse
click at the element's centre, as WebArena's ``mouse.click`` makes it (envs.browser.click), never
a JS click.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import re
from collections.abc import Awaitable
from dataclasses import dataclass

from playwright.async_api import CDPSession, Locator, Page, Request
from playwright.async_api import Error as PlaywrightError

from envs import browser
from errors import IntrospectError

ELEMENT_ACTIONS = ("click", "hover", "type")
GRACE_S = 0.3  # seconds an action has to start a navigation (with_navigation)
_TAG = "data-introspect-target"
_tokens = itertools.count(1)


class ActionError(IntrospectError, ValueError):
    """A malformed action; the message is feedback for the agent."""


@dataclass(frozen=True)
class Action:
    kind: str
    element_id: str = ""
    text: str = ""
    enter: bool = False
    key: str = ""
    direction: str = ""
    url: str = ""
    index: int = -1


_PATTERNS: dict[str, re.Pattern[str]] = {
    "click": re.compile(r"^click ?\[(-?\d+)\]$", re.S),
    "hover": re.compile(r"^hover ?\[(-?\d+)\]$", re.S),
    "type": re.compile(r"^type ?\[(-?\d+)\] ?\[(.*)\] ?\[([01])\]$", re.S),
    "press": re.compile(r"^press ?\[(.+)\]$", re.S),
    "scroll": re.compile(r"^scroll ?\[?(up|down)\]?$", re.S | re.I),
    "goto": re.compile(r"^goto ?\[(.+)\]$", re.S),
    "tab_focus": re.compile(r"^(?:tab_focus|page_focus) ?\[(\d+)\]$", re.S),
    "note_down": re.compile(r"^note_down ?\[(.*)\]$", re.S),
    "stop": re.compile(r"^stop ?(?:\[(.*)\])?$", re.S),
}
_BARE = {"new_tab", "go_back", "go_forward", "close_tab"}
USAGE = (
    "use one of: click [id], type [id] [text], hover [id], press [key_comb], scroll [up|down], "
    "goto [url], go_back, go_forward, new_tab, tab_focus [index], close_tab, note_down [text], stop [answer]"
)


def parse_action(text: str) -> Action:
    """The Action for ``text``; ActionError (with feedback) when it is not in the grammar."""
    raw = str(text).strip().strip("`").strip()
    if not raw:
        raise ActionError(f"empty action; {USAGE}")
    head = raw.split("[", 1)[0].split()[0].lower() if raw.split("[", 1)[0].split() else ""
    if head == "page_focus":
        head = "tab_focus"
    if head in _BARE:
        if raw.lower() != head:
            raise ActionError(f"{head} takes no argument")
        return Action(head)
    pattern = _PATTERNS.get(head)
    if pattern is None:
        raise ActionError(f"unknown action {head or raw!r}; {USAGE}")
    body = head + raw[len(head) :] if raw.lower().startswith(head) else raw
    if head == "type" and not re.search(r"\[[01]\]$", body):
        body += " [1]"  # WebArena: Enter after typing unless told [0]
    match = pattern.match(body)
    if not match:
        raise ActionError(f"malformed {head} action {raw!r}; {USAGE}")
    groups = match.groups()
    if head in ("click", "hover"):
        return Action(head, element_id=groups[0])
    if head == "type":
        return Action(head, element_id=groups[0], text=groups[1], enter=groups[2] == "1")
    if head == "press":
        return Action(head, key=groups[0].strip())
    if head == "scroll":
        return Action(head, direction=groups[0].lower())
    if head == "goto":
        return Action(head, url=groups[0].strip())
    if head == "tab_focus":
        return Action(head, index=int(groups[0]))
    return Action(head, text=(groups[0] or "").strip())  # note_down, stop


_KEYS = {
    "enter": "Enter",
    "return": "Enter",
    "tab": "Tab",
    "escape": "Escape",
    "esc": "Escape",
    "backspace": "Backspace",
    "delete": "Delete",
    "space": "Space",
    "home": "Home",
    "end": "End",
    "pageup": "PageUp",
    "pagedown": "PageDown",
    "arrowup": "ArrowUp",
    "arrowdown": "ArrowDown",
    "arrowleft": "ArrowLeft",
    "arrowright": "ArrowRight",
    "up": "ArrowUp",
    "down": "ArrowDown",
    "left": "ArrowLeft",
    "right": "ArrowRight",
    "control": "Control",
    "ctrl": "Control",
    "shift": "Shift",
    "alt": "Alt",
    "meta": "ControlOrMeta",
    "cmd": "ControlOrMeta",
}


def key_combination(key_comb: str) -> str:
    """``ctrl+a`` -> ``Control+a``; Meta maps to ControlOrMeta (WebArena's Mac combos on Linux)."""
    parts = [p.strip() for p in key_comb.split("+")]
    if not all(parts):
        raise ActionError(f"malformed key combination {key_comb!r}")
    return "+".join(_KEYS.get(p.lower(), p) for p in parts)


async def locate(cdp: CDPSession, page: Page, backend_id: int) -> Locator:
    """A locator for the DOM node ``backend_id`` (a text node's parent element), via a data tag."""
    token = str(next(_tokens))
    try:
        resolved = await cdp.send("DOM.resolveNode", {"backendNodeId": backend_id})
        await cdp.send(
            "Runtime.callFunctionOn",
            {
                "objectId": resolved["object"]["objectId"],
                "functionDeclaration": (
                    "function(name, token) { const el = this.nodeType === 1 ? this : this.parentElement;"
                    " if (el) { el.setAttribute(name, token); } }"
                ),
                "arguments": [{"value": _TAG}, {"value": token}],
            },
        )
    except PlaywrightError:
        raise ActionError("the element is no longer on the page") from None
    return page.locator(f'[{_TAG}="{token}"]')


async def click(target: Locator) -> None:
    ok, feedback = await browser.click(target)
    if not ok:
        raise ActionError(feedback)


# Whether a click on the element follows a link into another tab (target=_blank, a named window)
_OPENS_A_TAB = """el => {
  const link = el.closest('a[href], area[href]');
  const target = ((link && link.target) || '').toLowerCase();
  return target !== '' && !['_self', '_parent', '_top'].includes(target);
}"""


async def opens_a_tab(target: Locator) -> bool:
    """Whether clicking ``target`` opens its link in another tab: the new tab reaches the
    context a moment after the click, later than the grace of ``with_navigation`` on a
    busy machine, so the click waits for it (the observation is then of the new tab)."""
    try:
        return bool(await target.evaluate(_OPENS_A_TAB))
    except PlaywrightError:
        return False  # gone from the page: the click says so


async def hover(target: Locator) -> None:
    """The mouse moved to the element's centre, as WebArena hovers: a covered target's cover is
    hovered, as it would be for a person."""
    ok, feedback = await browser.hover(target)
    if not ok:
        raise ActionError(feedback)


async def type_text(page: Page, target: Locator, text: str, enter: bool) -> None:
    """Click the field and type ``text`` with the keyboard, then Enter if asked, as WebArena does
    (browser_env/actions.py: a mouse click on the element's centre, then ``keyboard.type``).

    The text goes in where the click put the caret, after what the field holds: WebArena appends,
    so an agent that wants a field's text replaced has to clear it first (as a person would). A
    <select> is typed into the same way: the click opens its list, the browser picks the first
    option whose label starts with the text typed (case aside), and Enter sets it; a text no label
    starts with, or no Enter, leaves the value as it was, and the action is not refused.
    """
    tag = (await target.evaluate("el => el.tagName")).lower()
    if tag != "select":
        try:
            editable = await target.is_editable()
        except PlaywrightError:
            editable = False
        if not editable:
            raise ActionError("the element is not a text field; click it or pick another id")
    await click(target)
    await page.keyboard.type(text)
    if enter:
        await page.keyboard.press("Enter")


async def press(page: Page, key_comb: str) -> None:
    try:
        await page.keyboard.press(key_combination(key_comb))
    except PlaywrightError as exc:
        raise ActionError(f"unknown key combination {key_comb!r}: {str(exc).splitlines()[0]}") from None


async def scroll(page: Page, direction: str) -> None:
    """One viewport height up or down, as WebArena scrolls."""
    sign = -1 if direction == "up" else 1
    await page.evaluate(f"window.scrollBy(0, {sign} * window.innerHeight)")


async def with_navigation(page: Page, action: Awaitable[None], grace_s: float = GRACE_S) -> None:
    """Run ``action`` and give it ``grace_s`` to start a navigation of the page (a link, Enter in
    a form) or to open another tab. The env's observation then waits for that navigation, bounded
    by its load timeout (BrowserSession.settle); without the grace an observation taken right
    after a click could still show the old page. An action that navigates nowhere costs the grace
    period.
    """
    started = asyncio.Event()

    def on_request(request: Request) -> None:
        if request.is_navigation_request() and request.frame == page.main_frame:
            started.set()

    def on_popup(_: Page) -> None:  # the page opened another tab (the env makes it current)
        started.set()

    page.on("request", on_request)
    page.on("popup", on_popup)
    try:
        await action
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(started.wait(), grace_s)
    finally:
        page.remove_listener("request", on_request)
        page.remove_listener("popup", on_popup)
