"""The WebShop environment: shop WebShop's Amazon catalogue by text.

An episode is one WebShop goal. The agent sees WebShop's pages as its text observation
(``envs.webshop.pages``) and acts with ``search[query]`` (on the search page) and
``click[button text]`` (any button on the current page; item ids case-insensitive).
``click[Buy Now]`` ends the episode with WebShop's reward (``envs.webshop.reward.reward``,
re-exported here); ``success`` is reward == 1 and ``info`` has ``reward_info`` (its parts) and
``purchased``.

Task ids and splits. WebShop has two goal lists (``envs.webshop.catalogue``): the human
goals (crowd-sourced instructions; what WebShop's and LASER's evaluations use) and the
synthetic goals (one per option combination of each product with a generated instruction).
A task id is a goal's index in its list: ``"12"`` for human goal 12, ``"synthetic-12"`` for
synthetic goal 12. Splits (``task_ids(split)``):
    test, eval, train    WebShop's ranges over the human goals: 0-499, 500-1499, 1500-
                         (``baseline_models/env.py``; LASER reports on ``test``)
    human                every human goal
    synthetic-test, synthetic-eval, synthetic-train, synthetic
                         the same ranges over the synthetic goals
    all (or None)        every human goal, then every synthetic goal
On the shipped 1000 products there are 13 human goals: ``test`` is those 13, ``eval`` and
``train`` are empty (an error says so), and the 6910 synthetic goals give 500 / 1000 / 5410.
With the full data (``introspect data get webshop``, read without options; or ``data_dir``)
``test`` is WebShop's 500 human test goals.

Observation info (every page):
    page          "search" | "results" | "item" | "item_sub" | "done"
    clickables    the button texts of the page, as written on it
    goal, instruction   the goal's instruction text
    query         the current search query ("" on the search page)
    item_ids      the item ids on a results page, in order ([] elsewhere)
    has_next, has_prev   whether "Next >" / "< Prev" are on the page
    asin          the item on an item, sub- or done page (None elsewhere)
results pages add page_number and total_results; item, sub- and done pages add options
(option name -> values), selected_options (option name -> chosen value), and the item's
title and price (as the page shows them); sub-pages add
sub_page ("Description" | "Features" | "Reviews") and section (the text the sub-page shows).

Nothing here blocks the event loop: reading the catalogue (and building its cache on the
first use of a data folder), searching, and the reward's POS tagger run in a worker thread;
the tagger starts loading in the background at the first reset of the process.

``spacy_model`` (an env option) is the spaCy model that tags the nouns of the reward's type
match: ``en_core_web_sm`` (WebShop's, the default) or ``en_core_web_lg`` (what LASER's copy of
WebShop's goal.py loads). One that is not installed is refused when the env is made.
"""

from __future__ import annotations

import asyncio
import copy
import re
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from envs.base import Env, EnvError, Observation, StepResult, UnknownTaskError, invalid
from envs.datasets import DataInfo, data_info
from envs.webshop.data import Goal, Product
from envs.webshop.interface import INTERFACE
from envs.webshop.pages import (
    BACK_TO_SEARCH,
    BUY_NOW,
    NEXT_PAGE,
    PREV_PAGE,
    SEARCH,
    SUB_PAGES,
    Page,
    View,
    done_page,
    item_page,
    page_info,
    page_of_results,
    results_page,
    search_page,
    sub_page,
)
from envs.webshop.reward import SPACY_MODEL, require_tagger, reward, warm_tagger

if TYPE_CHECKING:
    from envs.webshop.catalogue import Catalogue

__all__ = ["WebShopEnv", "reward", "Goal", "Product"]

ACTION = re.compile(r"^\s*([A-Za-z_]+)\s*\[(.*)\]\s*$", re.DOTALL)
GRAMMAR = "Actions are search[your query] on the search page and click[button text] for a button on the page."
SUCCESS_TOLERANCE = 1e-9
TEST_SIZE, EVAL_SIZE = 500, 1000  # WebShop's split of its goal list
SYNTHETIC = "synthetic-"


def split_ranges(n_goals: int) -> dict[str, range]:
    """WebShop's test / eval / train ranges over a goal list of ``n_goals``."""
    return {
        "test": range(min(TEST_SIZE, n_goals)),
        "eval": range(min(TEST_SIZE, n_goals), min(TEST_SIZE + EVAL_SIZE, n_goals)),
        "train": range(min(TEST_SIZE + EVAL_SIZE, n_goals), n_goals),
    }


