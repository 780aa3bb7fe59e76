"""How fast the embedded model (``--model local``: SmolLM2-135M-Instruct on llama.cpp) runs LASER.

For each configuration, with the prefix cache on and off (``INTROSPECT_LOCAL_PREFIX_CACHE``,
``--prefix-cache``) at 1, 2 and 4 slots (``INTROSPECT_LOCAL_SLOTS``), a fresh subprocess (the
servers are process-wide and read their settings when they start) starts the servers, then runs
as many LASER WebShop episodes at once as there are slots, through the documented Python API
(``build_graph`` with a SQLite checkpointer, ``LaserContext(model="local")``). From the
episodes' ``calls`` logs it reports:

- calls/s, prompt tokens/s and generated tokens/s over the wall time of the episodes together
  (prompt tokens as the server counts them: those its prefix cache resumed count too);
- each episode's wall time, and the share of it its model calls took (the calls' own ``seconds``;
  the rest is the graph, the env and the checkpointer);
- the servers' start time, apart.

A 135M model solves little: the episodes end at their step limit or with whatever they bought;
what matters here is time. ``--max-actions`` keeps the episodes short.

Usage: .venv/bin/python benchmarks/local_model.py [--max-actions 4] [--slots 1,2,4] [--small]
``--small`` (for CI): one configuration (1 slot, prefix cache on), one action, short replies.
Writes benchmarks/results/local_model.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.machine import load_report, parse_args, write_report  # noqa: E402


async def episodes(slots: int, max_actions: int, max_tokens: int) -> dict[str, Any]:
    """Start the servers, then run ``slots`` LASER WebShop episodes at once (in this process)."""
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    from graphs.laser import LaserContext, build_graph
    from nodes.runtime.calls import tokens
    from nodes.runtime.local import local_model

    started = time.perf_counter()
    await local_model("local").start()
    start_s = time.perf_counter() - started

    async def episode(graph: Any, index: int) -> dict[str, Any]:
        began = time.perf_counter()
        out = await graph.ainvoke(
            {"task_id": f"synthetic-{index}"},
            config={"configurable": {"thread_id": f"episode-{index}"}},
            context=LaserContext(model="local", env="webshop", max_actions=max_actions, max_tokens=max_tokens),
        )
        wall = time.perf_counter() - began
        calls = out.get("calls") or []
        used = [tokens(call) for call in calls]
        model_s = sum(float(call.get("seconds") or 0.0) for call in calls)
        return {
            "task_id": f"synthetic-{index}",
            "stop_reason": out.get("stop_reason"),
            "reward": out.get("reward"),
            "calls": len(calls),
            "unreadable": sum(1 for call in calls if call.get("unreadable")),
            "prompt_tokens": sum(i for i, _ in used),
            "generated_tokens": sum(o for _, o in used),
            "wall_s": round(wall, 2),
            "model_s": round(model_s, 2),
            "model_share": round(model_s / wall, 3) if wall else None,
        }

    with tempfile.TemporaryDirectory() as folder:
        async with AsyncSqliteSaver.from_conn_string(str(Path(folder) / "runs.sqlite")) as saver:
            graph = build_graph(checkpointer=saver)
            began = time.perf_counter()
            runs = await asyncio.gather(*(episode(graph, index) for index in range(slots)))
            wall = time.perf_counter() - began
    calls = sum(run["calls"] for run in runs)
    return {
        "start_s": round(start_s, 2),
        "wall_s": round(wall, 2),
        "calls_per_s": round(calls / wall, 3),
        "prompt_tokens_per_s": round(sum(run["prompt_tokens"] for run in runs) / wall, 1),
        "generated_tokens_per_s": round(sum(run["generated_tokens"] for run in runs) / wall, 1),
        "episode_wall_s": round(statistics.median(run["wall_s"] for run in runs), 2),
        "model_share": round(statistics.median(run["model_share"] or 0.0 for run in runs), 3),
        "episodes": runs,
    }


def configuration(slots: int, prefix_cache: bool, max_actions: int, max_tokens: int, timeout: float) -> dict[str, Any]:
    """One configuration in a fresh process (its servers start with these settings and end with it)."""
    environ = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "INTROSPECT_LOCAL_SLOTS": str(slots),
        "INTROSPECT_LOCAL_PREFIX_CACHE": "1" if prefix_cache else "0",
    }
    command = [sys.executable, __file__, "--child", str(slots), "--max-actions", str(max_actions)]
    command += ["--max-tokens", str(max_tokens)]
    result: dict[str, Any] = {"slots": slots, "prefix_cache": prefix_cache, "machine_before": load_report()}
    try:
        done = subprocess.run(command, cwd=ROOT, env=environ, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {**result, "error": f"timed out after {timeout:.0f} s"}
    if done.returncode != 0:
        return {**result, "error": (done.stderr.strip().splitlines() or ["no output"])[-1]}
    return {**result, **json.loads(done.stdout.strip().splitlines()[-1]), "machine_after": load_report()}


COLUMNS = (
    "slots",
    "prefix_cache",
    "start_s",
    "calls_per_s",
    "prompt_tokens_per_s",
    "generated_tokens_per_s",
    "episode_wall_s",
    "model_share",
)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--slots", default="1,2,4", help="slot counts, comma-separated")
    parser.add_argument("--max-actions", type=int, default=4, help="LASER's step limit per episode")
    parser.add_argument("--max-tokens", type=int, default=512, help="the longest reply per call")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per configuration")
    parser.add_argument("--prefix-cache", default="on,off", help="the prefix cache's settings, comma-separated")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)  # run one configuration here
    args = parse_args(parser, small={"slots": "1", "prefix_cache": "on", "max_actions": 1, "max_tokens": 16})
    if args.child:
        print(json.dumps(asyncio.run(episodes(args.child, args.max_actions, args.max_tokens))))
        return
    caches = [setting.strip() == "on" for setting in args.prefix_cache.split(",")]
    plan = [(int(slots), cache) for cache in caches for slots in args.slots.split(",")]
    report: dict[str, Any] = {
        "max_actions": args.max_actions,
        "max_tokens": args.max_tokens,
        "machine_before": load_report(),
        "configurations": [],
    }
    widths = {name: max(12, len(name)) for name in COLUMNS}
    print("  ".join(f"{name:>{widths[name]}}" for name in COLUMNS))
    for slots, cache in plan:
        row = configuration(slots, cache, args.max_actions, args.max_tokens, args.timeout)
        report["configurations"].append(row)
        if "error" in row:
            print(f"{slots:>12}  {cache!s:>12}  {row['error']}")
        else:
            print("  ".join(f"{row[name]!s:>{widths[name]}}" for name in COLUMNS))
        report["machine_after"] = load_report()
        write_report("local_model", report, args.small)  # a stopped run keeps its rows


if __name__ == "__main__":
    main()
