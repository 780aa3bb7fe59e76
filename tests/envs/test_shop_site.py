"""The local shop site over HTTP (no browser): pages, order history, data the tasks rely on."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from collections import Counter

import pytest

from envs.sites.serve import SiteServer, handler_for, main, shared_site, site_url
from envs.sites.shop import session
from envs.sites.shop.store import load_store

SIGNED_IN = f"{session.SESSION_COOKIE}={session.issue(load_store().customer['email'])}"


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


def fetch(path: str, *, cookie: str = SIGNED_IN, data: bytes | None = None) -> tuple[int, str, dict[str, list[str]]]:
    """(status, body, headers) of one request, redirects not followed; signed in unless told."""
    request = urllib.request.Request(shared_site("shop").url + path, data=data, headers={"Cookie": cookie})
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        with opener.open(request, timeout=10) as resp:
            status, body, headers = resp.status, resp.read(), resp.headers
    except urllib.error.HTTPError as exc:
        status, body, headers = exc.code, exc.read(), exc.headers
    return status, body.decode("utf-8"), {k.lower(): headers.get_all(k) for k in headers.keys()}


def get(path: str, *, cookie: str = SIGNED_IN) -> tuple[int, str]:
    status, body, _ = fetch(path, cookie=cookie)
    return status, body


def test_every_page_of_the_site_map_renders_with_the_shared_layout() -> None:
    for path in [
        "/",
        "/customer/account/",
        "/sales/order/history/",
        "/sales/order/history/?p=2",
        "/sales/order/view/order_id/171/",
        "/contact/",
        "/catalogsearch/result/?q=frame",
        "/solid-wood-picture-frame.html",
        "/category/home-kitchen.html",
        "/wishlist/",
        "/customer/account/edit/",
    ]:
        status, html = get(path)
        assert status == 200, path
        assert '<a href="/sales/order/history/">My Orders</a>' in html, path
        assert 'name="q"' in html, path


def test_unknown_pages_and_orders_are_404() -> None:
    assert get("/nowhere")[0] == 404
    assert get("/sales/order/view/order_id/999/")[0] == 404
    assert get("/no-such-product.html")[0] == 404


def test_order_history_is_paginated_newest_first() -> None:
    _, first = get("/sales/order/history/")
    _, second = get("/sales/order/history/?p=2")
    numbers1 = re.findall(r"<td>(0000001\d\d)</td>", first)
    numbers2 = re.findall(r"<td>(0000001\d\d)</td>", second)
    assert numbers1 == [f"{n:09d}" for n in range(179, 169, -1)]
    assert numbers2 == [f"{n:09d}" for n in range(169, 165, -1)]
    assert "Items 1 to 10 of 14 total" in first and 'href="/sales/order/history/?p=2"' in first
    assert "Items 11 to 14 of 14 total" in second


def test_several_orders_share_a_month_and_only_one_has_the_picture_frame() -> None:
    """The paper's backtracking example: the frame hides in one of several orders of a month."""
    store = load_store()
    months = Counter(o.placed.strftime("%Y-%m") for o in store.orders)
    assert len(store.orders) >= 12
    assert months["2022-09"] == 2 and months["2022-11"] == 3
    for month, colour in (("2022-09", "Walnut"), ("2022-11", "Gold")):
        with_frame = [
            o
            for o in store.orders
            if o.placed.strftime("%Y-%m") == month and any("Picture Frame" in i.product.name for i in o.items)
        ]
        assert len(with_frame) == 1
        assert [i.options["Color"] for i in with_frame[0].items if "Picture Frame" in i.product.name] == [colour]


def test_order_detail_shows_items_options_dates_status_and_totals() -> None:
    order = load_store().order(168)
    assert order is not None
    status, html = get(order.path)
    assert status == 200
    assert "Order # 000000168" in html and "June 12, 2022" in html and "Complete" in html
    assert "<dt>Length:</dt> <dd>6 ft</dd>" in html and "Ordered: 2" in html
    assert order.grand_total == pytest.approx(order.subtotal + 5.0)
    assert "$60.97" in html and "$55.97" in html


def test_search_matches_all_words_and_reports_empty_results() -> None:
    _, html = get("/catalogsearch/result/?q=yoga+mat")
    assert "Non-Slip Yoga Mat, 6mm" in html and "1 Items" in html
    _, none = get("/catalogsearch/result/?q=sofa")
    assert "Your search returned no results." in none


def test_contact_form_has_its_fields_prefilled_and_posting_thanks_the_sender() -> None:
    _, html = get("/contact/")
    for name in ("name", "email", "telephone", "order", "comment"):
        assert f'name="{name}"' in html
    assert 'value="Emma Lopez"' in html
    _, sent, _ = fetch("/contact/post/", data=b"name=Emma+Lopez&comment=hi")
    assert "Thanks for contacting us with your comments and questions, Emma Lopez." in sent
    _, guest = get("/contact/", cookie="")  # a guest gets an empty form (the contact page is public)
    assert 'value="Emma Lopez"' not in guest and '<a href="/customer/account/login/">Sign In</a>' in guest


# --- signing in ----------------------------------------------------------------------------------


