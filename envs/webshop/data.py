"""WebShop's rules for products and goals (``web_agent_site/engine/engine.py``, ``goal.py``).

WebShop does not store goals: it builds them when it loads the products. These are its
rules, one product or one instruction at a time, so that ``envs.webshop.catalogue`` can
apply them while streaming a catalogue of any size:

* products: raw ``items_shuffle`` records turned into ``Title``, ``Description``,
  ``BulletPoints``, ``Price``/``pricing``, lower-cased ``options``, ``Attributes``;
* one price per product: the first price, or a uniform draw inside a price range;
* a budget (``price_upper``) per goal: the larger of two of the four round prices above
  the product's price;
* synthetic goals: one per combination of the option values of each product that has an
  instruction in ``items_ins_v2*.json`` (``synthetic_goal``);
* human goals: one per human instruction that names at least one attribute
  (``human_goal``).
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any, TypedDict

PRICE_RANGE = [10.0 * i for i in range(1, 100)]
NO_PRICE_LIMIT = 1000000
DEFAULT_PRICE = 100.0


class Product(TypedDict, total=False):
    """A product after WebShop's ``load_products`` (the keys the env and reward read)."""

    asin: str
    name: str
    Title: str
    Description: str
    BulletPoints: list[str]
    Price: str
    pricing: list[float]
    options: dict[str, list[str]]
    option_to_image: dict[str, str | None]
    Attributes: list[str]
    Reviews: list[dict[str, Any]]
    Rating: str
    MainImage: str | None
    category: str
    query: str
    product_category: str
    instruction_text: str | None
    instruction_attributes: list[str] | None
    instructions: list[dict[str, Any]]


class Goal(TypedDict):
    """A WebShop goal: what to buy, and what the reward compares the purchase with.

    ``goal_options`` is a dict (option name -> value) for synthetic goals and a list of
    option texts for human goals, as in WebShop.
    """

    asin: str
    category: str
    query: str
    name: str
    product_category: str
    instruction_text: str
    attributes: list[str]
    price_upper: float
    goal_options: dict[str, str] | list[str]
    weight: float
    kind: str  # "synthetic" | "human" (not in WebShop: which list the goal came from)


def parse_pricing(pricing: str | None) -> tuple[list[float], str]:
    """WebShop's price rule: the dollar amounts in the pricing text and the price tag shown."""
    if not pricing:
        return [DEFAULT_PRICE], f"${DEFAULT_PRICE}"
    amounts = [float(Decimal(re.sub(r"[^\d.]", "", part))) for part in pricing.split("$")[1:]]
    if len(amounts) == 1:
        return amounts, f"${amounts[0]}"
    return amounts[:2], f"${amounts[0]} to ${amounts[1]}"


def parse_options(customization: Any) -> tuple[dict[str, list[str]], dict[str, str | None]]:
    """WebShop's option rule: lower-cased names and values, '/' shown as ' | '."""
    options: dict[str, list[str]] = {}
    images: dict[str, str | None] = {}
    if not customization:
        return options, images
    for name, contents in customization.items():
        if contents is None:
            continue
        values = []
        for content in contents:
            value = content["value"].strip().replace("/", " | ").lower()
            values.append(value)
            images[value] = content.get("image")
        options[name.lower()] = values
    return options, images


def build_product(raw: Mapping[str, Any], ins: Mapping[str, Any], instructions: list[dict[str, Any]] | None) -> Product:
    """One raw ``items_shuffle`` record turned into WebShop's processed product, with its
    ``items_ins_v2`` record ``ins`` ({} when it has none) and its human instructions."""
    asin = raw["asin"]
    pricing, tag = parse_pricing(raw.get("pricing"))
    options, images = parse_options(raw.get("customization_options"))
    bullets = raw["small_description"]
    product = Product(
        asin=asin,
        name=raw["name"],
        Title=raw["name"],
        Description=raw["full_description"],
        BulletPoints=bullets if isinstance(bullets, list) else [bullets],
        Price=tag,
        pricing=pricing,
        options=options,
        option_to_image=images,
        Attributes=ins["attributes"] if "attributes" in ins else ["DUMMY_ATTR"],
        # The 1000-product set has no review file: WebShop gives such products no reviews.
        Reviews=[],
        Rating="N.A.",
        MainImage=(raw.get("images") or [None])[0],
        category=raw["category"],
        query=raw["query"].lower().strip(),
        product_category=raw["product_category"],
        instruction_text=ins.get("instruction"),
        instruction_attributes=ins.get("instruction_attributes"),
    )
    if instructions is not None:
        product["instructions"] = instructions
    return product


