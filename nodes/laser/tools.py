"""LASER's per-state action space (paper 003, Table 8) as function schemas.

Each state offers only its own functions, and argument enums are filled from the page
(item ids on the results page, option values on the item page), so that a model which
follows the schema cannot take an invalid action.
"""

from __future__ import annotations

from typing import Any, Literal

LaserStateName = Literal["search", "results", "item"]

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

STATE_FUNCTIONS: dict[str, tuple[str, ...]] = {
    "search": ("Search",),
    "results": ("select_item", "Next", "Back_to_Search"),
    "item": ("Description", "Features", "Reviews", "Buy_Now", "Prev"),
}


def _function(name: str, properties: dict[str, Any] | None = None, required: list[str] | None = None) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": _DESCRIPTIONS[name],
            "parameters": {"type": "object", "properties": properties or {}, "required": required or []},
        },
    }


def _enum_string(description: str, values: list[str]) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string", "description": description}
    if values:
        schema["enum"] = values
    return schema


def tools_for(state: str, *, item_ids: list[str] = (), option_values: list[str] = (), has_next: bool = True) -> list[dict[str, Any]]:
    """The function schemas the model may call in ``state``, filled from the current page."""
    tools: list[dict[str, Any]] = []
    for name in STATE_FUNCTIONS[state]:
        if name == "Search":
            tools.append(_function(name, {"keywords": {"type": "string", "description": "the search query"}}, ["keywords"]))
        elif name == "select_item":
            tools.append(_function(name, {"item_id": _enum_string("the item id shown on its button", list(item_ids))}, ["item_id"]))
        elif name == "Next" and not has_next:
            continue
        elif name == "Buy_Now":
            options = {
                "type": "array",
                "items": _enum_string("an option value shown on the item page", list(option_values)),
                "description": "the customization option values to select before buying (one per customization type)",
            }
            tools.append(_function(name, {"customization_options": options}))
        else:
            tools.append(_function(name))
    return tools


def backup_tool(item_ids: list[str], option_values: list[str]) -> dict[str, Any]:
    """The single function of the backup strategy: buy one of the examined items."""
    return {
        "type": "function",
        "function": {
            "name": "buy_backup",
            "description": "Buy the examined item that best matches the user instruction.",
            "parameters": {
                "type": "object",
                "properties": {
                    "item_id": _enum_string("the id of the item to buy", item_ids),
                    "customization_options": {
                        "type": "array",
                        "items": _enum_string("an option value of that item", option_values),
                    },
                },
                "required": ["item_id"],
            },
        },
    }


def names(tools: list[dict[str, Any]]) -> list[str]:
    return [t["function"]["name"] for t in tools]
