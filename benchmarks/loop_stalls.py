"""How long a process's event loop is held by one piece of work during its first tasks.

Every run on a loop waits while one callback holds it, and in a LangGraph server so do the
heartbeats that keep a worker's runs its own: a worker that does not renew them for 1.5
heartbeats loses its runs to another worker while it still runs them (docs/checkpoints-and-scale.md).
The first tasks of a fresh process are where one-off work hides (imports, building the model
client), so each run here is a fresh process that does what a server worker does: import the
graphs, then run LASER tasks at once on one loop against the OpenAI-compatible stub (in its own
process), in asyncio's debug mode, which reports every callback that holds the loop for longer
than ``--threshold`` seconds.

Reports the longest hold per process, from the graphs imported to the tasks' end, and where it
was; the number of holds over the threshold; and how long the tasks took.

Usage: .venv/bin/python benchmarks/loop_stalls.py [--runs 5] [--tasks 3] [--threshold 0.05] [--small]
Writes benchmarks/results/loop_stalls.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.concurrency import Stub  # noqa: E402 - the standard library only, as this module
from benchmarks.machine import load_report, parse_args, write_report  # noqa: E402


class Holds(logging.Handler):
    """asyncio's debug reports of a callback that held the loop: ``Executing HANDLE took S seconds``."""

    def __init__(self) -> None:
        super().__init__()
        self.held: list[tuple[float, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.msg.startswith("Executing") and len(record.args or ()) == 2:
            handle, seconds = record.args  # type: ignore[misc]
            where = re.search(r"coro=<(\S+) running at ([^\s>]+)>", str(handle))
            self.held.append((float(seconds), " at ".join(where.groups()) if where else str(handle)[:300]))


def child(tasks: list[str], threshold: float) -> None:
    """One fresh process: the graphs imported, then LASER on ``tasks`` at once; prints a JSON line."""
    started = time.perf_counter()
    from langgraph.checkpoint.memory import InMemorySaver

    import graphs.autoplan  # noqa: F401 - what a server worker imports before it serves
    import graphs.devils_advocate  # noqa: F401
    import graphs.laser
    import graphs.structured_reflection  # noqa: F401
    from nodes.laser.context import LaserContext

    imported = time.perf_counter() - started
    holds = Holds()
    logging.getLogger("asyncio").addHandler(holds)

    graph = graphs.laser.build_graph(InMemorySaver())
    context = LaserContext(model="openai:gpt-4o-mini", max_actions=2, backup=False)

    async def run() -> float:
        asyncio.get_running_loop().slow_callback_duration = threshold

        async def one(task: str) -> None:
            config: Any = {"configurable": {"thread_id": task}}
            async for _ in graph.astream({"task_id": task}, config, context=context, durability="sync"):
                pass

        begun = time.perf_counter()
        await asyncio.gather(*(one(task) for task in tasks))
        return time.perf_counter() - begun

    seconds = asyncio.run(run(), debug=True)
    longest = max(holds.held, default=(0.0, ""))
    print(
        json.dumps(
            {
                "graphs_import_s": round(imported, 2),
                "tasks_s": round(seconds, 2),
                "longest_hold_s": round(longest[0], 3),
                "longest_hold_where": longest[1],
                "holds": len(holds.held),
            }
        )
    )


def fresh_run(command: list[str], replies: dict[str, list[dict[str, Any]]], folder: Path) -> dict[str, Any]:
    """One fresh process's figures, against a fresh stub (each task's replies are used up)."""
    stub = Stub(replies, 0.2, folder)
    try:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "INTROSPECT_HOME": str(folder / "home")}
        env.update(OPENAI_BASE_URL=stub.base_url, OPENAI_API_KEY="sk-benchmark")
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    finally:
        stub.close()
    if done.returncode != 0:
        raise SystemExit(f"a run failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5, help="fresh processes")
    parser.add_argument("--tasks", type=int, default=3, help="LASER tasks at once in each")
    parser.add_argument("--threshold", type=float, default=0.05, help="seconds a hold must exceed to be reported")
    parser.add_argument("--child", help=argparse.SUPPRESS)  # the task ids of one fresh process
    if "--child" in sys.argv:
        args = parser.parse_args()
        child(args.child.split(","), args.threshold)
        return
    args = parse_args(parser, small={"runs": 1, "tasks": 1})
    # imported here, not at the top: a child process must start with nothing of the stack loaded
    from tests.graphs.laser_scripts import PAGING
    from tests.support.fault_injection import TASKS, instructions

    if not 1 <= args.tasks <= len(TASKS):
        parser.error(f"--tasks from 1 to {len(TASKS)}")
    report: dict[str, Any] = {
        "runs": args.runs,
        "tasks": args.tasks,
        "threshold_s": args.threshold,
        "machine_before": load_report(),
    }
    # each task's replies by its instruction (the stub finds a task's conversation by it): search,
    # think, next page, then the step cap ends the task
    replies = {goal: PAGING for goal in instructions()[: args.tasks]}
    command = [sys.executable, __file__, "--child", ",".join(TASKS[: args.tasks]), "--threshold", str(args.threshold)]
    with tempfile.TemporaryDirectory() as folder:
        runs = [fresh_run(command, replies, Path(folder)) for _ in range(args.runs)]
    longest = max(runs, key=lambda r: r["longest_hold_s"])
    report.update(
        longest_hold_median_s=round(statistics.median(r["longest_hold_s"] for r in runs), 3),
        longest_hold_max_s=longest["longest_hold_s"],
        longest_hold_where=longest["longest_hold_where"],
        holds_median=statistics.median(r["holds"] for r in runs),
        tasks_median_s=round(statistics.median(r["tasks_s"] for r in runs), 2),
        graphs_import_median_s=round(statistics.median(r["graphs_import_s"] for r in runs), 2),
        per_run=runs,
    )
    report["machine_after"] = load_report()
    for key, value in report.items():
        if key != "per_run":
            print(f"{key:<24} {value}")
    write_report("loop_stalls", report, args.small)


if __name__ == "__main__":
    main()
