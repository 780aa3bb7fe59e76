"""Structured thought management: parsing reflections and updating the step-keyed memory."""

import random
import re

import pytest

from envs.miniwob.interface import INTERFACE as MINIWOB
from nodes.sr.memory import (
    ReflectionError,
    Suggestion,
    disabled_ids,
    enforced_action,
    parse_reflection,
    update,
)
from nodes.sr.state import StepRecord, empty_memory


def steps(*actions):
    return [StepRecord(action=a, source="plan", description=f"did {a}", valid=True) for a in actions]


def original_reflection(text: str, actions_taken: int) -> tuple[int, str] | None:
    """The paper's code: util.parse_reflection_action, then the range check before update_mem."""
    matches = re.findall(r"index=(\d+)", text)
    idx = int(matches[0]) - 1 if matches else -1
    body = text.split(", you should ")[1].strip() if ", you should " in text else ""
    return (idx, body) if 0 <= idx < actions_taken else None


def ours(text: str, actions_taken: int) -> tuple[int, str] | None:
    try:
        suggestion = parse_reflection(text, actions_taken, MINIWOB)
    except ReflectionError:
        return None
    return suggestion.step, suggestion.text


def test_reflections_are_read_as_the_papers_code_reads_them_on_many_replies():
    rng = random.Random(2)
    heads = [
        "For action index=",
        "for action index=",
        "For action Index=",
        "For action index = ",
        "index ",
        "Reflection: For action index=",
        "The mistake is at index=",
        "",
        "For action index=x",
    ]
    shoulds = [", you should ", " you should ", ", You should ", ",you should ", ", you should\n", ""]
    bodies = [
        "click id=3.",
        "have clicked id=3",
        "click id=3.\nThis ticks C.",
        "tick C, you should click id=4.",
        'enter "bob" to id=9',
        "",
        "  press ENTER  ",
    ]
    differs_from_before = 0
    for _ in range(3000):
        text = f"{rng.choice(heads)}{rng.randint(0, 5)}{rng.choice(shoulds)}{rng.choice(bodies)}"
        taken = rng.randint(0, 4)
        assert ours(text, taken) == original_reflection(text, taken), (text, taken)
        try:
            before = before_this_change(text, taken)
        except ReflectionError:
            before = None
        differs_from_before += before != ours(text, taken)
    assert differs_from_before > 300


def before_this_change(text: str, taken: int) -> tuple[int, str] | None:
    """How Introspect read a reflection before: index and "you should" in any case and spacing."""
    index = re.search(r"index\s*=?\s*(\d+)", text, re.I)
    should = re.search(r"\byou\s+should\s+(.+)", text[index.end() :] if index else text, re.I | re.S)
    if not index or not should or not 0 <= int(index.group(1)) - 1 < taken:
        return None
    return int(index.group(1)) - 1, should.group(1).strip().splitlines()[0].strip()


def test_parse_reflection_reads_index_and_action():
    s = parse_reflection('For action index=2, you should click id=7 (the "OK" button).', 3, MINIWOB)
    assert s == Suggestion(step=1, text='click id=7 (the "OK" button).', action="click id=7")
    s = parse_reflection('Reflection: For action index=1, you should have entered "bob" to id=3.', 1, MINIWOB)
    assert s.action == 'enter "bob" to id=3'


def test_b_is_one_action_its_first_line():
    s = parse_reflection("For action index=1, you should click id=3.\nThen click id=5.", 2, MINIWOB)
    assert s.action == "click id=3" and s.text == "click id=3.\nThen click id=5."


def test_parse_reflection_keeps_prose_suggestions_unenforceable():
    s = parse_reflection("For action index=1, you should select the second tab.", 2, MINIWOB)
    assert s.step == 0 and s.action == "" and s.text == "select the second tab."


def test_an_index_without_you_should_is_a_lesson_with_nothing_to_enforce():
    assert parse_reflection("index=1 click id=2", 3, MINIWOB) == Suggestion(step=0, text="", action="")
    assert parse_reflection("For action index=2 you should click id=2.", 3, MINIWOB) == Suggestion(
        step=1, text="", action=""
    )


