"""How much a checkpointer costs a LASER run: wall time per run and per graph step, and the
SQLite bytes written per run, with memory vs SQLite checkpointing (and Postgres when
INTROSPECT_BENCH_POSTGRES names a server).

The model is the shipped demo script with its artificial delays removed, so the figures
are the framework's own overhead (graph, env, checkpointer), not model latency.
Usage: .venv/bin/python benchmarks/laser_checkpointing.py [--runs 20]
Writes benchmarks/results/laser_checkpointing.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from graphs.app.checkpoint import open_checkpointer  # noqa: E402
from nodes.context import Context  # noqa: E402
from graphs.app.runner import drive  # noqa: E402


def undelayed_script(folder: Path) -> tuple[Path, str]:
    demo = json.loads((ROOT / "graphs/app/demos/laser.json").read_text())
    lines = [json.loads(l) for l in (ROOT / "graphs/app/demos" / demo["script"]).read_text().splitlines()]
    path = folder / "script.jsonl"
    path.write_text("".join(json.dumps({k: v for k, v in l.items() if k != "delay"}) + "\n" for l in lines))
    return path, demo["task_id"]


async def measure(url: str, script: Path, task_id: str, runs: int) -> dict[str, float]:
    context = Context(model=f"scripted:{script}", env="webshop")
    times, steps = [], 0
    async with open_checkpointer(url) as saver:
        for i in range(runs):
            started = time.perf_counter()
            outcome = await drive("laser", context, f"bench-{i}", saver, {"task_id": task_id})
            times.append(time.perf_counter() - started)
            assert outcome.state["success"], "the demo script should succeed"
            steps = int(outcome.state["transitions"]) + 3  # start, backup/finish nodes included
    return {
        "runs": runs,
        "median_run_s": round(statistics.median(times), 4),
        "p95_run_s": round(sorted(times)[max(0, int(0.95 * runs) - 1)], 4),
        "median_per_node_ms": round(1000 * statistics.median(times) / steps, 2),
    }


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        script, task_id = undelayed_script(folder)
        await measure("memory", script, task_id, 2)  # warm caches (catalogue, index)
        figures = {"memory": await measure("memory", script, task_id, args.runs)}
        db = folder / "bench.sqlite"
        figures["sqlite"] = await measure(f"sqlite:///{db}", script, task_id, args.runs)
        size = sum(p.stat().st_size for p in folder.glob("bench.sqlite*"))
        figures["sqlite"]["bytes_per_run"] = size // args.runs
        if os.environ.get("INTROSPECT_BENCH_POSTGRES"):
            figures["postgres"] = await measure(os.environ["INTROSPECT_BENCH_POSTGRES"], script, task_id, args.runs)
    for name, values in figures.items():
        print(f"{name:<9} " + "  ".join(f"{k}={v}" for k, v in values.items()))
    out = ROOT / "benchmarks/results/laser_checkpointing.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(figures, indent=2) + "\n")
    print(f"wrote {out.relative_to(ROOT)}")


if __name__ == "__main__":
    asyncio.run(main())
