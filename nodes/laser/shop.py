"""The local shop's LASER state space: LASER on the project's shop site through the WebArena env.

The site (envs/sites/shop, tasks "shop-N") is a Magento-like storefront seen as WebArena sees it:
an accessibility tree with element ids, acted on in WebArena's grammar. Its pages fall into
LASER's three states by their URL:

- results: a search result or category page (``/catalogsearch/result/``, ``/category/*.html``),
  whose items are links each followed by its price;
- item: a product page (``/<product>.html``);
- search: any other page (the home page, account pages): the header's search box is on all of them.

The tools are the site's actions: ``Search`` types the keywords into the search box and presses
Enter; ``select_item`` clicks an item link; ``Prev`` goes back; ``Back_to_Search`` opens the home
page through the store's logo link. There is no cart: a task ends with ``Answer``, which sends
WebArena's ``stop [answer]`` on the current page, where the task's evaluator checks the page (its
URL) or the answer. The shop's pages show the task nowhere, so LASER puts it above the page. The
backup strategy is not declared here: it buys an examined item, which this site cannot do.
"""

from __future__ import annotations

import re
from itertools import pairwise
from typing import Any
from urllib.parse import urlsplit

from envs.base import Observation
from envs.webarena.interface import element_lines
from nodes.laser.space import (
    FINISH,
    Page,
    State,
    StateSpace,
    Tool,
    parameters,
    string_parameter,
)

STORE = "One Stop Market"  # the store's name: its logo links to the home page
_PRODUCT = re.compile(r"^/(?!category/)[a-z0-9-]+\.html$")
_RESULTS = re.compile(r"^/(catalogsearch/result/?|category/[a-z0-9-]+\.html)$")


def _role_name(line: str) -> tuple[str, str]:
    """``("link", "Solid Wood Picture Frame")`` from an element line's ``link 'Solid Wood Picture Frame'``."""
    role, _, name = line.partition(" ")
    return role, name[1:-1] if len(name) >= 2 and name[0] == name[-1] and name[0] in "'\"" else name


def classify(observation: Observation) -> Page:
    """The page's state, and what the tools need of it: the search box, the logo link, the item
    links of a results page (each item is a link followed by its price), the name and price of a
    product page."""
    path = urlsplit(observation.url or str(observation.info.get("url", ""))).path
    elements = [(element_id, *_role_name(line)) for element_id, line in element_lines(observation.text).items()]
    controls: dict[str, str] = {}
    for element_id, role, name in elements:
        if role in ("textbox", "searchbox", "combobox") and name == "Search":
            controls.setdefault("search_box", element_id)
        elif role == "link" and name == STORE:
            controls.setdefault("home", element_id)
    if _RESULTS.match(path):
        priced = [
            a[0] for a, b in pairwise(elements) if a[1] == "link" and b[1] == "StaticText" and b[2].startswith("$")
        ]
        return Page(state="results", elements=controls, item_ids=priced)
    if _PRODUCT.match(path):
        title = next((name for _, role, name in elements if role == "heading"), "")
        price = next((name for _, role, name in elements if role == "StaticText" and name.startswith("$")), "")
        return Page(
            state="item",
            elements=controls,
            item_ids=[],
            asin=path.strip("/").removesuffix(".html"),
            title=title,
            price=price,
        )
    return Page(state="search", elements=controls, item_ids=[])


def _control(page: Page, name: str) -> str:
    """The element id of a control on the page ('' when the page has none: the env refuses the action)."""
    return page.get("elements", {}).get(name, "")


def _search(args: dict[str, Any], page: Page) -> list[str]:
    return [f"type [{_control(page, 'search_box')}] [{args['keywords']}] [1]"]


SEARCH = Tool(
    "Search",
    "Use this function to search the store for the target item based on keywords",
    "results",
    _search,
    parameters=lambda page: parameters(
        {"keywords": string_parameter("The keywords that describe the item to be searched for")}, ["keywords"]
    ),
    target=True,
)
SELECT = Tool(
    "select_item",
    "Use this function to open one of the items listed on the page and check its details",
    "item",
    lambda args, page: [f"click [{args['item_id']}]"],
    parameters=lambda page: parameters(
        {"item_id": string_parameter("The element id of the item's link", page.get("item_ids", []))}, ["item_id"]
    ),
)
ANSWER = Tool(
    "Answer",
    "Use this function when the current page is what the user instruction asks for: it ends the task. "
    "If the instruction asks a question, give its answer; otherwise give a short note of what was found.",
    FINISH,
    lambda args, page: [f"stop [{args.get('answer', '')}]"],
    parameters=lambda page: parameters({"answer": string_parameter("The answer to the user instruction")}, ["answer"]),
)
BACK_TO_SEARCH = Tool(
    "Back_to_Search",
    "Use this function to go back to the store's home page to search again, if none of the "
    "items match the user instruction.",
    "search",
    lambda args, page: [f"click [{_control(page, 'home')}]"],
    backtracks=True,
)
PREV = Tool(
    "Prev",
    "Use this function to go back to the list of items, if the current item does not match the user instruction",
    "results",
    lambda args, page: ["go_back"],
    backtracks=True,
)

LOCAL_SHOP = StateSpace(
    name="shop",
    states=(
        State("search", "laser/shop/search_state", (SEARCH,)),
        State("results", "laser/shop/results_state", (SELECT, BACK_TO_SEARCH, ANSWER)),
        State("item", "laser/shop/item_state", (ANSWER, PREV)),
    ),
    classify=classify,
    shows_goal=False,
    ended="answered",
)
