"""Checkpointers from one option; Postgres runs when INTROSPECT_TEST_POSTGRES names a server."""

from __future__ import annotations

import os

import pytest

from graphs.checkpoint import CheckpointConfigError, open_checkpointer


async def _roundtrip(saver):
    from langgraph.checkpoint.base import empty_checkpoint

    config = {"configurable": {"thread_id": "cp-test", "checkpoint_ns": ""}}
    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = {"x": 1}
    stored = await saver.aput(config, checkpoint, {"source": "input", "step": 0}, {})
    found = await saver.aget_tuple(stored)
    assert found is not None and found.checkpoint["id"] == checkpoint["id"]


async def test_memory_and_sqlite(tmp_path):
    async with open_checkpointer("memory") as saver:
        await _roundtrip(saver)
    async with open_checkpointer(f"sqlite:///{tmp_path / 'c.sqlite'}") as saver:
        await _roundtrip(saver)
    assert (tmp_path / "c.sqlite").stat().st_size > 0


async def test_unknown_checkpointer_is_refused():
    with pytest.raises(CheckpointConfigError):
        async with open_checkpointer("redis://x"):
            pass


@pytest.mark.skipif(not os.environ.get("INTROSPECT_TEST_POSTGRES"), reason="needs INTROSPECT_TEST_POSTGRES (CI starts one)")
async def test_postgres():
    async with open_checkpointer(os.environ["INTROSPECT_TEST_POSTGRES"]) as saver:
        await _roundtrip(saver)
