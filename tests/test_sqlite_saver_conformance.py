"""LangGraph's own checkpointer conformance suite (``langgraph-checkpoint-conformance``) on
``OneTripSqliteSaver``, the SQLite saver that writes each checkpoint and each step's writes in
one trip (introspect/sqlite_saver.py), and on the stock ``AsyncSqliteSaver`` it derives from:
the custom saver passes every capability the stock one passes, so it keeps LangGraph's
checkpoint storage contract (round trips, metadata, namespaces, listing, deleting threads)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from langgraph.checkpoint.base import WRITES_IDX_MAP, empty_checkpoint
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from introspect.sqlite_saver import OneTripSqliteSaver


async def conformance(saver: type[AsyncSqliteSaver], folder: Path) -> dict[str, bool | None]:
    """Each capability of the suite and whether ``saver`` passed it (None: not tested)."""
    folder.mkdir()
    made = iter(range(1_000_000))

    @checkpointer_test(name=saver.__name__)
    async def fresh() -> AsyncIterator[AsyncSqliteSaver]:
        async with saver.from_conn_string(str(folder / f"{next(made)}.sqlite")) as opened:
            await opened.setup()
            yield opened

    report = await validate(fresh)
    return {name: result.passed for name, result in report.results.items()}


async def test_the_one_trip_saver_passes_langgraphs_conformance_suite(tmp_path):
    ours = await conformance(OneTripSqliteSaver, tmp_path / "ours")
    stock = await conformance(AsyncSqliteSaver, tmp_path / "stock")
    for base in ("put", "put_writes", "get_tuple", "list", "delete_thread"):
        assert ours[base] is True, (base, ours)
    assert ours == stock


async def stored(saver: type[AsyncSqliteSaver], path: Path) -> tuple[list[Any], list[Any], list[Any]]:
    """One sequence of puts and writes (two namespaces, a parent chain, the special channels
    whose index LangGraph fixes, a task's writes stored twice), read back three ways: the raw
    rows of both tables, ``alist`` and ``aget_tuple`` of each checkpoint, then after deleting a thread."""
    async with saver.from_conn_string(str(path)) as opened:
        await opened.setup()
        parent: dict[str, str] = {}
        for step in range(3):
            for namespace in ("", "child:1"):
                config: Any = {
                    "configurable": {"thread_id": "t", "checkpoint_ns": namespace, **parent_of(parent, namespace)}
                }
                checkpoint = empty_checkpoint()  # its id and time fixed: both savers store the same bytes
                checkpoint["id"] = f"00000000-0000-6000-8000-{step:06d}{len(namespace):06d}"
                checkpoint["ts"] = "2026-01-01T00:00:00+00:00"
                checkpoint["channel_values"] = {"notes": [f"step {step}", "é"], "count": step}
                saved = await opened.aput(config, checkpoint, {"source": "loop", "step": step}, {"notes": step + 1})
                parent[namespace] = saved["configurable"]["checkpoint_id"]
                special = [(channel, {"step": step}) for channel in WRITES_IDX_MAP]  # error, interrupt, ...
                writes = [("notes", f"w{step}"), *special, ("count", step)]
                await opened.aput_writes(saved, writes, task_id=f"task{step}", task_path="~")
                await opened.aput_writes(saved, writes[:2], task_id=f"task{step}", task_path="~")  # kept
                await opened.aput_writes(saved, [(c, "again") for c, _ in special], task_id=f"task{step}")  # replaced
                await opened.aput(
                    {"configurable": {"thread_id": "other", "checkpoint_ns": namespace}}, checkpoint, {}, {}
                )
        tables = []
        for table in ("checkpoints", "writes"):
            async with opened.conn.execute(f"SELECT * FROM {table} ORDER BY 1, 2, 3, 4, 5, 6") as cursor:
                tables.append([tuple(row) for row in await cursor.fetchall()])
        listed = [
            (t.config, t.checkpoint, t.metadata, t.parent_config, t.pending_writes) async for t in opened.alist(None)
        ]
        got = [await opened.aget_tuple(t[0]) for t in listed]
        await opened.adelete_thread("t")
        left = [t.config async for t in opened.alist(None)]
        return tables, listed + [(g.config, g.pending_writes) for g in got if g], left


def parent_of(parent: dict[str, str], namespace: str) -> dict[str, str]:
    return {"checkpoint_id": parent[namespace]} if namespace in parent else {}


async def test_the_one_trip_saver_stores_what_the_stock_saver_stores(tmp_path):
    """Beside the suite (which does not look at the special channels' fixed indices): the same
    sequence through both savers gives the same rows, the same listings and lookups, the same
    deletion, byte for byte."""
    ours = await stored(OneTripSqliteSaver, tmp_path / "ours.sqlite")
    stock = await stored(AsyncSqliteSaver, tmp_path / "stock.sqlite")
    assert ours == stock
    assert ours[0][1] and ours[2] and len(ours[1]) == 2 * len(ours[0][0])  # nothing compared empty
