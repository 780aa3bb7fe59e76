"""The WebShop env played through its action grammar on the shipped catalogue."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from envs import EnvError, UnknownTaskError, make_env
from envs.webshop import WebShopEnv

GOAL_12 = "synthetic-12"  # COOrun women's long-sleeve shirt, color b-purple-thumbhole, size x-large, under $50


@pytest.fixture
def env() -> WebShopEnv:
    return WebShopEnv()


async def open_item(env: WebShopEnv, task_id: str, asin: str, query: str):
    """Reset, search ``query`` and open ``asin`` (asserting it is on the first results page)."""
    await env.reset(task_id)
    res = await env.step(f"search[{query}]")
    assert asin in res.observation.info["item_ids"]
    return await env.step(f"click[{asin.lower()}]")  # item ids are case-insensitive


async def buy(env: WebShopEnv, task_id: str, asin: str, query: str, values: list[str]):
    await open_item(env, task_id, asin, query)
    for value in values:
        res = await env.step(f"click[{value}]")
        assert res.valid, res.info
    return await env.step("click[Buy Now]")


def own_option_values(env: WebShopEnv) -> list[str]:
    options = env.goal["goal_options"]
    return list(options.values()) if isinstance(options, dict) else list(options)


@pytest.mark.parametrize("task_id", ["synthetic-0", "synthetic-1", "synthetic-12", "synthetic-4000", "0", "11"])
async def test_buying_the_goal_product_with_its_options_scores_one(env, task_id):
    await env.reset(task_id)
    goal = env.goal
    res = await buy(env, task_id, goal["asin"], goal["name"], own_option_values(env))
    assert res.done and res.reward == pytest.approx(1.0)
    assert res.success is True and {"valid", "feedback", "success"}.isdisjoint(res.info)  # typed fields now
    assert res.info["purchased"]["asin"] == goal["asin"]
    assert res.info["purchased"]["price"] <= goal["price_upper"]
    assert res.observation.info["page"] == "done"


async def test_wrong_options_score_by_webshop_formula(env):
    await env.reset(GOAL_12)
    goal = env.goal
    assert goal["goal_options"] == {"color": "b-purple-thumbhole", "size": "x-large"}
    assert len(goal["attributes"]) == 3
    # Right colour, wrong size: 3 attributes + 1 option + price out of 3 + 2 + 1, r_type 1.
    res = await buy(env, GOAL_12, goal["asin"], goal["name"], ["b-purple-thumbhole", "small"])
    assert res.reward == pytest.approx(5 / 6)
    assert res.info["reward_info"]["r_option"] == pytest.approx(0.5)
    assert res.success is False
    # No option chosen at all: (3 + 0 + 1) / 6.
    res = await buy(env, GOAL_12, goal["asin"], goal["name"], [])
    assert res.reward == pytest.approx(4 / 6)
    assert res.info["reward_info"]["r_option"] == 0.0


async def test_another_item_scores_by_webshop_formula(env):
    await env.reset(GOAL_12)
    # A women's sweatshirt with the same query: r_type 1 (query match), 1 of 3 attributes
    # ("long sleeve"), no option, price 22.78 <= 50: (1 + 0 + 1) / 6.
    res = await buy(env, GOAL_12, "B09P5CRVQ6", "womens tops casual sweatshirt for women graphic", [])
    assert res.reward == pytest.approx(2 / 6)
    info = res.info["reward_info"]
    assert info["r_type"] == 1.0 and info["query_match"] is True
    assert info["r_att"] == pytest.approx(1 / 3) and info["r_price"] is True
    # Its name shares 3 nouns (women, long, sleeve) with the 18 nouns of the goal name.
    assert info["title_score"] == pytest.approx(3 / 18)
    # An unrelated console table shares no word with the goal name: title score 0, r_type 0.
    res = await buy(env, GOAL_12, "B06Y3VLDFB", "vhomes lights reclaimed wood console table", [])
    assert res.reward == 0.0 and res.info["reward_info"]["r_type"] == 0.0


async def test_results_pages_and_navigation(env):
    await env.reset(GOAL_12)
    first = await env.step("search[women shirt]")
    info = first.observation.info
    assert info["page"] == "results" and info["total_results"] == 50
    assert info["has_next"] and not info["has_prev"] and len(info["item_ids"]) == 10
    assert "Page 1 (Total results: 50)\n[button] Next > [button_]\n" in first.observation.text
    second = await env.step("click[Next >]")
    assert second.observation.info["page_number"] == 2 and second.observation.info["has_prev"]
    assert set(second.observation.info["item_ids"]).isdisjoint(info["item_ids"])
    for _ in range(3):
        last = await env.step("click[next >]")
    assert last.observation.info["page_number"] == 5 and len(last.observation.info["item_ids"]) == 10
    # WebShop shows "Next >" on every results page: past the 50 results the page is empty.
    assert last.observation.info["has_next"]
    beyond = await env.step("click[Next >]")
    assert beyond.valid and beyond.observation.info["page_number"] == 6
    assert beyond.observation.info["item_ids"] == [] and beyond.observation.text.endswith("[button] Next > [button_]\n")
    await env.step("click[< Prev]")
    item = await env.step(f"click[{last.observation.info['item_ids'][0]}]")
    assert item.observation.info["page"] == "item"
    sub = await env.step("click[Description]")
    assert sub.observation.info["page"] == "item_sub" and sub.observation.info["sub_page"] == "Description"
    assert sub.observation.info["clickables"] == ["Back to Search", "< Prev"]  # as WebShop's sub-pages
    back = await env.step("click[< Prev]")
    assert back.observation.info["page"] == "item"
    results = await env.step("click[< Prev]")
    assert results.observation.info["page"] == "results" and results.observation.info["page_number"] == 5
    home = await env.step("click[Back to Search]")
    assert home.observation.info["page"] == "search" and home.observation.info["clickables"] == ["Search"]


async def test_opened_items_are_marked_until_the_search_page(env):
    await env.reset(GOAL_12)
    page = await env.step("search[women shirt]")
    first, second = page.observation.info["item_ids"][:2]
    await env.step(f"click[{first}]")
    page = await env.step("click[< Prev]")
    assert f"\n[clicked button] {first} [clicked button_]\n" in page.observation.text
    assert f"\n[button] {second} [button_]\n" in page.observation.text
    await env.step("click[Back to Search]")
    page = await env.step("search[women shirt]")
    assert f"\n[button] {first} [button_]\n" in page.observation.text  # WebShop forgets them there


async def test_a_sub_page_shows_its_section(env):
    await open_item(env, GOAL_12, "B08JD14GJF", "coorun women's sun protection shirts")
    features = await env.step("click[Features]")
    section = features.observation.info["section"]
    assert section.startswith(" 【Sun Protection】") and section.count("\n") == 4
    assert features.observation.text.endswith(section + "\n")
    await env.step("click[< Prev]")
    description = await env.step("click[Description]")
    assert description.observation.info["section"] == ""  # this product has no description


async def test_item_page_shows_options_one_per_line_and_clicked_ones(env):
    await open_item(env, GOAL_12, "B08JD14GJF", "coorun women's sun protection shirts")
    res = await env.step("click[x-large]")
    text, info = res.observation.text, res.observation.info
    assert info["asin"] == "B08JD14GJF" and info["selected_options"] == {"size": "x-large"}
    assert "x-large" in info["options"]["size"] and "b-purple-thumbhole" in info["options"]["color"]
    assert text.startswith("You have clicked x-large.\nInstruction:\n")
    assert (
        "\nsize\n  [button] small [button_]\n  [button] medium [button_]\n  [button] large [button_]\n"
        "  [clicked button] x-large [clicked button_]\n  [button] xx-large [button_]\n"
    ) in text
    assert info["clickables"][:2] == ["Back to Search", "< Prev"]
    assert info["clickables"][-4:] == ["Description", "Features", "Reviews", "Buy Now"]


async def test_pages_are_webshops_text_observation():
    """100 pages of every kind (search, results incl. past the last, items with chosen
    options incl. values with quotes and non-ASCII, the three sub-pages), restored from
    snapshots, equal the text WebShop's templates and its text_rich rule produce."""
    with gzip.open(Path(__file__).parent / "data" / "webshop_pages.json.gz", "rt", encoding="utf-8") as f:
        pages = json.load(f)
    assert len(pages) == 100
    for page in pages:
        obs = await WebShopEnv().restore(page["snapshot"])
        assert obs.text == page["text"], page["snapshot"]


