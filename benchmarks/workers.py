"""Tasks per minute of ``introspect eval`` in one process vs ``--workers N``, on the same machine.

Two CPU-heavy workloads with scripted models (no model latency: what is measured is the
framework, the env and the checkpointer): AutoPlan on ALFWorld games (each a walk of 12
place-to-place moves through the TextWorld engine; ``benchmarks.workloads.autoplan_alfworld``)
and Structured Reflection on MiniWoB++ click-tab-2 seeds in Chromium (tab switches over stages
and a second trial; ``benchmarks.workloads.structured_reflection``). Each configuration is the
``introspect eval`` command as a user runs it, in a fresh process with a fresh SQLite checkpoint
file, timed wall to wall (so interpreter start, imports and, per worker, its own env start-up
count): one process with ``--concurrency C``, then ``--workers N --concurrency C/N`` (the same
number of tasks in flight), then ``--server URL --concurrency C`` against ``langgraph dev`` on
this machine (the in-memory LangGraph API server, started once beforehand and not timed: its runs
share its one process). Every row must be error-free, or the figure is not reported.

The machine is shared: the load averages before and after each measurement are written with it.

Usage: .venv/bin/python benchmarks/workers.py [--alfworld 12] [--miniwob 8] [--workers 2] [--concurrency 4]
       [--no-server] [--small]
Writes benchmarks/results/workers.json.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.machine import load_report, parse_args, write_report  # noqa: E402
from benchmarks.workloads import Workload, autoplan_alfworld, structured_reflection  # noqa: E402


def settings(workload: Workload) -> list[str]:
    out = []
    for key, value in workload.settings.items():
        out += ["--set", f"{key}={json.dumps(value)}"]
    return out


def measure(workload: Workload, tasks: list[str], folder: Path, label: str, extra: list[str]) -> dict[str, Any]:
    """One ``introspect eval`` of ``tasks``: wall seconds, tasks per minute, the rows' errors."""
    results = folder / f"{label}.jsonl"
    command = [
        sys.executable,
        "-m",
        "introspect.cli",
        "eval",
        workload.method,
        "--env",
        workload.env,
        "--tasks",
        ",".join(tasks),
        "--model",
        workload.script(folder),
        *settings(workload),
        *([] if "--server" in extra else ["--checkpoint", f"sqlite:///{folder / (label + '.sqlite')}"]),
        "--results",
        str(results),
        *extra,
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "INTROSPECT_HOME": str(folder / "home")}
    before = load_report()
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    rows = [json.loads(line) for line in results.read_text().splitlines()] if results.exists() else []
    errors = [row["error"] for row in rows if row.get("error")]
    if done.returncode != 0 or errors or len(rows) != len(tasks):
        raise SystemExit(
            f"{label}: exit {done.returncode}, {len(rows)} rows, errors {errors[:3]}\n{done.stderr[-2000:]}"
        )
    return {
        "label": label,
        "options": extra,
        "tasks": len(tasks),
        "wall_seconds": round(seconds, 2),
        "tasks_per_minute": round(len(tasks) * 60 / seconds, 2),
        "mean_steps": round(sum(r["steps"] for r in rows) / len(rows), 2),
        "load_before": before,
        "load_after": load_report(),
    }


def compare(workload: Workload, tasks: list[str], workers: int, concurrency: int, server: str | None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        runs = [
            measure(workload, tasks, folder, "local", ["--concurrency", str(concurrency)]),
            measure(
                workload,
                tasks,
                folder,
                f"workers{workers}",
                ["--workers", str(workers), "--concurrency", str(max(1, concurrency // workers))],
            ),
        ]
        if server:
            runs.append(
                measure(workload, tasks, folder, "server", ["--server", server, "--concurrency", str(concurrency)])
            )
    return {
        "workload": workload.name,
        "env": workload.env,
        "runs": runs,
        "speedup": {run["label"]: round(runs[0]["wall_seconds"] / run["wall_seconds"], 2) for run in runs[1:]},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--alfworld", type=int, default=12, help="ALFWorld games")
    parser.add_argument("--miniwob", type=int, default=8, help="MiniWoB click-tab-2 seeds (0: skip MiniWoB)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=4, help="tasks in flight in all")
    parser.add_argument("--no-server", action="store_true", help="skip the langgraph dev measurement")
    # small: one ALFWorld game each way (one process, workers, server); MiniWoB's comparison is the
    # same code on another workload, and its Chromium per worker costs a CI minute
    args = parse_args(parser, small={"alfworld": 1, "miniwob": 0, "concurrency": 2})
    with contextlib.ExitStack() as stack:
        server = None
        if not args.no_server:
            from tests.support.studio import langgraph_dev  # the tests' starter: offline flags, a free port

            server, _ = stack.enter_context(langgraph_dev(Path(stack.enter_context(tempfile.TemporaryDirectory()))))
        run(args, server)


def run(args: argparse.Namespace, server: str | None) -> None:

    from envs import make_env

    games = make_env("alfworld").task_ids("valid_unseen")[: args.alfworld]
    seeds = [f"click-tab-2/{seed}" for seed in range(args.miniwob)]
    comparisons = [(autoplan_alfworld(), games), (structured_reflection(), seeds)]
    report = {
        "machine": load_report(),
        "workers": args.workers,
        "concurrency": args.concurrency,
        "server": "langgraph dev (in-memory runtime) on this machine" if server else None,
        "comparisons": [
            compare(workload, tasks, args.workers, args.concurrency, server) for workload, tasks in comparisons if tasks
        ],
    }
    for comparison in report["comparisons"]:
        for run in comparison["runs"]:
            print(
                f"{comparison['workload']:<22} {run['label']:<9} {run['tasks']} tasks  {run['wall_seconds']:7.1f} s  "
                f"{run['tasks_per_minute']:6.1f} tasks/min  (load {run['load_before']['load_1m']} -> "
                f"{run['load_after']['load_1m']})"
            )
        for label, speedup in comparison["speedup"].items():
            print(f"{comparison['workload']:<22} {label} vs local: x{speedup}")
    write_report("workers", report, args.small)


if __name__ == "__main__":
    main()
