"""WebShop's pages as text, in the layout of LASER's Tables 4-6.

Every button is written ``[button] X [button_]`` and a chosen option
``[clicked button] X [clicked button_]`` (WebShop's rich text mode). A page is rendered
from a ``View`` (which page, query, results page, item, sub-page, chosen options), which is
all the env keeps, so a snapshot of the view rebuilds the exact page.

Pages (WebShop's templates, buttons as LASER shows them):
* search: "WebShop", the instruction, Search;
* results: Back to Search, "Page N (Total results: T)", < Prev (after page 1), Next > (while
  more results follow), then per item its id button, name and price;
* item: Back to Search, < Prev (to the results), each option name with its value buttons,
  the name, price and rating, Description, Features, Reviews, Buy Now;
* item_sub (Description, Features or Reviews): Back to Search, < Prev (to the item), the
  section's text, the three sub-page buttons and Buy Now. WebShop's sub-pages have only the
  two navigation buttons; the others are offered here so that LASER's item state, to which
  sub-pages belong, can use all of its actions there;
* done: the purchase and its score.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from envs.webshop_data import Product
from envs.webshop_search import PRODUCT_WINDOW

PageKind = Literal["search", "results", "item", "item_sub", "done"]

SEARCH = "Search"
BACK_TO_SEARCH = "Back to Search"
NEXT_PAGE = "Next >"
PREV_PAGE = "< Prev"
BUY_NOW = "Buy Now"
SUB_PAGES = ("Description", "Features", "Reviews")


@dataclass
class View:
    """Where the shopper is; enough to rebuild the page text."""

    page: PageKind = "search"
    query: str = ""
    page_number: int = 1
    asin: str | None = None
    sub_page: str | None = None
    options: dict[str, str] = field(default_factory=dict)  # option name -> chosen value


@dataclass
class Page:
    """A rendered page: its text and the texts of its buttons, in page order."""

    text: str
    clickables: list[str]


def button(label: str, clicked: bool = False) -> str:
    return f"[clicked button] {label} [clicked button_]" if clicked else f"[button] {label} [button_]"


def search_page(instruction: str) -> Page:
    lines = ["WebShop", "Instruction:", instruction, button(SEARCH)]
    return Page("\n".join(lines), [SEARCH])


def results_page(instruction: str, view: View, hits: tuple[str, ...], shown: list[Product]) -> Page:
    clickables = [BACK_TO_SEARCH]
    lines = ["Instruction:", instruction, button(BACK_TO_SEARCH),
             f"Page {view.page_number} (Total results: {len(hits)})"]
    if view.page_number > 1:
        clickables.append(PREV_PAGE)
        lines.append(button(PREV_PAGE))
    if view.page_number * PRODUCT_WINDOW < len(hits):
        clickables.append(NEXT_PAGE)
        lines.append(button(NEXT_PAGE))
    for product in shown:
        clickables.append(product["asin"])
        lines += ["", button(product["asin"]), product["Title"], product["Price"]]
    return Page("\n".join(lines), clickables)


def _option_lines(product: Product, chosen: dict[str, str]) -> tuple[list[str], list[str]]:
    lines, values = [], []
    for name, options in product["options"].items():
        buttons = [button(v, clicked=chosen.get(name) == v) for v in options]
        lines.append(f"{name}: " + " ".join(buttons))
        values += options
    return lines, values


def item_page(instruction: str, view: View, product: Product) -> Page:
    option_lines, values = _option_lines(product, view.options)
    lines = ["Instruction:", instruction, button(BACK_TO_SEARCH), button(PREV_PAGE), *option_lines,
             product["Title"], f"Price: {product['Price']}", f"Rating: {product['Rating']}",
             *(button(s) for s in SUB_PAGES), button(BUY_NOW)]
    clickables = [BACK_TO_SEARCH, PREV_PAGE, *dict.fromkeys(values), *SUB_PAGES, BUY_NOW]
    return Page("\n".join(lines), clickables)


def section_text(product: Product, sub_page: str) -> str:
    """The text of a sub-page, or "None" when the product has none (as LASER's Table 6)."""
    if sub_page == "Description":
        return product["Description"].strip() or "None"
    if sub_page == "Features":
        return "\n".join(b.strip() for b in product["BulletPoints"] if b.strip()) or "None"
    reviews = [f'"{r.get("title", "")}" {r.get("score", "")}\n{r.get("body", "")}'.strip()
               for r in product["Reviews"]]
    return "\n".join(reviews) or "None"


def sub_page(instruction: str, view: View, product: Product) -> Page:
    section = view.sub_page or SUB_PAGES[0]
    lines = ["Instruction:", instruction, button(BACK_TO_SEARCH), button(PREV_PAGE), product["Title"],
             f"{section.lower()}:", section_text(product, section),
             *(button(s) for s in SUB_PAGES), button(BUY_NOW)]
    return Page("\n".join(lines), [BACK_TO_SEARCH, PREV_PAGE, *SUB_PAGES, BUY_NOW])


def done_page(instruction: str, view: View, product: Product, total: float) -> Page:
    chosen = ", ".join(f"{k}: {v}" for k, v in view.options.items()) or "none"
    lines = ["Thank you for shopping with us!", "Instruction:", instruction,
             f"Purchased: {product['asin']} {product['Title']}", f"Options: {chosen}",
             f"Your score (min 0.0, max 1.0): {total:.4f}"]
    return Page("\n".join(lines), [])


def page_info(view: View, page: Page, instruction: str, hits: tuple[str, ...],
              product: Product | None) -> dict[str, Any]:
    """The observation info the agent graphs read (documented in envs.webshop)."""
    info: dict[str, Any] = {
        "page": view.page,
        "clickables": list(page.clickables),
        "instruction": instruction,
        "query": view.query,
        "item_ids": [],
        "has_next": NEXT_PAGE in page.clickables,
        "has_prev": PREV_PAGE in page.clickables,
        "asin": view.asin,
    }
    if view.page == "results":
        info["page_number"] = view.page_number
        info["total_results"] = len(hits)
        info["item_ids"] = [c for c in page.clickables if c not in (BACK_TO_SEARCH, PREV_PAGE, NEXT_PAGE)]
    if product is not None and view.page in ("item", "item_sub", "done"):
        info["options"] = {name: list(values) for name, values in product["options"].items()}
        info["selected_options"] = dict(view.options)
    if view.page == "item_sub":
        info["sub_page"] = view.sub_page
    return info
