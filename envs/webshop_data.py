"""WebShop's catalogue and goals, loaded by WebShop's own rules.

WebShop (princeton-nlp/WebShop, ``web_agent_site/engine/engine.py`` and ``goal.py``) does
not store goals: it builds them when it loads the products. This module does the same on
the shipped 1000-product set (``envs/data/webshop``), so that a task id (a goal index)
means what it means in WebShop:

* products: raw ``items_shuffle`` records turned into ``Title``, ``Description``,
  ``BulletPoints``, ``Price``/``pricing``, lower-cased ``options``, ``Attributes``;
* one price per product (the first price, or a uniform draw inside a price range);
* synthetic goals: every product with an instruction in ``items_ins_v2_1000.json``, once per
  combination of its option values, then shuffled as WebShop shuffles them (seed 233);
* human goals: the 13 human instructions of these products, after the synthetic ones.

WebShop draws prices and ``price_upper`` from Python's unseeded global generator, so its
task ids are not reproducible; here every draw comes from one ``random.Random(GOAL_SEED)``
in a fixed order, so goal ``"12"`` is the same goal in every run and process.
Loaded data is cached per data folder: every env instance in a process shares it.
"""

from __future__ import annotations

import functools
import gzip
import itertools
import json
import random
import re
from collections import defaultdict
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any, TypedDict

DATA_DIR = Path(__file__).parent / "data" / "webshop"
GOAL_SEED = 233  # seeds the price draws; WebShop also shuffles its goals with seed 233
SHUFFLE_SEED = 233
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


@dataclass(frozen=True)
class Catalogue:
    """Everything loaded once per data folder and shared by all env instances."""

    products: list[Product]
    by_asin: dict[str, Product]
    prices: dict[str, float]  # the price the reward compares with price_upper
    goals: list[Goal]  # synthetic goals (shuffled) then human goals
    n_synthetic: int


def _open(folder: Path, *names: str) -> Any:
    """Read the first of ``names`` (plain or .gz) found in ``folder`` as JSON (JSON lines for .jsonl)."""
    for name in names:
        for path, packed in ((folder / f"{name}.gz", True), (folder / name, False)):
            if path.exists():
                data = path.read_bytes()
                text = (gzip.decompress(data) if packed else data).decode("utf-8")
                if name.endswith(".jsonl"):
                    return [json.loads(line) for line in text.splitlines() if line.strip()]
                return json.loads(text)
    raise FileNotFoundError(f"WebShop data file {' or '.join(names)} (plain or .gz) not found in {folder}")


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


def build_product(raw: dict[str, Any], attributes: dict[str, Any], human: dict[str, Any]) -> Product:
    """One raw ``items_shuffle`` record turned into WebShop's processed product."""
    asin = raw["asin"]
    pricing, tag = parse_pricing(raw.get("pricing"))
    options, images = parse_options(raw.get("customization_options"))
    bullets = raw["small_description"]
    ins = attributes.get(asin, {})
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
    if asin in human:
        product["instructions"] = human[asin]
    return product


def load_products(folder: Path) -> list[Product]:
    """All products of ``folder``, skipping bad and duplicate asins as WebShop does."""
    raws = _open(folder, "items_shuffle_1000.json", "items_shuffle.json")
    attributes = _open(folder, "items_ins_v2_1000.json", "items_ins_v2.json")
    human = _open(folder, "items_human_ins.json")
    seen: set[str] = set()
    products = []
    for raw in raws:
        asin = raw["asin"]
        if asin == "nan" or len(asin) > 10 or asin in seen:
            continue
        seen.add(asin)
        products.append(build_product(raw, attributes, human))
    return products


def search_text(product: Product) -> str:
    """The text WebShop indexes for a product: title, description, first bullet, options."""
    options = ", and ".join(f"{name}: {', '.join(values)}" for name, values in product["options"].items())
    first_bullet = product["BulletPoints"][0] if product["BulletPoints"] else ""
    return " ".join([product["Title"], product["Description"], first_bullet, options]).lower()


def _price_upper(price: float, rng: random.Random) -> tuple[float, str]:
    """WebShop's budget: the larger of two of the (up to) four round prices above the price."""
    above = [p for p in PRICE_RANGE if p > price][:4]
    if len(above) < 2:
        return NO_PRICE_LIMIT, ""
    upper = sorted(rng.sample(above, 2))[1]
    return upper, f", and price lower than {upper:.2f} dollars"


def product_prices(products: list[Product], rng: random.Random) -> dict[str, float]:
    """One price per product: a single price as is, a range by a uniform draw inside it."""
    prices = {}
    for product in products:
        pricing = product["pricing"]
        prices[product["asin"]] = pricing[0] if len(pricing) == 1 else rng.uniform(*pricing[:2])
    return prices


def synthetic_goals(products: list[Product], prices: dict[str, float], rng: random.Random) -> list[Goal]:
    """One goal per option combination of every product that has a synthetic instruction."""
    goals: list[Goal] = []
    counts: dict[str, int] = defaultdict(int)
    for product in products:
        if product.get("instruction_text") is None:
            continue
        upper, price_text = _price_upper(prices[product["asin"]], rng)
        names = sorted(product["options"])
        for combination in itertools.product(*(product["options"][n] for n in names)):
            chosen = dict(zip(names, combination))
            option_text = ", and ".join(f"{k}: {v}" for k, v in chosen.items())
            option_text = f" with {option_text}" if option_text else ""
            goals.append(Goal(
                asin=product["asin"],
                category=product["category"],
                query=product["query"],
                name=product["Title"],
                product_category=product["product_category"],
                instruction_text=f"{product['instruction_text']}{option_text}{price_text}",
                attributes=list(product["instruction_attributes"] or []),
                price_upper=upper,
                goal_options=chosen,
                weight=0.0,
                kind="synthetic",
            ))
            for att in goals[-1]["attributes"]:
                counts[att] += 1
    for goal in goals:  # WebShop's sampling weight: rarer attributes weigh more
        goal["weight"] = sum(1.0 / counts[a] for a in goal["attributes"]) / len(goal["attributes"])
    return goals


def human_goals(products: list[Product], prices: dict[str, float], rng: random.Random) -> list[Goal]:
    """One goal per human instruction that names at least one attribute."""
    goals: list[Goal] = []
    for product in products:
        for record in product.get("instructions", []):
            if not record["instruction_attributes"]:
                continue
            upper, price_text = _price_upper(prices[product["asin"]], rng)
            goals.append(Goal(
                asin=product["asin"],
                category=product["category"],
                query=product["query"],
                name=product["name"],
                product_category=product["product_category"],
                instruction_text=record["instruction"].strip(".") + price_text,
                attributes=list(record["instruction_attributes"]),
                price_upper=upper,
                goal_options=list(record["instruction_options"]),
                weight=1.0,
                kind="human",
            ))
    return goals


@functools.cache
def load_catalogue(folder: str | None = None) -> Catalogue:
    """Products, prices and goals of a data folder (default: the shipped 1000 products)."""
    path = Path(folder) if folder else DATA_DIR
    products = load_products(path)
    rng = random.Random(GOAL_SEED)  # one stream, fixed order: prices, synthetic, human
    prices = product_prices(products, rng)
    synthetic = synthetic_goals(products, prices, rng)
    human = human_goals(products, prices, rng)
    random.Random(SHUFFLE_SEED).shuffle(synthetic)
    random.Random(SHUFFLE_SEED).shuffle(human)
    return Catalogue(
        products=products,
        by_asin={p["asin"]: p for p in products},
        prices=prices,
        goals=synthetic + human,
        n_synthetic=len(synthetic),
    )
