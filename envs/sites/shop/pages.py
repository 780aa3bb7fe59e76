"""The shop's pages as HTML, laid out like WebArena's OneStopShop (a Magento storefront).

Every page shares templates/layout.html (header links, search box, category bar, footer); the
functions here render the main content. The header greets the signed-in customer (with links to
the account, orders and Sign Out) or offers a guest Sign In. All text from data goes through ``esc``.
"""

from __future__ import annotations

import math
from html import escape as esc
from pathlib import Path
from string import Template
from urllib.parse import urlencode

from envs.sites.shop.session import Visitor
from envs.sites.shop.store import Order, Product, Store, long_date, money, short_date

LAYOUT = Template((Path(__file__).resolve().parent / "templates" / "layout.html").read_text("utf-8"))
ORDERS_PER_PAGE = 10


_MEMBER_LINKS = [
    ("My Account", "/customer/account/"),
    ("My Orders", "/sales/order/history/"),
    ("Contact Us", "/contact/"),
    ("Sign Out", "/customer/account/logout/"),
]
_GUEST_LINKS = [("Sign In", "/customer/account/login/"), ("Contact Us", "/contact/")]


def layout(
    store: Store, visitor: Visitor, title: str, content: str, *, heading: str | None = None, query: str = ""
) -> str:
    categories = "\n".join(
        f'      <li><a href="/category/{slug}.html">{esc(name)}</a></li>' for slug, name in store.categories.items()
    )
    links = _MEMBER_LINKS if visitor.signed_in else _GUEST_LINKS
    return LAYOUT.substitute(
        title=esc(title),
        heading=esc(heading if heading is not None else title),
        store=esc(store.name),
        welcome=f"Welcome, {esc(store.customer['name'])}!" if visitor.signed_in else "Welcome, guest!",
        links="\n".join(f'      <li><a href="{href}">{name}</a></li>' for name, href in links),
        query=esc(query),
        categories=categories,
        content=content,
    )


def _sidebar(current: str) -> str:
    entries = [
        ("My Account", "/customer/account/"),
        ("My Orders", "/sales/order/history/"),
        ("Address Book", "/customer/address/"),
        ("Account Information", "/customer/account/edit/"),
    ]
    items = "\n".join(
        f'<li class="current"><strong>{name}</strong></li>'
        if name == current
        else f'<li><a href="{href}">{name}</a></li>'
        for name, href in entries
    )
    return f'<div class="sidebar"><nav aria-label="Account"><ul>{items}</ul></nav></div>'


def _account_page(store: Store, visitor: Visitor, title: str, current: str, body: str) -> str:
    content = f'<div class="columns">{_sidebar(current)}<div class="column main">{body}</div></div>'
    return layout(store, visitor, title, content)


def _product_cards(products: list[Product]) -> str:
    if not products:
        return '<p class="message notice">Your search returned no results.</p>'
    cards = "\n".join(
        f'<li class="product-item"><a class="product-item-link" href="{p.path}">{esc(p.name)}</a>'
        f'<div class="price">{money(p.price)}</div></li>'
        for p in products
    )
    return f'<ol class="products">{cards}</ol>'


def home(store: Store, visitor: Visitor) -> str:
    body = ""
    viewed = [p for p in (store.product(slug) for slug in visitor.recent) if p is not None]
    if viewed:  # Magento's "Recently Viewed" widget, newest first
        body += '<div class="block widget viewed"><h2>Recently Viewed</h2>' + _product_cards(viewed) + "</div>"
    body += "<h2>Product Showcases</h2>" + _product_cards(list(store.products[:8]))
    return layout(store, visitor, "One Stop Market", body, heading="Home Page")


def category(store: Store, visitor: Visitor, slug: str) -> str | None:
    if slug not in store.categories:
        return None
    name = store.categories[slug]
    products = store.in_category(slug)
    body = f'<p class="toolbar-amount">{len(products)} Items</p>' + _product_cards(products)
    return layout(store, visitor, name, body)


def search(store: Store, visitor: Visitor, query: str) -> str:
    found = store.search(query)
    body = f'<p class="toolbar-amount">{len(found)} Items</p>' + _product_cards(found)
    return layout(store, visitor, f"Search results for: '{query}'", body, query=query)


def product(store: Store, visitor: Visitor, item: Product) -> str:
    selects = "\n".join(
        f'<div class="field"><label for="opt-{i}">{esc(name)}</label>'
        f'<select id="opt-{i}" name="option[{esc(name)}]"><option value="">Choose an Option...</option>'
        + "".join(f"<option>{esc(v)}</option>" for v in values)
        + "</select></div>"
        for i, (name, values) in enumerate(item.options.items())
    )
    body = (
        f'<div class="product-info-main"><div class="price">{money(item.price)}</div>'
        f'<div class="sku">SKU: {esc(item.sku)}</div>'
        f'<form class="product-add-form" action="{item.path}" method="get">{selects}'
        '<div class="field"><label for="qty">Qty</label><input id="qty" name="qty" type="number" value="1"></div>'
        "</form>"
        f'<div class="product attribute description"><h2>Details</h2><p>{esc(item.description)}</p></div></div>'
    )
    return layout(store, visitor, item.name, body)