class WebShopEnv(Env):
    """WebShop's text shop on ``data_dir`` (a folder of WebShop's files), else the installed full
    data, else the shipped 1000 products."""

    name = "webshop"
    interface = INTERFACE

    def __init__(self, *, data_dir: str | None = None, spacy_model: str = SPACY_MODEL) -> None:
        self._data_dir = data_dir  # no data is read here: __init__ may run on the event loop
        if spacy_model != SPACY_MODEL:  # another model is looked up now, so the run never starts without it
            require_tagger(spacy_model)
        self._spacy_model = spacy_model
        self._task_id: str | None = None
        self._goal: Goal | None = None
        self._view = View()
        self._total = 0.0

    def _catalogue(self) -> Catalogue:
        """The shared catalogue (blocking on first use: call from a thread or outside the loop).

        The search and data libraries are imported here, not with this module, because
        ``make_env`` imports this module on the event loop and their imports read files."""
        from envs.webshop.catalogue import load_catalogue

        require_tagger(self._spacy_model)
        try:
            return load_catalogue(self._data_dir)
        except (OSError, ValueError) as exc:  # missing files, malformed JSON (ijson raises ValueError)
            raise EnvError(
                f"cannot load WebShop data from {self._data_dir or 'the installed or shipped catalogue'}: {exc}"
            ) from None

    def data_info(self) -> DataInfo:
        """The data files the catalogue was built from (blocking: call from a thread)."""
        return data_info("webshop", self._catalogue().sources, explicit=bool(self._data_dir))

    # -- the Env protocol -------------------------------------------------------------
    def task_ids(self, split: str | None = None) -> list[str]:
        catalogue = self._catalogue()
        n_human, n_synthetic = len(catalogue.human_goals), catalogue.n_synthetic
        splits: dict[str, list[tuple[str, range]]] = {  # split -> (id prefix, goal indices) parts
            "all": [("", range(n_human)), (SYNTHETIC, range(n_synthetic))],
            "human": [("", range(n_human))],
            "synthetic": [(SYNTHETIC, range(n_synthetic))],
        }
        for name, ids in split_ranges(n_human).items():
            splits[name] = [("", ids)]
        for name, ids in split_ranges(n_synthetic).items():
            splits[SYNTHETIC + name] = [(SYNTHETIC, ids)]
        key = split or "all"
        if key not in splits:
            raise EnvError(f"unknown webshop split {split!r}; choose one of: {', '.join(splits)}")
        chosen = [f"{prefix}{i}" for prefix, ids in splits[key] for i in ids]  # only this split is listed
        if not chosen:
            raise EnvError(
                f"webshop split {key!r} is empty on this data ({n_human} human goals; WebShop's test/eval/train "
                f"are human goals 0-499/500-1499/1500-); the synthetic goals are in "
                f"{SYNTHETIC}{key.removeprefix(SYNTHETIC)}"
            )
        return chosen

    def _goal_of(self, task_id: str) -> Goal:
        catalogue, text = self._catalogue(), str(task_id)
        number = text.removeprefix(SYNTHETIC)
        size = catalogue.n_synthetic if text.startswith(SYNTHETIC) else len(catalogue.human_goals)
        if not (number.isdigit() and str(int(number)) == number and int(number) < size):
            raise UnknownTaskError(
                f"unknown webshop task {task_id!r}; task ids are 0..{len(catalogue.human_goals) - 1} (human goals) "
                f"and {SYNTHETIC}0..{SYNTHETIC}{catalogue.n_synthetic - 1}"
            )
        if text.startswith(SYNTHETIC):
            return catalogue.synthetic_goal(int(number))
        return copy.deepcopy(catalogue.human_goals[int(number)])

    def check_task(self, task_id: str) -> None:
        self._goal_of(task_id)

    async def reset(self, task_id: str) -> Observation:
        return await asyncio.to_thread(self._reset, task_id)

    async def step(self, action: str) -> StepResult:
        return await asyncio.to_thread(self._step, action)

    async def snapshot(self) -> dict[str, Any]:
        return {"env": self.name, "task_id": self._task_id, "view": asdict(self._view)}

    async def restore(self, snapshot: dict[str, Any]) -> Observation:
        return await asyncio.to_thread(self._restore, snapshot)

    @property
    def goal(self) -> Goal:
        """The current goal (asin, attributes, goal_options, price_upper, instruction_text, ...)."""
        if self._goal is None:
            raise EnvError("no webshop task has been started")
        return copy.deepcopy(self._goal)

    # -- the same, run in a worker thread --------------------------------------------------
    def _reset(self, task_id: str) -> Observation:
        warm_tagger(self._spacy_model)  # the first Buy Now would load it, in the middle of a run
        self._goal = self._goal_of(task_id)
        self._task_id = str(task_id)
        self._view = View()
        self._total = 0.0
        return self._observe()

    def _step(self, action: str) -> StepResult:
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
            return self._click(here, arg)
        return invalid(here, f"Unknown action {verb!r}. {GRAMMAR}")

    def _restore(self, snapshot: dict[str, Any]) -> Observation:
        try:
            task_id, view = snapshot["task_id"], View(**snapshot["view"])
        except (KeyError, TypeError) as exc:
            raise EnvError(f"not a webshop snapshot: {exc}") from None
        if task_id is None:
            raise EnvError("the snapshot was taken before any task was started")
        problem = self._view_problem(view)
        if problem:
            raise EnvError(f"not a valid webshop snapshot: {problem}")
        self._reset(str(task_id))
        self._view = view
        product = self._product()
        if view.page == "done" and product is not None:
            self._total = self._score(product)[0]
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
        product = self._catalogue().product(view.asin or "")
        if product is None:
            return f"unknown item {view.asin!r}"
        if view.page == "item_sub" and view.sub_page not in SUB_PAGES:
            return f"unknown sub-page {view.sub_page!r}"
        if any(value not in product["options"].get(name, []) for name, value in view.options.items()):
            return f"options {view.options} are not options of {view.asin}"
        return None

    # -- pages ------------------------------------------------------------------------
    def _hits(self) -> tuple[str, ...]:
        return self._catalogue().index.search(self._view.query) if self._view.query else ()

    def _product(self) -> Product | None:
        return self._catalogue().product(self._view.asin) if self._view.asin else None

    @property
    def _instruction(self) -> str:
        return self._goal["instruction_text"] if self._goal else ""

    def _page(self) -> Page:
        view, text = self._view, self._instruction
        product = self._product()
        if view.page == "results":
            hits = self._hits()
            shown = [self._catalogue().product(a) for a in page_of_results(hits, view.page_number)]
            return results_page(text, view, len(hits), [p for p in shown if p is not None])
        if product is not None and view.page == "item":
            return item_page(text, view, product)
        if product is not None and view.page == "item_sub":
            return sub_page(text, view, product)
        if product is not None and view.page == "done":
            return done_page(view, self._total)
        return search_page(text)

    def _observe(self) -> Observation:
        page = self._page()
        info = page_info(self._view, page, self._instruction, len(self._hits()), self._product())
        return Observation(page.text, None, info)

    def _moved(self, view: View) -> StepResult:
        self._view = view
        return StepResult(self._observe(), 0.0, False)

    # -- actions ------------------------------------------------------------------------
    def _search(self, here: Observation, query: str) -> StepResult:
        if self._view.page != "search":
            return invalid(here, f"search[...] works only on the search page; click[{BACK_TO_SEARCH}] first.")
        if not query:
            return invalid(here, "The search query is empty: write what to look for, e.g. search[red shoes].")
        return self._moved(View(page="results", query=query.lower()))

    def _click(self, here: Observation, label: str) -> StepResult:
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
        results = View("results", view.query, view.page_number, visited=list(view.visited))
        if found == BACK_TO_SEARCH:
            return self._moved(View())
        if found == NEXT_PAGE:  # WebShop offers it on every results page, also past the last result
            return self._moved(View("results", view.query, view.page_number + 1, visited=list(view.visited)))
        if found == PREV_PAGE:
            if view.page == "results":
                return self._moved(View("results", view.query, view.page_number - 1, visited=list(view.visited)))
            if view.page == "item":
                return self._moved(results)
            return self._moved(
                View("item", view.query, view.page_number, view.asin, None, dict(view.options), list(view.visited))
            )
        if found in SUB_PAGES:
            return self._moved(
                View("item_sub", view.query, view.page_number, view.asin, found, dict(view.options), list(view.visited))
            )
        if found == BUY_NOW:
            return self._buy()
        if view.page == "results":
            visited = list(dict.fromkeys([*view.visited, found]))
            return self._moved(View("item", view.query, view.page_number, found, visited=visited))
        return self._choose_option(found)

    def _choose_option(self, value: str) -> StepResult:
        """Select an option value (only item pages show them); a value shared by several
        options goes to the last of them, as in WebShop."""
        view, product = self._view, self._product()
        assert product is not None  # option buttons are only on item pages
        name = [n for n, values in product["options"].items() if value in values][-1]
        return self._moved(
            View(
                "item", view.query, view.page_number, view.asin, None, {**view.options, name: value}, list(view.visited)
            )
        )

    def _score(self, product: Product) -> tuple[float, dict[str, Any], float]:
        price = self._catalogue().price(product["asin"])
        options = self._view.options
        total, parts = reward(self.goal, product, price, options, verbose=True, spacy_model=self._spacy_model)
        return total, parts, price

    def _buy(self) -> StepResult:
        """End the episode with WebShop's reward (the first one loads the POS tagger)."""
        view, product = self._view, self._product()
        assert product is not None  # Buy Now is only on item pages
        self._view = View("done", view.query, view.page_number, view.asin, None, dict(view.options), list(view.visited))
        total, parts, price = self._score(product)
        self._total = total
        info = {
            "reward_info": parts,
            "purchased": {"asin": self._view.asin, "options": dict(self._view.options), "price": price},
        }
        return StepResult(self._observe(), total, True, info, success=abs(total - 1.0) <= SUCCESS_TOLERANCE)
