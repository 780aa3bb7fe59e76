"""Reading WebShop pages for LASER: which state a page is, and what it offers.

The env reports the page kind and its clickable buttons in ``Observation.info``; LASER
keeps that small JSON in state (``page``) so routing and tool enums never need the
live env.
"""

from __future__ import annotations

from typing import Any, TypedDict

NAVIGATION = {"search", "back to search", "next >", "< prev", "description", "features", "reviews", "buy now"}


class Page(TypedDict, total=False):
    kind: str  # search | results | item | item_sub
    clickables: list[str]
    asin: str
    options: dict[str, list[str]]


def page_of(info: dict[str, Any]) -> Page:
    """The JSON page summary LASER keeps from an observation's info."""
    page = Page(kind=str(info.get("page", "")), clickables=[str(c) for c in info.get("clickables", [])])
    if info.get("asin"):
        page["asin"] = str(info["asin"])
    if isinstance(info.get("options"), dict):
        page["options"] = {str(k): [str(v) for v in vs] for k, vs in info["options"].items()}
    return page


def laser_state(page: Page) -> str:
    """Map a WebShop page to a LASER state (item sub-pages belong to the item state)."""
    return {"search": "search", "results": "results", "item": "item", "item_sub": "item"}.get(page.get("kind", ""), "search")


def item_ids(page: Page) -> list[str]:
    """Item ids on a results page: the clickables that are not navigation buttons."""
    return [c for c in page.get("clickables", []) if c.lower() not in NAVIGATION]


def option_values(page: Page) -> list[str]:
    """Option values on an item page."""
    if "options" in page:
        return [v for values in page["options"].values() for v in values]
    return item_ids(page)


def has_next(page: Page) -> bool:
    return any(c.lower() == "next >" for c in page.get("clickables", []))


def mark_clicked(observation: str, visited: list[str]) -> str:
    """Show visited items as ``[clicked button] id [clicked button_]`` (Table 5)."""
    for asin in visited:
        for variant in {asin, asin.upper(), asin.lower()}:
            observation = observation.replace(f"[button] {variant} [button_]", f"[clicked button] {variant} [clicked button_]")
    return observation
