"""``introspect eval --workers N``: tasks in N processes sharing one checkpoint database (SQLite
and, when INTROSPECT_TEST_POSTGRES names a server, Postgres); the rows are those of a one-process
evaluation, and a worker killed midway leaves error rows whose threads the next run resumes."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest

from graphs import method_named
from introspect.evaluate import evaluate, read_rows
from introspect.workers import WorkerPool
from nodes.laser.context import LaserContext
from tests.graphs.laser_scripts import ROW_FIELDS, paging_eval, paging_script
from tests.support.cli import run_main

TASKS = [f"synthetic-{i}" for i in range(300, 308)]
SAME = (*ROW_FIELDS, "thread_id")  # one checkpoint database: the same threads


@pytest.fixture(params=["sqlite", "postgres"])
def checkpoint_url(request, tmp_path) -> str:
    if request.param == "postgres":
        if not os.environ.get("INTROSPECT_TEST_POSTGRES"):
            pytest.skip("INTROSPECT_TEST_POSTGRES is unset: no PostgreSQL server to test against")
        return os.environ["INTROSPECT_TEST_POSTGRES"]
    return f"sqlite:///{tmp_path / 'runs.sqlite'}"


def args(spec: str, results: Path, checkpoint: str, *more: str) -> list[str]:
    return paging_eval(TASKS, spec, results, "--checkpoint", checkpoint, *more)


@pytest.mark.slow
def test_workers_write_the_rows_of_one_process(checkpoint_url, tmp_path):
    spec = paging_script(tmp_path / "any.jsonl")
    assert run_main(args(spec, tmp_path / "one.jsonl", "memory"), logs=tmp_path, name="one") == 0
    assert (
        run_main(
            args(spec, tmp_path / "many.jsonl", checkpoint_url, "--workers", "2", "--concurrency", "2"),
            logs=tmp_path,
            name="many",
        )
        == 0
    )
    pick = lambda rows: sorted(tuple(r.get(k) for k in SAME) for r in rows)  # noqa: E731
    many = read_rows(tmp_path / "many.jsonl")
    assert len(many) == len(TASKS) and pick(many) == pick(read_rows(tmp_path / "one.jsonl"))


@pytest.mark.slow
async def test_tasks_spread_over_the_workers_and_a_dead_worker_leaves_resumable_threads(tmp_path):
    spec = paging_script(tmp_path / "slow.jsonl", delay=0.5)
    context = LaserContext(model=spec, env="webshop", max_actions=2, backup=False)
    checkpoint = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    results = tmp_path / "rows.jsonl"
    async with WorkerPool(2, 2, method_named("laser"), context, checkpoint) as pool:

        async def kill_one_worker() -> None:
            while len(pool.running) < 4:  # both workers hold two tasks each
                await asyncio.sleep(0.05)
            os.kill(pool.processes[0].pid, signal.SIGKILL)

        killer = asyncio.create_task(kill_one_worker())
        summary = await evaluate(method_named("laser"), context, TASKS, results, None, 4, run=pool.run_one)
        await killer
    assert len(set(pool.taken.values())) == 2  # both processes took tasks
    died = [r for r in read_rows(results) if r["error"]]
    assert died and all(r["error"].startswith("WorkerDied: worker process") for r in died)
    assert summary.tasks == len(TASKS) and summary.ran == len(TASKS) - len(died)

    async with WorkerPool(2, 2, method_named("laser"), context, checkpoint) as pool:
        summary = await evaluate(method_named("laser"), context, TASKS, results, None, 4, run=pool.run_one)
    assert summary.ran == len(TASKS) and not summary.errors
    latest = {r["task_id"]: r for r in read_rows(results)}
    assert all(r["model_calls"] == 4 and r["steps"] == 2 for r in latest.values())  # resumed, not run twice
