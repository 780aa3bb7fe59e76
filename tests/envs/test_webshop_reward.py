"""WebShop's reward, with expected values worked out by hand from WebShop's formula:

total = r_type * (attribute hits + option hits + [price <= price_upper]) / (n_attributes + n_options + 1)
"""

from __future__ import annotations

import pytest

from envs.webshop import reward as webshop_reward
from envs.webshop.catalogue import load_catalogue
from envs.webshop.reward import reward

CATEGORY = "Clothing › Men › Shirts › Casual"


def shirt(**changes):
    product = {
        "asin": "B000000001",
        "name": "Cotton Shirt",
        "Title": "Cotton Shirt",
        "query": "shirts",
        "product_category": CATEGORY,
        "Attributes": ["machine wash"],
        "BulletPoints": ["Soft fabric"],
        "Description": "A shirt.",
        "options": {},
    }
    return {**product, **changes}


def shirt_goal(**changes):
    goal = {
        "asin": "B000000001",
        "name": "Cotton Shirt",
        "query": "shirts",
        "product_category": CATEGORY,
        "attributes": ["machine wash", "long sleeve", "soft fabric"],
        "goal_options": {"color": "black", "size": "large"},
        "price_upper": 30.0,
    }
    return {**goal, **changes}


def test_partial_match_components():
    # Same name and query: r_type 1. Attributes: "machine wash" (in Attributes) and
    # "soft fabric" (in the features), not "long sleeve": 2 of 3. Options: "jet black" becomes
    # "black" and matches the goal colour; "small" does not match "size large": 1 of 2.
    total, info = reward(shirt_goal(), shirt(), 25.0, {"color": "jet black", "size": "small"}, verbose=True)
    assert total == pytest.approx((2 + 1 + 1) / (3 + 2 + 1))
    assert info["r_type"] == 1.0 and info["query_match"] is True and info["category_match"] is True
    assert info["r_att"] == pytest.approx(2 / 3) and info["w_att"] == pytest.approx(3 / 6)
    assert info["r_option"] == pytest.approx(1 / 2) and info["w_option"] == pytest.approx(2 / 6)
    assert info["r_price"] is True and info["w_price"] == pytest.approx(1 / 6)
    assert reward(shirt_goal(), shirt(), 25.0, {"color": "jet black", "size": "small"}) == pytest.approx(total)


def test_over_price_loses_the_price_point_only():
    goal = shirt_goal(attributes=["machine wash"], goal_options={"color": "black"})
    assert reward(goal, shirt(), 30.0, {"color": "black"}) == pytest.approx(1.0)  # price <= price_upper
    total, info = reward(goal, shirt(), 30.01, {"color": "black"}, verbose=True)
    assert total == pytest.approx((1 + 1 + 0) / (1 + 1 + 1))
    assert info["r_price"] is False


def test_no_goal_options_leaves_r_option_out():
    goal = shirt_goal(attributes=["machine wash"], goal_options={})
    total, info = reward(goal, shirt(), 10.0, {}, verbose=True)
    assert total == pytest.approx(1.0) and "r_option" not in info and "w_option" not in info


def test_human_goal_options_are_texts():
    goal = shirt_goal(attributes=["machine wash"], goal_options=["woody scent", "1.6 ounce (pack of 1)"])
    bought = {"scent": "woody scent", "size": "1.6 ounce (pack of 1)"}
    assert reward(goal, shirt(), 10.0, bought) == pytest.approx(1.0)
    # One of two options: (1 + 1 + 1) / (1 + 2 + 1).
    assert reward(goal, shirt(), 10.0, {"scent": "woody scent"}) == pytest.approx(3 / 4)


def test_unrelated_item_gets_type_zero():
    other = shirt(
        name="Reclaimed Wood Console Table",
        Title="Reclaimed Wood Console Table",
        query="tables",
        product_category="Home & Kitchen › Furniture › Tables",
    )
    total, info = reward(shirt_goal(), other, 10.0, {"color": "black", "size": "large"}, verbose=True)
    assert info["title_score"] == 0.0 and info["r_type"] == 0.0 and total == 0.0


@pytest.mark.parametrize(
    ("query", "category", "noun_sets", "r_type"),
    [
        ("shirts", "Home › Other", (["a", "b", "c", "d", "e", "f"], ["a"]), 1.0),  # query match, 1/6 >= 0.1
        ("other", CATEGORY, (["a", "b", "c", "d", "e", "f"], ["a"]), 1.0),  # two shared category levels
        ("other", "Home › Other", (["a", "b", "c", "d", "e", "f"], ["a"]), 0.5),  # no match, 1/6 <= 0.2
        ("other", "Home › Other", (["a", "b", "c", "d", "e"], ["a", "b"]), 1.0),  # title 2/5 > 0.2
        ("shirts", CATEGORY, ([f"n{i}" for i in range(11)], ["n0"]), 0.1),  # title 1/11 < 0.1
        ("shirts", CATEGORY, ([], ["x"]), 1.0),  # goal name without nouns: title score 0.2
    ],
)
def test_type_reward_thresholds(monkeypatch, query, category, noun_sets, r_type):
    wanted, got = noun_sets
    monkeypatch.setattr(webshop_reward, "nouns", lambda text, model: tuple(wanted if text == "goal" else got))
    info = webshop_reward.type_reward(
        shirt(name="bought", query=query, product_category=category), shirt_goal(name="goal")
    )
    assert info["r_type"] == r_type


def test_nouns_come_from_a_pos_tagger():
    found = webshop_reward.nouns("Bright Citrus Deodorant by Earth Mama for Sensitive Skin")
    assert "deodorant" in found and "skin" in found
    assert "by" not in found and "for" not in found


def test_option_matching_reproduces_webshops_name_value_pairs():
    """WebShop compares a synthetic goal option as its (name, value) pair (goal.py passes
    goal_options.items()), while the purchased value is colour-normalised: "rectangular"
    contains "tan", so buying the right shape still misses it."""
    catalogue = load_catalogue()
    goal = catalogue.synthetic_goal(28)
    assert goal["goal_options"] == {"color": "navy | red", "item shape": "rectangular", "size": "1 ft 9 in x 7 ft 2 in"}
    product = catalogue.product(goal["asin"])
    total, info = reward(goal, product, catalogue.price(goal["asin"]), goal["goal_options"], verbose=True)
    n_att = len(goal["attributes"])
    # "navy | red" -> "navy" is in "color navy red"; the size text is in "size 1 ft 9 in ..."; "tan" is not
    # in "item shape rectangular": 2 of 3 options. All attributes, price within budget, r_type 1.
    assert info["r_option"] == pytest.approx(2 / 3) and info["r_att"] == 1.0 and info["r_type"] == 1.0
    assert total == pytest.approx((n_att + 2 + 1) / (n_att + 3 + 1))
    assert webshop_reward.normalize_color("rectangular") == "tan"


def test_the_reward_tags_nouns_with_the_chosen_spacy_model(monkeypatch):
    """LASER's copy of goal.py loads en_core_web_lg: the env option spacy_model reaches the tagger."""
    asked: list[str] = []
    monkeypatch.setattr(webshop_reward, "nouns", lambda text, model: asked.append(model) or ("shirt",))
    webshop_reward.reward(shirt_goal(name="goal"), shirt(name="bought"), 1.0, {}, spacy_model="en_core_web_lg")
    assert asked and set(asked) == {"en_core_web_lg"}
