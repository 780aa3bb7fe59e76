"""Devil's Advocate's element mapping reads: whether an id still names the same element after a
backtrack (through the env interface's signatures), and the id named in a mapping reply."""

from __future__ import annotations

import pytest

from envs.webarena.interface import INTERFACE as WEBARENA
from nodes.da.map_element import parse_element_id, same_element
from nodes.runtime.parse import ParseError
from tests.support.screens import MY_ORDERS

BEFORE = MY_ORDERS


def test_same_element_needs_the_same_line_in_the_same_place():
    assert same_element(WEBARENA, "click [275]", BEFORE, BEFORE.replace("focused: True", ""))
    assert same_element(WEBARENA, "scroll [down]", BEFORE, "")
    assert not same_element(WEBARENA, "click [275]", BEFORE, BEFORE.replace("[275]", "[375]"))
    # The same id now names the link of another row: it is not the same element.
    swapped = BEFORE.replace("[268] link", "[999] link").replace("[275] link", "[268] link")
    assert not same_element(WEBARENA, "click [268]", BEFORE, swapped.replace("000000175", "000000173"))


def test_a_mapped_id_must_be_on_the_new_screen():
    assert parse_element_id(WEBARENA, "New element id is: [275]", BEFORE) == "275"
    assert parse_element_id(WEBARENA, "It was 12, now it is 268", BEFORE) == "268"
    with pytest.raises(ParseError, match="not on the new screen"):
        parse_element_id(WEBARENA, "12", BEFORE)
    with pytest.raises(ParseError, match="no element id"):
        parse_element_id(WEBARENA, "the same link", BEFORE)
