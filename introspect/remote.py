"""Evaluation on a LangGraph server (``introspect eval --server URL``), through langgraph-sdk.

Each task is a run of the method's graph (the assistant is the graph id langgraph.json serves
it under) with the same Context as a local evaluation, as the run's ``context``. The server keeps
the checkpoints (Postgres in a deployment) and spreads runs over its workers; this process only
submits, follows and writes rows, with the local harness's own row building and results file
(introspect.evaluate), so both paths write the same rows and re-runs read them the same way.

Each task's thread id is derived from the configuration and the task (a UUID, as the server's
thread ids are), so a re-run finds it: a finished thread is reported from its final state; a run
still under way on the server (the client was stopped; runs are started with
``on_disconnect="continue"``) is joined; a thread stopped midway (a cancelled run, an error, a
restarted server) is continued from its checkpoint with no input, never started over.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from errors import IntrospectError, UserError
from graphs.method import DEFAULT_RECURSION_LIMIT, Method
from introspect.evaluate import eval_thread_id, row_for
from introspect.runner import DURABILITY, has_finished
from nodes.runtime.context import Context

if TYPE_CHECKING:
    from langgraph_sdk.schema import Config

THREADS = uuid.UUID("5f0c2b9e-8a1d-4e5b-9c3f-6d7a8b9c0d1e")  # namespace of evaluation thread ids
ACTIVE = ("pending", "running")


class ServerError(UserError, ValueError):
    """The server cannot be used for this evaluation (unreachable, the graph not served)."""


class RunFailed(IntrospectError, RuntimeError):
    """A run on the server ended in an error, or stopped before the graph's end."""


def server_thread_id(method: Method, context: Context, task_id: str) -> str:
    """The task's thread on the server: stable per configuration and task."""
    return str(uuid.uuid5(THREADS, eval_thread_id(method, context, task_id)))


class ServerEvaluation:
    """Runs the tasks of one configuration on the server at ``url``; ``run_one`` is the
    task runner ``introspect.evaluate.evaluate`` takes."""

    def __init__(
        self, url: str, method: Method, context: Context, on_step: Callable[[str, str], None] | None = None
    ) -> None:
        from langgraph_sdk import get_client

        self.on_step = on_step  # hears (task id, node) for every graph step streamed from the server
        self.url = url
        self.method = method
        self.context = context
        self.client = get_client(url=url)
        self.graph = method.name  # langgraph.json serves each method's graph under its name

    async def check(self) -> None:
        """The server answers and serves the method's graph, before any task is submitted."""
        try:
            served = await self.client.assistants.search(graph_id=self.graph, limit=1)
        except Exception as exc:  # noqa: BLE001 - httpx's errors, the server's refusals: one line
            raise ServerError(f"cannot use the LangGraph server at {self.url}: {type(exc).__name__}: {exc}") from None
        if not served:
            raise ServerError(f"the LangGraph server at {self.url} does not serve the graph {self.graph!r}")

    async def forget(self, task_id: str) -> None:
        """Delete the task's thread (its row is stale: it runs again from the start)."""
        try:
            await self.client.threads.delete(server_thread_id(self.method, self.context, task_id))
        except Exception:  # noqa: BLE001 - no such thread (a 404): nothing to delete
            pass

    async def run_one(self, task_id: str) -> dict[str, Any]:
        """The row of one task (see the module docstring); errors become rows too."""
        thread = server_thread_id(self.method, self.context, task_id)
        started = time.monotonic()
        try:
            await self.client.threads.create(
                thread_id=thread,
                if_exists="do_nothing",
                metadata={
                    "introspect_method": self.method.name,
                    "introspect_task": task_id,
                    "introspect_thread": eval_thread_id(self.method, self.context, task_id),
                },
            )
            state = await self.client.threads.get_state(thread)
            if _finished(state):
                return {**self._row(task_id, thread, state, 0.0), "from_checkpoint": True}
            active = [run for run in await self.client.runs.list(thread, limit=5) if run["status"] in ACTIVE]
            if active:
                joined = await self.client.runs.join(thread, active[0]["run_id"])
                if isinstance(joined, dict) and joined.get("__error__"):  # the server's word for a failed run
                    raise RunFailed(_error_message(joined["__error__"]))
            else:
                await self._follow(task_id, thread, None if state.get("values") else {"task_id": task_id})
            state = await self.client.threads.get_state(thread)
            if not _finished(state):
                raise RunFailed(f"the run stopped before the graph's end (next: {', '.join(state.get('next') or [])})")
        except Exception as exc:  # noqa: BLE001 - one task's failure must not end the evaluation
            reached = await self._state_or_empty(thread)
            return self._row(task_id, thread, reached, time.monotonic() - started, f"{type(exc).__name__}: {exc}")
        return self._row(task_id, thread, state, time.monotonic() - started)

    async def _follow(self, task_id: str, thread: str, graph_input: dict[str, Any] | None) -> None:
        """Start a run (``graph_input`` None continues the thread's checkpoint) and follow it."""
        config: Config = {"recursion_limit": max(self.method.recursion_limit(self.context), DEFAULT_RECURSION_LIMIT)}
        async for part in self.client.runs.stream(
            thread,
            self.graph,
            input=graph_input,
            context=self.context.to_dict(),
            config=config,
            stream_mode="updates",
            durability=DURABILITY,
            on_disconnect="continue",
        ):
            if part.event == "error":
                raise RunFailed(_error_message(part.data))
            if part.event == "updates" and self.on_step is not None and isinstance(part.data, dict):
                for node in part.data:
                    self.on_step(task_id, node)

    async def _state_or_empty(self, thread: str) -> Mapping[str, Any]:
        try:
            return await self.client.threads.get_state(thread)
        except Exception:  # noqa: BLE001 - the row then carries no usage; the error says why
            return {}

    def _row(
        self, task_id: str, thread: str, state: Mapping[str, Any], seconds: float, error: str = ""
    ) -> dict[str, Any]:
        row = row_for(self.method, self.context, task_id, thread, dict(state.get("values") or {}), seconds, error)
        return {**row, "data": None}  # the server's env read the server's data: not known here


def _error_message(error: Any) -> str:
    """The message of an error event or a joined run's ``__error__`` (a dict, or text)."""
    if isinstance(error, dict):
        return str(error.get("message") or error)
    return str(error)


def _finished(state: Mapping[str, Any]) -> bool:
    return has_finished(state.get("values"), state.get("next"), state.get("tasks"))
