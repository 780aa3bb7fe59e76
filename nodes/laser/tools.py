"""LASER's per-state action space (paper 003, Table 8) as function schemas.

Each state offers only its own functions, with the parameters of the original
(``prompt_library.py``): ``Search`` takes ``keywords`` and ``max_price``; ``select_item``
an item id; ``Buy_Now`` one value per customization type of the item (the original asks
for the types and makes each a required parameter). Argument enums are filled from the
page (item ids on the results page, each type's values on the item page), so that a model
which follows the schema cannot take an invalid action. A detail page already read for
the current item is not offered again (the original removes it from the item's functions).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

_DESCRIPTIONS: dict[str, str] = {
    "Search": "Use this function to search for the target item in the inventory based on keywords",
    "select_item": "Use this function to select one of the items from the search results and check its details",
    "Next": "Use this function to go to the next page of search results to view more items, if none of the items on the current page match the user instruction.",
    "Back_to_Search": "Use this function to go back to the initial search page. You should use this function only if you have browsed multiple pages of items and checked multiple items' details in the history, and none of the items match the user instruction.",
    "Description": "Use this function to check the description of the item, if you are unsure if the item perfectly matches the user instruction",
    "Features": "Use this function to check the features of the item, if you are unsure if the item perfectly matches the user instruction",
    "Reviews": "Use this function to check the reviews of the item, if you are unsure if the item perfectly matches the user instruction",
    "Buy_Now": "Use this function to buy the current item, if the current item perfectly matches the user instruction.",
    "Prev": "Use this function to go back to the results page, if the current item does not match the user instruction",
}

# Figure 1: each state's functions and the state each one leads to ("finish": the episode ends).
TRANSITIONS: dict[str, dict[str, str]] = {
    "search": {"Search": "results"},
    "results": {"select_item": "item", "Next": "results", "Back_to_Search": "search"},
    "item": {"Description": "item", "Features": "item", "Reviews": "item", "Buy_Now": "finish", "Prev": "results"},
}
STATE_FUNCTIONS: dict[str, tuple[str, ...]] = {state: tuple(functions) for state, functions in TRANSITIONS.items()}
DETAIL_PAGES = ("Description", "Features", "Reviews")
# The backup's Buy_Now, which the original calls once the item is chosen (buy_item_final).
BUY_FINAL = ("Use this function to buy the current item, if the current item perfectly matches the user "
             "instruction. Additionally, you should also provide the customizations of the item (if any)")


def _function(name: str, properties: dict[str, Any] | None = None, required: list[str] | None = None) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": _DESCRIPTIONS[name],
            "parameters": {"type": "object", "properties": properties or {}, "required": required or []},
        },
    }


def _enum_string(description: str, values: Sequence[str]) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string", "description": description}
    if values:
        schema["enum"] = list(values)
    return schema


def search_tool() -> dict[str, Any]:
    return _function("Search", {
        "keywords": {"type": "string", "description": "The keywords that describe the item to be searched for"},
        "max_price": {"type": "string", "description": "The upper bound of the item price, if the upper bound is not specified, then set to 1000000."},
    }, ["keywords"])


def select_tool(item_ids: Sequence[str]) -> dict[str, Any]:
    return _function("select_item", {"item_id": _enum_string("The id of the item to be checked", item_ids)}, ["item_id"])


def buy_tool(options: Mapping[str, Sequence[str]], final: bool = False) -> dict[str, Any]:
    """Buy Now with one required value per customization type of the item (``final``: the
    backup's wording, which asks for the customizations)."""
    properties = {name: _enum_string(f"The {name} of the item", values) for name, values in options.items() if values}
    tool = _function("Buy_Now", properties, list(properties))
    if final:
        tool["function"]["description"] = BUY_FINAL
    return tool


def tools_for(
    state: str, *, item_ids: Sequence[str] = (), options: Mapping[str, Sequence[str]] | None = None,
    read: Iterable[str] = (),
) -> list[dict[str, Any]]:
    """The function schemas the model may call in ``state``, filled from the current page;
    ``read`` names the detail pages already read for the current item."""
    done = set(read)
    tools: list[dict[str, Any]] = []
    for name in STATE_FUNCTIONS[state]:
        if name == "Search":
            tools.append(search_tool())
        elif name == "select_item":
            tools.append(select_tool(item_ids))
        elif name == "Buy_Now":
            tools.append(buy_tool(options or {}))
        elif name not in done:
            tools.append(_function(name))
    return tools


def names(tools: list[dict[str, Any]]) -> list[str]:
    return [t["function"]["name"] for t in tools]