@pytest.mark.parametrize(
    "text",
    [
        "I do not know.",
        "For action index=4, you should click id=1.",
        "For action index=0, you should click id=1.",
        "For action index = 1, you should click id=1.",
        "For action Index=1, you should click id=1.",
    ],
)
def test_malformed_or_out_of_range_reflections_raise_with_a_reason(text):
    with pytest.raises(ReflectionError):
        parse_reflection(text, 3, MINIWOB)


def test_index_after_the_last_action_only_as_the_option_for_incomplete_trials():
    assert parse_reflection("For action index=3, you should click id=9.", 2, MINIWOB, past_end=True).step == 2
    with pytest.raises(ReflectionError):
        parse_reflection("For action index=3, you should click id=9.", 2, MINIWOB)


def test_update_keeps_prefix_enforces_b_disables_failed_click_and_clears_later_entries():
    trial = steps("click id=1", "click id=2", "click id=3", "click id=4")
    memory = update(
        empty_memory(), Suggestion(3, "click id=5", "click id=5"), trial, "r4", "when_b_clicks", interface=MINIWOB
    )
    assert list(memory["entries"]) == ["3"] and [s["action"] for s in memory["replay"]] == [
        "click id=1",
        "click id=2",
        "click id=3",
    ]
    assert memory["replay"][0] == StepRecord(
        action="click id=1", source="replay", description="did click id=1", valid=True, stage=0
    )
    assert memory["reflections"] == ["r4"]
    memory = update(memory, Suggestion(1, "click id=6", "click id=6"), trial, "r2", "when_b_clicks", interface=MINIWOB)
    assert list(memory["entries"]) == ["1"]  # the entry for step 3 is outdated
    assert enforced_action(memory, 1, MINIWOB) == "click id=6" and disabled_ids(memory, 1) == ["2"]
    assert len(memory["replay"]) == 1
    assert memory["reflections"] == ["r4", "r2"]  # every statement, outdated ones too


def test_failed_attempts_accumulate_and_a_failed_b_is_not_enforced():
    memory = update(
        empty_memory(),
        Suggestion(0, "click id=2", "click id=2"),
        steps("click id=1"),
        "r",
        "when_b_clicks",
        interface=MINIWOB,
    )
    memory = update(
        memory, Suggestion(0, "click id=1", "click id=1"), steps("click id=2"), "r", "when_b_clicks", interface=MINIWOB
    )
    assert memory["entries"]["0"]["failed"] == ["click id=1", "click id=2"]
    assert disabled_ids(memory, 0) == ["1", "2"]
    assert enforced_action(memory, 0, MINIWOB) == ""  # B=click id=1 already failed: the planner decides
    # the original code enforces it all the same (on an id the env does not refuse)
    assert enforced_action(memory, 0, MINIWOB, again=True, refused=False) == "click id=1"


def test_no_disable_when_b_acts_on_the_same_element_and_none_for_keys():
    memory = update(
        empty_memory(),
        Suggestion(0, 'enter "x" to id=4', 'enter "x" to id=4'),
        steps("click id=4"),
        "r",
        "failed",
        interface=MINIWOB,
    )
    assert disabled_ids(memory, 0) == [] and enforced_action(memory, 0, MINIWOB) == 'enter "x" to id=4'
    memory = update(
        empty_memory(),
        Suggestion(0, "press Enter", "press Enter"),
        steps("press Tab"),
        "r",
        "failed",
        interface=MINIWOB,
    )
    assert disabled_ids(memory, 0) == [] and memory["entries"]["0"]["failed"] == ["press Tab"]


