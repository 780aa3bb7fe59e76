"""Scripted LASER runs on real WebShop goals, built from the goal itself as a person would:
search for the product's name, open it, choose the goal's options and buy it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver

from envs import make_env
from graphs.laser import build_graph
from nodes.laser.context import LaserContext


def think(text: str) -> dict[str, Any]:
    return {"content": f"Rationale: {text}"}


def call(name: str, **args: Any) -> dict[str, Any]:
    return {"content": "", "tool_calls": [{"name": name, "args": args}]}


def buy_call(goal: dict[str, Any]) -> dict[str, Any]:
    """Buy_Now with the goal's value for each customization type."""
    return call("Buy_Now", **goal["goal_options"])


def options_step(goal: dict[str, Any]) -> list[dict[str, Any]]:
    """The customisation step after a bare Buy_Now (laser_agent.py's): the item's types, the
    values' rationale, Buy_Now with the goal's values."""
    return [{"content": ", ".join(goal["goal_options"])}, think("choose the goal's options"), buy_call(goal)]


def buy(goal: dict[str, Any]) -> list[dict[str, Any]]:
    """Buy the goal's item as laser_agent.py does: Buy_Now without arguments, then its options."""
    return [call("Buy_Now"), *options_step(goal)]


async def goal_with_options(limit: int = 400) -> tuple[str, dict[str, Any], list[str]]:
    """The first synthetic goal with options whose product tops the search for its name;
    returns (task id, goal, ids on the first results page)."""
    env = make_env("webshop")
    for task_id in env.task_ids("synthetic")[:limit]:
        await env.reset(task_id)
        goal = env.goal
        if len(goal["goal_options"]) < 2:
            continue
        result = await env.step(f"search[{goal['name']}]")
        ids = result.observation.info["item_ids"]
        if len(ids) == 10 and ids[0] == goal["asin"]:
            return task_id, goal, ids
    raise AssertionError("no suitable goal found")


def tour_script(goal: dict[str, Any], first_page_ids: list[str]) -> list[dict[str, Any]]:
    """A run that takes every edge of LASER's Figure 1 and then buys the goal product."""
    other = next(i for i in first_page_ids if i != goal["asin"])
    return [
        think("search for the product"),
        call("Search", keywords=goal["name"], max_price="1000000"),
        think("this other item might match"),
        call("select_item", item_id=other),
        think("check the description"),
        call("Description"),
        think("it does not match, go back"),
        call("Prev"),
        think("look at the next page"),
        call("Next"),
        think("nothing here, search again"),
        call("Back_to_Search"),
        think("search once more"),
        call("Search", keywords=goal["name"]),
        think("the first item matches"),
        call("select_item", item_id=goal["asin"]),
        think("it matches, buy it with the options"),
        *buy(goal),
    ]


async def run(spec: str, task_id: str, thread: str, **context: Any) -> tuple[list[str], dict[str, Any]]:
    """Run LASER to the end; returns the nodes in order and the final state, its logged calls
    whole (their requests and replies are kept in the reply journal, not in state)."""
    from nodes.runtime.calls import whole
    from nodes.runtime.journal import journaled

    saver = InMemorySaver()
    graph = build_graph(checkpointer=saver)
    config = {"configurable": {"thread_id": thread}, "recursion_limit": 200}
    nodes: list[str] = []
    async for chunk in graph.astream(
        {"task_id": task_id}, config, context=LaserContext(model=spec, env="webshop", **context), stream_mode="updates"
    ):
        nodes.extend(chunk)
    state = (await graph.aget_state(config)).values
    kept = await journaled(saver, thread)
    return nodes, {**state, "calls": [whole(call, kept) for call in state.get("calls") or []]}


# Any goal: search, turn the page, out of 2 transitions (reward 0, 4 model calls). Evaluations
# that compare where tasks run (one process, workers, a server) run it under max_actions=2.
PAGING = [think("search"), call("Search", keywords="pillow"), think("next page"), call("Next")]
# The fields of a results row that must match wherever the task ran (thread ids may differ).
ROW_FIELDS = (
    "task_id",
    "method",
    "env",
    "model",
    "fingerprint",
    "settings",
    "success",
    "reward",
    "steps",
    "stop_reason",
    "model_calls",
    "input_tokens",
    "output_tokens",
    "cost_usd",
    "retries",
    "error",
)


def paging_eval(tasks: list[str], model: str, results: Path, *more: str) -> list[str]:
    """``introspect eval`` of LASER on ``tasks`` under PAGING's limits (two transitions, no
    backup strategy): the command the tests that stop, kill or move an evaluation share."""
    limits = ["--set", "max_actions=2", "--set", "backup=false"]
    return ["eval", "laser", "--tasks", ",".join(tasks), "--model", model, *limits, "--results", str(results), *more]


def paging_script(path: Path, delay: float = 0.0) -> str:
    """PAGING as a script at ``path`` (each reply taking ``delay`` seconds); the ``scripted:`` spec."""
    path.write_text("".join(json.dumps({**r, **({"delay": delay} if delay else {})}) + "\n" for r in PAGING))
    return f"scripted:{path}"
