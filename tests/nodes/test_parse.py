from __future__ import annotations

import pytest

from nodes.runtime.parse import ParseError, after_label, json_object, numbered_list


def test_json_object_fenced_bare_and_missing():
    assert json_object('Sure:\n```json\n{"name": "Next", "arguments": {}}\n```') == {"name": "Next", "arguments": {}}
    assert json_object('I pick {"name": "Prev"} because') == {"name": "Prev"}
    with pytest.raises(ParseError):
        json_object("no json here {not: valid}")


def test_labels_and_lists():
    text = "Thought: go left\nAction: click[Buy Now]\nNotes: x"
    assert after_label(text, "Thought") == "go left"
    assert numbered_list("1. open fridge\n2) take egg\n- heat it") == ["open fridge", "take egg", "heat it"]
