"""LASER's backup strategy: at 13 transitions the best examined item is bought, as the
original back_up_agent does: choose an item, reopen it, choose *its* options, buy."""

from __future__ import annotations

import pytest

from envs.webshop.catalogue import load_catalogue
from nodes.runtime.llm import model_for
from tests.graphs.laser_scripts import buy_call, call, goal_with_options, options_step, run, think


@pytest.fixture(scope="module")
async def shop_goal():
    return await goal_with_options()


def wander(goal: dict, ids: list[str], end_on_goal: bool) -> list[dict]:
    """13 transitions without buying: examine four other items, then either open the goal
    (the 13th transition: with backup_check=each_transition the backup starts while the agent is
    on it) or go back to search."""
    others = [i for i in ids if i != goal["asin"]][:4]
    script = [think("search"), call("Search", keywords=goal["name"], max_price="1000000")]
    for other in others:
        script += [think("maybe"), call("select_item", item_id=other), think("no"), call("Prev")]
    script += [
        think("next"),
        call("Next"),
        think("back"),
        call("Back_to_Search"),
        think("search"),
        call("Search", keywords=goal["name"]),
    ]
    script += (
        [think("this one"), call("select_item", item_id=goal["asin"])]
        if end_on_goal
        else [think("nothing"), call("Next")]
    )
    return script


def foreign_value(goal: dict, ids: list[str]) -> tuple[str, str]:
    """A customization type of the goal's item and a value another examined item offers
    for it that the goal's item does not."""
    catalogue = load_catalogue()
    mine = catalogue.product(goal["asin"])["options"]
    for other in ids:
        for name, values in catalogue.product(other)["options"].items():
            extra = [v for v in values if name in mine and v not in mine[name]]
            if extra:
                return name, extra[0]
    return next(iter(mine)), "a value no item has"


def backup_steps(state: dict) -> list[str]:
    return [s["action"] for s in state["trajectory"] if s["node"] == "backup"]


async def test_the_item_being_examined_is_chosen_reopened_and_bought_with_its_options(shop_goal, write_script):
    task_id, goal, ids = shop_goal
    name, wrong = foreign_value(goal, ids)
    script = wander(goal, ids, end_on_goal=True) + [
        think("the goal item is the best"),
        call("select_item", item_id=goal["asin"]),
        {"content": ", ".join(goal["goal_options"])},
        think("choose its options"),
        call("Buy_Now", **{**goal["goal_options"], name: wrong}),
        buy_call(goal),
    ]
    spec = write_script(script)
    nodes, state = await run(spec, task_id, "backup-current", backup_check="each_transition", argument_enums=True)
    calls = model_for(spec, 0.0, 512).calls
    assert nodes[-4:] == ["results", "execute", "backup", "finish"]  # select_item was the 13th transition
    assert state["transitions"] == 13  # the backup's purchase is not counted (the original does not)
    # the buffer held four items; the item being examined was offered and chosen
    assert len(state["buffer"]) == 4 and goal["asin"] not in [b["asin"] for b in state["buffer"]]
    listing = str(calls[-6]["messages"][1].content)
    assert f"[button] {goal['asin']} [button_]" in listing and all(
        f"[button] {b['asin']}" in listing for b in state["buffer"]
    )
    # with argument_enums only that item's values are accepted: another item's value is refused and asked again
    assert any(f"{wrong!r} is not a valid {name} here" in str(m.content) for m in calls[-1]["messages"])
    assert backup_steps(state) == [f"click[{goal['goal_options'][n]}]" for n in goal["goal_options"]] + [
        "click[Buy Now]"
    ]
    assert state["success"] is True and state["backup_used"] is True and state["stop_reason"] == "bought (backup)"


