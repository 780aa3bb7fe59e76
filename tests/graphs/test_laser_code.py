"""LASER as the original laser_agent.py runs it (the code produced the published numbers):
behaviours the paper does not describe, each checked against a scripted run on WebShop."""

from __future__ import annotations

import pytest

from nodes.llm import model_for
from tests.graphs.laser_scripts import buy, call, goal_with_options, run, think


@pytest.fixture(scope="module")
async def shop_goal():
    return await goal_with_options()


def user_text(call_record) -> str:
    return str(call_record["messages"][1].content)


async def test_an_item_examined_before_is_asked_again_across_searches(shop_goal, write_script):
    """laser_agent.py: "items that have been clicked before do not match the user instruction, so
    the next action should be select a different item that have not been clicked before"."""
    task_id, goal, ids = shop_goal
    other = next(i for i in ids if i != goal["asin"])
    script = [
        think("search"),
        call("Search", keywords=goal["name"]),
        think("this one"),
        call("select_item", item_id=other),
        think("no"),
        call("Prev"),
        think("back to search"),
        call("Back_to_Search"),
        think("search again"),
        call("Search", keywords=goal["name"]),
        think("that one again"),
        call("select_item", item_id=other),  # examined in the first search: asked again
        call("select_item", item_id=goal["asin"]),
        think("buy"),
        buy(goal),
    ]
    spec = write_script(script)
    _, state = await run(spec, task_id, "reselect")
    calls = model_for(spec, 0.0, 512).calls
    again = user_text(calls[12])
    assert again.endswith(
        "Next action rationale: items that have been clicked before do not match the user instruction, "
        "so the next action should be select a different item that have not been clicked before."
    )
    assert [b["asin"] for b in state["buffer"]] == [other]  # never opened twice
    assert state["success"] is True


async def test_the_backup_check_waits_for_the_item_state_to_judge_a_13th_select(shop_goal, write_script):
    """laser_agent.py:319 checks ``counter < max_iter`` at the top of its loop only: an item selected
    as the 13th transition is judged by the item state, which may buy it (here with max_actions=4,
    so the mark is 2)."""
    task_id, goal, ids = shop_goal
    script = [
        think("search"),
        call("Search", keywords=goal["name"]),
        think("the goal"),
        call("select_item", item_id=goal["asin"]),  # transition 2: the mark
        think("it matches"),
        buy(goal),
    ]
    nodes, state = await run(write_script(script), task_id, "loop-top", max_actions=4)
    assert "backup" not in nodes and nodes[-3:] == ["item", "execute", "finish"]
    assert state["success"] is True and state["backup_used"] is False


async def test_each_transition_checks_the_backup_mark_after_a_select(shop_goal, write_script):
    """backup_check=each_transition: the select that reaches the mark starts the backup strategy."""
    task_id, goal, ids = shop_goal
    script = [
        think("search"),
        call("Search", keywords=goal["name"]),
        think("the goal"),
        call("select_item", item_id=goal["asin"]),
        think("the best"),
        call("select_item", item_id=goal["asin"]),
        think("options"),
        buy(goal),
    ]
    nodes, state = await run(
        write_script(script), task_id, "each-transition", max_actions=4, backup_check="each_transition"
    )
    assert nodes[-4:] == ["results", "execute", "backup", "finish"]
    assert state["backup_used"] is True
