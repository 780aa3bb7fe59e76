"""Pure parts of the WebArena env: the action grammar and the tree rendering (no browser)."""

from __future__ import annotations

import pytest

from envs.webarena.actions import Action, ActionError, key_combination, parse_action
from envs.webarena.observe import (
    element_ids,
    in_viewport,
    layout_boxes,
    render_tree,
    tab_header,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("click [12]", Action("click", element_id="12")),
        ("```click [12]```", Action("click", element_id="12")),
        ("hover[7]", Action("hover", element_id="7")),
        ("type [3] [yoga mat]", Action("type", element_id="3", text="yoga mat", enter=True)),
        ("type [3] [yoga mat] [0]", Action("type", element_id="3", text="yoga mat", enter=False)),
        ("type [3] [a [b] c] [1]", Action("type", element_id="3", text="a [b] c", enter=True)),
        ("press [Control+a]", Action("press", key="Control+a")),
        ("scroll [down]", Action("scroll", direction="down")),
        ("scroll up", Action("scroll", direction="up")),
        ("goto [http://h:1/a?b=c]", Action("goto", url="http://h:1/a?b=c")),
        ("go_back", Action("go_back")),
        ("go_forward", Action("go_forward")),
        ("new_tab", Action("new_tab")),
        ("close_tab", Action("close_tab")),
        ("tab_focus [2]", Action("tab_focus", index=2)),
        ("page_focus [1]", Action("tab_focus", index=1)),
        ("note_down [order 171 has it]", Action("note_down", text="order 171 has it")),
        ("stop [Walnut]", Action("stop", text="Walnut")),
        ("stop", Action("stop", text="")),
        ("STOP [N/A]", Action("stop", text="N/A")),
    ],
)
def test_parse_action_follows_webarenas_grammar(text: str, expected: Action) -> None:
    assert parse_action(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "click",
        "click [x]",
        "type [3]",
        "scroll [left]",
        "fly [2]",
        "goto []",
        "tab_focus [a]",
        "go_back [1]",
        "```",
    ],
)
def test_malformed_actions_raise_action_error_with_feedback(text: str) -> None:
    with pytest.raises(ActionError) as err:
        parse_action(text)
    assert str(err.value)


def test_key_combinations_map_to_playwright_names() -> None:
    assert key_combination("ctrl+a") == "Control+a"
    assert key_combination("Meta+Enter") == "ControlOrMeta+Enter"
    assert key_combination("pagedown") == "PageDown"
    with pytest.raises(ActionError):
        key_combination("Control+")


def node(
    nid: str, role: str, name: str = "", children: tuple[str, ...] = (), parent: str | None = None, **extra: object
) -> dict:
    out = {
        "nodeId": nid,
        "role": {"value": role},
        "name": {"value": name},
        "childIds": list(children),
        "backendDOMNodeId": int(nid),
        **extra,
    }
    if parent:
        out["parentId"] = parent
    return out


def test_render_tree_keeps_the_viewport_and_reparents_children() -> None:
    nodes = [
        node(
            "101",
            "RootWebArea",
            "Shop",
            ("102", "105", "107", "109", "110"),
            properties=[{"name": "focused", "value": {"value": True}}, {"name": "focusable", "value": {"value": True}}],
        ),
        node("102", "generic", "", ("103", "104"), parent="101"),  # nameless generic: no line, children move up
        node("103", "link", "My Orders", parent="102"),
        node("104", "StaticText", "My Orders", parent="102"),  # repeats the line above: dropped
        node("105", "row", "", ("106",), parent="101"),  # a big row only 120 px of which show: kept
        node("106", "cell", "000000171", parent="105"),
        node("107", "link", "Footer link", parent="101"),  # below the viewport
        node(
            "109",
            "textbox",
            "Name",
            parent="101",
            value={"value": "Emma"},
            properties=[{"name": "required", "value": {"value": True}}],
        ),
        node("110", "link", "No box", parent="101"),  # no layout box: no line
    ]
    boxes = {
        102: (0, 0, 500, 40),
        103: (0, 0, 80, 20),
        104: (0, 0, 80, 20),
        105: (0, 600, 1280, 900),
        106: (0, 610, 100, 20),
        107: (0, 900, 100, 20),
        109: (0, 100, 200, 30),
    }
    screen = render_tree(nodes, boxes, 1280, 720)
    # ids number every node that can print a line, in tree order, on screen or not
    assert screen.text.splitlines() == [
        "[1] RootWebArea 'Shop' focused: True",
        "\t[2] link 'My Orders'",
        "\t[4] row ''",
        "\t\t[5] cell '000000171'",
        "\t[7] textbox 'Name' value: 'Emma' required: True",
    ]
    assert screen.elements == {"1": 101, "2": 103, "4": 105, "5": 106, "7": 109}
    assert element_ids(nodes) == {
        "101": "1",
        "103": "2",
        "104": "3",
        "105": "4",
        "106": "5",
        "107": "6",
        "109": "7",
        "110": "8",
    }


