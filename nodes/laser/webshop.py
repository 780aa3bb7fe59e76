"""WebShop's LASER state space (paper 003, Figure 1 and Table 8): the paper's own setting.

Each state offers only its own functions, with the parameters of the original
(``prompt_library.py``): ``Search`` takes ``keywords`` and ``max_price``; ``select_item``
an item id; ``Buy_Now`` none: choosing it starts the original's customisation step (the model
names the item's customisation types, writes the rationale of the values, and calls ``Buy_Now``
again with one required value per type named; ``customise=in_buy_now`` asks the values in the
first call, one per type of the item). The schemas carry the page's values as enums (item ids on
the results page, each type's values on the item page); the graph leaves them out unless
``argument_enums`` is set, as the original offers free strings and sends whatever the model
gives to the env, which ignores a click it cannot make. Option types and values are matched
regardless of case, as WebShop lowercases a click. The item state's functions are in the
original's order (Description, Reviews, Features, Buy_Now, Prev). A detail page already read for
the current item is not offered again (the original removes it from the item's functions). The history the search state shows
writes each call as laser_agent.py does (``Search(keywords='...')``, ``next_page()``, ...).

Pages are classified from what the env reports in ``Observation.info`` (the page kind, item
ids, options, the item's name and price; see envs.webshop): an item's sub-pages (Description,
Features, Reviews) and the page after a purchase belong to the item state.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from envs.base import Observation
from nodes.laser.space import (
    FINISH,
    Backup,
    Customise,
    Page,
    State,
    StateSpace,
    Tool,
    parameters,
    string_parameter,
)

# The functions' descriptions as prompt_library.py writes them (its typos too: they are the prompt).
_DESCRIPTIONS: dict[str, str] = {
    "Search": "Use this function to search for the target item in the inventory based on keywords",
    "select_item": "Use this function to select one of the items from the search results and check its details",
    "Next": "Use this function to go to the next page of search results to view more items, if none of the items on the current page match the user instruction.",
    "Back_to_Search": "Use this function to go back to the initial search page. You should use this function only if you have browsed mutliple pages of items and checked multiple items' details in the history, and none of the items match the user instruction.",
    "Description": "Use this function to check the description of the item, if you are unsure if the item perfectly matches the user instruction",
    "Features": "Use this fucntion to check the features of the item, if you are unsure if the item perfectly matches the user instruction",
    "Reviews": "Use this function to check the reviews of the item, if you are unsure if the item perfectly matches the user instruction",
    "Buy_Now": "Use this function to buy the current item, if the current item perfectly matches the user instruction.",
    "Prev": "Use this fucntion to go back to the results page, if the current item does not match the user instruction.",
}
# Buy_Now once its customisation types are named (the original's buy_item_final).
BUY_FINAL = (
    "Use this function to buy the current item, if the current item perfectly matches the user "
    "instruction. Additionally, you should also provide the customizations of the item (if any)"
)
# WebShop page kind -> LASER state; an item's sub-pages belong to the item state.
STATE_OF_PAGE = {"search": "search", "results": "results", "item": "item", "item_sub": "item", "done": "item"}


def classify(observation: Observation) -> Page:
    """The JSON page summary LASER keeps from a WebShop observation's info."""
    info = observation.info
    kind = str(info.get("page", "search"))
    page = Page(state=STATE_OF_PAGE.get(kind, "search"), item_ids=[str(i) for i in info.get("item_ids") or []])
    for key in ("asin", "title", "price", "section"):
        if info.get(key) is not None:
            page[key] = str(info[key])
    if isinstance(info.get("options"), dict):
        page["options"] = {str(k): [str(v) for v in vs] for k, vs in info["options"].items()}
    return page


def _search(page: Page) -> dict[str, Any]:
    return parameters(
        {
            "keywords": {"type": "string", "description": "The keywords that describe the item to be searched for"},
            "max_price": {
                "type": "string",
                "description": "The upper bound of the item price, if the upper bound is not specified, then set to 1000000.",
            },
        },
        ["keywords"],
    )


