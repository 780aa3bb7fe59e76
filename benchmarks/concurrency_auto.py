"""``--concurrency auto`` against a rate-limited provider, beside fixed settings.

The model is the OpenAI-compatible stub (tests/support/openai_stub.py) in its own process,
answering after ``--latency`` seconds and at most ``--rate`` requests a second, refusing the
others at once with a 429 and a Retry-After of when a place frees up, as a provider's rate
limit does. The tasks are benchmarks/concurrency.py's LASER runs on WebShop synthetic goals (15
model calls each) through ``introspect.evaluate.evaluate`` with the real ``ChatOpenAI`` client,
which waits and sends a refused request again itself. Every phase allows ``--retries`` retries
per request (more than the default four, so that no phase ends a task early by giving up: the
times compare like for like; errors are reported all the same).

Each phase runs in a fresh process: fixed ``--concurrency`` settings (``--fixed``), then
``auto`` with its default ceiling (32). Reported per phase: wall seconds to finish every task,
the share of HTTP attempts refused with a 429 (as the client's hooks saw them: answered, 429,
timed out), errors, and for ``auto`` the most tasks it had in flight and how often it cut. The
best fixed setting is the fastest whose tasks all finished without an error.

Usage: .venv/bin/python benchmarks/concurrency_auto.py [--tasks 16] [--rate 10] [--latency 0.5] [--small]
Writes benchmarks/results/concurrency_auto.json.
"""

from __future__ import annotations

import argparse
import asyncio
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

from benchmarks.concurrency import Stub, laser_tasks  # noqa: E402
from benchmarks.machine import load_report, parse_args, write_report  # noqa: E402


async def phase(setting: str, args: argparse.Namespace) -> dict[str, Any]:
    """One evaluation at ``setting`` (a number or ``auto``), in this (fresh) process."""
    from langgraph.checkpoint.memory import InMemorySaver

    from graphs import method_named
    from introspect.evaluate import evaluate
    from introspect.options import check_model
    from introspect.pacing import Listener, Pacer
    from nodes.runtime.llm import PACING

    found = dict(list(json.loads(Path(args.tasks_file).read_text(encoding="utf-8")).items())[: args.tasks])
    heard = {"ok": 0, "429": 0, "timeout": 0}
    pacer = Pacer() if setting == "auto" else None

    def count(signal: str) -> None:
        heard[signal] += 1

    if pacer is None:  # the pacer hears each task's requests itself; a fixed setting's tasks inherit this
        PACING.set(Listener(count))

    with tempfile.TemporaryDirectory() as tmp:
        stub = Stub({i: r for i, r in found.values()}, args.latency, Path(tmp), rate_limit=args.rate)
        try:
            os.environ.update(OPENAI_BASE_URL=stub.base_url, OPENAI_API_KEY="sk-bench")
            method = method_named("laser")
            context = method.context(model="openai:bench-model", env="webshop", retries=args.retries)
            check_model(context)
            started = time.perf_counter()
            summary = await evaluate(
                method, context, list(found), Path(tmp) / "results.jsonl", InMemorySaver(), pacer or int(setting)
            )
            seconds = time.perf_counter() - started
        finally:
            stub.close()
    if pacer is not None:
        heard = {"ok": pacer.answered, **pacer.refused}
    attempts = sum(heard.values())
    out: dict[str, Any] = {
        "concurrency": setting,
        "tasks": len(found),
        "seconds": round(seconds, 1),
        "attempts": attempts,
        "share_429": round(heard["429"] / attempts, 3) if attempts else 0.0,
        "timeouts": heard["timeout"],
        "success_rate": summary.success_rate,
        "errors": len(summary.errors),
    }
    if pacer is not None:
        out.update(peak_in_flight=pacer.peak, cuts=pacer.cuts)
    return out


def run_phase(setting: str, args: argparse.Namespace) -> dict[str, Any]:
    command = [sys.executable, __file__, "--phase", setting, "--tasks-file", str(args.tasks_file)]
    for name in ("tasks", "rate", "latency", "retries"):
        command += [f"--{name}", str(getattr(args, name))]
    done = subprocess.run(
        command, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True
    )
    if done.returncode:
        raise RuntimeError(f"phase {setting} failed: {done.stderr[-2000:]}")
    out = json.loads(done.stdout.strip().splitlines()[-1])
    if out["errors"] == out["tasks"]:  # not the provider's limit (some would get through): the tasks are broken
        raise SystemExit(f"phase {setting}: every task ended in an error")
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=16)
    parser.add_argument("--rate", type=float, default=10.0, help="requests a second the stub answers")
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--retries", type=int, default=10)
    parser.add_argument("--fixed", default="2,4,8,16", help="fixed --concurrency settings to compare")
    parser.add_argument("--phase", help=argparse.SUPPRESS)
    parser.add_argument("--tasks-file", help=argparse.SUPPRESS)
    args = parse_args(parser, small={"tasks": 2, "latency": 0.05, "fixed": "2"})
    if args.phase:
        print(json.dumps(asyncio.run(phase(args.phase, args))))
        return
    report: dict[str, Any] = {
        "rate_per_s": args.rate,
        "latency_s": args.latency,
        "retries": args.retries,
        "model_calls_per_task": 15,
        "machine_before": load_report(),
        "phases": [],
    }
    args.tasks_file = Path(tempfile.mkdtemp()) / "tasks.json"
    args.tasks_file.write_text(json.dumps(asyncio.run(laser_tasks(args.tasks))), encoding="utf-8")
    for setting in [*args.fixed.split(","), "auto"]:
        result = run_phase(setting.strip(), args)
        report["phases"].append(result)
        print(json.dumps(result), flush=True)
    fixed = [p for p in report["phases"] if p["concurrency"] != "auto"]
    complete = [p for p in fixed if not p["errors"]] or fixed  # a task that gave up ends early: not faster
    best = min(complete, key=lambda p: p["seconds"])
    auto = report["phases"][-1]
    report["best_fixed"] = best["concurrency"]
    report["auto_vs_best_fixed"] = round(auto["seconds"] / best["seconds"], 2)
    print(f"best fixed: {best['concurrency']} ({best['seconds']} s); auto: {auto['seconds']} s", flush=True)
    write_report("concurrency_auto", report, args.small)


if __name__ == "__main__":
    main()
