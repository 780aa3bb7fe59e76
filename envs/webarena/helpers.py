"""The ``func:`` helpers some WebArena program_html targets name, called without eval().

WebArena's configs say, e.g., ``"url": "func:reddit_get_post_url('__last_url__')"`` or
``"locator": "func:shopping_get_sku_latest_review_author('B00J8RZL7I')"``, and WebArena runs them
with eval(). Here the expression is parsed (a known function name and literal arguments only)
and dispatched to our own implementation of that helper:

- reddit_get_post_url(url): the post URL (``/f/<forum>/<id>/``) of a post or comment URL;
- gitlab_get_project_memeber_role(page, account): the role shown in a GitLab members table;
- shopping_get_latest_order_url(), shopping_get_sku_latest_review_author(sku),
  shopping_get_sku_latest_review_rating(sku): Magento REST calls on $WEBARENA_SHOPPING with an
  admin token from $WEBARENA_SHOPPING_ADMIN_USER / $WEBARENA_SHOPPING_ADMIN_PASSWORD.

They need the real WebArena sites, so offline only the parsing and the pure helper are tested.
An unknown or unparsable expression, or a REST helper without its variables, raises
HelperUnavailable and the evaluator reports "could not decide".
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import urllib.parse
import urllib.request
from typing import Any

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

from envs import syntax
from errors import IntrospectError

_CALL = re.compile(r"^\s*([A-Za-z_]\w*)\((.*)\)\s*$", re.S)


class HelperUnavailable(IntrospectError, RuntimeError):
    """The helper is unknown, malformed, or cannot run here."""


def parse_call(expression: str) -> tuple[str, list[Any]]:
    """``name(arg, ...)`` with literal arguments -> (name, args); ``__page__`` becomes None."""
    match = _CALL.match(expression)
    if not match:
        raise HelperUnavailable(f"not a helper call: {expression!r}")
    name, raw = match.groups()
    raw = re.sub(r"\b__page__\b", "None", raw)
    try:
        args = syntax.literal(f"({raw},)") if raw.strip() else ()
    except (ValueError, SyntaxError):
        raise HelperUnavailable(f"helper arguments are not literals: {expression!r}") from None
    return name, list(args)


def reddit_get_post_url(url: str) -> str:
    """http://host/f/<forum>/<id>/<slug>/... -> http://host/f/<forum>/<id>/ (other URLs unchanged)."""
    parts = urllib.parse.urlparse(url)
    path = parts.path.split("/")
    if len(path) < 4 or path[1] != "f":
        return url
    return f"{parts.scheme}://{parts.netloc}/f/{path[2]}/{path[3]}/"


def _shopping_rest(path: str, params: dict[str, str] | None = None) -> Any:
    base = os.environ.get("WEBARENA_SHOPPING", "").rstrip("/")
    user = os.environ.get("WEBARENA_SHOPPING_ADMIN_USER")
    password = os.environ.get("WEBARENA_SHOPPING_ADMIN_PASSWORD")
    if not (base and user and password):
        raise HelperUnavailable(
            "this check reads the shop's REST API: set WEBARENA_SHOPPING, "
            "WEBARENA_SHOPPING_ADMIN_USER and WEBARENA_SHOPPING_ADMIN_PASSWORD"
        )
    try:
        token_req = urllib.request.Request(
            f"{base}/rest/default/V1/integration/admin/token",
            data=json.dumps({"username": user, "password": password}).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(token_req, timeout=30) as resp:
            token = json.load(resp)
        query = f"?{urllib.parse.urlencode(params)}" if params else ""
        req = urllib.request.Request(f"{base}{path}{query}", headers={"Authorization": f"Bearer {token}"})
        with urllib.request.urlopen(req, timeout=30) as resp:
            return json.load(resp)
    except (OSError, ValueError) as exc:
        raise HelperUnavailable(f"shop REST call {path} failed: {exc}") from None


def shopping_get_latest_order_url() -> str:
    params = {
        "searchCriteria[sortOrders][0][field]": "created_at",
        "searchCriteria[sortOrders][0][direction]": "DESC",
        "searchCriteria[pageSize]": "1",
    }
    latest = _shopping_rest("/rest/V1/orders", params)["items"][0]
    base = os.environ["WEBARENA_SHOPPING"].rstrip("/")
    return f"{base}/sales/order/view/order_id/{int(latest['increment_id'])}/"


def _latest_review(sku: str) -> dict[str, Any] | None:
    reviews = _shopping_rest(f"/rest/V1/products/{urllib.parse.quote(sku)}/reviews")
    return reviews[-1] if reviews else None


def shopping_get_sku_latest_review_author(sku: str) -> str:
    review = _latest_review(sku)
    return str(review["nickname"]) if review else ""


def shopping_get_sku_latest_review_rating(sku: str) -> str:
    review = _latest_review(sku)
    return str(review["ratings"][0]["percent"]) if review else ""


_ROLE_JS = """(account) => {
  const names = [...document.querySelectorAll("td[data-label='Account'] span.gl-avatar-labeled-sublabel")];
  const index = names.findIndex((el) => el.outerText === '@' + account);
  const roles = document.querySelectorAll("td.col-max-role span");
  return index >= 0 && roles[index] ? roles[index].outerText : "";
}"""


async def gitlab_get_project_memeber_role(page: Page, account: str) -> str:
    try:
        return str(await page.evaluate(_ROLE_JS, account))
    except PlaywrightError:
        return ""


_URL_HELPERS = {"reddit_get_post_url", "shopping_get_latest_order_url"}
_SYNC_LOCATORS = {"shopping_get_sku_latest_review_author", "shopping_get_sku_latest_review_rating"}


def call_url(expression: str, last_url: str) -> str:
    """A program_html ``url: func:...``; ``__last_url__`` is the agent's final page URL."""
    name, args = parse_call(expression)
    args = [last_url if a == "__last_url__" else a for a in args]
    if name not in _URL_HELPERS:
        raise HelperUnavailable(f"unknown url helper {name!r}")
    return str(globals()[name](*args))


async def call_locator(expression: str, page: Page) -> str:
    """A program_html ``locator: func:...``; a ``__page__`` argument is the evaluated page."""
    name, args = parse_call(expression)
    if name == "gitlab_get_project_memeber_role":
        return await gitlab_get_project_memeber_role(page, *args[1:])
    if name in _SYNC_LOCATORS:
        return await asyncio.to_thread(globals()[name], *args)
    raise HelperUnavailable(f"unknown locator helper {name!r}")
