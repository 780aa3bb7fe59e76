"""Checkpointers from one option: memory, SQLite (the default) or Postgres.

``open_checkpointer("sqlite")`` keeps a file under ``.introspect/``; ``sqlite:///path``
names another file; ``postgresql://...`` uses Postgres for many workers; ``memory`` is
for tests. Every graph step is checkpointed, which is what ``introspect resume`` uses.
"""

from __future__ import annotations

import os
from contextlib import asynccontextmanager
from pathlib import Path
from typing import AsyncIterator

from langgraph.checkpoint.base import BaseCheckpointSaver

DEFAULT_DIR = Path(os.environ.get("INTROSPECT_HOME", ".introspect"))
DEFAULT_SQLITE = DEFAULT_DIR / "checkpoints.sqlite"


class CheckpointConfigError(ValueError):
    pass


def default_url() -> str:
    return os.environ.get("INTROSPECT_CHECKPOINT", "sqlite")


@asynccontextmanager
async def open_checkpointer(url: str | None = None) -> AsyncIterator[BaseCheckpointSaver]:
    """An async checkpointer for ``url`` (see module docstring), closed on exit."""
    url = url or default_url()
    if url == "memory":
        from langgraph.checkpoint.memory import InMemorySaver

        yield InMemorySaver()
    elif url == "sqlite" or url.startswith("sqlite:///"):
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        path = DEFAULT_SQLITE if url == "sqlite" else Path(url.removeprefix("sqlite:///"))
        path.parent.mkdir(parents=True, exist_ok=True)
        async with AsyncSqliteSaver.from_conn_string(str(path)) as saver:
            yield saver
    elif url.startswith(("postgres://", "postgresql://")):
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

        async with AsyncPostgresSaver.from_conn_string(url) as saver:
            await saver.setup()
            yield saver
    else:
        raise CheckpointConfigError(
            f"unknown checkpointer {url!r}: use memory, sqlite, sqlite:///FILE or postgresql://..."
        )
