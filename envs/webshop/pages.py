"""WebShop's pages as its text observation (``WebAgentTextEnv``, observation mode ``text_rich``).

WebShop renders HTML templates and turns them into text: every visible text of the page on
its own line, a button's text written ``[button] X [button_]``, an option value indented
under its option name (``  [button] x-large [button_]``; a chosen one
``  [clicked button] x-large [clicked button_]`` plus a line "You have clicked x-large." at
the top), an item id on a results page after an empty line (``[clicked button]`` once it was
opened since the last search page). These functions write the same text directly from a
``View``, which is all the env keeps, so a snapshot of the view rebuilds the exact page.

Pages (WebShop's templates):
* search: "WebShop", the instruction, Search;
* results: Back to Search, "Page N (Total results: T)", < Prev (after page 1), Next > (on
  every page, as WebShop shows it, also past the last result), then per item its id, name
  and price;
* item: Back to Search, < Prev, each option name with its values, the name, price and
  rating, Description, Features, Reviews, Buy Now;
* item_sub (Description, Features or Reviews): Back to Search, < Prev, the section's text;
* done: the purchase and its score.
Tests compare these texts with WebShop's own rendering (tests/envs/data/webshop_pages.json).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from envs.webshop.data import Product

PageKind = Literal["search", "results", "item", "item_sub", "done"]

SEARCH = "Search"
BACK_TO_SEARCH = "Back to Search"
NEXT_PAGE = "Next >"
PREV_PAGE = "< Prev"
BUY_NOW = "Buy Now"
SUB_PAGES = ("Description", "Features", "Reviews")
PRODUCT_WINDOW = 10  # results per page


@dataclass
class View:
    """Where the shopper is; enough to rebuild the page text."""

    page: PageKind = "search"
    query: str = ""
    page_number: int = 1
    asin: str | None = None
    sub_page: str | None = None
    options: dict[str, str] = field(default_factory=dict)  # option name -> chosen value
    visited: list[str] = field(default_factory=list)  # items opened since the search page


@dataclass
class Page:
    """A rendered page: its text and the texts of its buttons, in page order."""

    text: str
    clickables: list[str]


def button(label: str, clicked: bool = False) -> str:
    return f"[clicked button] {label} [clicked button_]" if clicked else f"[button] {label} [button_]"


def _lines(*texts: str) -> str:
    """Page texts one per line, as WebShop writes them (an empty text is no text at all)."""
    return "".join(f"{t}\n" for t in texts if t not in ("", "\n"))


def _header(instruction: str) -> str:
    return _lines("Instruction:", instruction, button(BACK_TO_SEARCH))


def _html_json(value: Any) -> str:
    """Flask's ``tojson``: sorted keys, ASCII, and <, >, &, ' escaped."""
    text = json.dumps(value, sort_keys=True)
    for char, code in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("'", "\\u0027")):
        text = text.replace(char, code)
    return text


def page_of_results(hits: tuple[str, ...], page: int) -> tuple[str, ...]:
    """The asins shown on results page ``page`` (1-based; empty past the last)."""
    return hits[(page - 1) * PRODUCT_WINDOW : page * PRODUCT_WINDOW]


def search_page(instruction: str) -> Page:
    return Page(_lines("WebShop", "Instruction: ", instruction, button(SEARCH)), [SEARCH])


def results_page(instruction: str, view: View, total: int, shown: list[Product]) -> Page:
    clickables = [BACK_TO_SEARCH]
    text = _header(instruction) + _lines(f"Page {view.page_number} (Total results: {total})")
    if view.page_number > 1:
        clickables.append(PREV_PAGE)
        text += _lines(button(PREV_PAGE))
    clickables.append(NEXT_PAGE)
    text += _lines(button(NEXT_PAGE))
    for product in shown:
        clickables.append(product["asin"])
        text += "\n" + _lines(
            button(product["asin"], product["asin"] in view.visited), product["Title"], product["Price"]
        )
    return Page(text, clickables)


def is_shown_clicked(value: str, view: View) -> bool:
    """WebShop marks an option value clicked when ``"value"`` is in the page's URL, which
    ends with the chosen options as JSON (so a value JSON escapes, e.g. one with a quote,
    is never shown clicked even when chosen)."""
    keywords = "+".join(view.query.split(" "))
    url = f"/item_page/{view.asin}/{keywords}/{view.page_number}/{json.dumps(view.options)}"
    return f'"{value}"' in url


def item_page(instruction: str, view: View, product: Product) -> Page:
    notices, text, values = "", _header(instruction) + _lines(button(PREV_PAGE)), []
    for name, options in product["options"].items():
        text += _lines(name)
        for value in options:
            clicked = bool(value) and is_shown_clicked(value, view)
            if clicked:
                notices = f"You have clicked {value}.\n" + notices
            text += _lines(f"  {button(value, clicked)}" if value else "")
        values += options
    text += _lines(
        product["Title"],
        f"Price: {product['Price']}",
        f"Rating: {product['Rating']}",
        *(button(s) for s in SUB_PAGES),
        button(BUY_NOW),
    )
    clickables = [BACK_TO_SEARCH, PREV_PAGE, *dict.fromkeys(v for v in values if v), *SUB_PAGES, BUY_NOW]
    return Page(notices + text, clickables)


def section_lines(product: Product, sub_page: str) -> list[str]:
    """The texts a sub-page shows, as WebShop's templates write them."""
    if sub_page == "Description":
        return [product["Description"]]
    if sub_page == "Features":
        return [f" {bullet}" for bullet in product["BulletPoints"]]
    lines = []
    for review in product["Reviews"]:
        lines += [f'"{review.get("title", "")}"', str(review.get("score", "")), str(review.get("body", ""))]
    return lines


