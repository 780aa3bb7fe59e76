"""LASER on a user's own site whose space has two states no tool leads to (home and help): the
graph routes by state, not by edge label, so an action the site refuses leaves the agent in the
state it was in, whichever of the two that is.

The site is a fake env of three pages (home, help and a list) in WebArena's action grammar:
each of home and help links to the list, and the list's answer ends the task.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

import envs.base
from envs.base import Env, Observation, StepResult, invalid
from envs.webarena.interface import INTERFACE as WEBARENA
from graphs.laser import build_graph
from nodes.laser.context import LaserContext
from nodes.laser.space import FINISH, Page, State, StateSpace, Tool
from tests.graphs.laser_scripts import call, think

LINKS = {"home": {"[2]": "list"}, "help": {"[2]": "list"}, "list": {}}  # page -> its links


class ThreePagesEnv(Env):
    """The site: a task starts on the page it is named after (home or help)."""

    name = "threepages"
    interface = WEBARENA

    def __init__(self) -> None:
        self.page = "home"

    def _observation(self) -> Observation:
        links = " ".join(f"{ident} link '{to}'" for ident, to in LINKS[self.page].items())
        return Observation(f"{self.page} page {links}", info={"goal": "open the list and answer"})

    async def reset(self, task_id: str) -> Observation:
        self.check_task(task_id)
        self.page = task_id
        return self._observation()

    async def step(self, action: str) -> StepResult:
        if action == "stop [done]" and self.page == "list":
            return StepResult(self._observation(), 1.0, True, success=True)
        to = LINKS[self.page].get(action.removeprefix("click "))
        if to is None:
            return invalid(self._observation(), f"there is no {action!r} on the {self.page} page")
        self.page = to
        return StepResult(self._observation(), 0.0, False, {})

    async def snapshot(self) -> dict[str, Any]:
        return {"page": self.page}

    async def restore(self, snapshot: dict[str, Any]) -> Observation:
        self.page = snapshot["page"]
        return self._observation()

    def task_ids(self, split: str | None = None) -> list[str]:
        return ["home", "help"]


@pytest.fixture(autouse=True)
def three_pages_env(monkeypatch):
    monkeypatch.setitem(envs.base.ENV_CLASSES, "threepages", f"{__name__}:ThreePagesEnv")


def _classify(observation: Observation) -> Page:
    return Page(state=observation.text.split(" ", 1)[0])


OPEN_LIST = Tool("Open_list", "open the list", "list", lambda args, page: ["click [2]"])
OPEN_ARCHIVE = Tool("Open_archive", "open the archive", "list", lambda args, page: ["click [9]"])  # no such link
ANSWER = Tool("Answer", "the list is what the user wants", FINISH, lambda args, page: ["stop [done]"])
SITE = StateSpace(
    name="three_pages",
    classify=_classify,
    shows_goal=False,
    ended="answered",
    states=(
        State("home", "laser/shop/search_state", (OPEN_LIST, OPEN_ARCHIVE)),
        State("help", "laser/shop/search_state", (OPEN_LIST, OPEN_ARCHIVE)),
        State("list", "laser/shop/item_state", (ANSWER,)),
    ),
)


def test_both_states_no_tool_leads_to_have_their_refused_edge():
    edges = {(e.source, e.target, e.data) for e in build_graph(space=SITE).get_graph().edges}
    assert ("execute", "home", "refused") in edges and ("execute", "help", "refused") in edges
    assert ("execute", "list", "Open_list, Open_archive or refused") in edges
    assert ("execute", "finish", "Answer or the cap") in edges


@pytest.mark.parametrize("first", ["home", "help"])
async def test_an_action_the_site_refuses_stays_in_its_own_state(first, write_script):
    spec = write_script(
        [
            think("the archive may have it"),
            call("Open_archive"),
            think("the list then"),
            call("Open_list"),
            think("this is it"),
            call("Answer"),
        ]
    )
    graph = build_graph(checkpointer=InMemorySaver(), space=SITE)
    config = {"configurable": {"thread_id": uuid.uuid4().hex}}
    nodes: list[str] = []
    async for chunk in graph.astream(
        {"task_id": first}, config, context=LaserContext(model=spec, env="threepages"), stream_mode="updates"
    ):
        nodes.extend(chunk)
    state = (await graph.aget_state(config)).values
    assert nodes == ["start", first, "execute", first, "execute", "list", "execute", "finish"]
    assert [step["valid"] for step in state["trajectory"]] == [False, True, True]
    assert state["transitions"] == 2 and state["success"] is True and state["stop_reason"] == "answered"
