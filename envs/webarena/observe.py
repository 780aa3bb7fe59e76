"""The WebArena observation: the accessibility tree of what is inside the viewport, as text.

Format (WebArena's browser_env/processors.py, rebuilt from its description, not its code):

    Tab 0 (current): My Orders

    URL: http://127.0.0.1:40123/sales/order/history/

    [1] RootWebArea 'My Orders' focused: True
        [12] link 'One Stop Market'
        [87] cell '000000179'

One ``[id] role 'name' prop: value`` line per node, tab-indented by depth. Ids are not Chrome's AX
node ids (WebArena shows those; they change with every page load): every node that can print a line
is numbered 1, 2, ... in tree order over the whole page, so the same page state has the same ids in
every run, scrolling keeps them, and a recorded run replays. Like WebArena:
- nodes come from CDP Accessibility.getFullAXTree; a node is kept by WebArena's viewport rule
  (``in_viewport``: its arithmetic keeps almost every node that overlaps the viewport at all, see
  there), judged on its own (a dropped node's children move up); the RootWebArea is always kept; a
  node without a DOM node or without a layout box is dropped. Boxes come from one
  DOMSnapshot.captureSnapshot (document coordinates minus the scroll offset, i.e. what WebArena's
  per-node getBoundingClientRect returns, in one call);
- ignored nodes, InlineTextBox/LineBreak, and nameless generic/img/list/strong/paragraph/banner/
  navigation/Section/LabelText/Legend/listitem nodes without properties print no line (their
  children move up); properties focusable, editable, readonly, level, settable, multiline,
  invalid (and url, which repeats the link target) are left out;
- a StaticText that repeats text of one of the three lines before it is dropped (the ids of those
  lines are not searched: WebArena's check would drop StaticText '8' after a line "[758] ...").
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

IGNORED_PROPERTIES = frozenset(
    {"focusable", "editable", "readonly", "level", "settable", "multiline", "invalid", "url"}
)
HIDDEN_WHEN_EMPTY = frozenset(
    {
        "generic",
        "img",
        "list",
        "strong",
        "paragraph",
        "banner",
        "navigation",
        "Section",
        "LabelText",
        "Legend",
        "listitem",
    }
)
VALUE_ROLES = frozenset({"textbox", "searchbox", "combobox", "spinbutton", "slider"})
SKIPPED_ROLES = frozenset({"none", "InlineTextBox", "LineBreak"})
IN_VIEWPORT_RATIO = 0.6

Box = tuple[float, float, float, float]  # x, y, width, height in viewport coordinates


@dataclass
class Screen:
    """One rendered tree: its text and, per shown id, the backend DOM node to act on."""

    text: str
    elements: dict[str, int] = field(default_factory=dict)  # id -> backendDOMNodeId
    lines: dict[str, str] = field(default_factory=dict)  # id -> its line (without indentation)


def layout_boxes(snapshot: dict[str, Any]) -> dict[int, Box]:
    """backend node id -> box in viewport coordinates, from DOMSnapshot.captureSnapshot."""
    doc = snapshot["documents"][0]
    backend = doc["nodes"]["backendNodeId"]
    dx, dy = doc.get("scrollOffsetX", 0), doc.get("scrollOffsetY", 0)
    boxes: dict[int, Box] = {}
    for node_index, (x, y, w, h) in zip(doc["layout"]["nodeIndex"], doc["layout"]["bounds"]):
        bid = backend[node_index]
        if bid not in boxes:  # the first layout object of a node is its own box
            boxes[bid] = (x - dx, y - dy, w, h)
    return boxes


_CLIENT_RECT = """function () {
    if (this.nodeType === 3) {
        const range = document.createRange();
        range.selectNode(this);
        const rect = range.getBoundingClientRect().toJSON();
        range.detach();
        return rect;
    }
    return this.getBoundingClientRect().toJSON();
}"""


def unboxed(nodes: list[dict[str, Any]], boxes: dict[int, Box]) -> list[int]:
    """Backend ids of tree nodes the DOM snapshot has no box for (the inner parts of form
    controls, in the browser's own shadow DOM, such as the text shown in a filled textbox)."""
    return sorted(
        {
            int(n["backendDOMNodeId"])
            for n in nodes
            if "backendDOMNodeId" in n
            and int(n["backendDOMNodeId"]) not in boxes
            and n.get("role", {}).get("value") != "RootWebArea"
        }
    )


async def client_rects(cdp: Any, backend_ids: list[int]) -> dict[int, Box]:
    """What WebArena reads for every node, for these nodes only: getBoundingClientRect (a text
    node's range rect) through CDP; a node that cannot be resolved has no box."""

    async def rect(backend_id: int) -> Box | None:
        try:
            obj = await cdp.send("DOM.resolveNode", {"backendNodeId": backend_id})
            reply = await cdp.send(
                "Runtime.callFunctionOn",
                {"objectId": obj["object"]["objectId"], "functionDeclaration": _CLIENT_RECT, "returnByValue": True},
            )
            value = reply["result"]["value"]
            return (value["x"], value["y"], value["width"], value["height"])
        except Exception:  # noqa: BLE001 - WebArena too treats any failure as "no box"
            return None

    found = await asyncio.gather(*(rect(b) for b in backend_ids))
    return {b: box for b, box in zip(backend_ids, found) if box is not None}


def in_viewport(box: Box, width: float, height: float) -> bool:
    """WebArena's keep rule for ``current_viewport_only`` (processors.py), arithmetic included.

    A box with zero width or height is dropped. Otherwise WebArena computes
    ``overlap_width * overlap_height / width * height`` against the window (0..screen width,
    0..screen height; Playwright's screen is the viewport) and keeps the node when that is at
    least 0.6. Python reads the formula as ``(overlap area / width) * height``, not as the
    fraction of the box that is visible: a fully visible box is kept when its height is at least
    sqrt(0.6) px, and a box only a few pixels of which show is kept too. This is the rule
    WebArena's published agents saw, so it is followed as written.
    """
    x, y, w, h = box
    if w == 0 or h == 0:
        return False
    overlap_w = max(0.0, min(x + w, width) - max(x, 0.0))
    overlap_h = max(0.0, min(y + h, height) - max(y, 0.0))
    return overlap_w * overlap_h / w * h >= IN_VIEWPORT_RATIO


def _properties(node: dict[str, Any]) -> list[str]:
    """WebArena's ``name: value`` properties; a field's current value comes first, as ``value: '...'``.

    (Older Chrome showed a field's text as a StaticText child; current Chrome does not, and a form
    draft must be readable, so the value is shown as a property.)
    """
    out = []
    value = " ".join(str(node.get("value", {}).get("value", "")).split())
    if value and node.get("role", {}).get("value") in VALUE_ROLES:
        out.append(f"value: {value!r}")
    for prop in node.get("properties", []):
        value = prop.get("value", {})
        if prop.get("name") in IGNORED_PROPERTIES or "value" not in value:
            continue
        out.append(f"{prop['name']}: {value['value']}")
    return out


def _line(node: dict[str, Any]) -> str | None:
    """The node's line without its id (``role 'name' props``), or None when WebArena would not print it."""
    if node.get("ignored"):
        return None
    role = str(node.get("role", {}).get("value", ""))
    if not role or role in SKIPPED_ROLES:
        return None
    name = " ".join(str(node.get("name", {}).get("value", "")).split())
    props = _properties(node)
    if not name and ((not props and role in HIDDEN_WHEN_EMPTY) or role == "listitem"):
        return None
    return " ".join([f"{role} {name!r}", *props])


def _walk(by_id: dict[str, dict[str, Any]], root: dict[str, Any]) -> Iterable[dict[str, Any]]:
    """Every node under ``root`` in document (pre-)order."""
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(by_id[c] for c in reversed(node.get("childIds", [])) if c in by_id)


def element_ids(nodes: list[dict[str, Any]]) -> dict[str, str]:
    """Chrome AX node id -> the id the agent sees: printable nodes numbered 1, 2, ... in tree order.

    Numbering the whole tree (not just the viewport) keeps an element's id through scrolling, and
    the same page state gets the same ids in every run and process (Chrome's own AX ids grow with
    every page load), so recorded runs replay and backtracking finds the ids it saw.
    """
    by_id = _index(nodes)
    ids: dict[str, str] = {}
    if by_id:
        for node in _walk(by_id, _root(by_id)):
            if _line(node) is not None:
                ids[node["nodeId"]] = str(len(ids) + 1)
    return ids


def _index(nodes: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    by_id: dict[str, dict[str, Any]] = {}
    for node in nodes:
        by_id.setdefault(node["nodeId"], node)  # a few nodes are listed twice
    return by_id


def _root(by_id: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return next((n for n in by_id.values() if "parentId" not in n), next(iter(by_id.values())))


def render_tree(nodes: list[dict[str, Any]], boxes: dict[int, Box], width: float, height: float) -> Screen:
    """The viewport's tree as text (pure; envs.webarena reads the tree and the snapshot through
    envs.browser's ax_tree and dom_snapshot)."""
    by_id = _index(nodes)
    if not by_id:
        return Screen("")
    ids = element_ids(nodes)
    screen = Screen("")
    kept: list[str] = []

    def visible(node: dict[str, Any]) -> bool:
        if node.get("role", {}).get("value") == "RootWebArea":
            return True
        box = boxes.get(node.get("backendDOMNodeId", -1))
        return box is not None and in_viewport(box, width, height)

    depth_of: dict[str, int] = {}  # node -> indentation of its line: children of a shown line go one deeper
    for node in _walk(by_id, _root(by_id)):
        depth = depth_of.get(node["nodeId"], 0)
        line = _line(node) if visible(node) else None
        if line is not None and node.get("role", {}).get("value") == "StaticText":
            text = " ".join(str(node.get("name", {}).get("value", "")).split())
            if any(text in previous.split("] ", 1)[-1] for previous in kept[-3:]):
                line = None
        if line is not None:
            eid = ids[node["nodeId"]]
            kept.append(("\t" * depth) + f"[{eid}] {line}")
            screen.lines[eid] = f"[{eid}] {line}"
            if "backendDOMNodeId" in node:
                screen.elements[eid] = int(node["backendDOMNodeId"])
        for child in node.get("childIds", []):
            depth_of[child] = depth + 1 if line is not None else depth
    screen.text = "\n".join(kept)
    return screen


def tab_header(titles: Iterable[str], current: int) -> str:
    """WebArena's first line: ``Tab 0 (current): title | Tab 1: title``."""
    return " | ".join(f"Tab {i} (current): {t}" if i == current else f"Tab {i}: {t}" for i, t in enumerate(titles))


def observation_text(header: str, url: str, screen: Screen) -> str:
    return f"{header}\n\nURL: {url}\n\n{screen.text}"
