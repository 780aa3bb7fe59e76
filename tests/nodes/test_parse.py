from __future__ import annotations

import pytest

from nodes.parse import ParseError, after_label, bracket_action, json_object, numbered_list, yes_no


def test_json_object_fenced_bare_and_missing():
    assert json_object('Sure:\n```json\n{"name": "Next", "arguments": {}}\n```') == {"name": "Next", "arguments": {}}
    assert json_object('I pick {"name": "Prev"} because') == {"name": "Prev"}
    with pytest.raises(ParseError):
        json_object("no json here {not: valid}")


def test_yes_no():
    assert yes_no("YES, the action fits") is True
    assert yes_no("No.") is False
    assert yes_no("Thinking... yes maybe. Answer: NO") is False
    assert yes_no("unclear") is None


def test_labels_lists_and_bracket_actions():
    text = "Thought: go left\nAction: click[Buy Now]\nNotes: x"
    assert after_label(text, "Thought") == "go left"
    assert numbered_list("1. open fridge\n2) take egg\n- heat it") == ["open fridge", "take egg", "heat it"]
    assert bracket_action("first search[a] then search[ red shoes ]", ("search", "click")) == "search[red shoes]"
    assert bracket_action("nothing", ("search",)) is None
