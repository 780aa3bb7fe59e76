"""How fast and how big the MiniWoB++ env is, over paper 002's 43 tasks (seed 0 by default).

Measured per task: a reset onto a new task (a fresh browser context), a reset onto the same
task (a new trial: the page is reloaded in its context), a keyboard step (``press TAB``), a click
step (the first id on the screen; it may end the episode), the observation read alone, and a
restore from a snapshot (reset + replay) on a second env. Chromium's memory is read from /proc
(RSS summed over its processes, and PSS, which splits shared pages) with one env open and with
``--concurrent`` envs open at once. The cold browser launch is timed once. Every figure is
printed and written to benchmarks/results/miniwob_env.json, with the machine's load average
(the figures are wall-clock and shared machines slow them down).
Usage: .venv/bin/python benchmarks/miniwob_env.py [--seeds 1] [--concurrent 4]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from envs import browser  # noqa: E402
from envs.miniwob import MiniWoBEnv  # noqa: E402

KINDS = ("reset_new_task", "reset_same_task", "step_press", "step_click", "observe", "restore")


async def atimed(coro):
    started = time.perf_counter()
    value = await coro
    return value, time.perf_counter() - started


def summary(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"n": len(values), "median_ms": statistics.median(values) * 1000, "p95_ms": p95 * 1000,
            "max_ms": ordered[-1] * 1000}


async def task_latencies(env: MiniWoBEnv, replica: MiniWoBEnv, task_ids: list[str]) -> dict[str, list[float]]:
    kinds: dict[str, list[float]] = {k: [] for k in KINDS}
    for task_id in task_ids:
        _, t = await atimed(env.reset(task_id))
        kinds["reset_new_task"].append(t)
        obs, t = await atimed(env.reset(task_id))
        kinds["reset_same_task"].append(t)
        res, t = await atimed(env.step("press TAB"))
        kinds["step_press"].append(t)
        _, t = await atimed(env.observe())
        kinds["observe"].append(t)
        ids = res.observation.info["ids"]
        if ids and not res.done:
            _, t = await atimed(env.step(f"click id={ids[0]}"))
            kinds["step_click"].append(t)
        snap = await env.snapshot()
        _, t = await atimed(replica.restore(snap))
        kinds["restore"].append(t)
    return kinds


async def concurrent_memory(task_ids: list[str], count: int) -> dict[str, int]:
    envs = [MiniWoBEnv() for _ in range(count)]
    try:
        await asyncio.gather(*(e.reset(t) for e, t in zip(envs, task_ids)))
        return browser.browser_memory_bytes()
    finally:
        await asyncio.gather(*(e.close() for e in envs))


async def main(seeds: int, concurrent: int) -> dict:
    _, launch_s = await atimed(browser.get_browser())
    idle = browser.browser_memory_bytes()
    env, replica = MiniWoBEnv(), MiniWoBEnv()
    task_ids = env.task_ids(f"paper-43@{seeds}")
    started = time.perf_counter()
    kinds = await task_latencies(env, replica, task_ids)
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
        "tasks": len(task_ids),
        "seeds_per_task": seeds,
        "chromium": browser.chromium_path(),
        "browser_launch_ms": launch_s * 1000,
        "latency": {kind: summary(values) for kind, values in kinds.items() if values},
        "suite_wall_s": total_s,
        "memory_mib": {
            "idle_browser": mem(idle),
            "one_env_open": mem(one_env),
            f"{concurrent}_envs_open": mem(many),
        },
        "load_average": os.getloadavg(),
        "cpus": os.cpu_count(),
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--concurrent", type=int, default=4)
    args = parser.parse_args()
    results = asyncio.run(main(args.seeds, args.concurrent))
    launch = results["browser_launch_ms"]
    print(f"MiniWoB env over {results['tasks']} task ids, browser launch {launch:.0f} ms")
    for kind, s in results["latency"].items():
        print(f"  {kind:16s} n={s['n']:3d}  median {s['median_ms']:7.1f} ms  p95 {s['p95_ms']:7.1f} ms")
    for label, m in results["memory_mib"].items():
        print(f"  memory {label:14s} RSS {m['rss']:7.1f} MiB  PSS {m['pss']:7.1f} MiB"
              f"  ({m['processes']:.0f} processes)")
    print(f"  load average {results['load_average']} on {results['cpus']} CPUs")
    out = ROOT / "benchmarks" / "results" / "miniwob_env.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {out}")
