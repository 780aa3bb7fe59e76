"""Scripted LASER runs on real WebShop goals, built from the goal itself as a person would:
search for the product's name, open it, choose the goal's options and buy it."""

from __future__ import annotations

from typing import Any

from envs import make_env


def think(text: str) -> dict[str, Any]:
    return {"content": f"Rationale: {text}"}


def call(name: str, **args: Any) -> dict[str, Any]:
    return {"content": "", "tool_calls": [{"name": name, "args": args}]}


def option_values(goal: dict[str, Any]) -> list[str]:
    options = goal["goal_options"]
    return list(options.values()) if isinstance(options, dict) else list(options)


async def goal_with_options(limit: int = 400) -> tuple[str, dict[str, Any], list[str]]:
    """The first task whose goal has options and whose product tops the search for its name;
    returns (task id, goal, ids on the first results page)."""
    env = make_env("webshop")
    for task_id in env.task_ids()[:limit]:
        await env.reset(task_id)
        goal = env.goal
        if not option_values(goal):
            continue
        result = await env.step(f"search[{goal['name']}]")
        ids = result.observation.info["item_ids"]
        if ids and ids[0] == goal["asin"] and result.observation.info["has_next"]:
            return task_id, goal, ids
    raise AssertionError("no suitable goal found")


def tour_script(goal: dict[str, Any], first_page_ids: list[str]) -> list[dict[str, Any]]:
    """A run that takes every edge of LASER's Figure 1 and then buys the goal product."""
    other = next(i for i in first_page_ids if i != goal["asin"])
    return [
        think("search for the product"), call("Search", keywords=goal["name"]),
        think("this other item might match"), call("select_item", item_id=other),
        think("check the description"), call("Description"),
        think("it does not match, go back"), call("Prev"),
        think("look at the next page"), call("Next"),
        think("nothing here, search again"), call("Back_to_Search"),
        think("search once more"), call("Search", keywords=goal["name"]),
        think("the first item matches"), call("select_item", item_id=goal["asin"]),
        think("it matches, buy it with the options"), call("Buy_Now", customization_options=option_values(goal)),
    ]