def test_account_pages_send_a_guest_to_sign_in_and_back() -> None:
    for path in [
        "/customer/account/",
        "/sales/order/history/?p=2",
        "/sales/order/view/order_id/171/",
        "/wishlist/",
        "/customer/account/edit/",
    ]:
        status, _, headers = fetch(path, cookie="")
        assert status == 302, path
        assert headers["location"] == [
            "/customer/account/login/?referer=" + path.replace("?", "%3F").replace("=", "%3D")
        ]
    for path in ["/", "/contact/", "/catalogsearch/result/?q=frame", "/solid-wood-picture-frame.html"]:
        assert get(path, cookie="")[0] == 200, path  # the catalogue is public
    status, page = get("/customer/account/login/?referer=/sales/order/history/", cookie="")
    assert status == 200 and "Customer Login" in page and 'name="login[password]"' in page
    assert 'name="referer" value="/sales/order/history/"' in page


def test_the_sign_in_form_sets_a_session_that_opens_the_account_pages() -> None:
    form = b"login%5Busername%5D=emma.lopez%40example.com&login%5Bpassword%5D=Password.123&referer=%2Fwishlist%2F"
    status, _, headers = fetch("/customer/account/loginPost/", cookie="", data=form)
    assert status == 302 and headers["location"] == ["/wishlist/"]
    [set_cookie] = headers["set-cookie"]
    value = set_cookie.split(";")[0]
    assert value.startswith(session.SESSION_COOKIE + "=") and "HttpOnly" in set_cookie
    status, page = get("/wishlist/", cookie=value)
    assert status == 200 and "You have no items in your wish list." in page and "Welcome, Emma Lopez!" in page
    again = fetch("/customer/account/loginPost/", cookie="", data=form)[2]["set-cookie"][0].split(";")[0]
    assert again != value  # every sign-in is a new session
    _, _, out = fetch("/customer/account/logout/", cookie=value)
    assert "Max-Age=0" in out["set-cookie"][0]


@pytest.mark.parametrize(
    "form",
    [
        b"login%5Busername%5D=emma.lopez%40example.com&login%5Bpassword%5D=wrong",
        b"login%5Busername%5D=someone%40example.com&login%5Bpassword%5D=Password.123",
        b"",
    ],
)
def test_wrong_credentials_stay_on_the_sign_in_page_with_magentos_message(form: bytes) -> None:
    status, page, headers = fetch("/customer/account/loginPost/", cookie="", data=form)
    assert status == 200 and "set-cookie" not in headers
    assert "The account sign-in was incorrect" in page and 'role="alert"' in page


def test_forged_or_foreign_sessions_are_guests() -> None:
    good = session.issue("emma.lopez@example.com")
    forged = good[:-1] + ("0" if good[-1] != "0" else "1")
    for cookie in [
        f"{session.SESSION_COOKIE}={forged}",
        f"{session.SESSION_COOKIE}={session.issue('eve@example.com')}",
        f"{session.SESSION_COOKIE}=garbage",
        "bad cookie ;;; ==",
    ]:
        assert fetch("/sales/order/history/", cookie=cookie)[0] == 302, cookie


def test_the_home_page_shows_recently_viewed_products_newest_first() -> None:
    assert "Recently Viewed" not in get("/")[1]
    _, _, headers = fetch("/shadow-box-frame.html")
    [recent] = headers["set-cookie"]
    assert recent.startswith("recently_viewed=shadow-box-frame;")
    cookie = f"{SIGNED_IN}; recently_viewed={session.viewed(('shadow-box-frame',), 'non-slip-yoga-mat')}"
    home = get("/", cookie=cookie)[1]
    viewed = home.split("Recently Viewed", 1)[1].split("Product Showcases", 1)[0]
    assert viewed.index("Non-Slip Yoga Mat") < viewed.index("Deep Shadow Box Frame")


def test_site_server_starts_on_a_free_port_and_releases_it() -> None:
    with SiteServer("shop") as server:
        port = int(server.url.rsplit(":", 1)[1])
        with urllib.request.urlopen(server.url + "/", timeout=10) as resp:
            assert resp.status == 200
        assert server.running
    assert not server.running
    with SiteServer("shop", port=port) as again:  # the port was released (a bound one raises)
        assert again.url == server.url


def test_shared_site_is_reused_and_unknown_sites_are_refused() -> None:
    assert shared_site("shop") is shared_site("shop")
    with pytest.raises(ValueError, match="unknown site"):
        handler_for("bank")
    with pytest.raises(SystemExit):
        main(["bank"])


def test_the_shop_keeps_a_record_of_each_submission_but_no_password(tmp_path) -> None:
    file = tmp_path / "records.jsonl"
    with SiteServer("shop", records=file) as server:

        def post(path: str, data: bytes) -> int:
            request = urllib.request.Request(server.url + path, data=data, headers={"Cookie": SIGNED_IN})
            with urllib.request.urlopen(request, timeout=10) as resp:
                return resp.status

        assert post("/contact/post/", b"name=Emma+Lopez&comment=Has+it+shipped%3F") == 200
        assert post("/customer/account/editPost/", b"firstname=Emma&current_password=Password.123") == 200
        with urllib.request.urlopen(server.url + "/contact/", timeout=10):
            pass  # reading a page is not a submission
    expected = [
        {"form": "/contact/post", "fields": {"comment": "Has it shipped?", "name": "Emma Lopez"}},
        {"form": "/customer/account/editPost", "fields": {"firstname": "Emma"}},
    ]
    assert server.records == expected
    assert [json.loads(line) for line in file.read_text().splitlines()] == expected


def test_site_url_names_a_shared_server_when_one_is_given(monkeypatch) -> None:
    monkeypatch.delenv("INTROSPECT_SITE_SHOP", raising=False)
    assert site_url("shop") == shared_site("shop").url
    monkeypatch.setenv("INTROSPECT_SITE_SHOP", "http://127.0.0.1:7770/")
    assert site_url("shop") == "http://127.0.0.1:7770"
