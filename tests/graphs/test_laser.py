"""LASER on the real WebShop env, driven by scripted models: the states, their tools, the
item state's view, and how steps are counted."""

from __future__ import annotations

import json

import pytest

from nodes.laser.webshop import WEBSHOP
from nodes.runtime.llm import model_for
from tests.graphs.laser_scripts import (
    buy,
    buy_call,
    call,
    goal_with_options,
    run,
    think,
    tour_script,
)

STATE_MARKERS = {  # a sentence only that state's system instruction contains
    "search": "[button] Search [button_] (generate a search query",
    "results": "At this stage, you want to select an item",
    "item": "At this stage, you want to verify if the item matches",
}


@pytest.fixture(scope="module")
async def shop_goal():
    return await goal_with_options()


def state_of_call(messages) -> str | None:
    system = str(messages[0].content)
    return next((state for state, marker in STATE_MARKERS.items() if marker in system), None)


def shown(calls, index: int) -> str:
    """The observation the model was shown in call ``index`` (its user message)."""
    return str(calls[index]["messages"][1].content)


async def test_every_figure_1_edge_and_a_perfect_purchase(shop_goal, write_script):
    task_id, goal, ids = shop_goal
    spec = write_script(tour_script(goal, ids))
    nodes, state = await run(spec, task_id, "tour")
    assert all(after == "execute" for before, after in zip(nodes, nodes[1:]) if before in ("search", "results"))
    visited = [node for node in nodes if node != "execute"]  # each state's call goes through execute
    edges = set(zip(visited, visited[1:]))
    for edge in [
        ("search", "results"),
        ("results", "item"),
        ("item", "item"),
        ("item", "results"),
        ("results", "results"),
        ("results", "search"),
        ("item", "finish"),
    ]:
        assert edge in edges, edge
    assert state["success"] is True and state["reward"] == pytest.approx(1.0)
    # 9 steps, 8 transitions: reading the description is not one (as in laser_agent.py).
    assert len(state["history"]) == 9 and state["transitions"] == 8
    assert state["stop_reason"] == "bought"
    assert [b["asin"] for b in state["buffer"]] == [ids[1] if ids[0] == goal["asin"] else ids[0]]
    assert "Action: Buy_Now" in state["history"][-1]
    assert state["usage"]["model_calls"] == 21  # 9 steps of two calls; Buy_Now's options step adds 3


async def test_the_model_is_only_offered_the_current_states_tools(shop_goal, write_script):
    task_id, goal, ids = shop_goal
    spec = write_script(tour_script(goal, ids))
    await run(spec, task_id, "offered")
    calls = model_for(spec, 0.0, 512).calls
    checked = 0
    steps = calls[:18]  # 9 steps of two calls, then Buy_Now's options step
    for rationale_call, action_call in zip(steps[::2], steps[1::2]):
        state = state_of_call(rationale_call["messages"])
        assert rationale_call["tools"] == []
        assert set(action_call["tools"]) <= set(WEBSHOP.transitions()[state]), (state, action_call["tools"])
        checked += 1
    assert checked == 9
    # the state instructions reach the model with the paper's single braces
    assert "{the user instruction}" in str(calls[0]["messages"][0].content)
    assert "{{" not in str(calls[0]["messages"][0].content) + str(calls[1]["messages"][0].content)


async def test_visited_items_are_shown_as_clicked(shop_goal, write_script):
    task_id, goal, ids = shop_goal
    spec = write_script(tour_script(goal, ids))
    await run(spec, task_id, "clicked")
    calls = model_for(spec, 0.0, 512).calls
    other = ids[1] if ids[0] == goal["asin"] else ids[0]
    # the fifth step looks at the results page again after examining `other`
    assert f"[clicked button] {other} [clicked button_]" in shown(calls, 8)


