"""The local shop's LASER state space: LASER on the project's shop site through the WebArena env.

The site (envs/sites/shop, tasks "shop-N") is a Magento-like storefront seen as WebArena sees it:
an accessibility tree with element ids, acted on in WebArena's grammar. Its pages fall into
LASER's three states by their URL:

- results: a search result or category page (``/catalogsearch/result/``, ``/category/*.html``),
  whose item links are the links of the page's ``main`` region;
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
from typing import Any
from urllib.parse import urlsplit

from envs.base import Observation
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
_LINE = re.compile(r"^(\t*)\[(\d+)\] (\S+) (?:'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\")?")
_PRODUCT = re.compile(r"^/(?!category/)[a-z0-9-]+\.html$")
_RESULTS = re.compile(r"^/(catalogsearch/result/?|category/[a-z0-9-]+\.html)$")


def _elements(text: str) -> list[tuple[int, str, str, str]]:
    """(depth, id, role, name) of every element line of a WebArena screen."""
    found = []
    for line in text.splitlines():
        match = _LINE.match(line)
        if match:
            name = match.group(4) if match.group(4) is not None else (match.group(5) or "")
            found.append((len(match.group(1)), match.group(2), match.group(3), name))
    return found


def _main(elements: list[tuple[int, str, str, str]]) -> list[tuple[int, str, str, str]]:
    """The elements inside the page's ``main`` region."""
    inside: list[tuple[int, str, str, str]] = []
    depth = None
    for element in elements:
        if depth is None:
            if element[2] == "main":
                depth = element[0]
            continue
        if element[0] <= depth:
            break
        inside.append(element)
    return inside


def classify(observation: Observation) -> Page:
    """The page's state, and what the tools need of it: the search box, the logo link, the item
    links of a results page, the name and price of a product page."""
    path = urlsplit(observation.url or str(observation.info.get("url", ""))).path
    elements = _elements(observation.text)
    controls: dict[str, str] = {}
    for _, element_id, role, name in elements:
        if role in ("textbox", "searchbox", "combobox") and name == "Search":
            controls.setdefault("search_box", element_id)
        elif role == "link" and name == STORE:
            controls.setdefault("home", element_id)
    main = _main(elements)
    if _RESULTS.match(path):
        return Page(state="results", elements=controls, item_ids=[e[1] for e in main if e[2] == "link"])
    if _PRODUCT.match(path):
        title = next((e[3] for e in main if e[2] == "heading"), "")
        price = next((e[3] for e in main if e[2] == "StaticText" and e[3].startswith("$")), "")
        return Page(state="item", elements=controls, item_ids=[], asin=path.strip("/").removesuffix(".html"),
                    title=title, price=price)
    return Page(state="search", elements=controls, item_ids=[])


def _control(page: Page, name: str) -> str:
    """The element id of a control on the page ('' when the page has none: the env refuses the action)."""
    return page.get("elements", {}).get(name, "")


def _search(args: dict[str, Any], page: Page) -> list[str]:
    return [f"type [{_control(page, 'search_box')}] [{args['keywords']}] [1]"]


SEARCH = Tool(
    "Search", "Use this function to search the store for the target item based on keywords", "results", _search,
    parameters=lambda page: parameters(
        {"keywords": string_parameter("The keywords that describe the item to be searched for")}, ["keywords"]),
    target=True,
)
SELECT = Tool(
    "select_item", "Use this function to open one of the items listed on the page and check its details", "item",
    lambda args, page: [f"click [{args['item_id']}]"],
    parameters=lambda page: parameters(
        {"item_id": string_parameter("The element id of the item's link", page.get("item_ids", []))}, ["item_id"]),
)
ANSWER = Tool(
    "Answer", "Use this function when the current page is what the user instruction asks for: it ends the task. "
    "If the instruction asks a question, give its answer; otherwise give a short note of what was found.",
    FINISH, lambda args, page: [f"stop [{args.get('answer', '')}]"],
    parameters=lambda page: parameters({"answer": string_parameter("The answer to the user instruction")}, ["answer"]),
)
BACK_TO_SEARCH = Tool(
    "Back_to_Search", "Use this function to go back to the store's home page to search again, if none of the "
    "items match the user instruction.", "search", lambda args, page: [f"click [{_control(page, 'home')}]"],
)
PREV = Tool(
    "Prev", "Use this function to go back to the list of items, if the current item does not match the user "
    "instruction", "results", lambda args, page: ["go_back"],
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
