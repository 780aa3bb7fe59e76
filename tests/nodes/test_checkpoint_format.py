"""The stored format of the fields kept through LangGraph's DeltaChannel (nodes.runtime.channels), pinned:
a SQLite checkpoint file written by an earlier version still reads back and resumes.

DeltaChannel is a beta API whose stored format may change. ``data/laser_checkpoint.sqlite`` is
a LASER run on WebShop's synthetic goal 0 whose model failed at its ninth call (its script had
eight replies), checkpointed as it then was; ``data/laser_checkpoint.json`` holds what that run's
growing fields read back as when it was written, and ``data/laser_checkpoint.jsonl`` the whole
script. The test reads the file with the code of today and continues the run to its end with
the whole script, which must end as an uninterrupted run of that script ends. The file
predates the state's log of model calls (nodes.runtime.calls): it stands for the threads on disk
without one, which read back with an empty log and log the calls made after they resume.

A failure after upgrading LangGraph means threads that users have on disk no longer read back:
that needs a migration (or a pinned LangGraph), not a new file. Write a new file (run this
module: ``python -m tests.nodes.test_checkpoint_format``) only when a change of the LASER graph
itself makes old threads unresumable, and say so in its commit.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.serde.types import _DeltaSnapshot

from graphs import method_named
from introspect.checkpoint import open_checkpointer
from introspect.runner import drive, outcome_of
from nodes.laser.context import LaserContext
from nodes.runtime.llm import ModelCallError, clear_models

DATA = Path(__file__).parent / "data"
FILE, EXPECTED, SCRIPT = (DATA / f"laser_checkpoint.{ext}" for ext in ("sqlite", "json", "jsonl"))
THREAD = "pinned"
TASK = "synthetic-0"
CALLS_WRITTEN = 8  # the model calls the stored run made before its model failed
# LASER's fields stored as each step's change (nodes.laser.states, nodes.runtime.state)
DELTA_FIELDS = ("trajectory", "history", "buffer", "details", "page", "observation", "env_snapshot")

LASER = method_named("laser")


def context(script: Path) -> LaserContext:
    """The run's settings. The pinned script buys in one Buy_Now call (the default before LASER's
    customisation step was the original's): its thread resumes with that setting."""
    return LaserContext(model=f"scripted:{script}", env="webshop", customise="in_buy_now")


def without(state: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    return {key: value for key, value in state.items() if key not in names}


def read_back(state: dict[str, Any]) -> dict[str, Any]:
    """What the pinned file must read back as: the growing fields and the model-call count."""
    return {**{name: state.get(name) for name in DELTA_FIELDS}, "model_calls": state["usage"]["model_calls"]}


async def test_a_checkpoint_file_written_by_an_earlier_version_reads_back_and_resumes(tmp_path):
    db = tmp_path / "runs.sqlite"
    shutil.copy(FILE, db)  # the committed file stays as it was written
    expected = json.loads(EXPECTED.read_text(encoding="utf-8"))
    async with open_checkpointer(f"sqlite:///{db}") as saver:
        stored = await outcome_of(LASER, THREAD, saver)
        assert not stored.finished
        assert read_back(stored.state) == expected
        resumed = await drive(LASER, context(SCRIPT), THREAD, saver, None)
    async with open_checkpointer("memory") as memory:
        reference = await drive(LASER, context(SCRIPT), "reference", memory, {"task_id": TASK})
    clear_models()
    assert resumed.finished and resumed.state["success"]
    # the file was written before the call log (nodes.runtime.calls) and before LASER's pending history: the
    # resumed run logs only the calls it made, and what the earlier version sent (its prompts' tokens) differs
    later = ("usage", "pending_history", "calls")
    assert without(resumed.state, later) == without({**reference.state, "run_id": THREAD}, later)
    assert resumed.state["usage"]["model_calls"] == reference.state["usage"]["model_calls"]
    made = [call["position"] for call in resumed.state["calls"]]
    assert made == list(range(CALLS_WRITTEN, reference.state["usage"]["model_calls"]))
    assert resumed.state["trajectory"][: len(expected["trajectory"])] == expected["trajectory"]


def test_the_pinned_file_holds_the_fields_as_changes():
    """The file exercises the delta format: no checkpoint row holds a growing field whole."""
    serde = JsonPlusSerializer()
    with sqlite3.connect(FILE) as conn:
        rows = conn.execute("SELECT type, checkpoint FROM checkpoints WHERE thread_id = ?", (THREAD,)).fetchall()
    assert len(rows) > 5
    for kind, blob in rows:
        values = serde.loads_typed((kind, blob))["channel_values"]
        whole = {k for k, v in values.items() if not isinstance(v, _DeltaSnapshot)}
        assert not whole & set(DELTA_FIELDS), whole


async def write() -> None:
    """Write the pinned files with the code of today (see the module docstring)."""
    from tests.support.laser_demo import write_demo_script

    DATA.mkdir(exist_ok=True)
    write_demo_script(SCRIPT)
    short = DATA / "short.jsonl"
    write_demo_script(short, CALLS_WRITTEN)
    FILE.unlink(missing_ok=True)
    try:
        async with open_checkpointer(f"sqlite:///{FILE}") as saver:
            try:
                await drive(LASER, context(short), THREAD, saver, {"task_id": TASK})
            except ModelCallError:
                pass
            else:
                raise AssertionError("the short script should have run out")
            state = (await outcome_of(LASER, THREAD, saver)).state
    finally:
        short.unlink()
        clear_models()
    with sqlite3.connect(FILE) as conn:  # small pages: the file is mostly rows of a few hundred bytes
        conn.execute("PRAGMA journal_mode = DELETE")
        conn.execute("PRAGMA page_size = 512")
        conn.execute("VACUUM")
    EXPECTED.write_text(json.dumps(read_back(state), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    asyncio.run(write())
