"""The SR action grammar read from untrusted plan lines and reflections."""

import pytest

from envs.miniwob.interface import INTERFACE as MINIWOB
from nodes.sr.actions import clicked_element, kind, parse_action, read_plan, read_plan_as_code


@pytest.mark.parametrize(
    "line, action",
    [
        ("click id=6", "click id=6"),
        ("1. Click id=6.", "click id=6"),
        ("- `click id = 6`", "click id=6"),
        ('"click id=6"', "click id=6"),
        ("\u201cclick id=6\u201d", "click id=6"),
        ("click on the element with id 12 (the Submit button)", "click id=12"),
        ("click id=12 - the Submit button", "click id=12"),
        ("have clicked id=3", "click id=3"),
        ('enter "Hello, World." to id=10', 'enter "Hello, World." to id=10'),
        ('Type "a "quoted" word" into id=4.', 'enter "a "quoted" word" to id=4'),
        ('enter "go to id=5" to id=7 (the search box)', 'enter "go to id=5" to id=7'),
        ('"enter "x" to id=2"', 'enter "x" to id=2'),
        ("press ARROWDOWN x 3", "press ArrowDown x 3"),
        ("press enter", "press Enter"),
        ("Step 2: press Tab x 1", "press Tab"),
        ("hold ctrl", "hold Control"),
        ("have released CTRL.", "release Control"),
    ],
)
def test_lines_are_normalised_to_the_canonical_grammar(line, action):
    parsed = parse_action(line, MINIWOB)
    assert parsed.error == "" and parsed.action == action


@pytest.mark.parametrize("line", ["click the submit button", "enter hello to id=3", 'enter "x"', "press", "hold"])
def test_malformed_lines_carry_feedback(line):
    parsed = parse_action(line, MINIWOB)
    assert parsed.error and "is not an action" in parsed.error and parsed.action == line


def test_plan_skips_commentary_and_keeps_malformed_lines_in_order():
    plan = read_plan("Your plan:\n\n```\n1. click id=1\nclick the OK button\n2. click id=3\n```\nThat is all.", MINIWOB)
    assert [(p.action, bool(p.error)) for p in plan] == [
        ("click id=1", False),
        ("click the OK button", True),
        ("click id=3", False),
    ]


def test_a_blank_line_after_an_action_ends_the_plan_as_the_papers_code():
    assert [p.action for p in read_plan("click id=1\nclick id=2\n\nclick id=3", MINIWOB)] == [
        "click id=1",
        "click id=2",
    ]
    assert [p.action for p in read_plan("click id=1\n   \nclick id=3", MINIWOB)] == ["click id=1"]


def test_no_action_lines_is_an_empty_plan():
    assert read_plan("No further actions are needed; the goal is done.", MINIWOB) == []
    assert read_plan("", MINIWOB) == []


def test_action_helpers():
    assert kind('enter "a" to id=3') == "enter" and clicked_element('enter "a" to id=3', MINIWOB) is None
    assert clicked_element("click id=17", MINIWOB) == "17" and clicked_element("press Enter", MINIWOB) is None


def test_a_plan_read_as_the_code_reads_it_line_by_line():
    plan = read_plan_as_code(
        "Your plan:\n1. click id=2\nTap the box id=3\nmove to id=4\nscroll down\npress ENTER\n"
        "click the OK button\n\nclick id=9",
        MINIWOB,
    )
    assert [(p.action, p.reading) for p in plan] == [
        ("Your plan:", "noop"),
        ("1. click id=2", "noop"),  # does not start with click: executed as nothing
        ("click id=3", None),
        ("click id=4", None),
        ("press Enter", None),  # the scroll line is skipped; the code would read it forever
        ("click the OK button", "ground"),  # no number: the model is asked for the id
    ]  # the blank line ends the plan
    assert plan[2].written == "Tap the box id=3"
