"""Every step is on disk before the next one acts (introspect.runner.DURABILITY): when a node
steps the env, the SQLite file, read through a connection of its own, already holds the
checkpoint of the step before. LangGraph's default durability ("async") saves that
checkpoint while the next step runs, and this test then fails."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from langgraph.config import get_config

import nodes.runtime.environment
from graphs import method_named
from introspect.checkpoint import open_checkpointer
from introspect.runner import drive
from tests.support.scenarios import SCENARIOS


def last_step_on_disk(db: Path, thread_id: str) -> int:
    """The highest step among the thread's committed checkpoints, as another process sees it."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT metadata FROM checkpoints WHERE thread_id = ?", (thread_id,)).fetchall()
    return max((json.loads(metadata)["step"] for (metadata,) in rows), default=-2)


async def test_each_step_is_committed_before_the_next_step_acts(tmp_path, monkeypatch):
    scenario = SCENARIOS["laser"]
    db = tmp_path / "runs.sqlite"
    seen: list[tuple[int, int]] = []  # (the acting step, the last step on disk)
    original = nodes.runtime.environment._step

    async def step(*args: Any, **kwargs: Any) -> Any:
        acting = int(get_config()["metadata"]["langgraph_step"])
        seen.append((acting, last_step_on_disk(db, "durable")))
        return await original(*args, **kwargs)

    monkeypatch.setattr(nodes.runtime.environment, "_step", step)
    context = scenario.settings(scenario.write_script(tmp_path / "script.jsonl"))
    async with open_checkpointer(f"sqlite:///{db}") as saver:
        outcome = await drive(method_named(scenario.method), context, "durable", saver, scenario.graph_input)
    assert outcome.finished
    assert len(seen) >= 3
    assert all(on_disk == acting - 1 for acting, on_disk in seen), seen
