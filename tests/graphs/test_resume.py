"""A run killed with SIGKILL mid-episode continues with ``introspect resume`` from SQLite
and ends exactly as the same run left uninterrupted."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from langgraph.checkpoint.memory import InMemorySaver

from graphs import method_named
from graphs.laser import build_graph
from introspect.checkpoint import open_checkpointer
from introspect.runner import drive, outcome_of
from nodes.laser.context import LaserContext

ROOT = Path(__file__).resolve().parents[2]
DEMO = json.loads((ROOT / "introspect/demos/laser.json").read_text())
SCRIPT = ROOT / "introspect/demos" / DEMO["recording"]  # replies carry a delay, like a real model


def introspect(*args: str, env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "introspect.cli", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


async def test_sigkill_then_resume_ends_like_an_uninterrupted_run(tmp_path):
    context = LaserContext(model=f"scripted:{SCRIPT}", env="webshop")
    reference = await drive(method_named("laser"), context, "reference", InMemorySaver(), {"task_id": DEMO["task_id"]})
    assert reference.finished and reference.state["success"]

    db = tmp_path / "runs.sqlite"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = introspect(
        "run",
        "laser",
        "--env",
        "webshop",
        "--task",
        DEMO["task_id"],
        "--model",
        f"scripted:{SCRIPT}",
        "--thread",
        "crashy",
        "--checkpoint",
        f"sqlite:///{db}",
        env=env,
    )
    seen = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = run.stdout.readline()
        seen.append(line)
        if "click[Description]" in line:  # mid-episode: the item state, before the purchase
            break
    os.kill(run.pid, signal.SIGKILL)
    run.wait(timeout=10)
    assert run.returncode == -signal.SIGKILL
    assert not any("finished:" in line for line in seen)

    async with open_checkpointer(f"sqlite:///{db}") as saver:
        interrupted = await outcome_of(method_named("laser"), "crashy", saver)
    # LangGraph saves checkpoints in the background: the kill may leave the last step's writes
    # pending, with no next node yet; the thread is unfinished all the same
    assert not interrupted.finished, "the killed run should have unfinished work"
    assert not interrupted.state.get("done")

    resumed = introspect("resume", "crashy", "--checkpoint", f"sqlite:///{db}", env=env)
    out, err = resumed.communicate(timeout=120)
    assert resumed.returncode == 0, err
    assert "finished: success=True" in out

    async with open_checkpointer(f"sqlite:///{db}") as saver:
        final = (await build_graph(checkpointer=saver).aget_state({"configurable": {"thread_id": "crashy"}})).values
    for key in ("trajectory", "history", "reward", "success", "transitions", "buffer", "details", "target", "actions"):
        assert final[key] == reference.state[key], key
    assert final["usage"]["model_calls"] == reference.state["usage"]["model_calls"]


async def test_a_kill_between_a_nodes_writes_and_the_next_checkpoint_leaves_the_thread_unfinished(tmp_path):
    """A process killed after a node's writes were saved (LangGraph stores them at once) but
    before the next checkpoint: the last checkpoint's task has its result, so LangGraph shows
    no next node. The thread is still unfinished, and resume carries it to the same end."""
    import sqlite3

    from introspect.runner import outcome_of, resume

    script = tmp_path / "script.jsonl"
    script.write_text(
        "".join(
            json.dumps({k: v for k, v in json.loads(line).items() if k != "delay"}) + "\n"
            for line in SCRIPT.read_text().splitlines()
        )
    )
    context = LaserContext(model=f"scripted:{script}", env="webshop")
    url = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    async with open_checkpointer(url) as saver:
        done = await drive(method_named("laser"), context, "t", saver, {"task_id": DEMO["task_id"]})
    with sqlite3.connect(tmp_path / "runs.sqlite") as db:  # the last two checkpoints never written
        for _ in range(2):
            db.execute("DELETE FROM checkpoints WHERE checkpoint_id = (SELECT max(checkpoint_id) FROM checkpoints)")
    async with open_checkpointer(url) as saver:
        cut = await outcome_of(method_named("laser"), "t", saver)
        assert not cut.finished and cut.state["trajectory"][-1]["action"] == "click[Buy Now]"  # the writes show
        resumed = await resume(saver, "t")
    assert resumed.finished and resumed.state["trajectory"] == done.state["trajectory"]
    assert resumed.state["stop_reason"] == done.state["stop_reason"] == "bought"
