"""Parsing the YES/NO, plan and answer replies, and the re-ask loop with feedback."""

from __future__ import annotations

import pytest

from nodes.da.ask import ask, final_answer, plan_steps, yes_no
from nodes.runtime.llm import Caller, model_for
from nodes.runtime.parse import ParseError


@pytest.mark.parametrize(
    ("reply", "verdict"),
    [
        ("YES", True),
        ("NO", False),
        ("The action is to click 'No thanks'. YES", True),
        ("The action is to open the order. Answer: NO", False),
        ("yes, the task is completed", True),
        ("The step is done.\nno", False),
    ],
)
def test_yes_no_reads_the_verdict_not_the_description(reply, verdict):
    assert yes_no(reply) is verdict


def test_a_reply_without_verdict_is_feedback():
    with pytest.raises(ParseError, match="YES or NO"):
        yes_no("The action is to open the order page.")


def test_the_answer_follows_answer_marker():
    assert final_answer("The frame is gold.\n###Answer: Gold\n") == "Gold"
    assert final_answer("### Answer\nWalnut  Brown") == "Walnut Brown"
    with pytest.raises(ParseError, match="###Answer"):
        final_answer("Gold")


def test_plan_steps_follow_the_last_list_marker():
    reply = "The old plan failed:\n1. it opened My Account\n\nList:\n1. Click 'My Orders'.\n2. Open the order."
    assert plan_steps(reply) == ["Click 'My Orders'.", "Open the order."]
    assert plan_steps("1. Scroll down\n2) Click it") == ["Scroll down", "Click it"]
    with pytest.raises(ParseError, match="numbered list"):
        plan_steps("I cannot help.")


async def test_ask_re_asks_with_feedback_then_gives_up(write_script):
    spec = write_script([{"content": "maybe"}, {"content": "perhaps"}, {"content": "YES"}])
    llm = Caller(spec, temperature=None, max_tokens=64, calls_before=0)
    answer = await ask(llm, "Is it done?", yes_no, reasks=1)
    assert answer.value is None and answer.text == "perhaps"
    assert llm.usage["model_calls"] == 2
    second = model_for(spec, None, 64).calls[1]["messages"]
    assert second[-1].content.startswith("Your answer could not be used: no verdict found")
    again = await ask(llm, "Is it done?", yes_no, reasks=0)
    assert again.value is True and llm.position == 3


def test_an_explanation_after_the_answer_is_left_out():
    assert final_answer("###Answer: Gold\n\nThe frame in order 174 is gold.") == "Gold"
    assert final_answer("###Answer:\nYoga mat\nWater bottle") == "Yoga mat Water bottle"


def test_a_repeated_remedy_is_pushed_as_the_paper_does_unless_remedies_must_differ():
    from envs.webarena.interface import INTERFACE
    from nodes.da.remedy import _new_action

    proposed = ["click [3]"]
    assert _new_action("click [3]", proposed, INTERFACE, distinct=False) == "click [3]"
    with pytest.raises(ParseError, match="already proposed"):
        _new_action("click [3]", proposed, INTERFACE, distinct=True)
    assert _new_action("click [4]", proposed, INTERFACE, distinct=True) == "click [4]"
