"""``introspect ablate`` on an AutoPlan run with a plan (the toy household of test_autoplan_kit):
the fork starts before ``start`` and runs the task without the plan, ReAct zero-shot."""

from __future__ import annotations

import json

from graphs import method_named
from introspect.ablation.forks import Run, ablate
from introspect.checkpoint import open_checkpointer
from introspect.evaluate import row_for
from introspect.runner import drive, graph_for
from nodes.autoplan.context import AutoPlanContext
from nodes.runtime.calls import whole
from nodes.runtime.journal import journaled
from tests.graphs.test_autoplan_inference import WIN
from tests.graphs.test_autoplan_kit import toy_alfworld  # noqa: F401 - the fixture

PLAN = "1. heat egg 1 with microwave 1\n2. put egg 1 in/on the target countertop"


async def test_a_run_is_ablated_of_its_plan(tmp_path, toy_alfworld, write_script):  # noqa: F811
    method = method_named("autoplan")
    db = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    context = AutoPlanContext(model=write_script(WIN), env="alfworld", plan=PLAN)
    async with open_checkpointer(db) as saver:
        outcome = await drive(method, context, "egg", saver, {"task_id": "heat/2"})
        asked = whole(outcome.state["calls"][0], await journaled(saver, "egg"))  # the journal keeps requests
    assert outcome.state["success"] and outcome.state["plan"] == PLAN
    assert "Game Plan:" in json.dumps(asked["request"]["messages"])
    row = row_for(method, context, "heat/2", "egg", outcome.state, 0.0)

    out = tmp_path / "ablations.jsonl"
    assert (await ablate([Run(row, db)], out)).written == 1
    [ablated] = [json.loads(line) for line in out.read_text().splitlines()]
    assert (ablated["intervention"], ablated["count"], ablated["off"]) == ("plan", 1, {"plan": ""})
    async with open_checkpointer(db, existing=True) as saver:
        forked = (await graph_for(method, saver).aget_state({"configurable": {"thread_id": ablated["fork"]}})).values
        fork_asked = whole(forked["calls"][0], await journaled(saver, ablated["fork"]))
    assert forked["plan"] == "" and forked["task_id"] == "heat/2"
    first = json.dumps(fork_asked["request"]["messages"])
    assert "Game Objective: heat some egg" in first and "Game Plan:" not in first  # the task, ReAct zero-shot
    assert ablated["without"]["success"] is True  # the same replies win without the plan too
