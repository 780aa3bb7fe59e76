"""What the user typed on a page, kept in a WebArena snapshot and put back on restore.

Backtracking reloads a saved URL (the paper's go_back), which resets every form on it; a draft
the agent typed (the paper's message-drafting example), a ticked checkbox or a chosen option would
be lost. ``capture`` reads the fields the user changed: text fields and text areas whose value
differs from the page's own, checkboxes and radio buttons whose state differs, selects whose
chosen options differ, and contenteditable regions that received input (and which field had the
focus). ``apply`` writes them back into the reloaded page through the fields' own value setters,
fires ``input`` and ``change`` as typing would, so the page's scripts see the values too, and
puts the focus back.

A field is found again by tag, type, name and id, and its position among fields that share them;
a field that is no longer on the page is skipped. Password and file inputs are never captured:
snapshots go into checkpoints, and a file cannot be set from a page. Only the top frame is read.

A page that a form submission returned (a POST's answer, say "Thanks for contacting us") has
no URL that shows it again: loading its URL asks the site anew, which answers something else
or would submit twice. ``Submissions`` tells which tabs show such a page; the snapshot keeps
its document, and ``show`` puts it back at its URL without asking the site.
"""

from __future__ import annotations

from typing import Any
from weakref import WeakKeyDictionary

from playwright.async_api import BrowserContext, Page, Request, Route
from playwright.async_api import Error as PlaywrightError

# Installed in every page of a task's context: marks contenteditable regions the user edited.
EDIT_TRACKER = """
(() => {
  const edited = new WeakSet();
  Object.defineProperty(window, "__introspectEdited", { value: edited });
  document.addEventListener("input", (event) => {
    const target = event.target;
    const root = target instanceof Element ? target.closest("[contenteditable]") : null;
    if (root && root.isContentEditable) edited.add(root);
  }, true);
})();
"""

_FIELDS = """
() => {
  const skipped = new Set(["password", "file", "hidden", "submit", "button", "reset", "image"]);
  const out = [];
  for (const [el, key] of window.__introspectFields()) {
    const tag = el.tagName.toLowerCase();
    const field = { ...key };
    if (tag === "select") {
      if ([...el.options].some((o) => o.selected !== o.defaultSelected)) {
        field.selected = [...el.options].map((o, i) => o.selected ? i : -1).filter((i) => i >= 0);
      }
    } else if (tag === "input" && (el.type === "checkbox" || el.type === "radio")) {
      if (el.checked !== el.defaultChecked) field.checked = el.checked;
    } else if (tag === "input" || tag === "textarea") {
      if (skipped.has(el.type)) continue;
      if (el.value !== el.defaultValue) field.value = el.value;
    } else if (window.__introspectEdited && window.__introspectEdited.has(el)) {
      field.html = el.innerHTML;
    }
    if (el === document.activeElement) field.focused = true;
    if (Object.keys(field).length > Object.keys(key).length) out.push(field);
  }
  return out;
}
"""

_APPLY = """
(saved) => {
  const byKey = new Map();
  for (const [el, key] of window.__introspectFields()) byKey.set(JSON.stringify(key), el);
  let restored = 0;
  let focus = null;
  for (const field of saved) {
    const { tag, type, name, id, nth } = field;
    const el = byKey.get(JSON.stringify({ tag, type, name, id, nth }));
    if (!el) continue;
    if (field.focused) focus = el;
    if ("selected" in field) {
      [...el.options].forEach((o, i) => { o.selected = field.selected.includes(i); });
    } else if ("checked" in field) {
      el.checked = field.checked;
    } else if ("value" in field) {
      const setter = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(el), "value").set;
      setter.call(el, field.value);
    } else if ("html" in field) {
      el.innerHTML = field.html;
      if (window.__introspectEdited) window.__introspectEdited.add(el);
    } else {
      continue;
    }
    el.dispatchEvent(new Event("input", { bubbles: true }));
    el.dispatchEvent(new Event("change", { bubbles: true }));
    restored += 1;
  }
  if (focus) focus.focus();  // where the cursor was, as the agent left it
  return restored;
}
"""

# Every form field and top-level contenteditable region in document order, with its key.
_ENUMERATE = """
() => {
  if (!window.__introspectFields) {
    Object.defineProperty(window, "__introspectFields", { value: () => {
      const seen = new Map();
      const out = [];
      for (const el of document.querySelectorAll("input, textarea, select, [contenteditable]")) {
        const tag = el.tagName.toLowerCase();
        const editable = !["input", "textarea", "select"].includes(tag);
        if (editable && (!el.isContentEditable || el.parentElement?.isContentEditable)) continue;
        const base = { tag, type: tag === "input" ? el.type : "", name: el.getAttribute("name") || "",
                       id: el.id || "" };
        const signature = JSON.stringify(base);
        const nth = seen.get(signature) || 0;
        seen.set(signature, nth + 1);
        out.push([el, { ...base, nth }]);
      }
      return out;
    } });
  }
}
"""


async def capture(page: Page) -> list[dict[str, Any]]:
    """The fields of ``page`` the user changed, as JSON (empty when none or the page cannot be read)."""
    try:
        await page.evaluate(_ENUMERATE)
        fields = await page.evaluate(_FIELDS)
    except PlaywrightError:
        return []
    return [dict(f) for f in fields] if isinstance(fields, list) else []


async def apply(page: Page, fields: list[dict[str, Any]]) -> int:
    """Write captured ``fields`` back into ``page``; returns how many were found and set."""
    if not fields:
        return 0
    try:
        await page.evaluate(_ENUMERATE)
        return int(await page.evaluate(_APPLY, fields))
    except PlaywrightError:
        return 0


class Submissions:
    """Which pages of a browser context show what a form submission returned: their last
    top-frame navigation was not a GET (a redirect after the POST ends in a GET, whose URL
    shows the page again, so such a page is not counted)."""

    def __init__(self, context: BrowserContext) -> None:
        self._returned: WeakKeyDictionary[Page, bool] = WeakKeyDictionary()
        context.on("request", self._on_request)

    def _on_request(self, request: Request) -> None:
        try:
            frame = request.frame
        except PlaywrightError:  # a service worker's request belongs to no page
            return
        if request.is_navigation_request() and frame.parent_frame is None:
            self._returned[frame.page] = request.method != "GET"

    async def document(self, page: Page) -> str | None:
        """The page's document if a submission returned it, else None."""
        if not self._returned.get(page):
            return None
        try:
            return await page.content()
        except PlaywrightError:
            return None

    async def show(self, page: Page, url: str, document: str, timeout_ms: float) -> None:
        """Open ``url`` in ``page`` showing ``document`` (what a submission returned), the site
        not asked; the page still counts as a submission's answer."""

        async def answer(route: Route) -> None:
            await route.fulfill(status=200, content_type="text/html; charset=utf-8", body=document)

        await page.route(lambda target: target == url, answer, times=1)
        await page.goto(url, timeout=timeout_ms)
        self._returned[page] = True