async def test_a_buffer_item_is_reopened_before_its_options_are_clicked(shop_goal, write_script):
    task_id, goal, ids = shop_goal
    script = wander(goal, ids, end_on_goal=False)
    first = script[3]["tool_calls"][0]["args"]["item_id"]  # the first item examined
    options = load_catalogue().product(first)["options"]
    chosen = {n: v[-1] for n, v in options.items() if v}
    script += [
        think("the first one"),
        call("select_item", item_id=first),
        {"content": f"Customization types: {', '.join(chosen)}"},
        think("options"),
        call("Buy_Now", **chosen),
    ]
    spec = write_script(script)
    nodes, state = await run(spec, task_id, "backup-buffer")
    assert nodes[-4:] == ["results", "execute", "backup", "finish"] and state["transitions"] == 13
    assert backup_steps(state) == [f"click[{v}]" for v in chosen.values()] + ["click[Buy Now]"]
    assert f"\nasin\n{first}\n" in state["observation"]  # the done page names the purchase
    assert state["done"] is True and state["stop_reason"] == "bought (backup)"


async def test_an_invalid_backup_answer_is_asked_again(shop_goal, write_script):
    task_id, goal, ids = shop_goal
    script = wander(goal, ids, end_on_goal=True) + [
        think("pick"),
        call("select_item", item_id="B000NOTHERE"),
        call("select_item", item_id=goal["asin"]),
        *options_step(goal),
    ]
    spec = write_script(script)
    _, state = await run(spec, task_id, "backup-retry", backup_check="each_transition")
    calls = model_for(spec, 0.0, 512).calls
    assert any("'B000NOTHERE' is not a valid item_id here" in str(m.content) for m in calls[-4]["messages"])
    assert state["success"] is True


async def test_no_valid_backup_answer_buys_nothing_and_says_so(shop_goal, write_script):
    task_id, goal, ids = shop_goal
    script = wander(goal, ids, end_on_goal=False) + [
        think("pick"),
        call("select_item", item_id="B000NOTHERE"),
        call("Prev"),
        {"content": "no function"},
    ]
    spec = write_script(script)
    nodes, state = await run(spec, task_id, "backup-fails")
    assert nodes[-2:] == ["backup", "finish"]
    assert backup_steps(state) == []  # never the last examined item without options
    assert state["done"] is False and state["reward"] == 0.0 and state["backup_used"] is False
    assert state["stop_reason"].startswith("not bought: the backup strategy failed (no valid item choice in 3 answers")


async def test_without_examined_items_the_cap_is_reached(shop_goal, write_script):
    task_id, goal, ids = shop_goal
    script = [think("search"), call("Search", keywords=goal["name"])]
    for _ in range(7):
        script += [
            think("next"),
            call("Next"),
            think("back"),
            call("Back_to_Search"),
            think("search"),
            call("Search", keywords=goal["name"]),
        ]
    spec = write_script(script[:30])
    nodes, state = await run(spec, task_id, "backup-empty")
    assert "backup" not in nodes and state["transitions"] == 15
    assert state["stop_reason"] == (
        "not bought: step cap (15 transitions) reached with no examined item for the backup strategy"
    )


async def test_with_in_buy_now_the_backup_asks_the_options_in_one_call(shop_goal, write_script):
    """customise=in_buy_now: no customisation types asked; the values' rationale, then Buy_Now
    with one value per customization type of the reopened item."""
    task_id, goal, ids = shop_goal
    script = wander(goal, ids, end_on_goal=False)
    first = script[3]["tool_calls"][0]["args"]["item_id"]
    chosen = {n: v[0] for n, v in load_catalogue().product(first)["options"].items() if v}
    script += [think("the first one"), call("select_item", item_id=first), think("options"), call("Buy_Now", **chosen)]
    spec = write_script(script)
    _, state = await run(spec, task_id, "backup-in-buy-now", customise="in_buy_now")
    assert len(model_for(spec, 0.0, 512).calls) == len(script)
    assert backup_steps(state) == [f"click[{v}]" for v in chosen.values()] + ["click[Buy Now]"]
    assert state["stop_reason"] == "bought (backup)"
