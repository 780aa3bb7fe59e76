"""The shop's HTTP handler (stdlib http.server): URL routing onto envs.sites.shop.pages.

The URLs follow Magento's storefront, as WebArena's OneStopShop uses them
(``/sales/order/history/``, ``/sales/order/view/order_id/N/``, ``/catalogsearch/result/?q=``,
``/<product>.html``), so tasks written in WebArena's style read the same here. The site is
read-only: the customer is always signed in, and a submitted contact form only shows a thank-you
page (nothing is stored), so every task starts from the same site state.
"""

from __future__ import annotations

import re
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from envs.sites.shop import pages
from envs.sites.shop.store import Store, load_store

STATIC = Path(__file__).resolve().parent / "static"
_ORDER = re.compile(r"^/sales/order/view/order_id/(\d+)/?$")
_CATEGORY = re.compile(r"^/category/([a-z0-9-]+)\.html$")
_PRODUCT = re.compile(r"^/([a-z0-9-]+)\.html$")
_STATIC_FILE = re.compile(r"^/static/([a-z0-9_-]+\.css)$")


def route(store: Store, path: str, query: dict[str, list[str]]) -> tuple[int, str]:
    """(status, html) for a GET of ``path``."""
    if path in ("/", "/index.html"):
        return 200, pages.home(store)
    if path.rstrip("/") == "/customer/account":
        return 200, pages.account(store)
    if path.rstrip("/") == "/sales/order/history":
        page = query.get("p", ["1"])[0]
        return 200, pages.order_history(store, int(page) if page.isdigit() else 1)
    if path.rstrip("/") == "/catalogsearch/result":
        return 200, pages.search(store, query.get("q", [""])[0])
    if path.rstrip("/") == "/contact":
        return 200, pages.contact(store)
    if match := _ORDER.match(path):
        order = store.order(int(match.group(1)))
        if order is not None:
            return 200, pages.order_view(store, order)
    if match := _CATEGORY.match(path):
        html = pages.category(store, match.group(1))
        if html is not None:
            return 200, html
    if match := _PRODUCT.match(path):
        item = store.product(match.group(1))
        if item is not None:
            return 200, pages.product(store, item)
    if path.rstrip("/") in ("/customer/address", "/customer/account/edit", "/privacy-policy",
                            "/customer/account/logout"):
        return 200, pages.simple(store, "Not available", "This page is not available in the demo shop.")
    return 404, pages.simple(store, "404 Not Found", "The page you requested was not found.")


class ShopHandler(BaseHTTPRequestHandler):
    """Serves one request; the store is loaded once per process (it is read-only)."""

    server_version = "IntrospectShop/1.0"

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - stdlib signature
        """Silence the per-request log (tests and the CLI would drown in it)."""

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
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
                self._send(200, css.read_bytes(), "text/css; charset=utf-8")
                return
        status, html = route(load_store(), parts.path, parse_qs(parts.query))
        self._send(status, html.encode("utf-8"), "text/html; charset=utf-8")

    do_HEAD = do_GET

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        parts = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        form = parse_qs(self.rfile.read(min(length, 1 << 16)).decode("utf-8", "replace"))
        store = load_store()
        if parts.path.rstrip("/") == "/contact/post":
            html = pages.contact_sent(store, form.get("name", [""])[0])
            self._send(200, html.encode("utf-8"), "text/html; charset=utf-8")
            return
        self._send(HTTPStatus.METHOD_NOT_ALLOWED, b"method not allowed", "text/plain")
