"""Checkpoint bytes per graph step, for every method, in the SQLite checkpointer.

Each method runs a long scripted workload (benchmarks/workloads.py: 30 graph steps or
more on its own env) into a fresh SQLite file. A step's bytes are what that step added
to the database: its checkpoint row (checkpoint and metadata blobs) plus the writes its
tasks stored (the rows keyed by the parent checkpoint). Reported at steps 1, 10 and 30,
the largest step, the total, and the file size (with its WAL) after the run.
AutoPlan training is reported for its own thread (the loop: sample, collect, score,
reflect, plan) and, apart, for its collections (each a subgraph with its checkpoints).

Usage: .venv/bin/python benchmarks/checkpoint_growth.py [--only laser,devils_advocate]
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
from benchmarks.machine import load_report  # noqa: E402

STEPS = (1, 10, 30)


def step_bytes(db: Path, namespace_prefix: str = "") -> dict[str, dict[int, int]]:
    """Per checkpoint namespace (those starting with ``namespace_prefix``; "" is the thread's
    own), the bytes each step added: {namespace: {step: bytes}}."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute(
            "SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id, length(checkpoint) + length(metadata), "
            "metadata FROM checkpoints").fetchall()
        writes = dict(((ns, cid), size) for ns, cid, size in conn.execute(
            "SELECT checkpoint_ns, checkpoint_id, sum(length(value)) FROM writes GROUP BY checkpoint_ns, checkpoint_id"))
    out: dict[str, dict[int, int]] = {}
    for ns, _, parent, size, metadata in rows:
        if not ns.startswith(namespace_prefix) or (namespace_prefix == "" and ns):
            continue
        step = int(json.loads(metadata).get("step", -1))
        out.setdefault(ns, {})[step] = int(size) + int(writes.get((ns, parent), 0) if parent else 0)
    return out


def figures(sizes: dict[int, int]) -> dict[str, Any]:
    at = {f"step_{n}": sizes.get(n) for n in STEPS}
    growth = round(sizes[30] / sizes[1], 2) if sizes.get(30) and sizes.get(1) else None
    return {**at, "step_30_over_step_1": growth, "steps": max(sizes) + 1, "largest": max(sizes.values()),
            "total": sum(sizes.values())}


async def measure(workload: workloads.Workload, folder: Path) -> dict[str, Any]:
    from graphs.checkpoint import open_checkpointer

    db = folder / f"{workload.name}.sqlite"
    spec = workload.script(folder)
    async with open_checkpointer(f"sqlite:///{db}") as saver:
        await workloads.run(workload, spec, saver, "run", folder)
    file_bytes = sum(p.stat().st_size for p in folder.glob(f"{workload.name}.sqlite*"))
    result = {**figures(step_bytes(db)[""]), "sqlite_file_bytes": file_bytes}
    if workload.pool:  # training: its collections are subgraphs with their own checkpoints
        collections = [figures(sizes) for sizes in step_bytes(db, "collect:").values()]
        result["collections"] = {"count": len(collections),
                                 "step_1_median": sorted(c["step_1"] for c in collections)[len(collections) // 2],
                                 "step_10_median": sorted(c["step_10"] for c in collections)[len(collections) // 2],
                                 "largest": max(c["largest"] for c in collections)}
    return result


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", help="comma-separated workload names")
    args = parser.parse_args()
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
    report["machine_after"] = load_report()
    out = ROOT / "benchmarks/results/checkpoint_growth.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    asyncio.run(main())
