"""Paper 002's compact screen (section 3.2): the rendered leaf elements, one per line.

Each line is an HTML-like tag carrying what the paper keeps of a leaf element: its id, class, text,
placeholder, value and its position on a 3x3 grid of the task area, e.g.

    <button id=12 class="secondary-action" pos="bottom left">Submit</button>
    <input id=5 type="checkbox" checked pos="left">
    <text pos="left">Select all the words below</text>

Which elements: exactly those MiniWoB++'s own DOM reader keeps (``core.getDOMInfo`` in its
core.js, which the paper's code reads the screen from): every element with a non-empty box
(``getBoundingClientRect``), descending only into kept elements, minus MiniWoB's own chrome (the
goal box, reward display, start cover, click canvas). So opacity 0, visibility:hidden, a box
clipped away by an ``overflow: hidden`` ancestor, one smaller than 3 px (click-pie's 8 collapsed
menu items, scaled to a dot around its "+") and one placed off the page are all shown, as the
original shows them; display:none and an empty box are not. One ``page.evaluate`` reads it all in
the same frame. Rules:
- leaves (no kept element children) get an ``id=N``; text that sits beside elements is shown
  where it stands as ``<text>``, without an id, as the paper's code shows it (MiniWoB++'s reader
  makes such text a pseudo-element whose ref its Python side drops, so ``flat_html`` prints no
  id: a label's words beside its checkbox are not clickable by id there). The ``annotated``
  screen gives them the id of their element when that element is clickable (a link, button,
  label, an ARIA menu item/tab/option, an onclick handler or a pointer cursor: a menu item's
  words beside its icon);
- an SVG element's class is ``SVG_CLASS``, as the paper's code shows every SVG element (its
  ``className`` is an object, which MiniWoB++'s Python side names so); the annotated screen
  shows its ``id`` attribute instead, as for an element without a class;
- a part of a scrollable list or of the page scrolled out of view is shown: it is one scroll away,
  and a click scrolls it into view as a user would;
- text is verbatim (whitespace runs collapsed): case and punctuation decide MiniWoB rewards.

Element ids are ``data-introspect-id`` attributes given in document order the first time an
element is seen in an episode, so an element keeps its id across the screens of an episode and a
deterministic replay gives the same ids.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, TypedDict

from playwright.async_api import Page

ID_ATTR = "data-introspect-id"

GRID = (
    ("top left", "top", "top right"),
    ("left", "center", "right"),
    ("bottom left", "bottom", "bottom right"),
)

# ``annotated``: label words carry their clickable element's id, an SVG element shows its id (not
# the code's SVG_CLASS); see the module docstring.
SCREEN_JS = """
(idAttr, annotated) => {
  const SKIP = new Set(['reward-display', 'sync-task-cover', 'click-canvas', 'query']);
  const skipped = (el) => SKIP.has(el.id);
  let next = window.__introspectNextId || 1;
  const stack = [document.body];
  while (stack.length) {
    const el = stack.pop();
    if (skipped(el)) continue;
    if (el !== document.body && !el.hasAttribute(idAttr)) el.setAttribute(idAttr, String(next++));
    for (let i = el.children.length - 1; i >= 0; i--) stack.push(el.children[i]);
  }
  window.__introspectNextId = next;

  const wrap = document.getElementById('wrap');
  const frame = wrap ? wrap.getBoundingClientRect()
                     : {left: 0, top: 0, width: innerWidth, height: innerHeight};

  function shown(el) {
    // MiniWoB++'s getDOMInfo keeps exactly the elements with a non-empty box (and not its chrome)
    if (skipped(el)) return null;
    const rect = el.getBoundingClientRect();
    if (rect.width === 0 || rect.height === 0) return null;
    return {l: rect.left, t: rect.top, r: rect.right, b: rect.bottom};
  }

  function words(s) { return s.replace(/\\s+/g, ' ').trim(); }

  function pos(box) {
    const cx = ((box.l + box.r) / 2 - frame.left) / frame.width;
    const cy = ((box.t + box.b) / 2 - frame.top) / frame.height;
    const cell = (v) => Math.max(0, Math.min(2, Math.floor(v * 3)));
    return [cell(cy), cell(cx)];
  }

  function describe(el, box) {
    const item = {
      kind: 'element', tag: el.tagName.toLowerCase(), id: el.getAttribute(idAttr),
      cls: typeof el.className === 'string' ? (el.className.trim() || el.id || '')
        : (annotated ? el.id || '' : 'SVG_CLASS'),
      text: '', placeholder: el.getAttribute('placeholder') || '', value: '', type: '',
      checked: false, disabled: !!el.disabled, cell: pos(box),
    };
    if (el instanceof HTMLInputElement) {
      item.type = el.type;
      if (el.type === 'checkbox' || el.type === 'radio') item.checked = el.checked;
      else if (el.type === 'password') item.value = '\u2022'.repeat(el.value.length);  // as seen
      else item.value = el.value;
    } else if (el instanceof HTMLTextAreaElement) {
      item.value = el.value;
    } else if (el instanceof HTMLSelectElement) {
      item.value = Array.from(el.selectedOptions).map((o) => words(o.textContent)).join(', ');
    }
    item.text = words(Array.from(el.childNodes)
      .filter((n) => n.nodeType === Node.TEXT_NODE).map((n) => n.data).join(' '));
    return item;
  }

  function textItem(node) {
    const text = words(node.data);
    if (!text) return null;
    const range = document.createRange();
    range.selectNodeContents(node);
    const rect = range.getBoundingClientRect();
    if (rect.width === 0 || rect.height === 0) return null;
    return {kind: 'text', text, cell: pos({l: rect.left, t: rect.top, r: rect.right, b: rect.bottom})};
  }

  const CLICKABLE_TAGS = new Set(['A', 'BUTTON', 'LABEL', 'OPTION', 'SUMMARY']);
  const CLICKABLE_ROLES = new Set(['button', 'link', 'menuitem', 'menuitemcheckbox', 'menuitemradio',
                                   'option', 'tab', 'treeitem', 'checkbox', 'radio', 'switch']);
  function interactive(el) {
    return CLICKABLE_TAGS.has(el.tagName) || CLICKABLE_ROLES.has(el.getAttribute('role'))
      || el.hasAttribute('onclick') || getComputedStyle(el).cursor === 'pointer';
  }

  const out = [];
  function walk(el) {
    let own = null;
    const children = [];
    for (const child of el.children) {
      const box = shown(child);
      if (box) children.push([child, box]);
    }
    for (const node of el.childNodes) {
      if (node.nodeType === Node.ELEMENT_NODE) {
        const hit = children.find(([c]) => c === node);
        if (!hit) continue;
        if (hit[0].tagName === 'SELECT' && !hit[0].multiple && hit[0].size <= 1) {
          out.push(describe(hit[0], hit[1]));  // a closed drop-down shows only its value
        } else if (Array.from(hit[0].children).some((c) => shown(c))) {
          walk(hit[0]);
        } else {
          out.push(describe(hit[0], hit[1]));
        }
      } else if (node.nodeType === Node.TEXT_NODE && children.length) {
        const item = textItem(node);
        if (!item) continue;
        if (!annotated || el === document.body || !interactive(el)) out.push(item);
        else if (own) own.text += ' ' + item.text;
        else {  // a clickable element's own words (a menu item beside its icon) carry its id
          own = item;
          own.id = el.getAttribute(idAttr);
          out.push(own);
        }
      }
    }
  }
  walk(document.body);
  return out;
}
"""


class ScreenItem(TypedDict, total=False):
    """One line of the compact screen, as read from the page."""

    kind: str  # "element" (a leaf) or "text" (words beside elements; id only if clickable)
    tag: str
    id: str
    cls: str
    text: str
    placeholder: str
    value: str
    type: str
    checked: bool
    disabled: bool
    cell: list[int]  # [row, column] on the 3x3 grid


@dataclass
class Screen:
    """A compact screen: its lines and the ids the agent may act on."""

    items: list[ScreenItem]
    disabled: frozenset[str] = frozenset()
    text: str = field(init=False)
    ids: list[str] = field(init=False)

    def __post_init__(self) -> None:
        self.text = "\n".join(render(item, self.disabled) for item in self.items)
        self.ids = [item["id"] for item in self.items if item.get("id") and item["id"] not in self.disabled]


# ScreenItem key -> the attribute it is shown as
_SHOWN_ATTRIBUTES: tuple[tuple[Literal["cls", "placeholder", "value"], str], ...] = (
    ("cls", "class"),
    ("placeholder", "placeholder"),
    ("value", "value"),
)


def _attr(value: str) -> str:
    return '"' + value.replace('"', "&quot;") + '"'


def render(item: ScreenItem, disabled: frozenset[str] = frozenset()) -> str:
    """One compact-screen line; a disabled target keeps its line but loses its ``id=N``."""
    where = GRID[item["cell"][0]][item["cell"][1]]
    if item["kind"] == "text":
        shown_id = f"id={item['id']} " if item.get("id") and item["id"] not in disabled else ""
        return f'<text {shown_id}pos="{where}">{item["text"]}</text>'
    tag = item["tag"]
    parts = [tag]
    if item["id"] not in disabled:
        parts.append(f"id={item['id']}")
    if item.get("type"):
        parts.append(f"type={_attr(item['type'])}")
    for key, label in _SHOWN_ATTRIBUTES:
        if item.get(key):
            parts.append(f"{label}={_attr(item[key])}")
    if item.get("checked"):
        parts.append("checked")
    if item.get("disabled"):
        parts.append("disabled")
    parts.append(f'pos="{where}"')
    if tag in ("input", "img", "br", "hr"):
        return f"<{' '.join(parts)}>"
    return f"<{' '.join(parts)}>{item.get('text', '')}</{tag}>"


async def read_screen(page: Page, disabled: frozenset[str] = frozenset(), annotated: bool = False) -> Screen:
    """Read the page's compact screen (assigning ids to elements seen for the first time)."""
    items: list[ScreenItem] = await page.evaluate(f"([a, b]) => ({SCREEN_JS})(a, b)", [ID_ATTR, annotated])
    return Screen(items, disabled)


def selector_for(element_id: str) -> str:
    """The CSS selector of the element shown as ``id=element_id``."""
    return f'[{ID_ATTR}="{element_id}"]'


def locator_for(page: Page, element_id: str):
    """The Playwright locator of the element shown as ``id=element_id``."""
    return page.locator(selector_for(element_id))
