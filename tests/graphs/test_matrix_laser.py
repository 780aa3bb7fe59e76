"""LASER on every env it runs on (Method.envs), and its state space as a builder.

- WebShop (the paper's space): a scripted tour of Figure 1 ends with a purchase of reward 1.
- WebArena, the local shop site (nodes.laser.shop): search, an item that does not match, back,
  the item that does, and the answer on its page, which WebArena's url_match evaluator passes.
- A user's own toy space: build_graph(space=...) makes its states the nodes and its transitions
  the labelled edges, and a run on it follows them.
- ``introspect run laser --env webarena --task shop-14`` runs the shop cell from the command line.

Element ids on the shop's pages are numbered in tree order, so the same page has the same ids in
every run: the script names plain ids, and the tests check that the model was shown them.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from envs.base import Observation
from graphs.laser import build_graph
from introspect.cli import main
from nodes.laser.shop import LOCAL_SHOP
from nodes.laser.space import FINISH, Page, State, StateSpace, Tool
from nodes.runtime.llm import model_for
from tests.graphs.laser_scripts import call, goal_with_options, think, tour_script

SHOP_TASK = "shop-14"  # "Show me the product page of the picture frame that comes with a hanging template"
GALLERY = "Gallery Collage Picture Frame Set, 7 Frames"
SHOP_SCRIPT = [
    think("the user wants a picture frame with a hanging template: search for picture frames"),
    call("Search", keywords="picture frame"),
    think("the solid wood frame might come with a hanging template"),
    call("select_item", item_id="36"),
    think("it has an easel back and sawtooth hangers, no hanging template: go back"),
    call("Prev"),
    think("the gallery set might match"),
    call("select_item", item_id="39"),
    think("it comes with a hanging template: this is the page the user wants"),
    call("Answer", answer=GALLERY),
]


async def test_webshop_cell_buys_the_goal_product(run_graph, write_script):
    task_id, goal, ids = await goal_with_options()
    out = await run_graph("laser", {"task_id": task_id}, tour_script(goal, ids), env="webshop")
    state = out.state
    assert out.finished and state["success"] is True and state["reward"] == pytest.approx(1.0)
    assert state["trajectory"][-1]["action"] == "click[Buy Now]" and state["stop_reason"] == "bought"


@pytest.mark.browser
async def test_local_shop_cell_finds_the_page_and_the_evaluator_passes_it(run_graph, write_script):
    spec = write_script(SHOP_SCRIPT)
    out = await run_graph("laser", {"task_id": SHOP_TASK}, model=spec, env="webarena")
    state = out.state
    executed = [step["action"] for step in state["trajectory"]]
    assert executed == ["type [15] [picture frame] [1]", "click [36]", "go_back", "click [39]", f"stop [{GALLERY}]"]
    assert all(step["valid"] for step in state["trajectory"])
    assert out.finished and state["success"] is True and state["reward"] == pytest.approx(1.0)
    [verdict] = state["evaluation"]["evaluators"]
    assert verdict["evaluator"] == "url_match" and verdict["passed"] is True
    assert state["stop_reason"] == "answered" and state["transitions"] == 5
    assert [b["asin"] for b in state["buffer"]] == ["solid-wood-picture-frame"]

    calls = model_for(spec, 0.0, 512).calls
    systems = [str(c["messages"][0].content) for c in calls[::2]]
    shown = [str(c["messages"][1].content) for c in calls[::2]]
    assert "you want to search the store" in systems[0] and "you want to select an item" in systems[1]
    assert "you want to verify if the item matches" in systems[2]
    assert shown[0].startswith("Current observation:\nInstruction:\nShow me the product page of the picture frame")
    assert "[36] link 'Solid Wood Picture Frame" in shown[1] and f"[39] link '{GALLERY}'" in shown[1]
    assert "Target item details:\nkeywords: picture frame" in shown[2]
    # each state offers its own tools
    offered = [c["tools"] for c in calls[1::2]]
    assert offered[:3] == [["Search"], ["select_item", "Back_to_Search", "Answer"], ["Answer", "Prev"]]
    # select_item's values are the item links the results page shows
    results = next(step for step in state["trajectory"] if step["action"] == "go_back")["observation"]
    page = LOCAL_SHOP.classify(Observation(results, url="http://shop/catalogsearch/result/?q=picture+frame"))
    assert page["state"] == "results" and page["item_ids"] == ["36", "39"]
    item = LOCAL_SHOP.classify(
        Observation(state["trajectory"][3]["observation"], url="http://shop/gallery-collage-picture-frame-set.html")
    )
    assert item["state"] == "item" and item["asin"] == "gallery-collage-picture-frame-set"
    assert item["title"] == GALLERY and item["price"] == "$42.50"
    assert item["elements"] == {"search_box": "15", "home": "11"}


def _toy_classify(observation: Observation) -> Page:
    return Page(state="inbox" if "inbox" in observation.text else "message")


TOY = StateSpace(
    name="mail",
    states=(
        State(
            "inbox",
            "laser/search_state",
            (Tool("open", "open a message", "message", lambda args, page: ["click[message]"]),),
        ),
        State(
            "message",
            "laser/item_state",
            (
                Tool("back", "back to the inbox", "inbox", lambda args, page: ["click[< Prev]"]),
                Tool("archive", "archive it", FINISH, lambda args, page: ["click[archive]"]),
            ),
        ),
    ),
    classify=_toy_classify,
    item_state="message",
    ended="archived",
)


def test_a_user_space_builds_a_graph_of_its_states_and_transitions():
    drawn = build_graph(space=TOY).get_graph()
    assert set(drawn.nodes) == {"__start__", "start", "inbox", "message", "execute", "finish", "__end__"}
    edges = {(e.source, e.target, e.data) for e in drawn.edges}
    assert ("execute", "message", "open or refused") in edges
    assert ("execute", "inbox", "back or refused") in edges
    assert ("execute", "finish", "archive or the cap") in edges
    for state in ("inbox", "message"):
        assert (state, "execute", "call") in edges and (state, state, "answer refused") in edges
    assert not any("backup" in (e.source, e.target) for e in drawn.edges)  # the space declares none


def test_a_space_refuses_a_transition_to_an_undeclared_state():
    with pytest.raises(ValueError, match="leads to 'outbox'"):
        StateSpace(
            name="bad",
            classify=_toy_classify,
            states=(State("inbox", "laser/search_state", (Tool("send", "send", "outbox", lambda args, page: []),)),),
        )


@pytest.mark.browser
async def test_cli_runs_laser_on_the_local_shop(capsys, write_script):
    spec = write_script(SHOP_SCRIPT)

    def cli(*args: str) -> tuple[int, str]:
        code = main(list(args))
        return code, capsys.readouterr().out

    args = ("run", "laser", "--env", "webarena", "--task", SHOP_TASK, "--model", spec, "--checkpoint", "memory")
    code, out = await asyncio.to_thread(cli, *args)  # main() runs its own event loop
    assert code == 0, out
    assert "finished: success=True" in out and f"stop [{GALLERY}]" in out


def test_the_docs_example_space_builds():
    text = (Path(__file__).resolve().parents[2] / "docs" / "api.md").read_text(encoding="utf-8")
    section = text[text.index("LASER on your own site") :]
    start = section.index("```python\n") + len("```python\n")
    example: dict[str, Any] = {}
    exec(section[start : section.index("```", start)], example)  # noqa: S102 - runs the docs' own example
    drawn = example["g"].get_graph()
    assert {"search", "item", "execute"} <= set(drawn.nodes) and "backup" not in drawn.nodes
    assert ("execute", "item", "Search or refused") in {(e.source, e.target, e.data) for e in drawn.edges}
