"""Reading WebShop pages for LASER: which state a page is, and what it offers.

The env reports the page kind, item ids, options and the item's name and price in
``Observation.info`` (see envs.webshop); LASER keeps that small JSON in state (``page``) so
that routing, the buffer and the tools' argument enums never need the live env.
"""

from __future__ import annotations

from typing import Any, TypedDict


class Page(TypedDict, total=False):
    kind: str  # search | results | item | item_sub | done
    item_ids: list[str]
    options: dict[str, list[str]]  # customization type -> values
    asin: str
    title: str
    price: str
    section: str  # the text of a Description / Features / Reviews page


# WebShop page kind -> LASER state; an item's sub-pages belong to the item state.
STATE_OF_PAGE = {"search": "search", "results": "results", "item": "item", "item_sub": "item", "done": "item"}


def page_of(info: dict[str, Any]) -> Page:
    """The JSON page summary LASER keeps from an observation's info."""
    page = Page(kind=str(info.get("page", "search")), item_ids=[str(i) for i in info.get("item_ids") or []])
    for key in ("asin", "title", "price", "section"):
        if info.get(key) is not None:
            page[key] = str(info[key])  # type: ignore[literal-required]
    if isinstance(info.get("options"), dict):
        page["options"] = {str(k): [str(v) for v in vs] for k, vs in info["options"].items()}
    return page


def laser_state(page: Page) -> str:
    return STATE_OF_PAGE.get(page.get("kind", "search"), "search")
