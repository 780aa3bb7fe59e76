"""``introspect ablate`` on a Devil's Advocate run (the fake shop of test_devils_advocate): the
picture-frame run proposes remedies twice, judges one action NO and backtracks to a remedy;
each of the three kinds is found where it happened, and each fork runs on without it."""

from __future__ import annotations

import json

from graphs import method_named
from introspect.ablation.forks import Run, ablate
from introspect.checkpoint import open_checkpointer
from introspect.evaluate import row_for
from introspect.runner import drive, graph_for
from nodes.da.context import DAContext
from tests.graphs.test_devils_advocate import PICTURE_FRAME, fake_shop, write_script  # noqa: F401 - the fixture

MORE = ["NO"] * 30  # replies to spare: a fork may ask more than the run did


async def nodes_of(saver, thread: str) -> list[str]:
    graph = graph_for(method_named("devils_advocate"), saver)
    history = [s async for s in graph.aget_state_history({"configurable": {"thread_id": thread}})][::-1]
    return [",".join(s.next) for s in history if s.next]


async def test_remedies_alignment_and_backtrack_are_each_ablated(tmp_path):
    method = method_named("devils_advocate")
    spec = write_script(tmp_path, PICTURE_FRAME + MORE)
    db = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    context = DAContext(model=spec, env="fakeshop", plan_revision=False)
    async with open_checkpointer(db) as saver:
        outcome = await drive(method, context, "frame", saver, {"task_id": "frame"})
        ran = await nodes_of(saver, "frame")
    assert outcome.state["stop_reason"] == "task_completed"
    assert ran.count("remedy") == 2 and ran.count("backtrack") == 1
    row = row_for(method, context, "frame", "frame", outcome.state, 0.0)

    out = tmp_path / "ablations.jsonl"
    tally = await ablate([Run(row, db)], out)
    rows = {r["intervention"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert tally.written == 3 and tally.errors == 0
    assert {k: (r["count"], r["fired"]) for k, r in rows.items()} == {
        "remedy": (1, 2),
        "alignment": (1, 1),
        "backtrack": (1, 1),
    }
    async with open_checkpointer(db, existing=True) as saver:
        without = {kind: await nodes_of(saver, r["fork"]) for kind, r in rows.items()}
    assert "remedy" not in without["remedy"]  # no alternatives from the first action on
    # the NO on order 179 sent the run to its alternatives; without the judgement it goes on to complete
    misjudged = [i for i, node in enumerate(ran) if node == "align"][1]
    assert ran[misjudged + 1] == "pop" and without["alignment"][: misjudged + 1] == ran[: misjudged + 1]
    assert without["alignment"][misjudged + 1] == "complete"
    # without backtracking the alternative saved on /orders is not restored: the episode ends there
    assert "backtrack" not in without["backtrack"] and without["backtrack"][-2:] == ["pop", "finish"]