INVALID = [
    ("search on a results page", ["search[shirt]"], "search[shirt]", "only on the search page"),
    ("click a missing button", [], "click[Buy Now]", "no button"),
    ("click an item id on the search page", [], "click[B08JD14GJF]", "no button"),
    ("malformed action", [], "buy the shirt", "Malformed"),
    ("unclosed bracket", [], "click[Buy Now", "Malformed"),
    ("empty action", [], "", "Malformed"),
    ("empty query", [], "search[   ]", "empty"),
    ("unknown verb", [], "purchase[B08JD14GJF]", "Unknown action"),
    ("click Search", [], "click[Search]", "search[your query]"),
    ("Prev on the first results page", ["search[shirt]"], "click[< Prev]", "no button"),
    ("option of another page", ["search[shirt]"], "click[x-large]", "no button"),
]


@pytest.mark.parametrize(("why", "before", "action", "phrase"), INVALID, ids=[c[0] for c in INVALID])
async def test_invalid_actions_return_feedback(env, why, before, action, phrase):
    obs = await env.reset(GOAL_12)
    for step in before:
        res = await env.step(step)
        assert res.valid
        obs = res.observation
    snap = await env.snapshot()
    res = await env.step(action)
    assert res.valid is False and phrase in res.feedback
    assert res.reward == 0.0 and res.done is False
    assert res.observation.text == obs.text and await env.snapshot() == snap  # nothing moved


