"""The WebShop environment: shop a 1000-product Amazon catalogue by text.

An episode is one WebShop goal (task id = goal index, ``"12"``). The agent sees WebShop's
pages as text (``envs.webshop_pages``) and acts with ``search[query]`` (on the search page)
and ``click[button text]`` (any button on the current page; item ids case-insensitive).
``click[Buy Now]`` ends the episode with WebShop's reward (``envs.webshop_reward.reward``,
re-exported here); ``info["success"]`` is reward == 1.

Observation info (every page):
    page          "search" | "results" | "item" | "item_sub" | "done"
    clickables    the button texts of the page, as written on it
    instruction   the goal's instruction text
    query         the current search query ("" on the search page)
    item_ids      the item ids on a results page, in order ([] elsewhere)
    has_next, has_prev   whether "Next >" / "< Prev" are on the page
    asin          the item on an item, sub- or done page (None elsewhere)
results pages add page_number and total_results; item, sub- and done pages add options
(option name -> values) and selected_options (option name -> chosen value); sub-pages add
sub_page ("Description" | "Features" | "Reviews").

Task splits (``task_ids(split)``): None or "all" (6910 synthetic then 13 human goals),
"synthetic", "human", and WebShop's convention over the shuffled synthetic goals: "test"
(the first 500), "eval" (the next 1000), "train" (the rest).
"""

from __future__ import annotations

import asyncio
import copy
import functools
import re
from dataclasses import asdict
from typing import Any

from envs.base import Env, EnvError, Observation, StepResult, UnknownTaskError, invalid
from envs.webshop_data import Catalogue, Goal, Product, load_catalogue, search_text
from envs.webshop_pages import (
    BACK_TO_SEARCH, BUY_NOW, NEXT_PAGE, PREV_PAGE, SEARCH, SUB_PAGES,
    Page, View, done_page, item_page, page_info, results_page, search_page, sub_page,
)
from envs.webshop_reward import require_tagger, reward
from envs.webshop_search import SearchIndex, page_count, page_of_results

__all__ = ["WebShopEnv", "reward", "Goal", "Product"]

ACTION = re.compile(r"^\s*([A-Za-z_]+)\s*\[(.*)\]\s*$", re.DOTALL)
GRAMMAR = "Actions are search[your query] on the search page and click[button text] for a button on the page."
SUCCESS_TOLERANCE = 1e-9
TEST_SIZE, EVAL_SIZE = 500, 1000


@functools.cache
def search_index(folder: str | None = None) -> SearchIndex:
    """The FTS5 index of a data folder's products, built once per process."""
    return SearchIndex([(p["asin"], search_text(p)) for p in load_catalogue(folder).products])


