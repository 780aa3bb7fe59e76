"""LangGraph's async SQLite checkpointer, writing each checkpoint in one trip to its thread.

``AsyncSqliteSaver`` runs on aiosqlite, which sends every statement, cursor and commit to
its database thread and waits for the answer: storing one graph step (its writes, then its
checkpoint) took seven round trips between the event loop and that thread, each a thread
switch and a wake-up of the loop, which on a busy machine cost more than the SQL. Here each
of the two is one function run on that same thread: the same rows, statements and
commits as ``AsyncSqliteSaver`` (serialised on the event loop first, as it does), so files
are shared with it both ways. Reads are inherited unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    get_checkpoint_metadata,
)
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

_PUT = (
    "INSERT OR REPLACE INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, "
    "type, checkpoint, metadata) VALUES (?, ?, ?, ?, ?, ?, ?)"
)
_WRITES = (
    "INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


class OneTripSqliteSaver(AsyncSqliteSaver):
    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        await self.setup()
        thread_id = str(config["configurable"]["thread_id"])
        namespace = config["configurable"]["checkpoint_ns"]
        kind, blob = self.serde.dumps_typed(checkpoint)
        meta = json.dumps(get_checkpoint_metadata(config, metadata), ensure_ascii=False).encode("utf-8", "ignore")
        row = (thread_id, namespace, checkpoint["id"], config["configurable"].get("checkpoint_id"), kind, blob, meta)
        async with self.lock:
            await self.conn._execute(self._store, _PUT, [row])
        return {"configurable": {"thread_id": thread_id, "checkpoint_ns": namespace, "checkpoint_id": checkpoint["id"]}}

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        replace = all(channel in WRITES_IDX_MAP for channel, _ in writes)  # as AsyncSqliteSaver decides
        query = ("INSERT OR REPLACE " if replace else "INSERT OR IGNORE ") + _WRITES
        configurable = config["configurable"]
        rows = [
            (
                str(configurable["thread_id"]),
                str(configurable["checkpoint_ns"]),
                str(configurable["checkpoint_id"]),
                task_id,
                task_path,
                WRITES_IDX_MAP.get(channel, idx),
                channel,
                *self.serde.dumps_typed(value),
            )
            for idx, (channel, value) in enumerate(writes)
        ]
        await self.setup()
        async with self.lock:
            await self.conn._execute(self._store, query, rows)

    def _store(self, query: str, rows: list[tuple[Any, ...]]) -> None:
        """On the connection's thread: the rows, then the commit."""
        connection = self.conn._conn
        connection.executemany(query, rows)
        connection.commit()
