"""``introspect ablate`` on a Structured Reflection run (the fake page env of sr_support): the
first trial clicks Cancel, the reflection says to click the button, and the second trial
enforces that click and succeeds. Without the reflection the run ends with the failed trial;
without the replay the second trial asks the planner, whose answer here clicks Cancel again."""

from __future__ import annotations

import json

from graphs import method_named
from introspect.ablation.forks import Run, ablate
from introspect.checkpoint import open_checkpointer
from introspect.evaluate import row_for
from introspect.runner import drive, graph_for
from nodes.sr.context import SRContext
from tests.graphs.sr_support import fake_env, scripted  # noqa: F401 - the fixture

REPLIES = ["click id=1", "clicked Cancel", "For action index=1, you should click id=5."]
MORE = ["click id=1", "clicked Cancel", "For action index=1, you should click id=1."] * 6  # to spare


async def test_the_reflection_and_the_replay_each_earned_the_success(tmp_path):
    method = method_named("structured_reflection")
    spec = scripted(tmp_path, REPLIES + MORE)
    db = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    context = SRContext(model=spec, env="fakepage", plan_reading="actions")
    async with open_checkpointer(db) as saver:
        outcome = await drive(method, context, "button", saver, {"task_id": "button/0"})
    assert outcome.state["success"] and [t["status"] for t in outcome.state["trials"]] == ["failed", "correct"]
    row = row_for(method, context, "button/0", "button", outcome.state, 0.0)

    out = tmp_path / "ablations.jsonl"
    tally = await ablate([Run(row, db)], out)
    rows = {r["intervention"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert tally.written == 2 and tally.errors == 0
    assert {k: (r["count"], r["fired"], r["off"]) for k, r in rows.items()} == {
        "reflection": (1, 1, {"max_trials": 1}),
        "replay": (1, 1, {"replay": False}),
    }
    assert all(r["with"]["success"] is True and r["without"]["success"] is False for r in rows.values())
    async with open_checkpointer(db, existing=True) as saver:
        graph = graph_for(method, saver)
        ended = {
            k: (await graph.aget_state({"configurable": {"thread_id": r["fork"]}})).values for k, r in rows.items()
        }
    assert [t["status"] for t in ended["reflection"]["trials"]] == ["failed"]  # no second trial
    second = ended["replay"]["trials"][1]
    assert second["sources"] == ["plan"] and second["actions"] == ["click id=1"]  # planned, not enforced
