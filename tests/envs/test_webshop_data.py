"""WebShop's catalogue, goals and search, checked against WebShop's own processed records."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from envs.webshop import search_index
from envs.webshop_data import DATA_DIR, load_catalogue, parse_options, parse_pricing, search_text

PROCESSED_KEYS = ["Title", "Description", "BulletPoints", "Price", "pricing", "options", "option_to_image",
                  "Attributes", "MainImage", "query", "category", "product_category", "Rating", "Reviews"]
GOAL_DIGEST = (
    "import hashlib, json; from envs.webshop_data import load_catalogue;"
    "goals = load_catalogue().goals;"
    "print(hashlib.sha256(json.dumps([[g['asin'], g['price_upper'], g['instruction_text']] for g in goals])"
    ".encode()).hexdigest())"
)


def reference_documents() -> list[dict]:
    with gzip.open(DATA_DIR / "documents_100.jsonl.gz", "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def test_products_are_processed_and_indexed_like_webshop():
    catalogue = load_catalogue()
    assert len(catalogue.products) == 1000
    for doc in reference_documents():
        product = catalogue.by_asin[doc["id"]]
        assert {k: product[k] for k in PROCESSED_KEYS} == {k: doc["product"][k] for k in PROCESSED_KEYS}
        assert search_text(product) == doc["contents"]


def test_pricing_and_option_rules():
    assert parse_pricing("$19.99 - $27.99") == ([19.99, 27.99], "$19.99 to $27.99")
    assert parse_pricing("$1,299.5") == ([1299.5], "$1299.5")
    assert parse_pricing("") == ([100.0], "$100.0")
    options, images = parse_options({"Color": [{"value": " Black/White ", "image": "u"}], "Size": None})
    assert options == {"color": ["black | white"]} and images == {"black | white": "u"}


def test_goals_are_built_like_webshop():
    catalogue = load_catalogue()
    goals = catalogue.goals
    assert len(goals) == 6910 + 13 and catalogue.n_synthetic == 6910
    assert {g["kind"] for g in goals[:6910]} == {"synthetic"} and {g["kind"] for g in goals[6910:]} == {"human"}
    for goal in goals[:200] + goals[6910:]:
        price = catalogue.prices[goal["asin"]]
        assert goal["price_upper"] > price and goal["price_upper"] in [10.0 * i for i in range(1, 100)]
        assert goal["instruction_text"].endswith(f", and price lower than {goal['price_upper']:.2f} dollars")
    synthetic = goals[12]
    product = catalogue.by_asin[synthetic["asin"]]
    assert set(synthetic["goal_options"]) == set(product["options"])
    assert " with color: b-purple-thumbhole, and size: x-large," in synthetic["instruction_text"]
    # One goal per option combination of each product with an instruction.
    per_product = {}
    for goal in goals[:6910]:
        per_product[goal["asin"]] = per_product.get(goal["asin"], 0) + 1
    for asin, count in per_product.items():
        expected = 1
        for values in catalogue.by_asin[asin]["options"].values():
            expected *= len(values)
        assert count == expected
    # A range-priced product is charged a price inside its range.
    ranged = next(p for p in catalogue.products if len(p["pricing"]) == 2)
    low, high = ranged["pricing"]
    assert low <= catalogue.prices[ranged["asin"]] <= high


def test_goals_are_stable_across_loads_and_processes():
    first = [(g["asin"], g["price_upper"], g["instruction_text"]) for g in load_catalogue().goals]
    load_catalogue.cache_clear()
    second = [(g["asin"], g["price_upper"], g["instruction_text"]) for g in load_catalogue().goals]
    assert first == second and len(second) == 6923
    root = Path(__file__).resolve().parents[2]
    digests = {
        subprocess.run([sys.executable, "-c", GOAL_DIGEST], cwd=root, capture_output=True, text=True,
                       check=True, env={"PYTHONHASHSEED": seed}).stdout.strip()
        for seed in ("1", "2")
    }
    assert len(digests) == 1


@pytest.mark.parametrize("task", [0, 1, 2, 12, 100, 2000, 6000, 6910, 6915])
def test_search_ranks_the_goal_product_first_for_its_title(task):
    goal = load_catalogue().goals[task]
    hits = search_index().search(goal["name"].lower())
    assert hits[0] == goal["asin"]


def test_search_returns_at_most_fifty_and_nothing_for_no_words():
    index = search_index()
    assert len(index.search("women shirt")) == 50
    assert index.search("?!") == ()
    assert index.search('"quoted" OR (tricky) AND NOT') != ()  # FTS syntax in a query is just words