def search_text(product: Product) -> str:
    """The text WebShop indexes for a product: title, description, first bullet, options."""
    options = ", and ".join(f"{name}: {', '.join(values)}" for name, values in product["options"].items())
    first_bullet = product["BulletPoints"][0] if product["BulletPoints"] else ""
    return " ".join([product["Title"], product["Description"], first_bullet, options]).lower()


def product_price(pricing: Sequence[float], rng: random.Random) -> float:
    """The price the reward compares with the budget: a range is charged a uniform draw in it."""
    return pricing[0] if len(pricing) == 1 else rng.uniform(*pricing[:2])


def price_upper(price: float, rng: random.Random) -> float:
    """A goal's budget: the larger of two of the (up to) four round prices above ``price``;
    no limit (and no draw) when fewer than two are above it."""
    above = [p for p in PRICE_RANGE if p > price][:4]
    if len(above) < 2:
        return NO_PRICE_LIMIT
    return sorted(rng.sample(above, 2))[1]


def price_text(upper: float) -> str:
    """The budget as the instruction states it ("" without a limit)."""
    return "" if upper == NO_PRICE_LIMIT else f", and price lower than {upper:.2f} dollars"


def combinations(product: Product) -> int:
    """How many synthetic goals a product with an instruction gives: one per option combination."""
    return math.prod(len(values) for values in product["options"].values())


def synthetic_goal(product: Product, combination: int, upper: float, weight: float) -> Goal:
    """The product's synthetic goal for its ``combination``-th option combination, in the
    order of ``itertools.product`` over the option names sorted (as WebShop enumerates)."""
    names = sorted(product["options"])
    chosen: dict[str, str] = {}
    for name in reversed(names):  # the last name varies fastest
        combination, digit = divmod(combination, len(product["options"][name]))
        chosen[name] = product["options"][name][digit]
    chosen = {name: chosen[name] for name in names}
    option_text = ", and ".join(f"{k}: {v}" for k, v in chosen.items())
    option_text = f" with {option_text}" if option_text else ""
    return Goal(
        asin=product["asin"],
        category=product["category"],
        query=product["query"],
        name=product["Title"],
        product_category=product["product_category"],
        instruction_text=f"{product['instruction_text']}{option_text}{price_text(upper)}",
        attributes=list(product["instruction_attributes"] or []),
        price_upper=upper,
        goal_options=chosen,
        weight=weight,
        kind="synthetic",
    )


def synthetic_weight(attributes: Sequence[str], counts: Mapping[str, int]) -> float:
    """WebShop's sampling weight of a synthetic goal: rarer attributes weigh more
    (``counts``: how many synthetic goals name each attribute)."""
    return sum(1.0 / counts[a] for a in attributes) / len(attributes) if attributes else 0.0


def human_goal(product: Product, record: Mapping[str, Any], upper: float) -> Goal:
    """The goal of one human instruction (WebShop keeps those naming an attribute)."""
    return Goal(
        asin=product["asin"],
        category=product["category"],
        query=product["query"],
        name=product["name"],
        product_category=product["product_category"],
        instruction_text=str(record["instruction"]).strip(".") + price_text(upper),
        attributes=list(record["instruction_attributes"]),
        price_upper=upper,
        goal_options=list(record["instruction_options"]),
        weight=1.0,
        kind="human",
    )
