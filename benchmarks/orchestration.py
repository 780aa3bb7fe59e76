"""What the framework costs per graph step, for every method: the graph with the SQLite
checkpointer against a plain loop doing the same env and model calls, in one process.

Each method's long workload (benchmarks/workloads.py) runs once on its real env, which
records every env call and model call (benchmarks/replay.py). Then, in alternation and
many times over (the order rotated every repetition, so a busy moment of the shared
machine hits every variant alike):

- ``loop_env``: the recorded env calls, answered by the canned env, nothing else;
- ``loop``: the same with the recorded model calls made through the same Caller and the
  same scripted model, in the recorded order (the baseline);
- ``graph_memory``: the run as users start it (``introspect.runner.drive``; AutoPlan training:
  ``introspect.training.train``), on the canned env, with the in-memory checkpointer;
- ``graph_sqlite``: the same with the SQLite checkpointer (one file for all runs);
- ``floor_memory`` and ``floor_sqlite``: LangGraph's own loop on the same machine, with the
  same state schema and checkpointer and as many steps, but one node that does nothing except
  write one field: what LangGraph and the saver cost per step before any of the framework's
  or the method's work. ``ours_ms_per_step`` is the framework's time above that floor.

The env is canned in all four: MiniWoB's and WebArena's browsers, ALFWorld's engine and
even WebShop's worker threads would add their own milliseconds and their noise to both
sides of a difference that is about one. Framework time per step = (graph_sqlite - loop) /
graph steps (the supersteps the run checkpointed), with medians over the repetitions;
the paired figure takes the median of the per-repetition differences instead. Both wall
time and CPU time (of the process and its threads) are reported: on a shared machine
wall time also counts waiting for the CPU, CPU time only the work. LASER is
also measured on the real WebShop env (``--real-webshop``), as the issue measured it.

Usage: .venv/bin/python benchmarks/orchestration.py [--runs 40] [--only laser,...] [--small]
Writes benchmarks/results/orchestration.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import replay, workloads  # noqa: E402
from benchmarks.machine import load_report, parse_args, write_report  # noqa: E402

VARIANTS = ("loop_env", "loop", "graph_memory", "graph_sqlite", "floor_memory", "floor_sqlite")


def graph_steps(db: Path, thread_id: str) -> int:
    """Supersteps a thread checkpointed (in every namespace: training's collections too)."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT metadata FROM checkpoints WHERE thread_id = ?", (thread_id,)).fetchall()
    return sum(1 for (metadata,) in rows if json.loads(metadata).get("source") == "loop")


def summary(times: dict[str, list[float]], steps: int) -> dict[str, Any]:
    """Medians per variant and the framework's share, per graph step, in milliseconds."""
    median = {name: statistics.median(values) for name, values in times.items()}
    paired = [(g - loop) for g, loop in zip(times["graph_sqlite"], times["loop"])]
    return {
        "per_step_ms": {name: round(1000 * value / steps, 3) for name, value in median.items()},
        "framework_ms_per_step": round(1000 * (median["graph_sqlite"] - median["loop"]) / steps, 3),
        "framework_ms_per_step_paired": round(1000 * statistics.median(paired) / steps, 3),
        "graph_sqlite_over_loop": round(median["graph_sqlite"] / median["loop"], 2),
        "checkpointing_ms_per_step": round(1000 * (median["graph_sqlite"] - median["graph_memory"]) / steps, 3),
        "langgraph_floor_ms_per_step": round(1000 * median["floor_sqlite"] / steps, 3),
        "ours_ms_per_step": round(1000 * (median["graph_sqlite"] - median["loop"] - median["floor_sqlite"]) / steps, 3),
    }


def floor_graph(schema: type, steps: int, checkpointer: Any) -> Any:
    """LangGraph's loop over ``schema`` for ``steps`` supersteps: one async node writing one
    field (``actions``, which every method's state has), routed back to itself by a coroutine
    (a plain function would run in a worker thread) until the count is reached."""
    from langgraph.graph import END, START, StateGraph

    async def step(state: dict[str, Any]) -> dict[str, Any]:
        return {"actions": int(state.get("actions") or 0) + 1}

    async def again(state: dict[str, Any]) -> str:
        return END if int(state.get("actions") or 0) >= steps else "step"

    builder: Any = StateGraph(schema)
    builder.add_node("step", step)
    builder.add_edge(START, "step")
    builder.add_conditional_edges("step", again, ["step", END])
    return builder.compile(checkpointer=checkpointer)


async def alternate(
    variants: dict[str, Callable[[int], Awaitable[Any]]], runs: int
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Wall and CPU seconds (this process, all its threads) of every run of every variant.
    CPU time is what the work costs whatever else the machine runs; wall time adds the
    waiting (for a thread to be scheduled, for the loop to wake), which grows with load."""
    wall: dict[str, list[float]] = {name: [] for name in variants}
    cpu: dict[str, list[float]] = {name: [] for name in variants}
    names = list(variants)
    for rep in range(runs):
        for name in names[rep % len(names) :] + names[: rep % len(names)]:
            started, started_cpu = time.perf_counter(), time.process_time()
            await variants[name](rep)
            wall[name].append(time.perf_counter() - started)
            cpu[name].append(time.process_time() - started_cpu)
    return wall, cpu


async def measure(workload: workloads.Workload, runs: int, folder: Path, real_env: bool = False) -> dict[str, Any]:
    from langgraph.checkpoint.memory import InMemorySaver

    from graphs import method_named
    from introspect.checkpoint import open_checkpointer
    from nodes.runtime.llm import model_for

    spec = workload.script(folder)
    recorded = InMemorySaver()
    with replay.recording(workload.env) as log:
        await workloads.run(workload, spec, recorded, "record", folder)
    steps = sum(1 for item in recorded.list(None) if (item.metadata or {}).get("source") == "loop")
    schema = method_named(workload.method).graph.builder.state_schema
    scripted = model_for(spec, None, 512)
    db = folder / f"{workload.name}{'-real' if real_env else ''}.sqlite"
    runs_started = iter(range(10**9))  # every run gets a thread of its own
    async with open_checkpointer(f"sqlite:///{db}") as saver:

        async def graph(rep: int, checkpointer: Any, tag: str) -> None:
            scripted.calls.clear()  # the scripted model records every call: keep the runs alike
            if not real_env:
                replay.rewind()
            await workloads.run(workload, spec, checkpointer, f"{tag}-{next(runs_started)}", folder)

        async def loop(rep: int, model_calls: bool) -> None:
            scripted.calls.clear()
            await replay.plain_loop(log, model_calls=model_calls, real_env=workload.env if real_env else "")

        async def floor(checkpointer: Any, tag: str) -> None:
            config = {"configurable": {"thread_id": f"{tag}-{next(runs_started)}"}, "recursion_limit": steps + 10}
            await floor_graph(schema, steps, checkpointer).ainvoke({"actions": 0}, config)

        variants = {
            "loop_env": lambda rep: loop(rep, False),
            "loop": lambda rep: loop(rep, True),
            "graph_memory": lambda rep: graph(rep, InMemorySaver(), "memory"),
            "graph_sqlite": lambda rep: graph(rep, saver, "sqlite"),
            "floor_memory": lambda rep: floor(InMemorySaver(), "floor-memory"),
            "floor_sqlite": lambda rep: floor(saver, "floor-sqlite"),
        }
        if real_env:
            await alternate(variants, 2)  # warm: catalogue, index, POS tagger
            wall, cpu = await alternate(variants, runs)
        else:
            with replay.canned(workload.env, log):
                await alternate(variants, 2)
                wall, cpu = await alternate(variants, runs)
    with sqlite3.connect(db) as conn:
        last = conn.execute(
            "SELECT thread_id FROM checkpoints WHERE thread_id LIKE 'sqlite-%' ORDER BY rowid DESC LIMIT 1"
        ).fetchone()[0]
    if (taken := graph_steps(db, last)) != steps:
        raise SystemExit(f"{workload.name}: the run took {taken} steps, the recorded one {steps}")
    return {"steps": steps, "wall": summary(wall, steps), "cpu": summary(cpu, steps)}


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--only", help="comma-separated workload names")
    parser.add_argument("--real-webshop", action="store_true", help="also LASER on the real WebShop env")
    args = parse_args(parser, small={"runs": 1, "only": "laser"})
    wanted = set(args.only.split(",")) if args.only else None
    report: dict[str, Any] = {"runs": args.runs, "machine_before": load_report()}
    with tempfile.TemporaryDirectory() as tmp:
        for workload in await workloads.all_workloads():
            if wanted and workload.name not in wanted:
                continue
            report[workload.name] = result = await measure(workload, args.runs, Path(tmp))
            print(f"{workload.name:<22} " + "  ".join(f"{k}={v}" for k, v in result.items()), flush=True)
            if args.real_webshop and workload.name == "laser":
                report["laser_real_webshop"] = result = await measure(workload, args.runs, Path(tmp), real_env=True)
                print(f"{'laser (real WebShop)':<22} " + "  ".join(f"{k}={v}" for k, v in result.items()), flush=True)
    from envs.browser import close_browser

    await close_browser()
    write_report("orchestration", report, args.small)


if __name__ == "__main__":
    asyncio.run(main())