async def test_search_arguments_become_the_item_states_target_details(shop_goal, write_script):
    task_id, goal, ids = shop_goal
    script = [
        think("search"),
        call("Search", keywords=goal["name"], max_price="50.00"),
        think("open"),
        call("select_item", item_id=goal["asin"]),
        think("buy"),
        *buy(goal),
    ]
    spec = write_script(script)
    _, state = await run(spec, task_id, "target")
    assert state["target"] == {"keywords": goal["name"], "max_price": "50.00"}
    item_view = shown(model_for(spec, 0.0, 512).calls, 4)
    # laser_agent.py's block: the Search call's arguments; the item state shows no history
    assert item_view.endswith(
        f"[button] Buy Now [button_]\n\nTarget item details:\nkeywords: {goal['name']}\nmax_price: 50.00"
    )
    assert "Action: Search(" in state["history"][0] and '"max_price": "50.00"' in state["history"][0]


async def test_a_detail_page_adds_only_its_own_text_once(shop_goal, write_script):
    task_id, goal, ids = shop_goal
    script = [
        think("search"),
        call("Search", keywords=goal["name"]),
        think("open"),
        call("select_item", item_id=goal["asin"]),
        think("features?"),
        call("Features"),
        think("features again"),
        call("Features"),
        call("Description"),
        think("buy"),
        *buy(goal),
    ]
    spec = write_script(script)
    _, state = await run(spec, task_id, "details")
    calls = model_for(spec, 0.0, 512).calls
    # After Features: the item page, then "features:" and the bullet points, nothing of the sub-page.
    view = shown(calls, 6)
    page, features, target = view.split("\n\n")
    assert page.startswith("Current observation:\nInstruction:") and page.endswith("[button] Buy Now [button_]")
    assert features.startswith("features:\n") and features.count("[button]") == 0
    assert target.startswith("Target item details")
    assert view.count("Instruction:") == 1
    # Features is not offered again; asked for anyway it is refused, Description is read instead.
    assert "Features" not in calls[7]["tools"] and "Description" in calls[7]["tools"]
    assert any("'Features' is not available" in str(m.content) for m in calls[8]["messages"])
    assert state["success"] is True
    after = shown(calls, 9)
    assert after.count("features:\n") == 1 and after.count("description:\n") == 1
    assert state["transitions"] == 3  # Search, select_item, Buy_Now: details are not transitions


async def test_a_detail_page_adds_its_first_line_as_the_original_and_its_full_text_as_the_paper(
    shop_goal, write_script
):
    task_id, goal, ids = shop_goal
    script = [
        think("search"),
        call("Search", keywords=goal["name"]),
        think("open"),
        call("select_item", item_id=goal["asin"]),
        think("features?"),
        call("Features"),
        think("buy"),
        *buy(goal),
    ]
    full_spec, first_spec = write_script(script), write_script(script)
    await run(full_spec, task_id, "full", detail_text="full")
    await run(first_spec, task_id, "first")  # the default: the original laser_agent.py's first line
    full = shown(model_for(full_spec, 0.0, 512).calls, 6).split("features:\n")[1].split("\n\nTarget")[0]
    first = shown(model_for(first_spec, 0.0, 512).calls, 6).split("features:\n")[1].split("\n\nTarget")[0]
    assert "\n" in full and first == full.split("\n")[0].strip()


async def test_buy_now_needs_one_value_per_customization_type(shop_goal, write_script):
    task_id, goal, ids = shop_goal
    names = sorted(goal["goal_options"])
    partial = {names[0]: goal["goal_options"][names[0]]}
    script = [
        think("search"),
        call("Search", keywords=goal["name"]),
        think("open"),
        call("select_item", item_id=goal["asin"]),
        think("buy"),
        call("Buy_Now", **partial),
        call("Buy_Now", **{**goal["goal_options"], "colour": "x"}),
        buy_call(goal),
    ]
    spec = write_script(script)
    _, state = await run(spec, task_id, "one-per-type", customise="in_buy_now")
    calls = model_for(spec, 0.0, 512).calls
    assert any(f"needs the argument {names[1]!r}" in str(m.content) for m in calls[6]["messages"])
    assert any("has no argument 'colour'" in str(m.content) for m in calls[7]["messages"])
    assert state["success"] is True and state["transitions"] == 3
    assert all(s["node"] == "execute" for s in state["trajectory"])  # every env step is execute's
    assert [s["action"] for s in state["trajectory"]] == [
        f"search[{goal['name']}]",
        f"click[{goal['asin']}]",
        *[f"click[{goal['goal_options'][n]}]" for n in goal["goal_options"]],
        "click[Buy Now]",
    ]


