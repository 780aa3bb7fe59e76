"""The MiniWoB action grammar (paper 002, Table 3), without a browser."""

from __future__ import annotations

import pytest

from envs.miniwob.actions import (
    ActionError,
    Click,
    Enter,
    Hold,
    Press,
    canonical,
    parse_action,
)


@pytest.mark.parametrize(
    "line, action",
    [
        ("click id=6", Click("6")),
        ("  2. Click on id=12.", Click("12")),
        ("- click id = 3", Click("3")),
        ('enter "Hello, World." to id=10', Enter("Hello, World.", "10")),
        ('ENTER "say "hi"" into id=4', Enter('say "hi"', "4")),
        ("type \u201cBob\u201d to id=7", Enter("Bob", "7")),
        ('enter "" to id=2', Enter("", "2")),
        ("press ARROWDOWN x 3", Press("ArrowDown", 3)),
        ("press down arrow", Press("ArrowDown", 1)),
        ("Press ENTER", Press("Enter", 1)),
        ("press CTRL+A", Press("Control+a", 1)),
        ("hold CTRL", Hold("Control", True)),
        ("release ctrl", Hold("Control", False)),
    ],
)
def test_actions_parse_leniently_and_round_trip(line: str, action) -> None:
    assert parse_action(line) == action
    assert parse_action(canonical(action)) == action


@pytest.mark.parametrize(
    "line, words",
    [
        ("scroll down", "unknown action"),
        ("click the blue button", "click id="),
        ('enter "x"', 'enter "text" to id='),
        ("press ARROWDOWN x 500", "between 1 and"),
        ("press WARP", "unknown key"),
        ("hold SPACE", "CTRL"),
        ("   ", "empty"),
    ],
)
def test_malformed_actions_become_feedback(line: str, words: str) -> None:
    with pytest.raises(ActionError, match=words.replace("(", r"\(")):
        parse_action(line)