def sub_page(instruction: str, view: View, product: Product) -> Page:
    section = view.sub_page or SUB_PAGES[0]
    text = _header(instruction) + _lines(button(PREV_PAGE), *section_lines(product, section))
    return Page(text, [BACK_TO_SEARCH, PREV_PAGE])


def done_page(view: View, total: float) -> Page:
    """WebShop's done page as its text env renders it (the template's hidden parts included)."""
    text = _lines(
        "Thank you for shopping with us!",
        "Your code: ",
        "None",
        " (Paste it in your MTurk interface.)",
        "Purchased",
        "asin",
        str(view.asin),
        "options",
        _html_json(view.options),
        "attrs",
        "None",
        "category",
        "None",
        "query",
        "None",
        "product category",
        "None",
        "Target",
        "asin",
        "options",
        "attrs",
        "price upper",
        "instuction text",
        "category",
        "product category",
        "query",
        "Goal ",
        "None",
        "Reward",
        "Your score (min 0.0, max 1.0)",
        str(total),
        "Reward Details ",
        "None",
    )
    return Page(text, [])


def page_info(view: View, page: Page, instruction: str, total: int, product: Product | None) -> dict[str, Any]:
    """The observation info the agent graphs read (documented in envs.webshop)."""
    info: dict[str, Any] = {
        "page": view.page,
        "clickables": list(page.clickables),
        "goal": instruction,
        "instruction": instruction,
        "query": view.query,
        "item_ids": [],
        "has_next": NEXT_PAGE in page.clickables,
        "has_prev": PREV_PAGE in page.clickables,
        "asin": view.asin,
    }
    if view.page == "results":
        info["page_number"] = view.page_number
        info["total_results"] = total
        info["item_ids"] = [c for c in page.clickables if c not in (BACK_TO_SEARCH, PREV_PAGE, NEXT_PAGE)]
    if product is not None and view.page in ("item", "item_sub", "done"):
        info["options"] = {name: [v for v in values if v] for name, values in product["options"].items()}
        info["selected_options"] = dict(view.options)
        info["title"], info["price"] = product["Title"], product["Price"]
    if product is not None and view.page == "item_sub":
        info["sub_page"] = view.sub_page
        info["section"] = "\n".join(
            t for t in section_lines(product, view.sub_page or SUB_PAGES[0]) if t not in ("", "\n")
        )
    return info
