"""``introspect eval --workers N``: tasks in N processes on one machine, sharing one checkpoint
database (SQLite in WAL mode, or Postgres), each process with its own event loop, model clients
and browser. For envs whose CPU work (the ALFWorld engine, WebShop's search, page parsing) makes
one asyncio loop the bottleneck.

The evaluation itself stays in the calling process (introspect.evaluate: which tasks are left,
the results file, the summary): ``WorkerPool.run_one`` is the task runner it is handed. Workers
take task ids from one queue as they free up (no fixed split: a slow task does not hold back the
rest of a worker's share) and run each with the local harness's ``run_one``, so a row is built
the same way in a worker as in one process; rows come back through a second queue.

A worker that dies (killed, out of memory) takes no more tasks; the tasks it was running become
error rows saying so, and their threads stay checkpointed: the same command again resumes them.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import queue
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from graphs import method_named
from graphs.method import Method
from introspect.evaluate import eval_thread_id, row_for
from introspect.pacing import Listener, Pacer
from nodes.runtime.context import Context

POLL = 0.2  # seconds between looks at the workers while waiting for rows


def _work(method: str, context: dict[str, Any], checkpoint: str, slots: int, tasks: Any, out: Any) -> None:
    """A worker process: ``slots`` tasks at a time until it takes the ``None`` that ends it.
    The method crosses into the process by name (a ``Method`` holds compiled graphs, which do
    not pickle); the worker sees the parent's ``sys.path``, so its entry-point methods too."""
    declared = method_named(method)
    asyncio.run(_serve(declared, declared.context.from_dict(context), checkpoint, slots, tasks, out))


async def _serve(method: Method, context: Context, checkpoint: str, slots: int, tasks: Any, out: Any) -> None:
    from introspect.checkpoint import open_checkpointer
    from introspect.evaluate import run_one
    from nodes.runtime.llm import PACING, RETRY_NOTICE

    pid = os.getpid()
    loop = asyncio.get_running_loop()
    # Each slot waits on the queue in a thread of its own: in the loop's default pool (a few
    # threads on a small machine) the waiting slots would take every thread the tasks need.
    waiting = ThreadPoolExecutor(slots, thread_name_prefix="introspect-slot")

    async def slot(saver: Any) -> None:
        while (task_id := await loop.run_in_executor(waiting, tasks.get)) is not None:
            out.put(("took", pid, task_id, None))

            def notice(text: str, task: str = task_id) -> None:
                out.put(("retry", pid, task, text))

            RETRY_NOTICE.set(notice)

            def pressure(signal: str, task: str = task_id) -> None:
                out.put(("pressure", pid, task, signal))

            PACING.set(Listener(pressure))
            out.put(("row", pid, task_id, await run_one(method, context, task_id, saver)))

    try:
        async with open_checkpointer(checkpoint) as saver:
            await asyncio.gather(*(slot(saver) for _ in range(slots)))
    finally:
        waiting.shutdown(wait=False)
        if "envs.browser" in sys.modules:  # this process's own browser, if a task started one
            await sys.modules["envs.browser"].close_browser()


class WorkerPool:
    """N worker processes (``slots`` concurrent tasks each) over one checkpoint database."""

    def __init__(
        self,
        workers: int,
        slots: int,
        method: Method,
        context: Context,
        checkpoint: str,
        on_retry: Callable[[str, str], None] | None = None,
        pacer: Pacer | None = None,
    ) -> None:
        self.workers, self.slots = workers, slots
        self.method, self.context, self.checkpoint = method, context, checkpoint
        self.on_retry = on_retry
        self.pacer = pacer  # hears how the workers' model requests end (--concurrency auto)
        mp = multiprocessing.get_context("spawn")  # fresh interpreters: no inherited loop, browser or sqlite
        self.tasks, self.rows = mp.Queue(), mp.Queue()
        self.processes = [
            mp.Process(
                target=_work,
                args=(method.name, context.to_dict(), checkpoint, slots, self.tasks, self.rows),
                daemon=True,
            )
            for _ in range(workers)
        ]
        self.waiting: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self.running: dict[str, int] = {}  # task id -> pid of the worker running it
        self.taken: dict[str, int] = {}  # task id -> pid of the worker that took it (all of them)
        self._reader: asyncio.Task[None] | None = None

    async def __aenter__(self) -> WorkerPool:
        for process in self.processes:
            process.start()
        self._reader = asyncio.create_task(self._read())
        return self

    async def __aexit__(self, *exc: object) -> None:
        for _ in range(self.workers * self.slots):
            self.tasks.put(None)
        for process in self.processes:
            await asyncio.to_thread(process.join, 30)
            if process.is_alive():
                process.kill()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader

    async def run_one(self, task_id: str) -> dict[str, Any]:
        """The row of ``task_id``, run by whichever worker takes it first."""
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.waiting[task_id] = future
        self.tasks.put(task_id)
        return await future

    async def _read(self) -> None:
        while True:
            try:
                kind, pid, task_id, payload = await asyncio.to_thread(self.rows.get, True, POLL)
            except queue.Empty:
                self._bury()
                continue
            if kind == "took":
                self.running[task_id] = self.taken[task_id] = pid
            elif kind == "retry" and self.on_retry is not None:
                self.on_retry(task_id, payload)
            elif kind == "pressure" and self.pacer is not None:
                self.pacer.heard(payload)
            elif kind == "row":
                self.running.pop(task_id, None)
                self._settle(task_id, payload)

    def _bury(self) -> None:
        """Tasks of a worker that died become error rows (their threads stay checkpointed)."""
        dead = {p.pid: p.exitcode for p in self.processes if p.exitcode not in (None, 0)}
        for task_id, pid in list(self.running.items()):
            if pid in dead:
                del self.running[task_id]
                self._died(task_id, f"worker process {pid} exited with code {dead[pid]}")
        if len(dead) == len(self.processes):  # nobody left to take the queued tasks
            for task_id in [t for t in self.waiting if t not in self.running]:
                self._died(task_id, "every worker process has exited")

    def _died(self, task_id: str, why: str) -> None:
        """Settle ``task_id`` with an error row saying which worker's death ended it."""
        thread = eval_thread_id(self.method, self.context, task_id)
        self._settle(task_id, row_for(self.method, self.context, task_id, thread, {}, 0.0, error=f"WorkerDied: {why}"))

    def _settle(self, task_id: str, row: dict[str, Any]) -> None:
        future = self.waiting.pop(task_id, None)
        if future is not None and not future.done():
            future.set_result(row)
