"""The shop's HTTP handler (stdlib http.server): URL routing onto envs.sites.shop.pages.

The URLs follow Magento's storefront, as WebArena's OneStopShop uses them
(``/sales/order/history/``, ``/sales/order/view/order_id/N/``, ``/catalogsearch/result/?q=``,
``/<product>.html``, ``/customer/account/login/``), so tasks written in WebArena's style read the
same here. Account pages (``/customer/...``, ``/sales/...``, ``/wishlist/``) need the customer to be
signed in: a guest is redirected to the sign-in page, which returns them to the page they asked
for. The catalogue and orders are read-only: saving the account form or posting the contact form
shows a confirmation and changes nothing a page shows, so every task starts from the same site
state; the server keeps a record of each such submission (envs.sites.serve), which is how tests
count side effects. What a visitor carries is in their cookies (envs.sites.shop.session).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

from envs.sites.shop import pages, session
from envs.sites.shop.session import Visitor
from envs.sites.shop.store import Store, load_store

STATIC = Path(__file__).resolve().parent / "static"
_ORDER = re.compile(r"^/sales/order/view/order_id/(\d+)/?$")
_CATEGORY = re.compile(r"^/category/([a-z0-9-]+)\.html$")
_PRODUCT = re.compile(r"^/([a-z0-9-]+)\.html$")
_STATIC_FILE = re.compile(r"^/static/([a-z0-9_-]+\.css)$")
_MEMBERS_ONLY = ("/customer/", "/sales/", "/wishlist")
_OPEN_TO_GUESTS = ("/customer/account/login", "/customer/account/loginPost", "/customer/account/logout")
RECORDED = ("/contact/post", "/customer/account/editPost")  # submissions the shop keeps a record of
SIGN_IN_FAILED = (
    "The account sign-in was incorrect or your account is disabled temporarily. Please wait and try again later."
)


@dataclass
class Response:
    status: int
    html: str = ""
    headers: list[tuple[str, str]] = field(default_factory=list)


def redirect(location: str, *cookies: str) -> Response:
    return Response(HTTPStatus.FOUND, "", [("Location", location), *(("Set-Cookie", c) for c in cookies)])


def needs_sign_in(path: str) -> bool:
    path = path.rstrip("/") + "/"
    return path.startswith(_MEMBERS_ONLY) and not path.startswith(tuple(p + "/" for p in _OPEN_TO_GUESTS))


def _local(target: str) -> str:
    """A return address on this site only (never another host)."""
    return target if target.startswith("/") and not target.startswith("//") else "/customer/account/"


def route(store: Store, visitor: Visitor, path: str, query: dict[str, list[str]], raw_query: str = "") -> Response:
    """The response to a GET of ``path``."""
    here = path.rstrip("/")
    if needs_sign_in(path) and not visitor.signed_in:
        asked = path + (f"?{raw_query}" if raw_query else "")
        return redirect("/customer/account/login/?referer=" + quote(asked, safe="/"))
    if here == "/customer/account/login":
        if visitor.signed_in:
            return redirect("/customer/account/")
        return Response(200, pages.login(store, visitor, referer=_local(query.get("referer", [""])[0])))
    if here == "/customer/account/logout":
        guest = Visitor(None, visitor.recent)
        return Response(
            200,
            pages.signed_out(store, guest),
            [("Set-Cookie", session.cookie(session.SESSION_COOKIE, "", clear=True))],
        )
    if path in ("/", "/index.html"):
        return Response(200, pages.home(store, visitor))
    if here == "/customer/account":
        return Response(200, pages.account(store, visitor))
    if here == "/customer/account/edit":
        return Response(200, pages.account_edit(store, visitor))
    if here == "/wishlist":
        return Response(200, pages.wishlist(store, visitor))
    if here == "/sales/order/history":
        page = query.get("p", ["1"])[0]
        return Response(200, pages.order_history(store, visitor, int(page) if page.isdigit() else 1))
    if here == "/catalogsearch/result":
        return Response(200, pages.search(store, visitor, query.get("q", [""])[0]))
    if here == "/contact":
        return Response(200, pages.contact(store, visitor))
    if match := _ORDER.match(path):
        order = store.order(int(match.group(1)))
        if order is not None:
            return Response(200, pages.order_view(store, visitor, order))
    if match := _CATEGORY.match(path):
        html = pages.category(store, visitor, match.group(1))
        if html is not None:
            return Response(200, html)
    if match := _PRODUCT.match(path):
        item = store.product(match.group(1))
        if item is not None:
            recent = session.cookie(session.RECENT_COOKIE, session.viewed(visitor.recent, item.slug))
            return Response(200, pages.product(store, visitor, item), [("Set-Cookie", recent)])
    if here in ("/customer/address", "/privacy-policy"):
        return Response(
            200, pages.simple(store, visitor, "Not available", "This page is not available in the demo shop.")
        )
    return Response(404, pages.simple(store, visitor, "404 Not Found", "The page you requested was not found."))


def post(
    store: Store,
    visitor: Visitor,
    path: str,
    form: dict[str, list[str]],
    record: Callable[[dict[str, Any]], None] = lambda entry: None,
) -> Response:
    """The response to a POST of a form to ``path``; what a customer submits is handed to
    ``record`` (the server's records: the catalogue and orders themselves never change)."""
    here = path.rstrip("/")

    def value(name: str) -> str:
        return form.get(name, [""])[0]

    if here == "/customer/account/loginPost":
        email, password = value("login[username]").strip(), value("login[password]")
        customer = store.customer
        if email.lower() == customer["email"].lower() and password == customer["password"]:
            issued = session.cookie(session.SESSION_COOKIE, session.issue(customer["email"]))
            return redirect(_local(value("referer")), issued)
        html = pages.login(store, visitor, email=email, error=SIGN_IN_FAILED, referer=_local(value("referer")))
        return Response(200, html)
    if needs_sign_in(path) and not visitor.signed_in:
        return redirect("/customer/account/login/")
    if here in RECORDED:
        record({"form": here, "fields": {k: v[0] for k, v in sorted(form.items()) if "password" not in k.lower()}})
    if here == "/customer/account/editPost":
        return Response(200, pages.account(store, visitor, "You saved the account information."))
    if here == "/contact/post":
        return Response(200, pages.contact_sent(store, visitor, value("name")))
    return Response(HTTPStatus.METHOD_NOT_ALLOWED, "method not allowed")


class ShopHandler(BaseHTTPRequestHandler):
    """Serves one request; the store is loaded once per process (it is read-only)."""

    server_version = "IntrospectShop/1.0"

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib signature
        """Silence the per-request log (tests and the CLI would drown in it)."""

    def _visitor(self, store: Store) -> Visitor:
        return session.visitor(self.headers.get("Cookie"), store.customer["email"])

    def _send(self, response: Response, content_type: str = "text/html; charset=utf-8") -> None:
        body = response.html.encode("utf-8")
        self.send_response(response.status)
        for name, value in response.headers:
            self.send_header(name, value)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        parts = urlsplit(self.path)
        if match := _STATIC_FILE.match(parts.path):
            css = STATIC / match.group(1)
            if css.is_file():
                self._send(Response(200, css.read_text("utf-8")), "text/css; charset=utf-8")
                return
        store = load_store()
        self._send(route(store, self._visitor(store), parts.path, parse_qs(parts.query), parts.query))

    do_HEAD = do_GET

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        parts = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        form = parse_qs(self.rfile.read(min(length, 1 << 16)).decode("utf-8", "replace"))
        store = load_store()
        record = getattr(self.server, "record", lambda entry: None)
        self._send(post(store, self._visitor(store), parts.path, form, record))
