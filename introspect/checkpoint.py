"""Checkpointers from one option: memory, SQLite (the default) or Postgres.

``sqlite`` keeps ``checkpoints.sqlite`` in introspect's home (``envs.datasets.home``:
``$INTROSPECT_HOME``, else ``$XDG_DATA_HOME/introspect``, one per user);
``sqlite:PATH`` names another file the way SQLite's own URI filenames do
(https://sqlite.org/uri.html): ``sqlite:///abs/runs.sqlite`` and ``sqlite:/abs/runs.sqlite``
are the absolute path ``/abs/runs.sqlite`` (a fourth slash changes nothing), and
``sqlite:runs.sqlite`` is relative to the current directory. (SQLAlchemy reads three
slashes as relative; that made ``sqlite:///root/x.sqlite`` land in ``./root``, so SQLite's
convention is used, under which SQLAlchemy's absolute four-slash URLs keep their meaning.)
``postgresql://...`` uses Postgres for many workers; ``memory`` is for tests.

The checkpointer is opened and checked before a run starts: a file that is not a SQLite
database, a path that cannot be created, an unreachable Postgres server are one-line
``CheckpointConfigError``s, and nothing is written in their case.

SQLite runs in WAL mode with ``synchronous=NORMAL``: a committed step survives the process
being killed (SIGKILL, a crash); a power failure or OS crash may lose the last steps, and
``resume`` then continues from the last step that reached the disk
(https://sqlite.org/pragma.html#pragma_synchronous). Each checkpoint and each step's writes
take one trip to SQLite's thread (``OneTripSqliteSaver``).
"""

from __future__ import annotations

import os
import re
import sqlite3
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from envs.datasets import home
from errors import UserError

if TYPE_CHECKING:  # the checkpointer modules load langchain_core: only when one is opened
    from langchain_core.runnables import RunnableConfig
    from langgraph.checkpoint.base import BaseCheckpointSaver

DEFAULT_FILE = "checkpoints.sqlite"
CONNECT_TIMEOUT = 10  # seconds, for a Postgres URL that sets none
FORMS = "memory, sqlite, sqlite:///ABSOLUTE/PATH, sqlite:RELATIVE/PATH or postgresql://..."


class CheckpointConfigError(UserError, ValueError):
    """A checkpointer that cannot be used: a malformed URL, an unreachable or corrupt database."""


def default_url() -> str:
    return os.environ.get("INTROSPECT_CHECKPOINT", "sqlite")


def sqlite_path(url: str) -> Path:
    """The file a ``sqlite`` URL names (see the module docstring)."""
    if url == "sqlite":
        return home() / DEFAULT_FILE
    rest = url.removeprefix("sqlite:")
    if rest.startswith("//"):  # an authority: empty or localhost, then an absolute path
        authority, slash, path = rest[2:].partition("/")
        if authority not in ("", "localhost") or not slash:
            raise CheckpointConfigError(f"{url!r} names a host; a SQLite checkpoint is a local file ({FORMS})")
        rest = "/" + path.lstrip("/")
    if not rest.strip("/"):
        raise CheckpointConfigError(f"{url!r} names no file; use {FORMS}")
    return Path(rest)


def screenshot_folder(url: str | None) -> Path:
    """Where runs keep their screenshots (nodes.runtime.screenshots): beside the SQLite file, else
    under ``$INTROSPECT_HOME``."""
    url = url or default_url()
    if url == "sqlite" or url.startswith("sqlite:"):
        return sqlite_path(url).parent / "screenshots"
    return home() / "screenshots"


def redact(url: str) -> str:
    """``url`` without its password, for messages (``redis://:PASSWORD@host`` has no user)."""
    return re.sub(r"(://[^:/@]*:)[^@]*@", r"\1***@", url)


@asynccontextmanager
async def open_checkpointer(url: str | None = None, *, existing: bool = False) -> AsyncIterator[BaseCheckpointSaver]:
    """An async checkpointer for ``url`` (see module docstring), checked, closed on exit.

    ``existing``: for commands that only continue or read threads already checkpointed
    (resume, history, fork, view). A SQLite file that does not exist holds no thread, so it is
    not created (nor its directory): an empty saver answers for it, and the command says the
    thread is not there with nothing written."""
    url = url or default_url()
    async with AsyncExitStack() as stack:
        if url == "memory" or (existing and _missing_sqlite(url)):
            from langgraph.checkpoint.memory import InMemorySaver

            saver: BaseCheckpointSaver = InMemorySaver()
        elif url == "sqlite" or url.startswith("sqlite:"):
            saver = await _open_sqlite(sqlite_path(url), stack, url == "sqlite")
        elif url.startswith(("postgres://", "postgresql://")):
            saver = await _open_postgres(url, stack)
        else:
            raise CheckpointConfigError(f"unknown checkpointer {redact(url)!r}: use {FORMS}")
        yield saver