def _order_rows(orders: list[Order]) -> str:
    return "\n".join(
        f"<tr><td>{o.number}</td><td>{short_date(o.placed)}</td><td>{money(o.grand_total)}</td>"
        f'<td>{esc(o.status)}</td><td><a class="action view" href="{o.path}">View Order</a></td></tr>'
        for o in orders
    )


_ORDER_HEAD = (
    '<table class="data orders"><caption class="table-caption">Orders</caption>'
    "<thead><tr><th>Order #</th><th>Date</th><th>Order Total</th><th>Status</th><th>Action</th></tr></thead>"
)


def account(store: Store, visitor: Visitor, message: str = "") -> str:
    c = store.customer
    body = (
        (f'<div class="message success" role="status">{esc(message)}</div>' if message else "")
        + '<div class="box"><h2>Contact Information</h2>'
        f"<p>{esc(c['name'])}<br>{esc(c['email'])}</p>"
        '<a href="/customer/account/edit/">Edit</a></div>'
        '<div class="box"><h2>Default Shipping Address</h2>'
        f"<address>{'<br>'.join(esc(line) for line in c['address'])}</address></div>"
        '<h2>Recent Orders</h2><a href="/sales/order/history/">View All</a>'
        f"{_ORDER_HEAD}<tbody>{_order_rows(list(store.orders[:3]))}</tbody></table>"
    )
    return _account_page(store, visitor, "My Account", "My Account", body)


def order_history(store: Store, visitor: Visitor, page: int) -> str:
    pages = max(1, math.ceil(len(store.orders) / ORDERS_PER_PAGE))
    page = min(max(page, 1), pages)
    shown = list(store.orders[(page - 1) * ORDERS_PER_PAGE : page * ORDERS_PER_PAGE])
    links = []
    for n in range(1, pages + 1):
        href = "/sales/order/history/?" + urlencode({"p": n})
        links.append(
            f'<li class="current"><strong>Page {n}</strong></li>'
            if n == page
            else f'<li><a href="{href}">Page {n}</a></li>'
        )
    if page < pages:
        links.append(f'<li><a class="next" href="/sales/order/history/?p={page + 1}">Next</a></li>')
    first, last = (page - 1) * ORDERS_PER_PAGE + 1, (page - 1) * ORDERS_PER_PAGE + len(shown)
    body = (
        f"{_ORDER_HEAD}<tbody>{_order_rows(shown)}</tbody></table>"
        f'<p class="toolbar-amount">Items {first} to {last} of {len(store.orders)} total</p>'
        f'<nav aria-label="Pages"><ul class="pages">{"".join(links)}</ul></nav>'
    )
    return _account_page(store, visitor, "My Orders", "My Orders", body)


def order_view(store: Store, visitor: Visitor, order: Order) -> str:
    rows = []
    for item in order.items:
        options = "".join(f"<dt>{esc(k)}:</dt> <dd>{esc(v)}</dd> " for k, v in item.options.items())
        rows.append(
            f'<tr><td><strong class="product name">{esc(item.product.name)}</strong>'
            + (f' <dl class="item-options">{options}</dl>' if options else "")
            + f"</td><td>{esc(item.product.sku)}</td><td>{money(item.product.price)}</td>"
            f"<td>Ordered: {item.qty}</td><td>{money(item.subtotal)}</td></tr>"
        )
    c = store.customer
    body = (
        f'<p class="order-status">{esc(order.status)}</p>'
        f'<p class="order-date">Order Date: {long_date(order.placed)}</p>'
        '<h2>Items Ordered</h2><table class="data items"><thead><tr><th>Product Name</th><th>SKU</th>'
        f"<th>Price</th><th>Qty</th><th>Subtotal</th></tr></thead><tbody>{''.join(rows)}</tbody>"
        f'<tfoot><tr><th colspan="4">Subtotal</th><td>{money(order.subtotal)}</td></tr>'
        f'<tr><th colspan="4">Shipping &amp; Handling</th><td>{money(order.shipping)}</td></tr>'
        f'<tr><th colspan="4">Grand Total</th><td><strong>{money(order.grand_total)}</strong></td></tr>'
        "</tfoot></table>"
        '<h2>Order Information</h2><div class="box"><h3>Shipping Address</h3>'
        f"<address>{'<br>'.join(esc(line) for line in c['address'])}</address></div>"
        '<div class="box"><h3>Shipping Method</h3><p>Flat Rate - Fixed</p></div>'
        '<div class="box"><h3>Payment Method</h3><p>Check / Money order</p></div>'
        '<a href="/sales/order/history/">Back to My Orders</a>'
    )
    return _account_page(store, visitor, f"Order # {order.number}", "My Orders", body)


