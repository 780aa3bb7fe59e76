"""Tasks per minute of one evaluation run four ways, and how fast a deployment takes up the runs
of a worker that died.

The evaluation: LASER on WebShop's synthetic tasks with a scripted model whose every call takes
1 s (``--delay``), so the figures show orchestration (queueing, checkpoints, streaming), not CPU.
It runs locally (``introspect eval``, SQLite), on ``langgraph dev`` (the in-memory server), and on
a deployment (``introspect serve`` on Postgres and Redis, tests.support.deployment) with one
worker and with two, each with the same number of tasks in flight. Each is timed wall to wall as
a user runs it (a fresh ``introspect eval`` process); servers are started beforehand, untimed.

Take-up: with two workers, a run-heavy evaluation is started, the worker with runs in flight is
killed with SIGKILL, and the time from the kill to the first of its runs starting again on the
other worker (its ``run_attempt`` 2 record) is measured, with the heartbeat given (``--heartbeat``;
the server sweeps runs whose heartbeat lapsed, about two intervals).

Needs INTROSPECT_TEST_POSTGRES (a Postgres the benchmark may create databases in), redis-server
and the server extra. The machine is shared: load averages are written with the figures.

Usage: .venv/bin/python benchmarks/deployment.py [--tasks 24] [--concurrency 8] [--delay 1.0] [--heartbeat 2]
       [--take-up-tasks 12] [--deployments 1,2] [--ways local,dev,serve] [--small]
Writes benchmarks/results/deployment.json.
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.machine import load_report, parse_args, write_report  # noqa: E402
from introspect.evaluate import read_rows  # noqa: E402
from tests.graphs.laser_scripts import paging_script  # noqa: E402
from tests.support.deployment import Deployment, deployment  # noqa: E402
from tests.support.studio import langgraph_dev  # noqa: E402

WAYS = ("local", "dev", "serve")  # introspect eval locally, on langgraph dev, on introspect serve


def eval_command(spec: str, tasks: list[str], results: Path, concurrency: int, where: list[str]) -> list[str]:
    return [
        sys.executable,
        "-m",
        "introspect.cli",
        "eval",
        "laser",
        "--tasks",
        ",".join(tasks),
        "--model",
        spec,
        "--set",
        "max_actions=2",
        "--set",
        "backup=false",
        "--concurrency",
        str(concurrency),
        "--results",
        str(results),
        *where,
    ]


def timed(label: str, command: list[str], results: Path) -> dict[str, Any]:
    started = time.monotonic()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    seconds = time.monotonic() - started
    rows = read_rows(results) if results.exists() else []
    errors = sum(1 for r in rows if r.get("error"))
    if done.returncode != 0 or errors or not rows:
        raise SystemExit(f"{label}: exit {done.returncode}, {errors} error rows\n{done.stderr[-2000:]}")
    figure = {"label": label, "tasks": len(rows), "seconds": round(seconds, 2)}
    figure["tasks_per_minute"] = round(60 * len(rows) / seconds, 1)
    print(f"{label:34} {figure['tasks']:3} tasks  {seconds:7.1f} s  {figure['tasks_per_minute']:6.1f} tasks/min")
    return figure


def take_up(served: Deployment, spec: str, tasks: list[str], folder: Path, concurrency: int) -> dict[str, Any]:
    """Seconds from a worker's SIGKILL to its first run starting again elsewhere."""
    victim, survivor = served.workers
    command = eval_command(spec, tasks, folder / "takeup.jsonl", concurrency, ["--server", served.url])
    client = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while victim.in_flight() == 0:
        time.sleep(0.1)
    time.sleep(1.5)
    orphans = {r.get("run_id") for r in victim.records() if r.get("event") == "Starting background run"}
    killed_at = time.monotonic()
    victim.kill(signal.SIGKILL)
    taken = None
    while taken is None and time.monotonic() - killed_at < 300:
        again = [
            r
            for r in survivor.records()
            if r.get("event") == "Starting background run" and r.get("run_id") in orphans and r.get("run_attempt") == 2
        ]
        if again:
            taken = time.monotonic() - killed_at
        time.sleep(0.05)
    # measured: the client is stopped, not waited for (it streams from the killed worker, whose
    # URL answers no more, and gave up only after a minute of retries)
    client.terminate()
    client.wait(timeout=60)
    print(f"take-up after SIGKILL (heartbeat {served.heartbeat:g} s): {taken:.1f} s" if taken else "not taken up")
    return {"heartbeat_s": served.heartbeat, "seconds_to_take_up": round(taken, 2) if taken else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=24)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--delay", type=float, default=1.0, help="seconds per scripted model call")
    parser.add_argument("--heartbeat", type=float, default=2.0)
    parser.add_argument("--take-up-tasks", type=int, default=12, help="tasks in flight when a worker is killed")
    parser.add_argument("--deployments", default="1,2", help="worker counts of the deployments, comma-separated")
    parser.add_argument("--ways", default=",".join(WAYS), help=f"which of {', '.join(WAYS)} to time, comma-separated")
    # small: one task on one deployment (two workers: serve and the take-up both run), the way
    # only this benchmark runs (local and langgraph dev evaluations run in the tests); the model's
    # delay stays, so that a run is in flight when the worker is killed
    small = {"tasks": 1, "concurrency": 1, "take_up_tasks": 2, "deployments": "2", "ways": "serve"}
    args = parse_args(parser, small=small)
    ways = set(args.ways.split(","))
    if not ways <= set(WAYS):
        parser.error(f"--ways: unknown {', '.join(sorted(ways - set(WAYS)))} (known: {', '.join(WAYS)})")
    report: dict[str, Any] = {"before": load_report(), "delay_s": args.delay, "concurrency": args.concurrency}
    figures = []
    with ExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        spec = paging_script(folder / "script.jsonl", delay=args.delay)
        batch = [f"synthetic-{i}" for i in range(1000, 1000 + args.tasks)]

        def run(label: str, where: list[str], offset: int) -> None:
            tasks = [f"synthetic-{int(t.split('-')[1]) + offset}" for t in batch]  # fresh threads each time
            results = folder / f"{label.replace(' ', '_')}.jsonl"
            figures.append(timed(label, eval_command(spec, tasks, results, args.concurrency, where), results))

        if "local" in ways:
            run("local (SQLite)", ["--checkpoint", f"sqlite:///{folder / 'local.sqlite'}"], 0)
        if "dev" in ways:
            with langgraph_dev(folder) as (url, _):
                run("langgraph dev", ["--server", url], 100)
        for workers in [int(count) for count in args.deployments.split(",")] if "serve" in ways else []:
            offset = 100 + 100 * workers
            (folder / f"d{workers}").mkdir()
            with deployment(
                folder / f"d{workers}", workers=workers, jobs=args.concurrency, heartbeat=args.heartbeat
            ) as d:
                run(f"introspect serve x{workers} (Postgres+Redis)", ["--server", d.url], offset)
                if workers == 2:
                    orphans = [f"synthetic-{i}" for i in range(2000, 2000 + args.take_up_tasks)]
                    report["take_up"] = take_up(d, spec, orphans, folder, args.take_up_tasks)
    report["figures"] = figures
    write_report("deployment", report, args.small)


if __name__ == "__main__":
    main()
