"""Growing state is checkpointed as each step's change (nodes.runtime.channels), and every way of
reading a thread back still sees whole values: the end state, every step of the history
(Studio's time travel), a state edited by hand, a run continued from an old checkpoint,
a copied thread; in SQLite, in memory and (INTROSPECT_TEST_POSTGRES) Postgres."""

from __future__ import annotations

import sqlite3
import uuid

import pytest
from langgraph.channels.delta import DeltaChannel
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.serde.types import _DeltaSnapshot

from graphs import autoplan, compiled, method_named, studio_graphs
from introspect.checkpoint import copy_thread, open_checkpointer
from introspect.runner import drive, graph_for, outcome_of
from nodes.autoplan.context import AutoPlanContext
from nodes.laser.context import LaserContext
from tests.graphs.test_autoplan_kit import toy_alfworld  # noqa: F401 (fixture)
from tests.graphs.test_autoplan_training import two_iterations_script
from tests.graphs.test_checkpoint import savers
from tests.support.calls import timeless
from tests.support.laser_demo import DEMO, write_demo_script

# The fields that grow with a run (or hold a page), per graph Studio serves (every method's).
GROWING = {
    "laser": ("calls", "trajectory", "history", "buffer", "observation", "env_snapshot", "page", "details"),
    "structured_reflection": ("calls", "trajectory", "screens", "steps", "memory", "trials", "observation"),
    "devils_advocate": (
        "calls",
        "trajectory",
        "stack",
        "history",
        "initial",
        "current",
        "previous",
        "popped",
        "episode_actions",
        "plans",
        "notes",
        "backtracks",
    ),
    "autoplan": ("calls", "trajectory", "messages", "experiences", "observation", "env_snapshot"),
    "autoplan_training": ("experiences", "reflections", "plans", "scores", "task_ids"),
}


def test_growing_fields_are_stored_as_changes_in_every_graph():
    assert set(GROWING) == set(studio_graphs())  # a new graph names its growing fields here
    for graph_name, fields in GROWING.items():
        graph = compiled(*studio_graphs()[graph_name])
        for name in fields:
            assert isinstance(graph.channels[name], DeltaChannel), (graph_name, name)


async def test_no_checkpoint_row_holds_the_growing_fields_and_the_state_reads_back_whole(tmp_path):
    context = LaserContext(model=write_demo_script(tmp_path / "demo.jsonl"), env="webshop")
    db = tmp_path / "runs.sqlite"
    async with open_checkpointer(f"sqlite:///{db}") as saver:
        done = await drive(method_named("laser"), context, "t", saver, {"task_id": DEMO["task_id"]})
        reread = await outcome_of(method_named("laser"), "t", saver)
    async with open_checkpointer("memory") as memory:
        reference = await drive(method_named("laser"), context, "t", memory, {"task_id": DEMO["task_id"]})
    assert reread.state == done.state and timeless(done.state) == timeless(reference.state)
    assert len(done.state["calls"]) == done.state["usage"]["model_calls"]  # every call, as made
    assert len(done.state["trajectory"]) >= 8 and len(done.state["history"]) >= 5

    serde = JsonPlusSerializer()
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT type, checkpoint FROM checkpoints WHERE thread_id = 't'").fetchall()
    assert len(rows) >= 10
    for kind, blob in rows:
        values = serde.loads_typed((kind, blob))["channel_values"]
        stored = {k for k, v in values.items() if not isinstance(v, _DeltaSnapshot)}
        assert not stored & set(GROWING["laser"]), stored


@pytest.mark.parametrize("kind", ["memory", "sqlite", "postgresql"])
async def test_time_travel_edits_and_runs_from_an_old_checkpoint(tmp_path, kind):
    urls = {url.split(":")[0]: url for url in savers(tmp_path)}
    if kind not in urls:
        pytest.skip("needs INTROSPECT_TEST_POSTGRES")
    context = LaserContext(model=write_demo_script(tmp_path / "demo.jsonl"), env="webshop")
    thread = f"tt-{uuid.uuid4().hex}"  # Postgres outlives tests
    async with open_checkpointer(urls[kind]) as saver:
        done = await drive(method_named("laser"), context, thread, saver, {"task_id": DEMO["task_id"]})
        graph = graph_for(method_named("laser"), saver)
        history = [s async for s in graph.aget_state_history({"configurable": {"thread_id": thread}})]
        final = done.state["trajectory"]
        steps = [s for s in history if s.values.get("trajectory")]
        for snapshot in steps:  # every step's trajectory is the start of the final one
            trajectory = snapshot.values["trajectory"]
            assert trajectory == final[: len(trajectory)]
        assert len({len(s.values["trajectory"]) for s in steps}) >= 4

        middle = next(s for s in reversed(history) if s.next == ("item",))  # first visit of an item page
        again = await graph.ainvoke(None, middle.config, context=context)  # re-run from there, a new branch
        assert again["trajectory"] == final and again["reward"] == done.state["reward"]

        # an edit as Studio makes it (as a node with a plain edge: LASER's routers need the run's Context)
        edited = await graph.aupdate_state(middle.config, {"history": ["a note written by hand"]}, as_node="backup")
        assert (await graph.aget_state(edited)).values["history"] == ["a note written by hand"]
        assert (await graph.aget_state(middle.config)).values["history"] == middle.values["history"]


async def test_a_copied_training_thread_keeps_its_parallel_appends_in_order(tmp_path, toy_alfworld, write_script):  # noqa: F811 (a fixture)
    spec = write_script(two_iterations_script())
    context = AutoPlanContext(
        model=spec,
        env="alfworld",
        batch_size=2,
        iterations=2,
        max_actions={"alfworld": 3},
        seed=7,
        command_reading="normalized",
        after_look="continue",  # as the training script expects
        reflect_model="run",  # the script answers the reflections too
    )
    async with open_checkpointer(f"sqlite:///{tmp_path / 'train.sqlite'}") as saver:
        runner = autoplan.build_training_graph(checkpointer=saver)
        config = {"configurable": {"thread_id": "train"}, "recursion_limit": 200}
        await runner.ainvoke({"task_ids": ["heat/1", "heat/2"]}, config, context=context)
        await copy_thread(saver, "train", "copy")
        original = (await runner.aget_state(config)).values
        copied = (await runner.aget_state({"configurable": {"thread_id": "copy"}})).values
    assert copied == original
    assert len(original["experiences"]) == 4 and len(original["reflections"]) == 4
