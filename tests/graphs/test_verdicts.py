"""Each method's verdicts on its own progress (nodes.runtime.verdicts) are recorded on the call whose reply
gave them and listed in the results row beside the outcome: scripted runs of the four methods on
real envs (no browser), each verdict checked against the script that gave it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from graphs import method_named
from introspect.cli import main
from nodes.runtime.verdicts import verdicts
from tests.graphs.laser_scripts import goal_with_options, tour_script
from tests.graphs.test_autoplan_real_envs import QUESTION
from tests.graphs.test_matrix_autoplan import PLAN, steps
from tests.graphs.test_matrix_da import HOTPOTQA as DA_HOTPOTQA

pytestmark = pytest.mark.slow
LOCAL = {"backend": "local"}  # HotpotQA's shipped corpus


def said(state: dict[str, Any]) -> list[tuple[str, str, str, bool]]:
    """(node, kind, value, says) of each verdict the run's results row lists."""
    return [(v["node"], v["kind"], v["value"], v["says"]) for v in verdicts(state["calls"])]


def test_every_method_declares_its_verdicts_at_nodes_of_its_graph():
    for name in ("laser", "structured_reflection", "devils_advocate", "autoplan"):
        method = method_named(name)
        assert method.verdicts, name
        nodes = set(method.graph.get_graph().nodes)
        assert {place.node for place in method.verdicts} <= nodes, name


async def test_devils_advocate_records_alignment_completion_and_the_graded_subtask_check(run_graph, write_script):
    out = await run_graph(
        "devils_advocate",
        {"task_id": QUESTION},
        model=write_script(DA_HOTPOTQA),
        env="hotpotqa",
        remedies=1,
        env_options=LOCAL,
    )
    assert out.state["success"]
    assert said(out.state) == [
        ("align", "aligned", "YES", True),
        ("complete", "task_done", "NO", False),
        ("complete", "subtask_done", "YES", True),
        ("align", "aligned", "YES", True),
        ("complete", "task_done", "YES", True),
    ]
    found = verdicts(out.state["calls"])
    assert [v["position"] for v in found] == [4, 5, 6, 10, 11]  # the calls that gave them (script order)
    assert found[2]["graded"] == pytest.approx(1 / 3)  # one subtask of the three-step plan done
    assert all("graded" not in v for v in found if v["kind"] != "subtask_done")


async def test_laser_records_the_purchase_of_an_item_it_judged_to_match(run_graph):
    task_id, goal, ids = await goal_with_options()
    out = await run_graph("laser", {"task_id": task_id}, tour_script(goal, ids), env="webshop")
    assert out.state["success"]
    # reading a detail page and leaving an item (Prev) give none; Buy_Now says the goal's item matches
    assert said(out.state) == [("item", "matches", "Buy_Now", True)]


async def test_structured_reflection_records_the_status_its_reflection_is_asked_about(run_graph, write_script):
    script = [
        "search[Scott Derrickson]\nfinish[no]",
        "looked up Scott Derrickson: an American director",
        "answered no",
        "For action index=2, you should search[Ed Wood].",
        "looked up Ed Wood: an American filmmaker",
        "finish[yes]",
    ]
    out = await run_graph(
        "structured_reflection",
        {"task_id": QUESTION},
        model=write_script([{"content": line} for line in script]),
        env="hotpotqa",
        env_options=LOCAL,
    )
    assert out.state["success"] and [t["status"] for t in out.state["trials"]] == ["failed", "correct"]
    assert said(out.state) == [("reflect", "status", "failed", False)]
    assert verdicts(out.state["calls"])[0]["position"] == 3  # the reflection's call


async def test_autoplan_records_the_answer_it_delivers(run_graph, write_script):
    spec = write_script(steps("search[Scott Derrickson]", "search[Ed Wood]", "finish[yes]"))
    out = await run_graph(
        "autoplan", {"task_id": QUESTION}, model=spec, env="hotpotqa", plan=PLAN, judge="off", env_options=LOCAL
    )
    assert out.state["success"]
    assert said(out.state) == [("formalize", "answered", "finish[yes]", True)]


def test_a_results_row_lists_the_verdicts_beside_the_outcome(capsys, tmp_path):
    path = tmp_path / "script.jsonl"
    lines = ["Both were American.", "finish with American", "finish[American]"]  # a wrong answer (yes)
    path.write_text("".join(json.dumps({"content": line}) + "\n" for line in lines))
    results = tmp_path / "results.jsonl"
    code = main(
        [
            *("eval", "autoplan", "--env", "hotpotqa", "--tasks", "0:1", "--model", f"scripted:{path}"),
            *("--results", str(results), "--checkpoint", "memory", "--set", "judge=off"),
            *("--env-option", "backend=local"),
        ]
    )
    assert code == 0, capsys.readouterr().err
    row = json.loads(results.read_text())
    assert row["success"] is False
    [verdict] = row["verdicts"]
    assert (verdict["kind"], verdict["value"], verdict["says"], verdict["position"]) == (
        "answered",
        "finish[American]",
        True,
        2,
    )


def test_the_docs_page_lists_every_declared_place():
    from tests.support.scenarios import ROOT

    page = (ROOT / "docs" / "calibration-and-power.md").read_text()
    for name in ("laser", "structured_reflection", "devils_advocate", "autoplan"):
        for place in method_named(name).verdicts:
            assert f"| `{place.kind}`" in page and f"| `{place.node}` |" in page, (name, place.kind)
