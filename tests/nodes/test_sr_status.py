"""Paper 002's trial statuses (3.4) and the MiniWoB action grammar, without a browser."""

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
from envs.miniwob.status import TrialStatus, trial_status


def status(screens: list[str], **kw) -> TrialStatus | None:
    args = dict(reward=0.0, done=False, steps=len(screens) - 1, max_steps=10, exception=False, stopped=False)
    args.update(kw)
    return trial_status(screens, **args)


def test_statuses_carry_the_papers_names() -> None:
    assert [s.value for s in TrialStatus] == [
        "correct", "cycle", "no change", "incomplete", "in progress", "exception", "failed",
    ]


def test_each_end_condition() -> None:
    assert status(["A", "B"], done=True, reward=1.0) is TrialStatus.CORRECT
    assert status(["A", "B"], done=True, reward=-1.0) is TrialStatus.FAILED
    assert status(["A", "B"], done=True, reward=0.0) is TrialStatus.FAILED
    assert status(["A", "B"], exception=True) is TrialStatus.EXCEPTION
    assert status(["A", "A"]) is TrialStatus.NO_CHANGE
    assert status(["A", "B", "A"]) is TrialStatus.CYCLE
    assert status(["A", "B", "C"], steps=10) is TrialStatus.IN_PROGRESS
    assert status(["A", "B"], stopped=True) is TrialStatus.INCOMPLETE
    assert status(["A", "B", "C"], stage_steps=3, max_stage_steps=3) is TrialStatus.IN_PROGRESS
    assert status(["A", "B", "C"], stage_steps=2, max_stage_steps=3) is None
    assert status(["A", "B", "C"]) is None
    assert status(["A"]) is None


def test_precedence_follows_the_papers_code() -> None:
    # the episode's end decides first, then a refused action, then the screen comparisons
    assert status(["A", "A"], done=True, reward=1.0) is TrialStatus.CORRECT
    assert status(["A", "A"], exception=True) is TrialStatus.EXCEPTION
    assert status(["A", "B", "B", "B"]) is TrialStatus.CYCLE  # seen before the previous screen
    assert status(["A", "B", "B"], steps=10, stopped=True) is TrialStatus.NO_CHANGE
    assert status(["A", "B", "B"], stage_steps=2, max_stage_steps=2) is TrialStatus.NO_CHANGE
    assert status(["A", "B"], stage_steps=9, max_stage_steps=9, stopped=True) is TrialStatus.IN_PROGRESS


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
