"""``introspect eval --server URL``: each task a run of the method's graph on a LangGraph server
(``langgraph dev`` started by the test on a free port, offline), several at once, the same rows
as a local evaluation; an evaluation whose client is killed midway, and a thread whose run was
stopped on the server, are continued on the next run of the command, never started over."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from graphs import method_named
from introspect.evaluate import read_rows
from nodes.laser.context import LaserContext
from tests.graphs.laser_scripts import ROW_FIELDS, paging_eval, paging_script
from tests.support.cli import ROOT, child_env, output, run_main
from tests.support.studio import langgraph_dev

TASKS = [f"synthetic-{i}" for i in range(200, 205)]
SAME = ROW_FIELDS

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with langgraph_dev(tmp_path_factory.mktemp("server")) as (url, log):
        yield url, log


def eval_args(spec: str, results: Path, *more: str) -> list[str]:
    return paging_eval(TASKS, spec, results, "--concurrency", "5", *more)


def test_the_server_writes_the_rows_a_local_evaluation_writes(server, tmp_path):
    url, log = server
    spec = paging_script(tmp_path / "any.jsonl")
    assert (
        run_main(eval_args(spec, tmp_path / "local.jsonl", "--checkpoint", "memory"), logs=tmp_path, name="local") == 0
    )
    assert run_main(eval_args(spec, tmp_path / "server.jsonl", "--server", url), logs=tmp_path, name="server") == 0
    local, remote = read_rows(tmp_path / "local.jsonl"), read_rows(tmp_path / "server.jsonl")
    assert len(remote) == len(TASKS) and all(r["model_calls"] == 4 and r["steps"] == 2 for r in remote)
    pick = lambda rows: sorted(tuple(r.get(k) for k in SAME) for r in rows)  # noqa: E731
    assert pick(remote) == pick(local)
    assert len({r["thread_id"] for r in remote}) == len(TASKS)
    again = run_main(eval_args(spec, tmp_path / "server.jsonl", "--server", url), logs=tmp_path, name="again")
    assert again == 0 and len(read_rows(tmp_path / "server.jsonl")) == len(TASKS)  # finished tasks skipped
    assert "BlockingError" not in log.read_text(errors="replace")


async def _stop_midway(url: str, context: LaserContext, task_id: str) -> str:
    """Start the task's run on the server and cancel it after its first model calls."""
    from langgraph_sdk import get_client

    from introspect.remote import server_thread_id

    client = get_client(url=url)
    thread = server_thread_id(method_named("laser"), context, task_id)
    await client.threads.create(thread_id=thread, if_exists="do_nothing")
    run = await client.runs.create(thread, "laser", input={"task_id": task_id}, context=context.to_dict())
    for _ in range(200):
        state = await client.threads.get_state(thread)
        if int((state["values"].get("usage") or {}).get("model_calls", 0)) >= 2:
            break
        await asyncio.sleep(0.05)
    await client.runs.cancel(thread, run["run_id"], wait=True, action="interrupt")
    state = await client.threads.get_state(thread)
    assert state["next"], state  # stopped midway
    return thread


def test_a_killed_evaluation_and_a_stopped_thread_are_continued_not_restarted(server, tmp_path):
    from langgraph_sdk import get_client

    url, _ = server
    spec = paging_script(tmp_path / "slow.jsonl", delay=0.4)
    context = LaserContext(model=spec, env="webshop", max_actions=2, backup=False)
    stopped = asyncio.run(_stop_midway(url, context, TASKS[0]))

    results = tmp_path / "rows.jsonl"
    out = tmp_path / "killed.out"
    with out.open("wb") as sink:
        child = subprocess.Popen(
            [sys.executable, "-m", "introspect.cli", *eval_args(spec, results, "--server", url)],
            cwd=ROOT,
            env=child_env(),
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    time.sleep(3)  # the runs are under way on the server
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=20)
    assert len(read_rows(results)) < len(TASKS)

    resumed = run_main(eval_args(spec, results, "--server", url), logs=tmp_path, name="resumed")
    errors = [(r["task_id"], r["error"]) for r in read_rows(results) if r["error"]]
    assert resumed == 0, (errors, output(tmp_path, "resumed")[1][-1500:])
    rows = {r["task_id"]: r for r in read_rows(results)}
    assert sorted(rows) == sorted(TASKS)
    # continued, never started over: each thread's calls and actions happened once
    assert all(r["model_calls"] == 4 and r["steps"] == 2 and not r["error"] for r in rows.values())
    assert rows[TASKS[0]]["thread_id"] == stopped

    async def runs_per_thread() -> dict[str, int]:
        client = get_client(url=url)
        return {task: len(await client.runs.list(rows[task]["thread_id"])) for task in TASKS}

    counts = asyncio.run(runs_per_thread())
    assert counts[TASKS[0]] == 2  # the stopped run, then its continuation
    assert all(counts[task] == 1 for task in TASKS[1:]), counts  # joined or read, not run again


def test_an_unreachable_server_is_one_line_and_nothing_is_written(tmp_path):
    spec = paging_script(tmp_path / "any.jsonl")
    code = run_main(
        eval_args(spec, tmp_path / "rows.jsonl", "--server", "http://127.0.0.1:9"), logs=tmp_path, name="down"
    )
    err = (tmp_path / "down.err").read_text()
    assert code == 2 and "cannot use the LangGraph server at http://127.0.0.1:9" in err and "Traceback" not in err
    assert not (tmp_path / "rows.jsonl").exists()