def contact(store: Store, visitor: Visitor) -> str:
    """Magento's contact form: the signed-in customer's name and email are filled in."""
    c = store.customer if visitor.signed_in else {"name": "", "email": ""}
    body = (
        "<p>Jot us a note and we'll get back to you as quickly as possible.</p>"
        '<form class="form contact" action="/contact/post/" method="post" id="contact-form">'
        "<fieldset><legend>Write Us</legend>"
        f'<div class="field"><label for="name">Name</label><input id="name" name="name" type="text" value="{esc(c["name"])}" required></div>'
        f'<div class="field"><label for="email">Email</label><input id="email" name="email" type="email" value="{esc(c["email"])}" required></div>'
        '<div class="field"><label for="telephone">Phone Number</label><input id="telephone" name="telephone" type="tel"></div>'
        '<div class="field"><label for="order">Order Number</label><input id="order" name="order" type="text"></div>'
        '<div class="field"><label for="comment">What\u2019s on your mind?</label><textarea id="comment" name="comment" required></textarea></div>'
        '</fieldset><div class="actions-toolbar"><button type="submit" class="action submit primary">Submit</button></div>'
        "</form>"
    )
    return layout(store, visitor, "Contact Us", body)


def contact_sent(store: Store, visitor: Visitor, name: str) -> str:
    body = (
        f"<p>Thanks for contacting us with your comments and questions, {esc(name)}. "
        "We'll respond to you very soon.</p>"
    )
    return layout(store, visitor, "Contact Us", body)


def login(store: Store, visitor: Visitor, *, email: str = "", error: str = "", referer: str = "") -> str:
    """Magento's Customer Login page (the form WebArena's auto_login fills: Email, Password, Sign In)."""
    alert = f'<div class="message error" role="alert">{esc(error)}</div>' if error else ""
    body = (
        f'{alert}<div class="block customer-login"><h2>Registered Customers</h2>'
        "<p>If you have an account, sign in with your email address.</p>"
        '<form class="form form-login" action="/customer/account/loginPost/" method="post" id="login-form">'
        f'<input type="hidden" name="referer" value="{esc(referer)}">'
        f'<div class="field"><label for="email">Email</label><input id="email" name="login[username]" type="email" value="{esc(email)}" autocomplete="off" required></div>'
        '<div class="field"><label for="pass">Password</label><input id="pass" name="login[password]" type="password" autocomplete="off" required></div>'
        '<div class="actions-toolbar"><button type="submit" class="action login primary">Sign In</button></div>'
        "</form></div>"
    )
    return layout(store, visitor, "Customer Login", body)


def signed_out(store: Store, visitor: Visitor) -> str:
    return layout(
        store,
        visitor,
        "You are signed out",
        '<p>You have signed out and will go to our homepage.</p><p><a href="/">Continue shopping</a></p>',
    )


def account_edit(store: Store, visitor: Visitor) -> str:
    """Account Information: names and the Change Email / Change Password boxes (saving stores nothing)."""
    first, _, last = store.customer["name"].partition(" ")
    body = (
        '<form class="form form-edit-account" action="/customer/account/editPost/" method="post" id="form-validate">'
        "<fieldset><legend>Account Information</legend>"
        f'<div class="field"><label for="firstname">First Name</label><input id="firstname" name="firstname" type="text" value="{esc(first)}" required></div>'
        f'<div class="field"><label for="lastname">Last Name</label><input id="lastname" name="lastname" type="text" value="{esc(last)}" required></div>'
        '<div class="field choice"><input id="change-email" name="change_email" type="checkbox" value="1">'
        '<label for="change-email">Change Email</label></div>'
        '<div class="field choice"><input id="change-password" name="change_password" type="checkbox" value="1">'
        '<label for="change-password">Change Password</label></div>'
        '</fieldset><div class="actions-toolbar"><button type="submit" class="action save primary">Save</button></div>'
        "</form>"
    )
    return _account_page(store, visitor, "Edit Account Information", "Account Information", body)


def wishlist(store: Store, visitor: Visitor) -> str:
    return layout(
        store, visitor, "My Wish List", '<p class="message info empty">You have no items in your wish list.</p>'
    )


def simple(store: Store, visitor: Visitor, title: str, text: str) -> str:
    return layout(store, visitor, title, f"<p>{esc(text)}</p>")