def test_the_same_page_gets_the_same_ids_whatever_chrome_numbers_and_wherever_it_is_scrolled() -> None:
    """Chrome's AX ids grow with every page load; the ids shown depend only on the tree."""

    def page(offset: int) -> list[dict]:
        return [
            node(str(offset + 1), "RootWebArea", "Orders", (str(offset + 2), str(offset + 3))),
            node(str(offset + 2), "link", "View Order", parent=str(offset + 1)),
            node(str(offset + 3), "link", "Next", parent=str(offset + 1)),
        ]

    def boxes(offset: int, dy: float) -> dict:
        return {offset + 2: (0, 10 - dy, 80, 20), offset + 3: (0, 800 - dy, 80, 20)}

    top = render_tree(page(40), boxes(40, 0), 1280, 720)
    again = render_tree(page(9000), boxes(9000, 0), 1280, 720)
    scrolled = render_tree(page(9000), boxes(9000, 500), 1280, 720)
    assert top.text == again.text == "[1] RootWebArea 'Orders'\n\t[2] link 'View Order'"
    assert scrolled.text == "[1] RootWebArea 'Orders'\n\t[3] link 'Next'"


@pytest.mark.parametrize(
    ("box", "kept"),
    [
        ((0, 0, 100, 40), True),
        ((0, 700, 100, 40), True),  # half shows: 100*20/100*40 = 800
        ((0, 719, 1280, 400), True),  # one pixel row shows: 1280*1/1280*400 = 400
        ((0, -2000, 1280, 5000), True),  # covers the viewport
        ((0, 720, 100, 40), False),  # just below: no overlap
        ((-300, 0, 200, 40), False),  # left of it
        ((0, 0, 0, 10), False),  # no width
        ((0, 0, 10, 0), False),  # no height
        ((0, 0, 0.7, 0.7), False),  # fully visible, but 0.7*0.7/0.7*0.7 = 0.49 < 0.6
        ((0, 0, 0.8, 0.8), True),  # 0.64
        ((1279, 0, 100, 10), True),  # 1 px column shows: 1*10/100*10 = 1.0
        ((1279.5, 0, 100, 10), False),  # half a pixel: 0.5
    ],
)
def test_viewport_rule_is_webarenas_arithmetic(box: tuple, kept: bool) -> None:
    """processors.py keeps a node when ``overlap_w * overlap_h / w * h >= 0.6``, which Python
    evaluates left to right: the overlap area divided by the width, times the height."""
    assert in_viewport(box, 1280, 720) is kept


def test_tab_header() -> None:
    assert tab_header(["A", "B"], 1) == "Tab 0: A | Tab 1 (current): B"


def test_layout_boxes_subtract_the_scroll_offset() -> None:
    snapshot = {
        "documents": [
            {
                "nodes": {"backendNodeId": [10, 11]},
                "scrollOffsetX": 0,
                "scrollOffsetY": 224,
                "layout": {"nodeIndex": [0, 1, 1], "bounds": [[0, 0, 5, 5], [1, 292.5, 70, 16], [9, 9, 9, 9]]},
            }
        ]
    }
    assert layout_boxes(snapshot) == {10: (0, -224, 5, 5), 11: (1, 68.5, 70, 16)}
