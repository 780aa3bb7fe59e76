"""WebShop's catalogue and goals, checked against WebShop's own processed records and rules."""

from __future__ import annotations

import gzip
import hashlib
import itertools
import json
import random
import subprocess
import sys
from pathlib import Path

from envs.webshop.catalogue import DATA_DIR, GOAL_SEED, load_catalogue
from envs.webshop.data import (
    parse_options,
    parse_pricing,
    price_upper,
    product_price,
    search_text,
)

PROCESSED_KEYS = [
    "Title",
    "Description",
    "BulletPoints",
    "Price",
    "pricing",
    "options",
    "option_to_image",
    "Attributes",
    "MainImage",
    "query",
    "category",
    "product_category",
    "Rating",
    "Reviews",
]
GOAL_DIGEST = (
    "import hashlib, json; from envs.webshop.catalogue import load_catalogue;"
    "c = load_catalogue(); goals = c.human_goals + [c.synthetic_goal(i) for i in range(c.n_synthetic)];"
    "print(hashlib.sha256(json.dumps([[g['asin'], g['price_upper'], g['instruction_text']] for g in goals])"
    ".encode()).hexdigest())"
)
ROOT = Path(__file__).resolve().parents[2]


def reference_documents() -> list[dict]:
    with gzip.open(DATA_DIR / "documents_100.jsonl.gz", "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def test_products_are_processed_and_indexed_like_webshop():
    catalogue = load_catalogue()
    assert catalogue.n_products == 1000
    for doc in reference_documents():
        product = catalogue.product(doc["id"])
        assert {k: product[k] for k in PROCESSED_KEYS} == {k: doc["product"][k] for k in PROCESSED_KEYS}
        assert search_text(product) == doc["contents"]
    assert catalogue.product("B000NOTHERE") is None and catalogue.product("B08JD14GJF-LONG") is None


def test_pricing_and_option_rules():
    assert parse_pricing("$19.99 - $27.99") == ([19.99, 27.99], "$19.99 to $27.99")
    assert parse_pricing("$1,299.5") == ([1299.5], "$1299.5")
    assert parse_pricing("") == ([100.0], "$100.0")
    options, images = parse_options({"Color": [{"value": " Black/White ", "image": "u"}], "Size": None})
    assert options == {"color": ["black | white"]} and images == {"black | white": "u"}


def webshop_draws(products: list[dict], human: bool) -> list[float]:
    """The budgets WebShop draws after ``random.seed(233)`` (LASER's laser_agent.py): every
    product's price in catalogue order, then one budget per synthetic product or per kept
    human instruction (engine.generate_product_prices, goal.get_*_goals)."""
    rng = random.Random(GOAL_SEED)
    prices = {p["asin"]: product_price(p["pricing"], rng) for p in products}
    uppers = []
    for p in products:
        if human:
            uppers += [
                price_upper(prices[p["asin"]], rng) for r in p.get("instructions", []) if r["instruction_attributes"]
            ]
        elif p.get("instruction_text") is not None:
            uppers.append(price_upper(prices[p["asin"]], rng))
    return uppers


def test_human_goals_are_webshops_with_laser_seed():
    catalogue = load_catalogue()
    products = list(catalogue.products())
    goals = catalogue.human_goals
    assert len(goals) == 13 and {g["kind"] for g in goals} == {"human"}
    # Same instructions as WebShop keeps, shuffled with seed 233, budgets from the seeded draws.
    kept = [(p["asin"], r) for p in products for r in p.get("instructions", []) if r["instruction_attributes"]]
    order = list(range(len(kept)))
    random.Random(GOAL_SEED).shuffle(order)
    uppers = webshop_draws(products, human=True)
    for goal, original in zip(goals, order):
        asin, record = kept[original]
        assert goal["asin"] == asin and goal["attributes"] == record["instruction_attributes"]
        assert goal["goal_options"] == record["instruction_options"]
        assert goal["price_upper"] == uppers[original]
        assert goal["instruction_text"] == record["instruction"].strip(".") + (
            f", and price lower than {uppers[original]:.2f} dollars" if uppers[original] < 1000000 else ""
        )


def test_synthetic_goals_are_built_like_webshop():
    catalogue = load_catalogue()
    goals = [catalogue.synthetic_goal(i) for i in range(catalogue.n_synthetic)]
    assert len(goals) == 6910 and {g["kind"] for g in goals} == {"synthetic"}
    for goal in goals[:200]:
        price = catalogue.price(goal["asin"])
        assert goal["price_upper"] > price and goal["price_upper"] in [10.0 * i for i in range(1, 100)]
        assert goal["instruction_text"].endswith(f", and price lower than {goal['price_upper']:.2f} dollars")
    synthetic = goals[12]
    assert set(synthetic["goal_options"]) == set(catalogue.product(synthetic["asin"])["options"])
    assert " with color: b-purple-thumbhole, and size: x-large," in synthetic["instruction_text"]
    # One goal per option combination of each product with an instruction (itertools.product
    # over the option names sorted, repeated values included, as WebShop enumerates).
    per_product: dict[str, list] = {}
    for goal in goals:
        per_product.setdefault(goal["asin"], []).append(tuple(goal["goal_options"].values()))
    for asin, combos in per_product.items():
        options = catalogue.product(asin)["options"]
        assert sorted(combos) == sorted(itertools.product(*(options[n] for n in sorted(options))))
    # The budgets: the seeded draws, one per product in catalogue order.
    products = list(catalogue.products())
    uppers = dict(
        zip(
            [p["asin"] for p in products if p.get("instruction_text") is not None], webshop_draws(products, human=False)
        )
    )
    assert all(goal["price_upper"] == uppers[goal["asin"]] for goal in goals)
    # A range-priced product is charged a price inside its range.
    ranged = next(p for p in products if len(p["pricing"]) == 2)
    low, high = ranged["pricing"]
    assert low <= catalogue.price(ranged["asin"]) <= high


def test_goals_are_stable_across_processes_and_builds(tmp_path):
    """Two processes with different hash seeds, one reading the cache and one building a
    fresh one, list the same goals with the same budgets."""
    shared = str(load_catalogue().folder.parents[1])
    digests = {
        subprocess.run(
            [sys.executable, "-c", GOAL_DIGEST],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": seed, "INTROSPECT_CACHE": cache, "PYTHONPATH": str(ROOT)},
        ).stdout.strip()
        for seed, cache in (("1", shared), ("2", str(tmp_path)))
    }
    assert len(digests) == 1 and len(digests.pop()) == 64


def test_the_cache_is_built_once_and_keyed_by_the_data_files(tmp_path, monkeypatch):
    """A copy of the data in another folder (another key) is built into its own cache folder;
    loading it again reads that folder and builds nothing."""
    from envs.webshop import catalogue as webshop_catalogue

    data = tmp_path / "data"
    data.mkdir()
    for name in ("items_shuffle_1000.json.gz", "items_ins_v2_1000.json.gz", "items_human_ins.json"):
        (data / name).write_bytes((DATA_DIR / name).read_bytes())
    monkeypatch.setenv("INTROSPECT_CACHE", str(tmp_path / "cache"))
    builds = []
    real_build = webshop_catalogue.build
    monkeypatch.setattr(webshop_catalogue, "build", lambda *a: builds.append(a) or real_build(*a))
    first = webshop_catalogue._open_or_build(data)
    second = webshop_catalogue._open_or_build(data)
    assert len(builds) == 1 and first.folder == second.folder
    assert first.folder.parent == tmp_path / "cache" / "webshop"
    assert [p.name for p in first.folder.parent.iterdir()] == [first.folder.name]  # no scratch folder left
    digest = hashlib.sha256((first.folder / "products.jsonl").read_bytes()).hexdigest()
    shipped = load_catalogue()
    assert digest == hashlib.sha256((shipped.folder / "products.jsonl").read_bytes()).hexdigest()
    (data / "items_human_ins.json").write_text("{}", encoding="utf-8")  # changed data: a new key, a new build
    third = webshop_catalogue._open_or_build(data)
    assert len(builds) == 2 and third.folder != first.folder and third.human_goals == []
