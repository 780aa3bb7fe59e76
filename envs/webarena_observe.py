"""The WebArena observation: the accessibility tree of what is inside the viewport, as text.

Format (WebArena's browser_env/processors.py, rebuilt from its description, not its code):

    Tab 0 (current): My Orders

    URL: http://127.0.0.1:40123/sales/order/history/

    [4] RootWebArea 'My Orders' focused: True
    	[48] link 'One Stop Market'
    	[121] cell '000000179'

One ``[id] role 'name' prop: value`` line per node, tab-indented by depth; ids are Chrome's AX node
ids (= backend DOM node ids for DOM nodes), valid for the page they were shown on. Like WebArena:
- nodes come from CDP Accessibility.getFullAXTree; a node is kept when at least 60% of its box
  lies inside the viewport (its children are judged on their own), boxes from one
  DOMSnapshot.captureSnapshot (document coordinates minus the scroll offset);
- ignored nodes, InlineTextBox/LineBreak, and nameless generic/img/list/strong/paragraph/banner/
  navigation/Section/LabelText/Legend/listitem nodes without properties print no line (their
  children move up); properties focusable, editable, readonly, level, settable, multiline,
  invalid (and url, which repeats the link target) are left out;
- a StaticText that repeats text of one of the three lines before it is dropped (the ids of those
  lines are not searched: WebArena's check would drop StaticText '8' after a line "[758] ...").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

IGNORED_PROPERTIES = frozenset(
    {"focusable", "editable", "readonly", "level", "settable", "multiline", "invalid", "url"}
)
HIDDEN_WHEN_EMPTY = frozenset(
    {"generic", "img", "list", "strong", "paragraph", "banner", "navigation", "Section",
     "LabelText", "Legend", "listitem"}
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


def in_viewport(box: Box, width: float, height: float) -> bool:
    """At least 60% of the box is visible (or, for a box larger than the viewport, 60% of it is covered)."""
    x, y, w, h = box
    if w <= 0 or h <= 0:
        return False
    overlap = max(0.0, min(x + w, width) - max(x, 0.0)) * max(0.0, min(y + h, height) - max(y, 0.0))
    return overlap >= IN_VIEWPORT_RATIO * min(w * h, width * height)


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
    """The node's line, or None when WebArena would not print it."""
    if node.get("ignored"):
        return None
    role = str(node.get("role", {}).get("value", ""))
    if not role or role in SKIPPED_ROLES:
        return None
    name = " ".join(str(node.get("name", {}).get("value", "")).split())
    props = _properties(node)
    if not name and ((not props and role in HIDDEN_WHEN_EMPTY) or role == "listitem"):
        return None
    return " ".join([f"[{node['nodeId']}] {role} {name!r}", *props])


def render_tree(nodes: list[dict[str, Any]], boxes: dict[int, Box], width: float, height: float) -> Screen:
    """The viewport's tree as text (pure; envs.webarena reads the tree and the snapshot through
    envs.browser's ax_tree and dom_snapshot)."""
    by_id: dict[str, dict[str, Any]] = {}
    for node in nodes:
        by_id.setdefault(node["nodeId"], node)  # a few nodes are listed twice
    if not by_id:
        return Screen("")
    root = next((n for n in by_id.values() if "parentId" not in n), next(iter(by_id.values())))
    screen = Screen("")
    kept: list[str] = []

    def visible(node: dict[str, Any]) -> bool:
        if node.get("role", {}).get("value") == "RootWebArea":
            return True
        box = boxes.get(node.get("backendDOMNodeId", -1))
        return box is not None and in_viewport(box, width, height)

    stack: list[tuple[dict[str, Any], int]] = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        line = _line(node) if visible(node) else None
        if line is not None and node.get("role", {}).get("value") == "StaticText":
            text = " ".join(str(node.get("name", {}).get("value", "")).split())
            if any(text in previous.split("] ", 1)[-1] for previous in kept[-3:]):
                line = None
        child_depth = depth
        if line is not None:
            kept.append(("\t" * depth) + line)
            screen.lines[node["nodeId"]] = line
            if "backendDOMNodeId" in node:
                screen.elements[node["nodeId"]] = int(node["backendDOMNodeId"])
            child_depth = depth + 1
        children = [by_id[c] for c in node.get("childIds", []) if c in by_id]
        stack.extend((child, child_depth) for child in reversed(children))
    screen.text = "\n".join(kept)
    return screen


def tab_header(titles: Iterable[str], current: int) -> str:
    """WebArena's first line: ``Tab 0 (current): title | Tab 1: title``."""
    return " | ".join(
        f"Tab {i} (current): {t}" if i == current else f"Tab {i}: {t}" for i, t in enumerate(titles)
    )


def observation_text(header: str, url: str, screen: Screen) -> str:
    return f"{header}\n\nURL: {url}\n\n{screen.text}"
