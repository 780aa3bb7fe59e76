"""How fast the WebShop env is: loading, indexing, and each kind of reset/step.

Cold figures (building the catalogue's cache with its BM25 index, opening the cache again,
loading the POS tagger) are measured once, in a fresh process with an empty temporary
cache; per-action latencies are medians over many goals (search results are cached per
query, and goals of one product share a query, so the BM25 query itself is also timed
uncached, once per product title). Every figure is printed and written to
benchmarks/results/webshop_env.json. See webshop_scale.py for large catalogues.
Usage: .venv/bin/python benchmarks/webshop_env.py [--goals 200] [--small]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.machine import parse_args, write_report  # noqa: E402
from envs.webshop import WebShopEnv  # noqa: E402
from envs.webshop import catalogue as webshop_catalogue  # noqa: E402
from envs.webshop import reward as webshop_reward  # noqa: E402


def timed(fn, *args):
    started = time.perf_counter()
    value = fn(*args)
    return value, time.perf_counter() - started


async def atimed(coro):
    started = time.perf_counter()
    value = await coro
    return value, time.perf_counter() - started


async def episode_latencies(env: WebShopEnv, task_ids: list[str]) -> dict[str, list[float]]:
    """Play each goal to a purchase of its own product; record the latency of each action kind."""
    kinds: dict[str, list[float]] = {
        k: []
        for k in (
            "reset",
            "search",
            "click_item",
            "click_option",
            "sub_page",
            "prev",
            "buy",
            "snapshot",
            "restore_fresh",
        )
    }
    for task_id in task_ids:
        _, t = await atimed(env.reset(task_id))
        kinds["reset"].append(t)
        goal = env.goal
        res, t = await atimed(env.step(f"search[{goal['name']}]"))
        kinds["search"].append(t)
        if goal["asin"] not in res.observation.info["item_ids"]:
            continue
        _, t = await atimed(env.step(f"click[{goal['asin']}]"))
        kinds["click_item"].append(t)
        values = goal["goal_options"].values() if isinstance(goal["goal_options"], dict) else goal["goal_options"]
        for value in values:
            _, t = await atimed(env.step(f"click[{value}]"))
            kinds["click_option"].append(t)
        _, t = await atimed(env.step("click[Features]"))
        kinds["sub_page"].append(t)
        _, t = await atimed(env.step("click[< Prev]"))
        kinds["prev"].append(t)
        snap, t = await atimed(env.snapshot())
        kinds["snapshot"].append(t)
        _, t = await atimed(WebShopEnv().restore(snap))
        kinds["restore_fresh"].append(t)
        _, t = await atimed(env.step("click[Buy Now]"))
        kinds["buy"].append(t)
    return kinds


async def main(n_goals: int) -> dict:
    os.environ["INTROSPECT_CACHE"] = tempfile.mkdtemp(prefix="webshop-bench-")  # a cold build
    catalogue, build_s = timed(webshop_catalogue.load_catalogue)
    _, open_s = timed(webshop_catalogue.Catalogue, catalogue.folder)
    _, tagger_s = timed(webshop_reward._tagger)
    env = WebShopEnv()
    all_ids = env.task_ids()
    task_ids = all_ids[:: max(1, len(all_ids) // n_goals)][:n_goals]
    kinds = await episode_latencies(env, task_ids)
    # bypass the per-query cache
    uncached = [timed(catalogue.index._search, p["Title"].lower())[1] for p in catalogue.products()]
    figures = {
        "cold_catalogue_build_s": round(build_s, 4),
        "cached_catalogue_open_s": round(open_s, 4),
        "cold_pos_tagger_load_s": round(tagger_s, 4),
        "goals_played": len(kinds["buy"]),
        "goals_tried": len(task_ids),
        "bm25_query_uncached_median_ms": round(1000 * statistics.median(uncached), 3),
        "bm25_query_uncached_max_ms": round(1000 * max(uncached), 3),
        "median_ms": {k: round(1000 * statistics.median(v), 3) for k, v in kinds.items() if v},
        "max_ms": {k: round(1000 * max(v), 3) for k, v in kinds.items() if v},
    }
    return figures


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--goals", type=int, default=200)
    args = parse_args(parser, small={"goals": 2})
    result = asyncio.run(main(args.goals))
    print(json.dumps(result, indent=2))
    write_report("webshop_env", result, args.small)