def test_the_paper_disables_a_failed_click_whatever_b_is_unless_b_is_to_be_taken_on_it():
    def disabled_after(b_text: str, b_action: str, *before: str) -> list[str]:
        memory = empty_memory()
        for earlier in before:  # earlier trials tried these at step 0
            memory = update(memory, Suggestion(0, "x", ""), steps(earlier), "r", "failed", interface=MINIWOB)
        return disabled_ids(
            update(memory, Suggestion(0, b_text, b_action), steps("click id=4"), "r", "failed", interface=MINIWOB), 0
        )

    assert disabled_after("press ENTER", "press Enter") == ["4"]  # B is not a click: the original keeps id=4
    assert disabled_after("tick C", "") == ["4"]
    assert disabled_after("click id=4", "click id=4") == ["4"]  # B is the failed click itself: not taken again
    assert disabled_after('enter "x" to id=4', 'enter "x" to id=4') == []  # B is taken on id=4
    assert disabled_after('enter "x" to id=4', 'enter "x" to id=4', 'enter "x" to id=4') == ["4"]  # B failed too


def original_disables(taken: str, b_written: str) -> bool:
    """ReflectionMemory.update_mem of the paper's code: both categorised as clicks, other first number."""

    def is_click(action: str) -> bool:
        return any(action.lower().startswith(p) for p in ("click", "tap", "move"))

    def first_number(action: str) -> str:
        matched = re.search(r"\d+", action)
        return matched.group() if matched else "N/A"

    return is_click(taken) and is_click(b_written) and first_number(b_written) != first_number(taken)


def test_the_original_codes_rule_matches_it_on_many_suggestions():
    rng = random.Random(7)
    written = [
        "click id={n}.",
        "Click id={n}",
        "tap id={n}",
        "click the 2nd box (id={n})",
        "click the Submit button",
        "press ENTER",
        'enter "x" to id={n}',
        "have clicked id={n}",
        "move to id={n}",
        "select id={n}",
    ]
    for _ in range(1000):
        taken = f"click id={rng.randint(1, 4)}"
        b = rng.choice(written).format(n=rng.randint(1, 4))
        parsed = parse_reflection(f"For action index=1, you should {b}", 1, MINIWOB)
        memory = update(empty_memory(), parsed, steps(taken), "r", "when_b_clicks", interface=MINIWOB)
        assert (disabled_ids(memory, 0) == [taken[9:]]) == original_disables(taken, b), (taken, b)
    memory = update(
        empty_memory(),
        parse_reflection("For action index=1, you should press ENTER.", 1, MINIWOB),
        steps("click id=4"),
        "r",
        "when_b_clicks",
        interface=MINIWOB,
    )
    assert disabled_ids(memory, 0) == [] and memory["entries"]["0"]["failed"] == ["click id=4"]


def test_suggestion_past_the_end_has_no_failed_action():
    memory = update(
        empty_memory(),
        Suggestion(2, "click id=9", "click id=9"),
        steps("click id=1", "click id=2"),
        "r",
        "when_b_clicks",
        interface=MINIWOB,
    )
    assert memory["entries"]["2"]["failed"] == [] and len(memory["replay"]) == 2


def test_hiding_ids_removes_only_the_id_attribute():
    screen = '<button id=1 class="b">One</button>\n<button id=12>Twelve</button>'
    assert MINIWOB.without_elements(screen, ["1"]) == '<button class="b">One</button>\n<button id=12>Twelve</button>'


def test_a_click_worded_in_prose_is_enforced_on_its_first_number_as_the_original_code():
    s = parse_reflection("For action index=1, you should click the button with id=7.", 1, MINIWOB)
    assert s.action == "click id=7" and s.text == "click the button with id=7."
    assert parse_reflection("For action index=1, you should tap the 2nd box (id=7).", 1, MINIWOB).action == "click id=2"
    # what the original does not click is read with the env's grammar
    assert parse_reflection("For action index=1, you should click the OK button.", 1, MINIWOB).action == ""
    assert parse_reflection("For action index=1, you should press ENTER.", 1, MINIWOB).action == "press Enter"


def test_reading_b_only_by_the_grammar_is_an_option():
    s = parse_reflection("For action index=1, you should click the button with id=7.", 1, MINIWOB, reading="grammar")
    assert s.action == ""
