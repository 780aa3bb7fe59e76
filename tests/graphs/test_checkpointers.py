"""The same graph tests on SQLite (the default) and PostgreSQL: a run stopped midway and
resumed through a newly opened checkpointer ends as an uninterrupted one, a fork continues a
copy and leaves its source alone, and an evaluation of 16 tasks at once writes every row.
Postgres runs when INTROSPECT_TEST_POSTGRES names a server (.ci/setup starts one)."""

from __future__ import annotations

import json
import os
import uuid

import pytest

from graphs import method_named
from introspect.checkpoint import open_checkpointer
from introspect.evaluate import evaluate, read_rows
from introspect.runner import drive, fork, outcome_of, resume
from nodes.laser.context import LaserContext
from tests.graphs.laser_scripts import call, think
from tests.support.laser_demo import DEMO, REPLIES, write_demo_script


@pytest.fixture(params=["sqlite", "postgres"])
def checkpoint_url(request, tmp_path) -> str:
    if request.param == "postgres":
        postgres = os.environ.get("INTROSPECT_TEST_POSTGRES")  # read late: each xdist worker has its own
        if not postgres:
            pytest.skip(
                "INTROSPECT_TEST_POSTGRES is unset: no PostgreSQL server to test against "
                "(.ci/setup starts one and sets it)"
            )
        return postgres
    return f"sqlite:///{tmp_path / 'runs.sqlite'}"


class Stop(Exception):
    """Ends a run midway, as a crash would (its steps so far are checkpointed)."""


def stop_after(updates: int):
    seen = {"n": 0}

    def count(node: str, update: dict) -> None:
        seen["n"] += 1
        if seen["n"] >= updates:
            raise Stop(node)

    return count


def unique(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:10]}"  # a Postgres database outlives the test


async def _stopped(url: str, context: LaserContext, thread: str) -> None:
    async with open_checkpointer(url) as saver:
        with pytest.raises(Stop):
            await drive(method_named("laser"), context, thread, saver, {"task_id": DEMO["task_id"]}, stop_after(6))
        assert not (await outcome_of(method_named("laser"), thread, saver)).finished


async def test_a_stopped_run_resumes_to_the_uninterrupted_end(checkpoint_url, tmp_path):
    context = LaserContext(model=write_demo_script(tmp_path / "demo.jsonl"), env="webshop")
    whole, stopped = unique("whole"), unique("stopped")
    async with open_checkpointer(checkpoint_url) as saver:
        reference = await drive(method_named("laser"), context, whole, saver, {"task_id": DEMO["task_id"]})
    await _stopped(checkpoint_url, context, stopped)
    async with open_checkpointer(checkpoint_url) as saver:  # a new process would open it anew
        done = await resume(saver, stopped)
    assert done.finished and reference.finished
    assert [s["action"] for s in done.state["trajectory"]] == [s["action"] for s in reference.state["trajectory"]]
    assert done.state["reward"] == reference.state["reward"] == 1.0
    assert done.state["usage"]["model_calls"] == reference.state["usage"]["model_calls"] == len(REPLIES)


async def test_a_fork_continues_a_copy_and_leaves_the_source(checkpoint_url, tmp_path):
    context = LaserContext(model=write_demo_script(tmp_path / "demo.jsonl"), env="webshop")
    source, copy = unique("source"), unique("copy")
    await _stopped(checkpoint_url, context, source)
    async with open_checkpointer(checkpoint_url) as saver:
        before = await outcome_of(method_named("laser"), source, saver)
        await fork(saver, source, copy)
        done = await drive(method_named("laser"), context, copy, saver, None)
        after = await outcome_of(method_named("laser"), source, saver)
    assert done.finished and done.state["success"] is True
    assert not after.finished and after.state == before.state


async def test_an_evaluation_of_16_tasks_at_once(checkpoint_url, tmp_path):
    """Each task searches, turns the page and runs out of its 2 transitions (reward 0, no error):
    the same script serves any goal."""
    spec = tmp_path / "any.jsonl"  # a new path per test run: a new configuration, new threads
    spec.write_text(
        "".join(
            json.dumps(r) + "\n"
            for r in [think("search"), call("Search", keywords="pillow"), think("next page"), call("Next")]
        )
    )
    context = LaserContext(model=f"scripted:{spec}", env="webshop", max_actions=2, backup=False)
    tasks = [f"synthetic-{i}" for i in range(100, 116)]
    results = tmp_path / "rows.jsonl"
    async with open_checkpointer(checkpoint_url) as saver:
        summary = await evaluate(method_named("laser"), context, tasks, results, saver, concurrency=16)
    rows = read_rows(results)
    assert sorted(r["task_id"] for r in rows) == tasks and summary.tasks == 16 and summary.ran == 16
    assert all(r["model_calls"] == 4 and r["steps"] == 2 and not r["error"] for r in rows)
    assert {r["stop_reason"] for r in rows} == {rows[0]["stop_reason"]} and rows[0]["stop_reason"]
