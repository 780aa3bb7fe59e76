"""WebArena actions and element lines as the Devil's Advocate agent reads them from model text."""

from __future__ import annotations

import pytest

from envs.webarena.interface import element_id, element_lines, parse_action, parse_element_id, same_element, with_element
from nodes.parse import ParseError


@pytest.mark.parametrize(
    ("reply", "action"),
    [
        ("click [1254]", "click [1254]"),
        ("The next action is: `click [ 42 ]` because it opens the order.", "click [42]"),
        ("type [7] [picture frame]", "type [7] [picture frame]"),
        ("type [7] [frame] [0]", "type [7] [frame] [0]"),
        ("type [7] [size [8]] [press_enter_after=1]", "type [7] [size [8]] [1]"),
        ("scroll [Down]", "scroll [down]"),
        ("scroll [direction=up]", "scroll [up]"),
        ("goto [http://127.0.0.1:7770/sales/order/history/]", "goto [http://127.0.0.1:7770/sales/order/history/]"),
        ("go_back", "go_back"),
        ("I will go_forward now", "go_forward"),
        ("note_down [Order 174 has the frame, color Gold]", "note_down [Order 174 has the frame, color Gold]"),
        ("To click the link, the format is click [element_id]; so: click [18]", "click [18]"),
    ],
)
def test_actions_are_parsed_and_normalised(reply, action):
    assert parse_action(reply) == action


@pytest.mark.parametrize("reply", ["", "Let me look around.", "click on My Orders", "scroll [left]", "stop [Gold]"])
def test_replies_without_an_agent_action_are_feedback(reply):
    with pytest.raises(ParseError, match="click \\[element_id\\]"):
        parse_action(reply)


def test_element_ids_are_read_and_replaced():
    assert element_id("type [12] [yoga mat]") == "12"
    assert element_id("scroll [down]") is None
    assert with_element("type [12] [yoga mat] [1]", "40") == "type [40] [yoga mat] [1]"


BEFORE = """Tab 0 (current): My Orders

URL: http://shop/orders

[4] RootWebArea 'My Orders' focused: True
\t[263] cell '000000175'
\t[264] cell '11/28/22'
\t\t[268] link 'View Order'
\t[270] cell '000000174'
\t[271] cell '11/14/22'
\t\t[275] link 'View Order'
\t[60] link "Women's Lightweight Running Shoes"
"""


def test_element_lines_keep_role_and_name_of_either_quote_style():
    lines = element_lines(BEFORE)
    assert lines["275"] == "link 'View Order'"
    assert lines["60"] == "link \"Women's Lightweight Running Shoes\""
    assert lines["4"] == "RootWebArea 'My Orders'"


def test_same_element_needs_the_same_line_in_the_same_place():
    assert same_element("click [275]", BEFORE, BEFORE.replace("focused: True", ""))
    assert same_element("scroll [down]", BEFORE, "")
    assert not same_element("click [275]", BEFORE, BEFORE.replace("[275]", "[375]"))
    # The same id now names the link of another row: it is not the same element.
    swapped = BEFORE.replace("[268] link", "[999] link").replace("[275] link", "[268] link")
    assert not same_element("click [268]", BEFORE, swapped.replace("000000175", "000000173"))


def test_a_mapped_id_must_be_on_the_new_screen():
    assert parse_element_id("New element id is: [275]", BEFORE) == "275"
    assert parse_element_id("It was 12, now it is 268", BEFORE) == "268"
    with pytest.raises(ParseError, match="not on the new screen"):
        parse_element_id("12", BEFORE)
    with pytest.raises(ParseError, match="no element id"):
        parse_element_id("the same link", BEFORE)
