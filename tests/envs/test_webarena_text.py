"""Pure parts of the WebArena env: the action grammar and the tree rendering (no browser)."""

from __future__ import annotations

import pytest

from envs.webarena_actions import Action, ActionError, key_combination, parse_action
from envs.webarena_observe import in_viewport, layout_boxes, render_tree, tab_header


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


@pytest.mark.parametrize("text", ["", "click", "click [x]", "type [3]", "scroll [left]", "fly [2]",
                                  "goto []", "tab_focus [a]", "go_back [1]", "```"])
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


def node(nid: str, role: str, name: str = "", children: tuple[str, ...] = (), parent: str | None = None,
         **extra: object) -> dict:
    out = {"nodeId": nid, "role": {"value": role}, "name": {"value": name}, "childIds": list(children),
           "backendDOMNodeId": int(nid), **extra}
    if parent:
        out["parentId"] = parent
    return out


def test_render_tree_keeps_the_viewport_and_reparents_children() -> None:
    nodes = [
        node("1", "RootWebArea", "Shop", ("2", "5", "7", "9"), properties=[
            {"name": "focused", "value": {"value": True}}, {"name": "focusable", "value": {"value": True}}]),
        node("2", "generic", "", ("3", "4"), parent="1"),  # nameless generic: no line, children move up
        node("3", "link", "My Orders", parent="2"),
        node("4", "StaticText", "My Orders", parent="2"),  # repeats the line above: dropped
        node("5", "row", "", ("6",), parent="1"),  # huge row, mostly off screen: no line
        node("6", "cell", "000000171", parent="5"),
        node("7", "link", "Footer link", parent="1"),  # below the viewport
        node("9", "textbox", "Name", parent="1", value={"value": "Emma"},
             properties=[{"name": "required", "value": {"value": True}}]),
    ]
    boxes = {2: (0, 0, 500, 40), 3: (0, 0, 80, 20), 4: (0, 0, 80, 20), 5: (0, 600, 1280, 900),
             6: (0, 610, 100, 20), 7: (0, 900, 100, 20), 9: (0, 100, 200, 30)}
    screen = render_tree(nodes, boxes, 1280, 720)
    assert screen.text.splitlines() == [
        "[1] RootWebArea 'Shop' focused: True",
        "\t[3] link 'My Orders'",
        "\t[6] cell '000000171'",
        "\t[9] textbox 'Name' value: 'Emma' required: True",
    ]
    assert screen.elements == {"1": 1, "3": 3, "6": 6, "9": 9}


def test_viewport_ratio_and_tab_header() -> None:
    assert in_viewport((0, 700, 100, 40), 1280, 720) is False  # half of it shows
    assert in_viewport((0, 697, 100, 40), 1280, 720) is False  # 57.5% shows
    assert in_viewport((0, 694, 100, 40), 1280, 720) is True  # 65% shows
    assert in_viewport((0, -2000, 1280, 5000), 1280, 720) is True  # covers the whole viewport
    assert in_viewport((0, 0, 0, 10), 1280, 720) is False
    assert tab_header(["A", "B"], 1) == "Tab 0: A | Tab 1 (current): B"


def test_layout_boxes_subtract_the_scroll_offset() -> None:
    snapshot = {"documents": [{"nodes": {"backendNodeId": [10, 11]}, "scrollOffsetX": 0, "scrollOffsetY": 224,
                               "layout": {"nodeIndex": [0, 1, 1], "bounds": [[0, 0, 5, 5], [1, 292.5, 70, 16],
                                                                             [9, 9, 9, 9]]}}]}
    assert layout_boxes(snapshot) == {10: (0, -224, 5, 5), 11: (1, 68.5, 70, 16)}
