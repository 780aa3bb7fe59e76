"""Checkpoint bytes per graph step, for every method, in the SQLite checkpointer.

Each method runs a long scripted workload (benchmarks/workloads.py: 30 graph steps or
more on its own env) into a fresh SQLite file. For every step two sizes are read back:
the **checkpoint** (its row: the state snapshot and the metadata, what a checkpointer
stores again at every step, so what grows when state is re-serialised whole) and the
step's **writes** (what its tasks returned: the page it saw, the reply it got; these
depend on what happened at that step, not on how long the run has been). Reported: the
checkpoint at steps 1, 10 and 30 and its growth (step 30 over step 1), a step's total
(checkpoint and writes) at the same steps, the largest step, the run's total and the
file size (with its WAL) after the run. AutoPlan training is reported for its own thread
(the loop: sample, collect, score, reflect, plan) and, apart, for its collections (each
a subgraph with its own checkpoints).

Usage: .venv/bin/python benchmarks/checkpoint_growth.py [--only laser,devils_advocate] [--small]
Writes benchmarks/results/checkpoint_growth.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import workloads  # noqa: E402
from benchmarks.machine import load_report, parse_args, write_report  # noqa: E402

STEPS = (1, 10, 30)


def step_bytes(db: Path, namespace_prefix: str = "") -> dict[str, dict[int, tuple[int, int]]]:
    """Per checkpoint namespace (those starting with ``namespace_prefix``; "" is the thread's
    own), each step's (checkpoint row bytes, write bytes): {namespace: {step: (row, writes)}}.
    A step's writes are stored under its parent checkpoint."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT checkpoint_ns, parent_checkpoint_id, length(checkpoint) + length(metadata), metadata "
            "FROM checkpoints"
        ).fetchall()
        writes = dict(
            ((ns, cid), size)
            for ns, cid, size in conn.execute(
                "SELECT checkpoint_ns, checkpoint_id, sum(length(value)) FROM writes "
                "GROUP BY checkpoint_ns, checkpoint_id"
            )
        )
    out: dict[str, dict[int, tuple[int, int]]] = {}
    for ns, parent, size, metadata in rows:
        if not ns.startswith(namespace_prefix) or (namespace_prefix == "" and ns):
            continue
        step = int(json.loads(metadata).get("step", -1))
        out.setdefault(ns, {})[step] = (int(size), int(writes.get((ns, parent), 0)) if parent else 0)
    return out


def figures(sizes: dict[int, tuple[int, int]]) -> dict[str, Any]:
    row = {step: checkpoint for step, (checkpoint, _) in sizes.items()}
    total = {step: checkpoint + written for step, (checkpoint, written) in sizes.items()}
    growth = round(row[30] / row[1], 2) if row.get(30) and row.get(1) else None
    return {
        **{f"checkpoint_{n}": row.get(n) for n in STEPS},
        "checkpoint_growth": growth,
        **{f"step_{n}": total.get(n) for n in STEPS},
        "steps": max(sizes) + 1,
        "largest_checkpoint": max(row.values()),
        "largest_step": max(total.values()),
        "total": sum(total.values()),
    }


async def measure(workload: workloads.Workload, folder: Path) -> dict[str, Any]:
    from introspect.checkpoint import open_checkpointer

    db = folder / f"{workload.name}.sqlite"
    spec = workload.script(folder)
    async with open_checkpointer(f"sqlite:///{db}") as saver:
        await workloads.run(workload, spec, saver, "run", folder)
    file_bytes = sum(p.stat().st_size for p in folder.glob(f"{workload.name}.sqlite*"))
    result = {**figures(step_bytes(db)[""]), "sqlite_file_bytes": file_bytes}
    if workload.pool:  # training: its collections are subgraphs with their own checkpoints
        collections = [figures(sizes) for sizes in step_bytes(db, "collect:").values()]
        middle = len(collections) // 2
        result["collections"] = {
            "count": len(collections),
            **{f"checkpoint_{n}_median": sorted(c[f"checkpoint_{n}"] for c in collections)[middle] for n in (1, 10)},
            "largest_checkpoint": max(c["largest_checkpoint"] for c in collections),
            "steps": max(c["steps"] for c in collections),
        }
    return result


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", help="comma-separated workload names")
    args = parse_args(parser, small={})  # one run of each workload already
    wanted = set(args.only.split(",")) if args.only else None
    report: dict[str, Any] = {"machine_before": load_report()}
    with tempfile.TemporaryDirectory() as tmp:
        for workload in await workloads.all_workloads():
            if wanted and workload.name not in wanted:
                continue
            report[workload.name] = result = await measure(workload, Path(tmp))
            print(f"{workload.name:<22} " + "  ".join(f"{k}={v}" for k, v in result.items()), flush=True)
    from envs.browser import close_browser

    await close_browser()
    write_report("checkpoint_growth", report, args.small)


if __name__ == "__main__":
    asyncio.run(main())
