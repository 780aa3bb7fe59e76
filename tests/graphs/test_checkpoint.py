"""Checkpointers from one option (SQLite URLs as SQLite's URI filenames), and copying a
thread; Postgres runs when INTROSPECT_TEST_POSTGRES names a server."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

from graphs import method_named
from introspect.checkpoint import CheckpointConfigError, open_checkpointer, sqlite_path


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


@pytest.mark.skipif(
    not os.environ.get("INTROSPECT_TEST_POSTGRES"), reason="needs INTROSPECT_TEST_POSTGRES (CI starts one)"
)
async def test_postgres():
    async with open_checkpointer(os.environ["INTROSPECT_TEST_POSTGRES"]) as saver:
        await _roundtrip(saver)


@pytest.mark.parametrize(
    "url,path",
    [
        ("sqlite:///root/x.sqlite", "/root/x.sqlite"),  # three slashes: an absolute path, as in SQLite's URIs
        ("sqlite:////root/x.sqlite", "/root/x.sqlite"),  # SQLAlchemy's absolute form means the same file
        ("sqlite://localhost/root/x.sqlite", "/root/x.sqlite"),
        ("sqlite:/root/x.sqlite", "/root/x.sqlite"),
        ("sqlite:runs/x.sqlite", "runs/x.sqlite"),  # no slash: relative to the current directory
    ],
)
def test_sqlite_urls_follow_sqlite_uri_filenames(url, path):
    assert sqlite_path(url) == Path(path)


@pytest.mark.parametrize("url", ["sqlite://otherhost/x.sqlite", "sqlite:///", "sqlite:"])
def test_sqlite_urls_without_a_local_file_are_refused(url):
    with pytest.raises(CheckpointConfigError):
        sqlite_path(url)


async def test_three_slashes_write_the_absolute_path_not_under_the_current_directory(tmp_path, monkeypatch):
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    target = tmp_path / "abs" / "x.sqlite"
    async with open_checkpointer(f"sqlite://{target}") as saver:
        await _roundtrip(saver)
    assert target.stat().st_size > 0
    assert list(cwd.iterdir()) == []


def savers(tmp_path) -> list[str]:
    urls = ["memory", f"sqlite://{tmp_path / 'copy.sqlite'}"]
    return urls + ([os.environ["INTROSPECT_TEST_POSTGRES"]] if os.environ.get("INTROSPECT_TEST_POSTGRES") else [])


async def test_copy_thread_carries_the_whole_chain(tmp_path):
    from introspect.checkpoint import copy_thread
    from introspect.runner import drive, outcome_of
    from nodes.laser.context import LaserContext
    from tests.support.laser_demo import DEMO, write_demo_script

    context = LaserContext(model=write_demo_script(tmp_path / "demo.jsonl"), env="webshop")
    for url in savers(tmp_path):
        async with open_checkpointer(url) as saver:
            source, copy = f"source-{uuid.uuid4().hex}", f"copy-{uuid.uuid4().hex}"  # Postgres outlives tests
            done = await drive(method_named("laser"), context, source, saver, {"task_id": DEMO["task_id"]})
            await copy_thread(saver, source, copy)
            copied = await outcome_of(method_named("laser"), copy, saver)
            assert copied.finished and copied.state == done.state, url
            chain = [c.checkpoint["id"] async for c in saver.alist({"configurable": {"thread_id": copy}})]
            assert chain == [c.checkpoint["id"] async for c in saver.alist({"configurable": {"thread_id": source}})]
            assert len(chain) >= 10  # every step, not only the head


async def test_sqlite_stores_a_step_in_one_trip_to_its_thread_and_langgraphs_saver_reads_it(tmp_path):
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    from introspect.runner import drive, graph_for
    from nodes.laser.context import LaserContext
    from tests.support.laser_demo import DEMO, write_demo_script

    context = LaserContext(model=write_demo_script(tmp_path / "demo.jsonl"), env="webshop")
    db = tmp_path / "trips.sqlite"
    async with open_checkpointer(f"sqlite:///{db}") as saver:
        async with saver.conn.execute("PRAGMA synchronous") as cursor:
            assert (await cursor.fetchone())[0] == 1  # NORMAL: durable against a killed process (WAL)
        trips = 0
        execute = saver.conn._execute

        async def counted(fn, *args, **kwargs):
            nonlocal trips
            trips += 1
            return await execute(fn, *args, **kwargs)

        saver.conn._execute = counted
        stored = await saver.aput_writes(  # type: ignore[func-returns-value]
            {"configurable": {"thread_id": "x", "checkpoint_ns": "", "checkpoint_id": "1"}}, [("a", 1), ("b", 2)], "t"
        )
        assert stored is None and trips == 1
        saver.conn._execute = execute
        done = await drive(method_named("laser"), context, "t", saver, {"task_id": DEMO["task_id"]})
    async with AsyncSqliteSaver.from_conn_string(str(db)) as plain:
        state = await graph_for(method_named("laser"), plain).aget_state({"configurable": {"thread_id": "t"}})
    assert state.values == done.state and not state.next
