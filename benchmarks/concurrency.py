"""Evaluation with many tasks at once against a model that takes a second to answer.

The model is the OpenAI-compatible stub (tests/support/openai_stub.py) in its own process,
answering every request after ``--latency`` seconds, through the real ``ChatOpenAI`` client;
each task's replies are keyed by its instruction, which every prompt of the task shows, so
concurrent tasks never take each other's replies. The tasks are LASER runs on WebShop
synthetic goals, each like the shipped demo: search the goal's product name, open another
item, read its description, go back, open the goal's item, buy it with the goal's options
(15 model calls: buying asks LASER's customisation step, three calls, for the options). They
run through ``introspect.evaluate.evaluate``, as ``introspect eval`` runs them, with the SQLite
checkpointer.

Each phase runs in a fresh process, timed from where ``introspect eval`` starts its tasks
(after it has checked the options: method, model client, task list): ``--sequential``
tasks one at a time, then for each count of ``--concurrent`` (16 and 64) that many tasks at once. CPU seconds (the
process and its threads) are reported beside wall seconds: on a shared machine a run that
needs more CPU than it gets waits for it. Speedup = tasks x (sequential seconds per task) / concurrent
seconds. Peak memory: the process's largest RSS (the kernel's count). For browser tasks, Structured
Reflection on MiniWoB click-button seeds, all at once (one model call each, which keeps
every task's page open for the model's second): peak of the process's RSS plus Chromium's
PSS (sampled every 250 ms), minus the same figure with the browser started and no task
open, per task.

Usage: .venv/bin/python benchmarks/concurrency.py [--latency 1] [--sequential 16] [--concurrent 16,64]
       [--browser-tasks 16] [--small]
Writes benchmarks/results/concurrency.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.machine import load_report, parse_args, write_report  # noqa: E402


def _say(text: str) -> dict[str, Any]:
    return {"content": f"Rationale: {text}"}


def _say_types(options: dict[str, str]) -> dict[str, Any]:
    return {"content": "Customization types: " + (", ".join(options) or "None")}


def _call(name: str, **args: Any) -> dict[str, Any]:
    return {"content": "", "tool_calls": [{"name": name, "args": args}]}


async def laser_tasks(count: int) -> dict[str, tuple[str, list[dict[str, Any]]]]:
    """``count`` synthetic goals whose product shows on the first results page of a search
    for its name: task id -> (instruction, the 15 replies of its run)."""
    from envs import make_env

    env = make_env("webshop")
    found: dict[str, tuple[str, list[dict[str, Any]]]] = {}
    seen: set[str] = set()
    for task_id in env.task_ids("synthetic"):
        await env.reset(task_id)
        goal = env.goal
        instruction = goal["instruction_text"]
        page = (await env.step(f"search[{goal['name']}]")).observation.info
        others = [i for i in page.get("item_ids", []) if i != goal["asin"]]
        if instruction in seen or goal["asin"] not in page.get("item_ids", []) or not others:
            continue
        seen.add(instruction)
        found[task_id] = (
            instruction,
            [
                _say("search for the product"),
                _call("Search", keywords=goal["name"], max_price="1000000"),
                _say("this other item might match"),
                _call("select_item", item_id=others[0]),
                _say("check its description"),
                _call("Description"),
                _say("it does not match, go back"),
                _call("Prev"),
                _say("this one matches"),
                _call("select_item", item_id=goal["asin"]),
                _say("buy it with the options asked for"),
                _call("Buy_Now"),  # the options are the customisation step's to choose
                # LASER's customisation step: the option types, the rationale, the call with the values
                _say_types(goal["goal_options"]),
                _say("buy it with the options asked for"),
                _call("Buy_Now", **goal["goal_options"]),
            ],
        )
        if len(found) == count:
            break
    await env.close()
    return found


class Stub:
    """The stub server in its own process, serving ``conversations`` (``rate_limit`` requests
    a second at most: 429 beyond)."""

    def __init__(
        self,
        conversations: dict[str, list[dict[str, Any]]],
        latency: float,
        folder: Path,
        rate_limit: float | None = None,
    ) -> None:
        path = folder / f"conversations-{time.monotonic_ns()}.json"
        path.write_text(json.dumps(conversations), encoding="utf-8")
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        limit = ["--rate-limit", str(rate_limit)] if rate_limit else []
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.support.openai_stub", str(path), "--latency", str(latency), *limit],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.base_url = self.process.stdout.readline().strip()  # type: ignore[union-attr]

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


def rss_bytes() -> int:
    """This process's resident set now (cheap: /proc/self/statm)."""
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def peak_rss_bytes() -> int:
    """This process's largest resident set so far (the kernel keeps it: nothing to sample)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


async def sample_peak(measure: Any, stop: asyncio.Event, every: float = 0.25) -> int:
    """The largest value of ``measure()`` until ``stop``, read every ``every`` seconds in a
    thread (Chromium's PSS takes the kernel a moment to add up: not too often)."""
    peak = 0
    while not stop.is_set():
        peak = max(peak, await asyncio.to_thread(measure))
        try:
            await asyncio.wait_for(stop.wait(), every)
        except TimeoutError:
            pass
    return max(peak, await asyncio.to_thread(measure))


async def evaluate_phase(
    method: str, env: str, tasks: list[str], concurrency: int, folder: Path, measure: Any = None, **settings: Any
) -> dict[str, Any]:
    """Evaluate as ``introspect eval`` does; ``measure``, if given, is sampled for its peak."""
    from graphs import method_named
    from introspect.checkpoint import open_checkpointer
    from introspect.evaluate import evaluate
    from introspect.options import check_model, task_list

    # what `introspect eval` does before it starts: the graph, the model client, the tasks
    context = method_named(method).context(model="openai:bench-model", env=env, **settings)
    check_model(context)
    task_list(context, None, ",".join(tasks))
    stop = asyncio.Event()
    sampler = asyncio.create_task(sample_peak(measure, stop)) if measure else None
    started, started_cpu = time.perf_counter(), time.process_time()
    async with open_checkpointer(f"sqlite:///{folder / 'eval.sqlite'}") as saver:
        summary = await evaluate(method_named(method), context, tasks, folder / "results.jsonl", saver, concurrency)
    seconds, cpu = time.perf_counter() - started, time.process_time() - started_cpu
    stop.set()
    return {
        "tasks": len(tasks),
        "concurrency": concurrency,
        "seconds": round(seconds, 2),
        "cpu_seconds": round(cpu, 2),
        "success_rate": summary.success_rate,
        "errors": len(summary.errors),
        "first_error": summary.errors[0][1][-500:] if summary.errors else None,
        "peak": await sampler if sampler else peak_rss_bytes(),
    }


async def phase(kind: str, count: int, latency: float, tasks_file: str) -> dict[str, Any]:
    """One phase, in this (fresh) process; ``tasks_file`` holds the LASER tasks' scripts."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if kind == "browser":
            from envs import browser

            await browser.get_browser()
            idle = rss_bytes() + browser.browser_memory_bytes()["pss"]
            tasks = [f"click-button/{seed}" for seed in range(count)]
            stub = Stub({"": [{"content": "click id=999"}] * count}, latency, folder)
            try:
                os.environ.update(OPENAI_BASE_URL=stub.base_url, OPENAI_API_KEY="sk-bench")
                out = await evaluate_phase(
                    "structured_reflection",
                    "miniwob",
                    tasks,
                    count,
                    folder,
                    lambda: rss_bytes() + browser.browser_memory_bytes()["pss"],
                    max_trials=1,
                )
            finally:
                stub.close()
                await browser.close_browser()
            out["peak_mib_per_task"] = round((out.pop("peak") - idle) / 2**20 / count, 1)
            out["idle_mib"] = round(idle / 2**20, 1)
            return out
        found = dict(list(json.loads(Path(tasks_file).read_text(encoding="utf-8")).items())[:count])
        stub = Stub({instruction: replies for instruction, replies in found.values()}, latency, folder)
        try:
            os.environ.update(OPENAI_BASE_URL=stub.base_url, OPENAI_API_KEY="sk-bench")
            concurrency = 1 if kind == "sequential" else count
            out = await evaluate_phase("laser", "webshop", list(found), concurrency, folder)
        finally:
            stub.close()
        out["peak_rss_mib"] = round(out.pop("peak") / 2**20, 1)
        return out


def run_phase(kind: str, count: int, latency: float, tasks_file: Path) -> dict[str, Any]:
    done = subprocess.run(
        [
            sys.executable,
            __file__,
            "--phase",
            kind,
            "--count",
            str(count),
            "--latency",
            str(latency),
            "--tasks-file",
            str(tasks_file),
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
    )
    if done.returncode:
        raise RuntimeError(f"phase {kind} failed: {done.stderr[-2000:]}")
    out = json.loads(done.stdout.strip().splitlines()[-1])
    if out["errors"]:  # a task that failed ends early: its phase's time is no figure
        raise SystemExit(
            f"phase {kind}: {out['errors']} of {out['tasks']} tasks ended in an error: {out['first_error']}"
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--sequential", type=int, default=16, help="tasks run one at a time")
    parser.add_argument("--concurrent", default="16,64", help="task counts run all at once, comma-separated")
    parser.add_argument("--browser-tasks", type=int, default=16)
    parser.add_argument("--phase", help=argparse.SUPPRESS)
    parser.add_argument("--count", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--tasks-file", help=argparse.SUPPRESS)
    args = parse_args(parser, small={"latency": 0.05, "sequential": 1, "concurrent": "2", "browser_tasks": 1})
    if args.phase:
        print(json.dumps(asyncio.run(phase(args.phase, args.count, args.latency, args.tasks_file))))
        return
    report: dict[str, Any] = {"latency_s": args.latency, "machine_before": load_report()}
    tasks_file = Path(tempfile.mkdtemp()) / "tasks.json"  # found here, so that no phase starts warm
    counts = [int(count) for count in args.concurrent.split(",")]
    tasks_file.write_text(json.dumps(asyncio.run(laser_tasks(max(*counts, args.sequential)))), encoding="utf-8")
    sequential = run_phase("sequential", args.sequential, args.latency, tasks_file)
    per_task = sequential["seconds"] / sequential["tasks"]
    report["sequential"] = {**sequential, "seconds_per_task": round(per_task, 2)}
    print(f"sequential  {report['sequential']}", flush=True)
    for count in counts:
        result = run_phase("concurrent", count, args.latency, tasks_file)
        result["speedup"] = round(count * per_task / result["seconds"], 1)
        report[f"concurrent_{count}"] = result
        print(f"concurrent  {result}", flush=True)
    if args.browser_tasks:
        report["browser"] = run_phase("browser", args.browser_tasks, args.latency, tasks_file)
        print(f"browser     {report['browser']}", flush=True)
    write_report("concurrency", report, args.small)


if __name__ == "__main__":
    main()