def select_parameters(item_ids: Sequence[str]) -> dict[str, Any]:
    return parameters({"item_id": string_parameter("The id of the item to be checked", item_ids)}, ["item_id"])


def buy_parameters(options: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    """Buy Now with one required value per customization type of the item."""
    properties = {
        name: string_parameter(f"The {name} of the item", values) for name, values in options.items() if values
    }
    return parameters(properties, list(properties))


def named_parameters(types: Sequence[str], page: Page) -> dict[str, Any]:
    """The original's ``buy_item_final``: one required value per type the model named ("The
    {type} of the item"); a type the item has, whatever its case ("Size" is WebShop's "size"),
    lists its values."""
    options = {name.lower(): values for name, values in page.get("options", {}).items()}
    properties = {name: string_parameter(f"The {name} of the item", options.get(name.lower(), ())) for name in types}
    return parameters(properties, list(properties))


def _buy(args: Mapping[str, Any], page: Page) -> list[str]:
    """A click per value given, then Buy Now, as laser_agent.py buys: WebShop clicks a value
    whatever its case and ignores one the item does not offer (the tool passes over its refusal)."""
    return [f"click[{value}]" for value in args.values() if value] + ["click[Buy Now]"]


def _search_logged(args: Mapping[str, Any]) -> str:
    return "Search({})".format(", ".join(f"{key}='{value}'" for key, value in args.items()))


def _click(button: str) -> Any:
    return lambda args, page: [f"click[{button}]"]


def _tool(name: str, to: str, actions: Any, **more: Any) -> Tool:
    return Tool(name, _DESCRIPTIONS[name], to, actions, **more)


def _logged(text: str) -> Any:
    return lambda args: text


SEARCH = _tool(
    "Search",
    "results",
    lambda args, page: [f"search[{args['keywords']}]"],
    parameters=_search,
    target=True,
    logged=_search_logged,
)
SELECT = _tool(
    "select_item",
    "item",
    lambda args, page: [f"click[{args['item_id']}]"],
    parameters=lambda page: select_parameters(page.get("item_ids", [])),
    examines="item_id",
    logged=lambda args: f"select_item({args['item_id']})",
)
# Buy Now: one click per customization value, then the purchase.
BUY = _tool(
    "Buy_Now",
    FINISH,
    _buy,
    parameters=lambda page: buy_parameters(page.get("options", {})),
    customise=Customise(
        types="laser/customise",
        instruction="laser/buy_state",
        layout="laser/item_layout",
        description=BUY_FINAL,
        parameters=named_parameters,
    ),
    tolerates_refusals=True,
)
DETAIL_PAGES = ("Description", "Reviews", "Features")  # laser_agent.py's order of the item's functions

WEBSHOP = StateSpace(
    name="webshop",
    states=(
        State("search", "laser/search_state", (SEARCH,), layout="laser/search_layout"),
        State(
            "results",
            "laser/results_state",
            (
                SELECT,
                _tool("Next", "results", _click("Next >"), logged=_logged("next_page()")),
                _tool(
                    "Back_to_Search",
                    "search",
                    _click("Back to Search"),
                    logged=_logged("back_to_search()"),
                    backtracks=True,
                ),
            ),
            layout="laser/results_layout",
        ),
        State(
            "item",
            "laser/item_state",
            (
                *(_tool(name, "item", _click(name), reads_then=("click[< Prev]",)) for name in DETAIL_PAGES),
                BUY,
                _tool("Prev", "results", _click("< Prev"), logged=_logged("previous_page()"), backtracks=True),
            ),
            layout="laser/item_layout",
        ),
    ),
    classify=classify,
    backup=Backup(
        select="laser/backup_select",
        layout="laser/backup_layout",
        choose=lambda ids: SELECT.schema(Page(item_ids=list(ids))),
        choose_layout="laser/results_layout",
        finish=BUY,
    ),
)
