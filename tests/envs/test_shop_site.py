"""The local shop site over HTTP (no browser): pages, order history, data the tasks rely on."""

from __future__ import annotations

import re
import urllib.error
import urllib.request
from collections import Counter

import pytest

from envs.sites.serve import SiteServer, handler_for, main, shared_site
from envs.sites.shop.store import load_store


def get(path: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(shared_site("shop").url + path, timeout=10) as resp:
            return resp.status, resp.read().decode("utf-8")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode("utf-8")


def test_every_page_of_the_site_map_renders_with_the_shared_layout() -> None:
    for path in ["/", "/customer/account/", "/sales/order/history/", "/sales/order/history/?p=2",
                 "/sales/order/view/order_id/171/", "/contact/", "/catalogsearch/result/?q=frame",
                 "/solid-wood-picture-frame.html", "/category/home-kitchen.html"]:
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
            o for o in store.orders if o.placed.strftime("%Y-%m") == month
            and any("Picture Frame" in i.product.name for i in o.items)
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
    req = urllib.request.Request(shared_site("shop").url + "/contact/post/", data=b"name=Emma+Lopez&comment=hi")
    with urllib.request.urlopen(req, timeout=10) as resp:
        assert "Thanks for contacting us with your comments and questions, Emma Lopez." in resp.read().decode()


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