async def test_a_function_of_another_state_is_refused_and_asked_again(shop_goal, write_script):
    task_id, goal, ids = shop_goal
    script = [
        think("buy right away"),
        call("Buy_Now"),
        call("select_item", item_id="X"),
        call("Search", keywords=goal["name"]),
        think("open it"),
        call("select_item", item_id=goal["asin"]),
        think("buy"),
        *buy(goal),
    ]
    spec = write_script(script)
    _, state = await run(spec, task_id, "refused")
    calls = model_for(spec, 0.0, 512).calls
    retry = [str(m.content) for m in calls[2]["messages"]]
    assert any("'Buy_Now' is not available in the current state" in m for m in retry)
    assert any("can only use one of these functions: Search" in m for m in retry)
    assert calls[2]["tools"] == ["Search"] and calls[3]["tools"] == ["Search"]
    assert state["success"] is True
    assert state["transitions"] == 3  # refusals are re-asked within the same step


async def test_with_argument_enums_an_item_id_not_on_the_page_is_refused(shop_goal, write_script):
    task_id, goal, ids = shop_goal
    script = [
        think("search"),
        call("Search", keywords=goal["name"]),
        think("pick"),
        call("select_item", item_id="B000NOTHERE"),
        call("select_item", item_id=goal["asin"]),
        think("buy"),
        *buy(goal),
    ]
    spec = write_script(script)
    _, state = await run(spec, task_id, "bad-id", argument_enums=True)
    retry = [str(m.content) for m in model_for(spec, 0.0, 512).calls[4]["messages"]]
    assert any("'B000NOTHERE' is not a valid item_id here" in m for m in retry)
    assert state["success"] is True


async def test_a_refused_step_is_not_a_transition_and_repeated_refusals_stop(shop_goal, write_script):
    task_id, goal, ids = shop_goal
    script = []
    for _ in range(3):  # three steps, each answer refused three times
        script += [think("hmm"), call("Buy_Now"), call("Prev"), call("Next")]
    spec = write_script(script)
    nodes, state = await run(spec, task_id, "stuck")
    assert nodes == ["start", "search", "search", "search", "finish"]
    assert state["transitions"] == 0 and state["refusals"] == 3 and state["done"] is False
    assert state["stop_reason"] == "not bought: the model's answers were refused 3 steps in a row"


async def test_without_backup_the_cap_ends_the_run_unbought(shop_goal, write_script):
    task_id, goal, ids = shop_goal
    script = [think("search"), call("Search", keywords=goal["name"])]
    for _ in range(7):
        script += [
            think("next page"),
            call("Next"),
            think("back"),
            call("Back_to_Search"),
            think("search"),
            call("Search", keywords=goal["name"]),
        ]
    spec = write_script(script[:30])
    nodes, state = await run(spec, task_id, "cap", backup=False)
    assert state["transitions"] == 15 and nodes[-1] == "finish"
    assert state["done"] is False and state["reward"] == 0.0
    assert state["stop_reason"] == "not bought: step cap (15 transitions) reached, backup strategy off"


async def test_json_mode_offers_no_tools_and_parses_the_reply(shop_goal, write_script):
    task_id, goal, ids = shop_goal
    script = [
        think("search"),
        {"content": json.dumps({"name": "Search", "arguments": {"keywords": goal["name"]}})},
        think("open"),
        {
            "content": "I choose ```json\n"
            + json.dumps({"name": "select_item", "arguments": {"item_id": goal["asin"]}})
            + "\n```"
        },
        think("buy"),
        {"content": "not json at all"},
        {"content": json.dumps({"name": "Buy_Now", "arguments": {}})},
        {"content": ", ".join(goal["goal_options"])},
        think("the goal's options"),
        {"content": json.dumps({"name": "Buy_Now", "arguments": goal["goal_options"]})},
    ]
    spec = write_script(script)
    _, state = await run(spec, task_id, "json", tool_mode="json")
    calls = model_for(spec, 0.0, 512).calls
    assert all(c["tools"] == [] for c in calls)
    assert '"name": "select_item"' in str(calls[3]["messages"][0].content)
    assert state["success"] is True
