"""Reading WebShop pages for LASER: which state a page is, and what it offers.

The env reports the page kind, item ids, options and navigation in ``Observation.info``
(see envs.webshop); LASER keeps that small JSON in state (``page``) so that routing and
the tools' argument enums never need the live env.
"""

from __future__ import annotations

from typing import Any, TypedDict


class Page(TypedDict, total=False):
    kind: str  # search | results | item | item_sub | done
    item_ids: list[str]
    options: dict[str, list[str]]
    asin: str
    has_next: bool


# WebShop page kind -> LASER state; an item's sub-pages belong to the item state.
STATE_OF_PAGE = {"search": "search", "results": "results", "item": "item", "item_sub": "item", "done": "item"}


def page_of(info: dict[str, Any]) -> Page:
    """The JSON page summary LASER keeps from an observation's info."""
    page = Page(
        kind=str(info.get("page", "search")),
        item_ids=[str(i) for i in info.get("item_ids") or []],
        has_next=bool(info.get("has_next", False)),
    )
    if info.get("asin"):
        page["asin"] = str(info["asin"])
    if isinstance(info.get("options"), dict):
        page["options"] = {str(k): [str(v) for v in vs] for k, vs in info["options"].items()}
    return page


def laser_state(page: Page) -> str:
    return STATE_OF_PAGE.get(page.get("kind", "search"), "search")


def item_ids(page: Page) -> list[str]:
    return list(page.get("item_ids", []))


def option_values(page: Page) -> list[str]:
    return list(dict.fromkeys(v for values in page.get("options", {}).values() for v in values))


def has_next(page: Page) -> bool:
    return bool(page.get("has_next", False))


def mark_clicked(observation: str, visited: list[str]) -> str:
    """Show visited items as ``[clicked button] id [clicked button_]`` (Table 5)."""
    for asin in visited:
        observation = observation.replace(f"[button] {asin} [button_]", f"[clicked button] {asin} [clicked button_]")
    return observation
