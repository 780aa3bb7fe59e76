"""The shop's data: catalogue, the signed-in customer and their order history (data.json).

Kept apart from the HTML so that tasks and tests can compute expected answers (an order's total,
the orders of a month) from the same records the pages show.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date
from functools import lru_cache
from pathlib import Path
from typing import Any

DATA_FILE = Path(__file__).resolve().parent / "data.json"


@dataclass(frozen=True)
class Product:
    slug: str
    sku: str
    name: str
    price: float
    category: str
    options: dict[str, list[str]]
    description: str

    @property
    def path(self) -> str:
        return f"/{self.slug}.html"


@dataclass(frozen=True)
class OrderItem:
    product: Product
    options: dict[str, str]
    qty: int

    @property
    def subtotal(self) -> float:
        return round(self.product.price * self.qty, 2)


@dataclass(frozen=True)
class Order:
    id: int
    placed: date
    status: str
    items: tuple[OrderItem, ...]
    shipping: float

    @property
    def number(self) -> str:
        """The order number as the shop prints it (Magento pads to nine digits)."""
        return f"{self.id:09d}"

    @property
    def path(self) -> str:
        return f"/sales/order/view/order_id/{self.id}/"

    @property
    def subtotal(self) -> float:
        return round(sum(item.subtotal for item in self.items), 2)

    @property
    def grand_total(self) -> float:
        return round(self.subtotal + self.shipping, 2)


@dataclass(frozen=True)
class Store:
    name: str
    customer: dict[str, Any]
    categories: dict[str, str]
    products: tuple[Product, ...]
    orders: tuple[Order, ...]  # newest first, as "My Orders" lists them

    def product(self, slug: str) -> Product | None:
        return next((p for p in self.products if p.slug == slug), None)

    def order(self, order_id: int) -> Order | None:
        return next((o for o in self.orders if o.id == order_id), None)

    def in_category(self, slug: str) -> list[Product]:
        return [p for p in self.products if p.category == slug]

    def search(self, query: str) -> list[Product]:
        """Products whose name or description contains every word of the query."""
        words = query.lower().split()
        return [p for p in self.products if words and all(w in f"{p.name} {p.description}".lower() for w in words)]


def money(value: float) -> str:
    return f"${value:,.2f}"


def long_date(day: date) -> str:
    """The date format of Magento's order pages, e.g. "September 5, 2022"."""
    return f"{day.strftime('%B')} {day.day}, {day.year}"


def short_date(day: date) -> str:
    """The date format of Magento's order list, e.g. "9/5/22"."""
    return f"{day.month}/{day.day}/{day.strftime('%y')}"


@lru_cache(maxsize=1)
def load_store(path: str = str(DATA_FILE)) -> Store:
    raw = json.loads(Path(path).read_text(encoding="utf-8"))
    products = tuple(Product(**p) for p in raw["products"])
    by_slug = {p.slug: p for p in products}
    orders = tuple(
        Order(
            id=o["id"],
            placed=date.fromisoformat(o["date"]),
            status=o["status"],
            items=tuple(OrderItem(by_slug[i["product"]], dict(i["options"]), int(i["qty"])) for i in o["items"]),
            shipping=float(raw["shipping_fee"]),
        )
        for o in sorted(raw["orders"], key=lambda o: o["date"], reverse=True)
    )
    return Store(raw["store"], raw["customer"], raw["categories"], products, orders)
