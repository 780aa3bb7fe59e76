"""Structured thought management: parsing reflections and updating the step-keyed memory."""

import pytest

from nodes.sr.memory import (ReflectionError, Suggestion, disabled_ids, enforced_action, hide_ids,
                             parse_reflection, update)
from nodes.sr.state import StepRecord, empty_memory


def steps(*actions):
    return [StepRecord(action=a, source="plan", description=f"did {a}", valid=True) for a in actions]


def test_parse_reflection_reads_index_and_action():
    s = parse_reflection('For action index=2, you should click id=7 (the "OK" button).', 3, may_extend=False)
    assert s == Suggestion(step=1, text='click id=7 (the "OK" button).', action="click id=7")
    s = parse_reflection("Reflection: for action index = 1, you should have entered \"bob\" to id=3.", 1,
                         may_extend=False)
    assert s.action == 'enter "bob" to id=3'


def test_parse_reflection_keeps_prose_suggestions_unenforceable():
    s = parse_reflection("For action index=1, you should select the second tab.", 2, may_extend=False)
    assert s.step == 0 and s.action == "" and s.text == "select the second tab."


@pytest.mark.parametrize("text", ["I do not know.", "For action index=4, you should click id=1.",
                                  "For action index=0, you should click id=1.", "index=1 click id=2"])
def test_malformed_or_out_of_range_reflections_raise_with_a_reason(text):
    with pytest.raises(ReflectionError):
        parse_reflection(text, 3, may_extend=False)


def test_index_after_the_last_action_only_when_the_trial_was_incomplete():
    assert parse_reflection("For action index=3, you should click id=9.", 2, may_extend=True).step == 2
    with pytest.raises(ReflectionError):
        parse_reflection("For action index=3, you should click id=9.", 2, may_extend=False)


def test_update_keeps_prefix_enforces_b_disables_failed_click_and_clears_later_entries():
    trial = steps("click id=1", "click id=2", "click id=3", "click id=4")
    memory = update(empty_memory(), Suggestion(3, "click id=5", "click id=5"), trial, "r4")
    assert list(memory["entries"]) == ["3"] and [s["action"] for s in memory["replay"]] == [
        "click id=1", "click id=2", "click id=3"]
    assert memory["replay"][0] == StepRecord(action="click id=1", source="replay", description="did click id=1",
                                             valid=True, stage=0)
    assert memory["reflections"] == ["r4"]
    memory = update(memory, Suggestion(1, "click id=6", "click id=6"), trial, "r2")
    assert list(memory["entries"]) == ["1"]  # the entry for step 3 is outdated
    assert enforced_action(memory, 1) == "click id=6" and disabled_ids(memory, 1) == ["2"]
    assert len(memory["replay"]) == 1
    assert memory["reflections"] == ["r4", "r2"]  # every statement, outdated ones too


def test_failed_attempts_accumulate_and_a_failed_b_is_not_enforced():
    memory = update(empty_memory(), Suggestion(0, "click id=2", "click id=2"), steps("click id=1"), "r")
    memory = update(memory, Suggestion(0, "click id=1", "click id=1"), steps("click id=2"), "r")
    assert memory["entries"]["0"]["failed"] == ["click id=1", "click id=2"]
    assert disabled_ids(memory, 0) == ["1", "2"]
    assert enforced_action(memory, 0) == ""  # B=click id=1 already failed: the planner decides


def test_no_disable_when_b_acts_on_the_same_element_and_none_for_keys():
    memory = update(empty_memory(), Suggestion(0, 'enter "x" to id=4', 'enter "x" to id=4'),
                    steps("click id=4"), "r")
    assert disabled_ids(memory, 0) == [] and enforced_action(memory, 0) == 'enter "x" to id=4'
    memory = update(empty_memory(), Suggestion(0, "press Enter", "press Enter"), steps("press Tab"), "r")
    assert disabled_ids(memory, 0) == [] and memory["entries"]["0"]["failed"] == ["press Tab"]


def test_suggestion_past_the_end_has_no_failed_action():
    memory = update(empty_memory(), Suggestion(2, "click id=9", "click id=9"), steps("click id=1", "click id=2"), "r")
    assert memory["entries"]["2"]["failed"] == [] and len(memory["replay"]) == 2


def test_hide_ids_removes_only_the_id_attribute():
    screen = '<button id=1 class="b">One</button>\n<button id=12>Twelve</button>'
    assert hide_ids(screen, ["1"]) == '<button class="b">One</button>\n<button id=12>Twelve</button>'
