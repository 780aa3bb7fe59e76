"""LASER on the real WebShop env, driven by scripted models."""

from __future__ import annotations

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from graphs.context import Context
from graphs.laser import build_graph
from nodes.laser.tools import STATE_FUNCTIONS
from nodes.llm import model_for
from tests.graphs.laser_scripts import call, goal_with_options, think, tour_script

STATE_MARKERS = {  # a sentence only that state's system instruction contains
    "search": "[button] Search [button_] (generate a search query",
    "results": "At this stage, you want to select an item",
    "item": "At this stage, you want to verify if the item matches",
}


@pytest.fixture(scope="module")
async def shop_goal():
    return await goal_with_options()


async def run(spec: str, task_id: str, thread: str, **context):
    graph = build_graph(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": thread}, "recursion_limit": 200}
    nodes: list[str] = []
    async for chunk in graph.astream({"task_id": task_id}, config, context=Context(model=spec, env="webshop", **context),
                                     stream_mode="updates"):
        nodes.extend(chunk)
    state = (await graph.aget_state(config)).values
    return nodes, state


def state_of_call(messages) -> str | None:
    system = str(messages[0].content)
    return next((state for state, marker in STATE_MARKERS.items() if marker in system), None)


async def test_every_figure_1_edge_and_a_perfect_purchase(shop_goal, write_script):
    task_id, goal, ids = shop_goal
    spec = write_script(tour_script(goal, ids))
    nodes, state = await run(spec, task_id, "tour")
    edges = set(zip(nodes, nodes[1:]))
    for edge in [("search", "results"), ("results", "item"), ("item", "item"), ("item", "results"),
                 ("results", "results"), ("results", "search"), ("item", "finish")]:
        assert edge in edges, edge
    assert state["success"] is True and state["reward"] == pytest.approx(1.0)
    assert state["transitions"] == 9
    assert state["stop_reason"] == "bought"
    assert [b["asin"] for b in state["buffer"]] == [ids[1] if ids[0] == goal["asin"] else ids[0]]
    assert len(state["history"]) == 9 and "Action: Buy_Now" in state["history"][-1]
    assert state["usage"]["model_calls"] == 18


async def test_the_model_is_only_offered_the_current_states_tools(shop_goal, write_script):
    task_id, goal, ids = shop_goal
    spec = write_script(tour_script(goal, ids))
    await run(spec, task_id, "offered")
    calls = model_for(spec, 0.0, 512).calls
    checked = 0
    for rationale_call, action_call in zip(calls[::2], calls[1::2]):
        state = state_of_call(rationale_call["messages"])
        assert rationale_call["tools"] == []
        assert set(action_call["tools"]) <= set(STATE_FUNCTIONS[state]), (state, action_call["tools"])
        checked += 1
    assert checked == 9


async def test_visited_items_are_shown_as_clicked(shop_goal, write_script):
    task_id, goal, ids = shop_goal
    spec = write_script(tour_script(goal, ids))
    await run(spec, task_id, "clicked")
    calls = model_for(spec, 0.0, 512).calls
    other = ids[1] if ids[0] == goal["asin"] else ids[0]
    # the fifth step looks at the results page again after examining `other`
    shown = str(calls[8]["messages"][1].content)
    assert f"[clicked button] {other} [clicked button_]" in shown


async def test_a_function_of_another_state_is_refused_and_asked_again(shop_goal, write_script):
    task_id, goal, ids = shop_goal
    script = [think("buy right away"), call("Buy_Now"), call("select_item", item_id="X"),
              call("Search", keywords=goal["name"]),
              think("open it"), call("select_item", item_id=goal["asin"]),
              think("buy"), call("Buy_Now", customization_options=list((goal["goal_options"] or {}).values()))]
    spec = write_script(script)
    _, state = await run(spec, task_id, "refused")
    calls = model_for(spec, 0.0, 512).calls
    retry = [str(m.content) for m in calls[2]["messages"]]
    assert any("'Buy_Now' is not available in the current state" in m for m in retry)
    assert any("can only use one of these functions: Search" in m for m in retry)
    assert calls[2]["tools"] == ["Search"] and calls[3]["tools"] == ["Search"]
    assert state["success"] is True
    assert state["transitions"] == 3  # refusals are re-asked within the same step


async def test_an_item_id_not_on_the_page_is_refused(shop_goal, write_script):
    task_id, goal, ids = shop_goal
    script = [think("search"), call("Search", keywords=goal["name"]),
              think("pick"), call("select_item", item_id="B000NOTHERE"), call("select_item", item_id=goal["asin"]),
              think("buy"), call("Buy_Now", customization_options=list((goal["goal_options"] or {}).values()))]
    spec = write_script(script)
    _, state = await run(spec, task_id, "bad-id")
    retry = [str(m.content) for m in model_for(spec, 0.0, 512).calls[4]["messages"]]
    assert any("'B000NOTHERE' is not a valid item_id here" in m for m in retry)
    assert state["success"] is True


async def test_backup_buys_from_the_buffer_at_step_13(shop_goal, write_script):
    task_id, goal, ids = shop_goal
    script = [think("search"), call("Search", keywords=goal["name"]),
              think("open"), call("select_item", item_id=goal["asin"])]
    for _ in range(5):  # 5 x (Description, Prev) would be 10 more; wander until the budget runs out
        script += [think("details"), call("Description"), think("back"), call("Prev"),
                   think("again"), call("select_item", item_id=goal["asin"])]
    script = script[:26]  # 13 steps of (rationale, action)
    script.append(call("buy_backup", item_id=goal["asin"], customization_options=list(goal["goal_options"].values())))
    spec = write_script(script)
    nodes, state = await run(spec, task_id, "backup")
    assert nodes[-2:] == ["backup", "finish"]
    assert state["backup_used"] is True and state["stop_reason"] == "bought (backup)"
    assert state["transitions"] == 14
    assert state["success"] is True  # the goal product was examined, rejected, then bought as backup


async def test_without_backup_the_cap_ends_the_run_unbought(shop_goal, write_script):
    task_id, goal, ids = shop_goal
    script = [think("search"), call("Search", keywords=goal["name"])]
    for _ in range(7):
        script += [think("next page"), call("Next"), think("back"), call("Back_to_Search"),
                   think("search"), call("Search", keywords=goal["name"])]
    spec = write_script(script[:30])
    nodes, state = await run(spec, task_id, "cap", backup=False)
    assert state["transitions"] == 15 and nodes[-1] == "finish"
    assert state["done"] is False and state["reward"] == 0.0
    assert "step cap" in state["stop_reason"]


async def test_json_mode_offers_no_tools_and_parses_the_reply(shop_goal, write_script):
    task_id, goal, ids = shop_goal
    options = list(goal["goal_options"].values())
    import json as _json
    script = [think("search"), {"content": _json.dumps({"name": "Search", "arguments": {"keywords": goal["name"]}})},
              think("open"), {"content": "I choose ```json\n" + _json.dumps({"name": "select_item", "arguments": {"item_id": goal["asin"]}}) + "\n```"},
              think("buy"), {"content": "not json at all"},
              {"content": _json.dumps({"name": "Buy_Now", "arguments": {"customization_options": options}})}]
    spec = write_script(script)
    _, state = await run(spec, task_id, "json", tool_mode="json")
    calls = model_for(spec, 0.0, 512).calls
    assert all(c["tools"] == [] for c in calls)
    assert '"name": "select_item"' in str(calls[3]["messages"][0].content)
    assert state["success"] is True