def _missing_sqlite(url: str) -> bool:
    """Whether ``url`` is a SQLite checkpoint whose file does not exist (yet)."""
    if url != "sqlite" and not url.startswith("sqlite:"):
        return False
    try:
        return not sqlite_path(url).exists()
    except CheckpointConfigError:
        return False  # opening it says what is wrong with it


async def _open_sqlite(path: Path, stack: AsyncExitStack, default: bool) -> BaseCheckpointSaver:
    from introspect.sqlite_saver import OneTripSqliteSaver

    where = f"{path} (INTROSPECT_HOME={home()})" if default else str(path)
    for parent in (path.parent, *path.parent.parents):
        if parent.exists() and not parent.is_dir():
            raise CheckpointConfigError(f"cannot create checkpoint file {where}: {parent} is not a directory")
    if path.is_dir():
        raise CheckpointConfigError(f"checkpoint file {where} is a directory")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CheckpointConfigError(f"cannot create checkpoint directory {path.parent}: {exc.strerror}") from None
    try:
        saver = await stack.enter_async_context(OneTripSqliteSaver.from_conn_string(str(path)))
        await saver.setup()  # reads the file now: a corrupt one fails here, before any step
        await saver.conn.execute("PRAGMA synchronous=NORMAL")
    except sqlite3.Error as exc:
        raise CheckpointConfigError(f"cannot use {where} as a SQLite checkpoint database: {exc}") from None
    return saver


async def _open_postgres(url: str, stack: AsyncExitStack) -> BaseCheckpointSaver:
    import psycopg
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

    try:
        saver = await stack.enter_async_context(AsyncPostgresSaver.from_conn_string(timed_conninfo(url)))
        await saver.setup()
    except psycopg.Error as exc:
        raise CheckpointConfigError(f"cannot use Postgres checkpointer {redact(url)}: {one_line(exc)}") from None
    return saver


def timed_conninfo(url: str) -> str:
    """Postgres ``url`` with a connect timeout (CONNECT_TIMEOUT unless it sets one): a server that
    never answers the handshake is refused, not waited for. A malformed URL raises psycopg.Error."""
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    return url if "connect_timeout" in conninfo_to_dict(url) else make_conninfo(url, connect_timeout=CONNECT_TIMEOUT)


def one_line(exc: BaseException) -> str:
    """A driver's error message on one line (psycopg's span several)."""
    return " ".join(str(exc).split()) or type(exc).__name__


async def thread_exists(saver: BaseCheckpointSaver, thread_id: str) -> bool:
    return await saver.aget_tuple({"configurable": {"thread_id": thread_id}}) is not None


async def copy_thread(saver: BaseCheckpointSaver, source: str, target: str, upto: str | None = None) -> None:
    """Copy every checkpoint of ``source`` (all namespaces, oldest first, with their pending
    writes) to ``target``. The whole chain is copied, not only the head: the fields stored
    as per-step writes (nodes.runtime.channels, LangGraph's DeltaChannel) are rebuilt from it.

    ``upto`` (a root checkpoint id) copies only that checkpoint and its ancestors, and not
    that checkpoint's own pending writes (those of the step that ran after it), so the copy
    continues from there as if that step had not run yet.

    A checkpoint's writes come back in the order they are replayed in (the task path, then
    the task id); the tasks' paths are not returned, so each task's writes are stored under
    a path that keeps that order (parallel branches' appends stay in their order)."""
    found = [t async for t in saver.alist({"configurable": {"thread_id": source}})]
    if upto is not None:
        found = _chain(found, upto)
    for item in reversed(found):
        ns = item.config["configurable"].get("checkpoint_ns", "")
        parent = (item.parent_config or {}).get("configurable", {}).get("checkpoint_id")
        config: RunnableConfig = {
            "configurable": {"thread_id": target, "checkpoint_ns": ns, **({"checkpoint_id": parent} if parent else {})}
        }
        stored = await saver.aput(config, item.checkpoint, item.metadata, dict(item.checkpoint["channel_versions"]))
        by_task: dict[str, list[tuple[str, object]]] = {}
        for task_id, channel, value in [] if item is found[0] and upto else item.pending_writes or []:
            by_task.setdefault(task_id, []).append((channel, value))
        for rank, (task_id, writes) in enumerate(by_task.items()):
            await saver.aput_writes(stored, writes, task_id, task_path=f"{rank:08d}")


def _chain(found: list[Any], upto: str) -> list[Any]:
    """Root checkpoint ``upto`` and its ancestors, newest first (as ``alist`` lists them)."""
    by_id = {
        t.config["configurable"]["checkpoint_id"]: t for t in found if not t.config["configurable"].get("checkpoint_ns")
    }
    chain, at = [], by_id.get(upto)
    while at is not None:
        chain.append(at)
        parent = (at.parent_config or {}).get("configurable", {}).get("checkpoint_id")
        at = by_id.get(parent) if parent else None
    return chain
