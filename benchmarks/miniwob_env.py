"""How fast and how big the MiniWoB++ env is, over paper 002's 43 tasks (seed 0 by default).

Measured per task, in this order: a reset onto a new task (a fresh browser context), a reset onto
the same task (a new trial: the page is reloaded in its context), a keyboard step (``press TAB``),
the observation read alone, a typing step (``enter "hello world" to id=N`` on the first text field,
when the screen has one), a click step (the first id on the screen; it may end the episode; a
click the env refuses, e.g. on an element that is not rendered, is timed apart as
``step_click_refused``), and a restore from the snapshot (reset + replay of those actions) on a
second env. Chromium's memory is read from /proc (RSS summed over its processes, and PSS, which
splits shared pages) with one env open and with ``--concurrent`` envs open at once; the cold
browser launch is timed once.

Wall-clock figures on a shared machine are noisy: ``--rounds`` repeats the sweep and the figures
are medians and 95th percentiles over every round. Everything is printed and written to
benchmarks/results/miniwob_env.json with the machine's load average before and after.
Usage: .venv/bin/python benchmarks/miniwob_env.py [--seeds 1] [--rounds 3] [--concurrent 4] [--tasks 43] [--small]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.machine import parse_args, write_report  # noqa: E402
from envs import browser  # noqa: E402
from envs.miniwob import MiniWoBEnv  # noqa: E402

KINDS = (
    "reset_new_task",
    "reset_same_task",
    "step_press",
    "observe",
    "step_type",
    "step_click",
    "step_click_refused",
    "restore",
)
TEXT_FIELD = re.compile(r'^<(?:input id=(\d+) type="(?:text|password|search|email)"|textarea id=(\d+))', re.M)


async def atimed(coro):
    started = time.perf_counter()
    value = await coro
    return value, time.perf_counter() - started


def summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {
        "n": len(values),
        "median_ms": statistics.median(values) * 1000,
        "p95_ms": p95 * 1000,
        "max_ms": ordered[-1] * 1000,
    }


async def task_latencies(
    env: MiniWoBEnv, replica: MiniWoBEnv, task_ids: list[str], kinds: dict[str, list[float]]
) -> None:
    for task_id in task_ids:
        _, t = await atimed(env.reset(task_id))
        kinds["reset_new_task"].append(t)
        _, t = await atimed(env.reset(task_id))
        kinds["reset_same_task"].append(t)
        res, t = await atimed(env.step("press TAB"))
        kinds["step_press"].append(t)
        obs, t = await atimed(env.observe())
        kinds["observe"].append(t)
        field = TEXT_FIELD.search(obs.text)
        if field and not res.done:
            res, t = await atimed(env.step(f'enter "hello world" to id={field[1] or field[2]}'))
            kinds["step_type"].append(t)
        ids = res.observation.info["ids"]
        if ids and not res.done:
            res, t = await atimed(env.step(f"click id={ids[0]}"))
            kinds["step_click" if res.valid else "step_click_refused"].append(t)
        snap = await env.snapshot()
        _, t = await atimed(replica.restore(snap))
        kinds["restore"].append(t)


async def concurrent_memory(task_ids: list[str], count: int) -> dict[str, int]:
    envs = [MiniWoBEnv() for _ in range(count)]
    try:
        await asyncio.gather(*(e.reset(t) for e, t in zip(envs, task_ids)))
        return browser.browser_memory_bytes()
    finally:
        await asyncio.gather(*(e.close() for e in envs))


def commit() -> str:
    try:
        return subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


async def main(seeds: int, rounds: int, concurrent: int, tasks: int) -> dict:
    load_before = os.getloadavg()
    _, launch_s = await atimed(browser.get_browser())
    idle = browser.browser_memory_bytes()
    env, replica = MiniWoBEnv(), MiniWoBEnv()
    wanted = {task.split("/")[0] for task in env.task_ids("paper-43")[:tasks]}
    task_ids = [task for task in env.task_ids(f"paper-43@{seeds}") if task.split("/")[0] in wanted]
    kinds: dict[str, list[float]] = {k: [] for k in KINDS}
    started = time.perf_counter()
    for _ in range(rounds):
        await task_latencies(env, replica, task_ids, kinds)
    total_s = time.perf_counter() - started
    await replica.close()
    one_env = browser.browser_memory_bytes()
    await env.close()
    many = await concurrent_memory(task_ids, concurrent)
    await browser.close_browser()
    mib = 1024 * 1024

    def mem(m: dict[str, int]) -> dict[str, float]:
        return {"rss": m["rss"] / mib, "pss": m["pss"] / mib, "processes": m["processes"]}

    return {
        "commit": commit(),
        "tasks": len(task_ids),
        "seeds_per_task": seeds,
        "rounds": rounds,
        "chromium": browser.chromium_path(),
        "browser_launch_ms": launch_s * 1000,
        "latency": {kind: summary(values) for kind, values in kinds.items() if values},
        "suite_wall_s": total_s,
        "memory_mib": {
            "idle_browser": mem(idle),
            "one_env_open": mem(one_env),
            f"{concurrent}_envs_open": mem(many),
        },
        "load_average_before": load_before,
        "load_average_after": os.getloadavg(),
        "cpus": os.cpu_count(),
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--concurrent", type=int, default=4)
    parser.add_argument("--tasks", type=int, default=43, help="the first N of the paper's tasks")
    args = parse_args(parser, small={"tasks": 2, "concurrent": 1})
    if min(args.seeds, args.rounds, args.concurrent, args.tasks) < 1:
        parser.error("--seeds, --rounds, --concurrent and --tasks must be at least 1")
    results = asyncio.run(main(args.seeds, args.rounds, args.concurrent, args.tasks))
    launch = results["browser_launch_ms"]
    print(
        f"MiniWoB env over {results['tasks']} task ids x {results['rounds']} rounds "
        f"(commit {results['commit']}), browser launch {launch:.0f} ms"
    )
    for kind, s in results["latency"].items():
        print(f"  {kind:18s} n={s['n']:3d}  median {s['median_ms']:7.1f} ms  p95 {s['p95_ms']:7.1f} ms")
    for label, m in results["memory_mib"].items():
        print(
            f"  memory {label:14s} RSS {m['rss']:7.1f} MiB  PSS {m['pss']:7.1f} MiB  ({m['processes']:.0f} processes)"
        )
    print(
        f"  load average {results['load_average_before']} -> {results['load_average_after']} on {results['cpus']} CPUs"
    )
    write_report("miniwob_env", results, args.small)