async def test_actions_after_the_purchase_and_before_reset_are_refused(env):
    res = await env.step("search[shirt]")
    assert res.valid is False and "reset" in res.feedback
    await env.reset(GOAL_12)
    await buy(env, GOAL_12, "B08JD14GJF", "coorun women's sun protection shirts", [])
    res = await env.step("click[Back to Search]")
    assert res.valid is False and "over" in res.feedback


async def test_snapshot_restores_the_same_page_on_a_fresh_instance(env):
    current = await env.reset(GOAL_12)
    actions = [
        "search[women long sleeve shirt]",
        "click[Next >]",
        "click[< Prev]",
        "click[B08JD14GJF]",
        "click[c-black]",
        "click[large]",
        "click[Reviews]",
        "click[< Prev]",
        "click[Features]",
        "click[< Prev]",
        "click[Buy Now]",
    ]
    seen = set()
    for action in [None, *actions]:
        if action is not None:
            res = await env.step(action)
            assert res.valid, (action, res.info)
            current = res.observation
        snap = json.loads(json.dumps(await env.snapshot()))  # must survive JSON
        fresh = WebShopEnv()
        obs = await fresh.restore(snap)
        assert (obs.text, obs.info) == (current.text, current.info)
        assert fresh.goal == env.goal
        seen.add(obs.info["page"])
    assert seen == {"search", "results", "item", "item_sub", "done"}


async def test_task_ids_splits_and_unknown_tasks(env):
    assert len(env.task_ids()) == 6923 and env.task_ids()[:2] == ["0", "1"]
    assert env.task_ids()[13] == "synthetic-0"
    sizes = {
        s: len(env.task_ids(s))
        for s in ("all", "human", "test", "synthetic", "synthetic-test", "synthetic-eval", "synthetic-train")
    }
    assert sizes == {
        "all": 6923,
        "human": 13,
        "test": 13,
        "synthetic": 6910,
        "synthetic-test": 500,
        "synthetic-eval": 1000,
        "synthetic-train": 5410,
    }
    assert env.task_ids("test") == [str(i) for i in range(13)]  # WebShop's test: the human goals
    assert env.task_ids("synthetic-eval")[0] == "synthetic-500"
    for empty in ("eval", "train"):  # 13 human goals: nothing past index 499
        with pytest.raises(EnvError, match=f"synthetic-{empty}"):
            env.task_ids(empty)
    for bad in ("13", "-1", "abc", "012", "", "synthetic-6910", "synthetic-", "synthetic-01"):
        with pytest.raises(UnknownTaskError):
            await env.reset(bad)
    with pytest.raises(EnvError):
        env.task_ids("nope")


async def test_a_missing_data_folder_is_a_clear_error(tmp_path):
    env = make_env("webshop", data_dir=str(tmp_path))  # nothing is read yet
    with pytest.raises(EnvError, match="items_shuffle"):
        env.task_ids()
    with pytest.raises(EnvError, match="items_shuffle"):
        await env.reset("0")


