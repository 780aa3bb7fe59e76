"""The evaluation harness: many tasks, concurrently, each a resumable checkpointed thread.

Each finished task becomes one JSON line in the results file, written whole and flushed,
so an interrupted evaluation loses nothing: re-running it skips finished tasks and
resumes unfinished threads from their checkpoints (thread ids are derived from the
method, env, model and task).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from langgraph.checkpoint.base import BaseCheckpointSaver

from graphs import canonical, load_method
from graphs.context import Context
from graphs.runner import drive, run_config


@dataclass
class Summary:
    tasks: int
    success_rate: float
    mean_reward: float
    mean_steps: float
    model_calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: float
    errors: int

    def lines(self) -> list[str]:
        return [
            f"tasks         {self.tasks}  (errors: {self.errors})",
            f"success rate  {self.success_rate:.1%}",
            f"mean reward   {self.mean_reward:.3f}",
            f"mean steps    {self.mean_steps:.1f}",
            f"model calls   {self.model_calls}",
            f"tokens        {self.input_tokens} in / {self.output_tokens} out",
            f"cost          ${self.cost_usd:.4f}",
        ]


def eval_thread_id(method: str, context: Context, task_id: str) -> str:
    """A stable thread id per (method, env, model, task), so re-runs resume."""
    key = json.dumps([method, context.env, context.env_options, context.model, context.plan], sort_keys=True)
    return f"eval-{method}-{context.env}-{hashlib.sha1(key.encode()).hexdigest()[:8]}-{task_id}"


def row_for(method: str, context: Context, task_id: str, thread_id: str, state: dict[str, Any],
            seconds: float, error: str = "") -> dict[str, Any]:
    """One results line: outcome, steps, usage and the method's own fields."""
    usage = state.get("usage") or {}
    row: dict[str, Any] = {
        "task_id": task_id,
        "method": method,
        "env": context.env,
        "model": context.model,
        "thread_id": thread_id,
        "success": bool(state.get("success", False)),
        "reward": float(state.get("reward", 0.0)),
        "steps": int(state.get("actions", 0)),
        "stop_reason": state.get("stop_reason", ""),
        "model_calls": int(usage.get("model_calls", 0)),
        "input_tokens": int(usage.get("input_tokens", 0)),
        "output_tokens": int(usage.get("output_tokens", 0)),
        "cost_usd": float(usage.get("cost_usd", 0.0)),
        "seconds": round(seconds, 3),
        "error": error,
    }
    if state.get("evaluation"):
        row["evaluation"] = state["evaluation"]  # the benchmark's own scoring: evaluators, EM/F1, judge
    if not error:
        row.update(load_method(method).result(state))
    return row


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The results already in ``path`` (a torn last line from a crash is ignored)."""
    if not path.exists():
        return []
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return rows


def finished_tasks(path: Path) -> set[str]:
    """Tasks with a results line and no error: a re-run skips them."""
    return {r["task_id"] for r in read_rows(path) if not r.get("error")}


def summarize(rows: list[dict[str, Any]]) -> Summary:
    n = len(rows)

    def total(key: str) -> float:
        return sum(float(r.get(key, 0) or 0) for r in rows)

    return Summary(
        tasks=n,
        success_rate=total("success") / n if n else 0.0,
        mean_reward=total("reward") / n if n else 0.0,
        mean_steps=total("steps") / n if n else 0.0,
        model_calls=int(total("model_calls")),
        input_tokens=int(total("input_tokens")),
        output_tokens=int(total("output_tokens")),
        cost_usd=round(total("cost_usd"), 6),
        errors=sum(1 for r in rows if r.get("error")),
    )


class ResultsFile:
    """Appends whole JSON lines, flushed and fsynced, one writer at a time."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = asyncio.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() and path.stat().st_size and not path.read_bytes().endswith(b"\n"):
            with path.open("a", encoding="utf-8") as handle:  # end a torn line before appending
                handle.write("\n")

    async def append(self, row: dict[str, Any]) -> None:
        async with self._lock:
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
                handle.flush()
                os.fsync(handle.fileno())


async def run_one(method: str, context: Context, task_id: str, checkpointer: BaseCheckpointSaver) -> dict[str, Any]:
    """Run or resume one task's thread and return its results row (errors become rows too)."""
    thread_id = eval_thread_id(method, context, task_id)
    graph = load_method(method).build_graph(checkpointer=checkpointer)
    existing = await graph.aget_state(run_config(thread_id, method, context))
    graph_input = None if existing.values and existing.next else {"task_id": task_id}
    started = time.monotonic()
    try:
        outcome = await drive(method, context, thread_id, checkpointer, graph_input)
    except Exception as exc:  # noqa: BLE001 - one task's failure must not end the evaluation
        return row_for(method, context, task_id, thread_id, {}, time.monotonic() - started,
                       error=f"{type(exc).__name__}: {exc}")
    return row_for(method, context, task_id, thread_id, outcome.state, time.monotonic() - started)


async def evaluate(
    method: str,
    context: Context,
    task_ids: list[str],
    results_path: Path,
    checkpointer: BaseCheckpointSaver,
    concurrency: int = 4,
    on_row: Callable[[dict[str, Any]], None] | None = None,
) -> Summary:
    """Evaluate ``task_ids``, skipping those already in the results file; returns the summary
    over every row of the requested tasks."""
    method = canonical(method)
    results = ResultsFile(results_path)
    done = finished_tasks(results_path)
    todo = [t for t in task_ids if t not in done]
    gate = asyncio.Semaphore(max(1, concurrency))

    async def worker(task_id: str) -> None:
        async with gate:
            row = await run_one(method, context, task_id, checkpointer)
        await results.append(row)
        if on_row is not None:
            on_row(row)

    await asyncio.gather(*(worker(t) for t in todo))
    wanted = set(task_ids)
    latest: dict[str, dict[str, Any]] = {}
    for row in read_rows(results_path):
        if row.get("task_id") in wanted:
            latest[row["task_id"]] = row
    return summarize(list(latest.values()))
