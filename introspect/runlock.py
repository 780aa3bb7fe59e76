"""One process per run: an evaluation being executed is locked, and a second process that asks
for the same run refuses in one line naming the first (``RunLocked``, exit 2, nothing written).

Two processes on one run make every model call twice and interleave the threads' histories, so
the lock is taken before anything of the run is written, by ``eval`` (plain, ``--workers``, or
``--server``: the calling process holds it for its workers) and by ``study run`` (its journal's
lock for the whole study, and each run's database lock). It has two
parts, for the two ways processes share a run:

- the results file: ``RESULTS.lock`` beside it, held with ``flock(2)`` and naming its holder (pid,
  host, since when). The kernel drops the lock when the holder's process ends, however it ends
  (SIGKILL too), so a lock is never stale: a file left by a killed holder is taken over. The
  holder removes the file when the run ends.
- the checkpoint database when it is Postgres (processes on several machines): a session-level
  advisory lock on the run's threads (the prefix of their ids), held on a connection of its own
  whose ``application_name`` names the holder. Postgres drops it when that connection ends, which
  it does when the holder's process dies (its socket closes).
"""

from __future__ import annotations

import contextlib
import datetime
import fcntl
import hashlib
import os
import socket
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

from errors import UserError


class RunLocked(UserError):
    """Another process is executing this run."""


def holder() -> str:
    """Who this process is, as a refusal names it."""
    since = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    return f"pid {os.getpid()} on {socket.gethostname()} (since {since})"


def lock_path(results: Path) -> Path:
    return results.with_name(results.name + ".lock")


@contextlib.contextmanager
def results_lock(results: Path, instead: str = "name another --results") -> Iterator[None]:
    """Hold ``RESULTS.lock`` for the block (its directory must exist), or raise ``RunLocked``
    saying what to do ``instead`` of waiting."""
    path = lock_path(results)
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            held_by = os.read(fd, 400).decode(errors="replace").strip() or "another process"
            os.close(fd)
            raise RunLocked(
                f"{results} is being written by introspect {held_by}: one process per run; "
                f"wait for it to end, or {instead}"
            ) from None
        try:
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)  # its holder removed it between our open and our lock: take the new one
    try:
        os.ftruncate(fd, 0)
        os.write(fd, (holder() + "\n").encode())
        yield
    finally:
        with contextlib.suppress(OSError):
            path.unlink()
        os.close(fd)


def _key(run: str) -> int:
    """A non-negative 63-bit advisory-lock key for ``run`` (pg_locks shows it as two halves)."""
    return int.from_bytes(hashlib.sha256(run.encode()).digest()[:8], "big") >> 1


@asynccontextmanager
async def database_lock(checkpoint: str, run: str) -> AsyncIterator[None]:
    """Hold the run's advisory lock in the Postgres database ``checkpoint`` for the block (any
    other checkpointer is one machine's: the results lock holds it), or raise ``RunLocked``."""
    if not checkpoint.startswith(("postgres://", "postgresql://")):
        yield
        return
    import psycopg

    from introspect.checkpoint import CONNECT_TIMEOUT

    name = f"introspect {holder()}"[:63]  # Postgres keeps 63 bytes of an application_name
    conn = await psycopg.AsyncConnection.connect(
        checkpoint, autocommit=True, application_name=name, connect_timeout=CONNECT_TIMEOUT
    )
    try:
        key = _key(run)
        row = await (await conn.execute("select pg_try_advisory_lock(%s)", (key,))).fetchone()
        if not (row and row[0]):
            found = await (
                await conn.execute(
                    "select a.application_name from pg_locks l join pg_stat_activity a on a.pid = l.pid "
                    "where l.locktype = 'advisory' and l.objsubid = 1 and l.granted "
                    "and ((l.classid::bigint << 32) | l.objid::bigint) = %s",
                    (key,),
                )
            ).fetchone()
            held_by = found[0].removeprefix("introspect ") if found else "another process"
            raise RunLocked(
                f"the run {run} is being executed by introspect {held_by} on the same Postgres: "
                "one process per run; wait for it to end"
            )
        yield
    finally:
        await conn.close()


@asynccontextmanager
async def run_lock(results: Path, checkpoint: str, run: str) -> AsyncIterator[None]:
    """Both locks of a run (see the module docstring): its results file's, then its database's."""
    results.parent.mkdir(parents=True, exist_ok=True)
    with results_lock(results):
        async with database_lock(checkpoint, run):
            yield
