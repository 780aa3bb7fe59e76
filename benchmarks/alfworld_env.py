"""How fast the ALFWorld env is on the shipped games: load, reset, step, refused step, restore.

Measured per game (the 30 valid_unseen games by default): the first reset (game load: PDDL
translation + engine set-up), a second reset of the same game (translation cached), an
admissible step (``look``), a refused step (``take nothing 1 from nowhere 1``: augmented
feedback from the game facts) and a restore of a 10-action snapshot on a fresh env (reset +
replay). The process's peak RSS is read at the end (each env keeps a private copy of
fast-downward's library mapped), with the machine's load average before and after, since
other work on the machine slows every figure.
Usage: .venv/bin/python benchmarks/alfworld_env.py [--games 30] [--small]
Writes benchmarks/results/alfworld_env.json.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.machine import parse_args, write_report  # noqa: E402
from envs import make_env  # noqa: E402


async def timed(call) -> float:  # noqa: ANN001 - any awaitable factory
    start = time.perf_counter()
    await call()
    return time.perf_counter() - start


async def measure(task_id: str) -> dict[str, float]:
    env = make_env("alfworld")
    figures = {"first_reset": await timed(lambda: env.reset(task_id))}
    figures["second_reset"] = await timed(lambda: env.reset(task_id))
    figures["step"] = await timed(lambda: env.step("look"))
    figures["refused_step"] = await timed(lambda: env.step("take nothing 1 from nowhere 1"))
    obs = await env.reset(task_id)
    for command in (obs.info["admissible_commands"] * 10)[:10]:
        await env.step(command)
    snap = await env.snapshot()
    fresh = make_env("alfworld")
    figures["restore_10_actions_fresh_env"] = await timed(lambda: fresh.restore(snap))
    await fresh.close()
    await env.close()
    return figures


def summary(values: list[float]) -> dict[str, float]:
    return {"median_s": round(statistics.median(values), 4), "max_s": round(max(values), 4)}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=30)
    args = parse_args(parser, small={"games": 1})
    tasks = make_env("alfworld").task_ids("valid_unseen")[: args.games]
    load_before = os.getloadavg()[0]
    rows = [await measure(task) for task in tasks]
    result = {
        "games": len(rows),
        "cpus": os.cpu_count(),
        "load_average_1min": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        **{key: summary([row[key] for row in rows]) for key in rows[0]},
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }
    for key, value in result.items():
        print(f"{key:<30} {value}")
    write_report("alfworld_env", result, args.small)


if __name__ == "__main__":
    asyncio.run(main())