class WebShopEnv(Env):
    """WebShop's text shop on the shipped catalogue (or ``data_dir`` with the same files)."""

    name = "webshop"

    def __init__(self, *, data_dir: str | None = None) -> None:
        require_tagger()
        try:
            self.catalogue: Catalogue = load_catalogue(data_dir)
        except FileNotFoundError as exc:
            raise EnvError(str(exc)) from None
        self._index = search_index(data_dir)
        self._task_id: str | None = None
        self._goal: Goal | None = None
        self._view = View()
        self._total = 0.0

    # -- the Env protocol -------------------------------------------------------------
    def task_ids(self, split: str | None = None) -> list[str]:
        n_syn, n_all = self.catalogue.n_synthetic, len(self.catalogue.goals)
        ranges = {
            "all": range(n_all),
            "synthetic": range(n_syn),
            "human": range(n_syn, n_all),
            "test": range(min(TEST_SIZE, n_syn)),
            "eval": range(min(TEST_SIZE, n_syn), min(TEST_SIZE + EVAL_SIZE, n_syn)),
            "train": range(min(TEST_SIZE + EVAL_SIZE, n_syn), n_syn),
        }
        key = split or "all"
        if key not in ranges:
            raise EnvError(f"unknown webshop split {split!r}; choose one of: {', '.join(ranges)}")
        return [str(i) for i in ranges[key]]

    def check_task(self, task_id: str) -> None:
        text = str(task_id)
        if not (text.isdigit() and str(int(text)) == text and int(text) < len(self.catalogue.goals)):
            raise UnknownTaskError(f"unknown webshop task {task_id!r}; task ids are 0..{len(self.catalogue.goals) - 1}")

    async def reset(self, task_id: str) -> Observation:
        self.check_task(task_id)
        self._task_id = str(int(task_id))
        self._goal = copy.deepcopy(self.catalogue.goals[int(task_id)])
        self._view = View()
        self._total = 0.0
        return self._observe()

    async def step(self, action: str) -> StepResult:
        if self._goal is None:
            return invalid(Observation(""), "No task is running: call reset(task_id) first.")
        here = self._observe()
        if self._view.page == "done":
            return invalid(here, "The episode is over: an item was bought. Reset to start another task.")
        match = ACTION.match(action or "")
        if match is None:
            return invalid(here, f"Malformed action {action!r}. {GRAMMAR}")
        verb, arg = match.group(1).lower(), match.group(2).strip()
        if verb == "search":
            return self._search(here, arg)
        if verb == "click":
            return await self._click(here, arg)
        return invalid(here, f"Unknown action {verb!r}. {GRAMMAR}")

    async def snapshot(self) -> dict[str, Any]:
        return {"env": self.name, "task_id": self._task_id, "view": asdict(self._view)}

    async def restore(self, snapshot: dict[str, Any]) -> Observation:
        try:
            task_id, view = snapshot["task_id"], View(**snapshot["view"])
        except (KeyError, TypeError) as exc:
            raise EnvError(f"not a webshop snapshot: {exc}") from None
        if task_id is None:
            raise EnvError("the snapshot was taken before any task was started")
        problem = self._view_problem(view)
        if problem:
            raise EnvError(f"not a valid webshop snapshot: {problem}")
        await self.reset(str(task_id))
        self._view = view
        product = self._product()
        if view.page == "done" and product is not None:
            self._total = (await asyncio.to_thread(self._score, product))[0]
        return self._observe()

    def _view_problem(self, view: View) -> str | None:
        """Why ``view`` cannot be shown on this catalogue, or None."""
        if view.page not in ("search", "results", "item", "item_sub", "done"):
            return f"unknown page {view.page!r}"
        if view.page == "search":
            return None
        if not view.query or view.page_number < 1:
            return "a results or item page needs a query and a page number"
        if view.page == "results":
            return None
        product = self.catalogue.by_asin.get(view.asin or "")
        if product is None:
            return f"unknown item {view.asin!r}"
        if view.page == "item_sub" and view.sub_page not in SUB_PAGES:
            return f"unknown sub-page {view.sub_page!r}"
        if any(value not in product["options"].get(name, []) for name, value in view.options.items()):
            return f"options {view.options} are not options of {view.asin}"
        return None

    # -- public helpers ---------------------------------------------------------------
    @property
    def goal(self) -> Goal:
        """The current goal (asin, attributes, goal_options, price_upper, instruction_text, ...)."""
        if self._goal is None:
            raise EnvError("no webshop task has been started")
        return copy.deepcopy(self._goal)

    # -- pages ------------------------------------------------------------------------
    def _hits(self) -> tuple[str, ...]:
        return self._index.search(self._view.query) if self._view.query else ()

    def _product(self) -> Product | None:
        return self.catalogue.by_asin.get(self._view.asin) if self._view.asin else None

    @property
    def _instruction(self) -> str:
        return self._goal["instruction_text"] if self._goal else ""

    def _page(self) -> Page:
        view, text = self._view, self._instruction
        product = self._product()
        if view.page == "results":
            shown = page_of_results(self._hits(), view.page_number)
            return results_page(text, view, self._hits(), [self.catalogue.by_asin[a] for a in shown])
        if product is not None and view.page == "item":
            return item_page(text, view, product)
        if product is not None and view.page == "item_sub":
            return sub_page(text, view, product)
        if product is not None and view.page == "done":
            return done_page(text, view, product, self._total)
        return search_page(text)

    def _observe(self) -> Observation:
        page = self._page()
        info = page_info(self._view, page, self._instruction, self._hits(), self._product())
        return Observation(page.text, None, info)

    def _moved(self, view: View) -> StepResult:
        self._view = view
        obs = self._observe()
        return StepResult(obs, 0.0, False, {"valid": True})

    # -- actions ------------------------------------------------------------------------
    def _search(self, here: Observation, query: str) -> StepResult:
        if self._view.page != "search":
            return invalid(here, f"search[...] works only on the search page; click[{BACK_TO_SEARCH}] first.")
        if not query:
            return invalid(here, "The search query is empty: write what to look for, e.g. search[red shoes].")
        return self._moved(View(page="results", query=query.lower()))

    async def _click(self, here: Observation, label: str) -> StepResult:
        buttons = here.info["clickables"]
        found = next((b for b in buttons if b.lower() == label.lower()), None)
        if found is None:
            if label.lower() == SEARCH.lower():
                return invalid(here, "To search, use search[your query].")
            listing = ", ".join(buttons) or "none"
            return invalid(here, f"There is no button {label!r} on this page. Buttons here: {listing}.")
        if found == SEARCH:
            return invalid(here, "To search, use search[your query], not click[Search].")
        view = self._view
        if found == BACK_TO_SEARCH:
            return self._moved(View())
        if found == NEXT_PAGE:
            return self._moved(View("results", view.query, min(view.page_number + 1, page_count(self._hits()))))
        if found == PREV_PAGE:
            if view.page == "results":
                return self._moved(View("results", view.query, max(1, view.page_number - 1)))
            if view.page == "item":
                return self._moved(View("results", view.query, view.page_number))
            return self._moved(View("item", view.query, view.page_number, view.asin, None, dict(view.options)))
        if found in SUB_PAGES:
            return self._moved(View("item_sub", view.query, view.page_number, view.asin, found, dict(view.options)))
        if found == BUY_NOW:
            return await self._buy()
        if view.page == "results":
            return self._moved(View("item", view.query, view.page_number, found))
        return self._choose_option(found)

    def _choose_option(self, value: str) -> StepResult:
        """Select an option value (only item pages show them); a value shared by several
        options goes to the last of them, as in WebShop."""
        view, product = self._view, self.catalogue.by_asin[self._view.asin or ""]
        name = [n for n, values in product["options"].items() if value in values][-1]
        return self._moved(View("item", view.query, view.page_number, view.asin, None, {**view.options, name: value}))

    def _score(self, product: Product) -> tuple[float, dict[str, Any], float]:
        price = self.catalogue.prices[product["asin"]]
        total, parts = reward(self.goal, product, price, self._view.options, verbose=True)
        return total, parts, price

    async def _buy(self) -> StepResult:
        """End the episode; the reward runs in a thread (the first one loads spaCy)."""
        view = self._view
        product = self.catalogue.by_asin[view.asin or ""]  # Buy Now is only on item pages
        self._view = View("done", view.query, view.page_number, view.asin, None, dict(view.options))
        total, parts, price = await asyncio.to_thread(self._score, product)
        self._total = total
        success = abs(total - 1.0) <= SUCCESS_TOLERANCE
        info = {
            "valid": True,
            "success": success,
            "reward_info": parts,
            "purchased": {"asin": self._view.asin, "options": dict(self._view.options), "price": price},
        }
        return StepResult(self._observe(), total, True, info)