async def test_make_env_builds_webshop_and_rejects_bad_options():
    env = make_env("webshop")
    obs = await env.reset("0")
    assert obs.info["page"] == "search" and obs.info["instruction"] == env.goal["instruction_text"]
    assert obs.text == f"WebShop\nInstruction: \n{env.goal['instruction_text']}\n[button] Search [button_]\n"
    with pytest.raises(EnvError):
        make_env("webshop", colour="red")


async def test_restore_on_a_used_instance_and_bad_snapshots(env):
    await env.reset(GOAL_12)
    await env.step("search[women long sleeve shirt]")
    opened = await env.step("click[B08JD14GJF]")
    snap = await env.snapshot()
    await env.step("click[Buy Now]")
    await env.reset("synthetic-0")  # the same instance moved on to another task
    obs = await env.restore(snap)
    assert obs.text == opened.observation.text and env.goal["asin"] == "B08JD14GJF"
    assert (await env.step("click[x-large]")).valid
    bad_views = [
        {"page": "checkout"},
        {"page": "item", "query": "shirt", "asin": "NOPE"},
        {"page": "item", "query": "shirt", "asin": "B08JD14GJF", "options": {"size": "huge"}},
        {"page": "item_sub", "query": "shirt", "asin": "B08JD14GJF", "sub_page": "Questions"},
        {"page": "results", "query": ""},
    ]
    for view in bad_views:
        with pytest.raises(EnvError):
            await WebShopEnv().restore({**snap, "view": view})
    for broken in ({}, {"task_id": "synthetic-12"}, {"task_id": None, "view": {}}, {**snap, "view": {"colour": 1}}):
        with pytest.raises(EnvError):
            await WebShopEnv().restore(broken)
    with pytest.raises(UnknownTaskError):
        await WebShopEnv().restore({**snap, "task_id": "99999"})


BLOCKING_CHECK = """
import asyncio, sys
from blockbuster import BlockBuster
from envs import make_env

async def main(data):
    env = make_env("webshop", data_dir=data)  # imports envs.webshop on the loop, as a graph node does
    await env.reset("synthetic-12")
    goal = env.goal
    await env.step(f"search[{goal['name']}]")
    await env.step(f"click[{goal['asin']}]")
    await env.step("click[Features]")
    await env.step("click[< Prev]")
    for value in goal["goal_options"].values():
        await env.step(f"click[{value}]")
    snap = await env.snapshot()
    bought = await env.step("click[Buy Now]")
    await make_env("webshop", data_dir=data).restore(snap)
    print("reward", bought.reward)

blockbuster = BlockBuster()  # every check on, file reads and os.stat included (stricter than langgraph dev)
blockbuster.activate()
asyncio.run(main(sys.argv[1]))
"""


def test_nothing_blocks_the_event_loop(tmp_path):
    """In a fresh process under blockbuster (what ``langgraph dev`` uses to refuse blocking
    calls), the env module is imported, a new data folder is loaded (its cache built), an
    item is searched, browsed and bought (the first reward loads the POS tagger) and a
    snapshot restored: every blocking call runs in a worker thread."""
    from envs.webshop import catalogue as webshop_catalogue

    data = tmp_path / "data"
    data.mkdir()
    for name in ("items_shuffle_1000.json.gz", "items_ins_v2_1000.json.gz", "items_human_ins.json"):
        (data / name).write_bytes((webshop_catalogue.DATA_DIR / name).read_bytes())
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", BLOCKING_CHECK, str(data)],
        cwd=root,
        capture_output=True,
        text=True,
        env={**os.environ, "INTROSPECT_CACHE": str(tmp_path / "cache"), "PYTHONPATH": str(root)},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "reward 1.0"


async def test_the_first_reset_starts_loading_the_pos_tagger_in_the_background(env):
    """Not at the first Buy Now, where every task of an evaluation would wait for it."""
    from envs.webshop import reward as webshop_reward

    await env.reset("synthetic-0")
    assert webshop_reward._warming  # started, in a thread of its own
    webshop_reward._warming[0].join(timeout=300)
    assert webshop_reward._tagger.cache_info().currsize == 1
