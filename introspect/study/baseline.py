"""A study's equal-cost baseline arm: would the same budget, spent on plain retries, have done as well?

For each task the introspective run finished (its row without an error), the arm runs the
method's base agent (``Method.base_agent``: its act loop with the introspective steps switched
off by settings) from a fresh start, again and again, until it has spent what the introspective
run spent on that task, counted as the study's ``baseline_spend`` says (model calls, tokens, or
dollars for a priced model). Once the arm has spent that, its attempt is refused its next model
call (``BudgetReached``: it ends there as a failure, its spend kept): counted in model calls the
arm spends exactly what the run did at most; in tokens or dollars a call's size is known only
after it, so the arm's last call may take it past the run's spend by that call. The task
succeeds when any attempt succeeds (best-of-k at equal cost, with the benchmark's own reward as
the judge, as pass@k has it); after a success no further attempt is made, since it could not
change the outcome.

Attempt k of a task is its own thread (the base agent's thread id with ``-aK``), checkpointed
in the study's database, so an arm cut short resumes where it stopped: finished attempts are
read back from their threads, the unfinished one continues. Its rows go through
``introspect.evaluate`` into ``results/<label>.baseline.r<K>.jsonl`` with the label
``<label>.baseline``, so finished rows are reused like every other run's; each says its
attempts and what they spent (``baseline``), and the report pairs them with the run's rows
(introspect.report.baselines).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from introspect.evaluate import Summary, eval_thread_id, evaluate, read_rows, reused, run_one
from introspect.runner import outcome_of
from introspect.stopping import Stop
from introspect.study.budget import BudgetReached
from introspect.study.spec import Baseline, Run
from nodes.runtime.usage import METER, Meter, Usage, sum_costs

SUFFIX = ".baseline"  # a baseline arm's label and results file: the run's, with this added


def label_of(run: Run) -> str:
    return f"{run.label}{SUFFIX}"


def results_of(run: Run, repeat: int) -> Path:
    """The arm's results file for ``repeat``, inside the study folder."""
    return Path("results") / f"{label_of(run)}.r{repeat}.jsonl"


def forecast_line(baseline: Baseline) -> str:
    """What a dry run says of an arm: its spending follows the run's, so no bound of its own."""
    most = "at most as much again" if baseline.spend == "model_calls" else "as much again, its last call maybe past it"
    return (
        f"baseline arm: the base agent retried until it has spent what the run spent on each task in "
        f"{baseline.spend}: {most} (not in the figures above)"
    )


def spend_of(usage: Mapping[str, Any], measure: str) -> float:
    """What a row or a call's usage spent as ``measure`` (introspect.study.spec.SPENDS) counts."""
    if measure == "tokens":
        return float(usage.get("input_tokens") or 0) + float(usage.get("output_tokens") or 0)
    return float(usage.get(measure) or 0)


@dataclass
class Allowance:
    """The meter of one attempt: refuses the call that would start once ``left`` is spent, and
    passes every call's usage on to the run's meter (its budgets count the arm too)."""

    measure: str
    left: float
    spent: float = 0.0  # seeded with what the attempt's thread had spent before this session
    outer: Meter | None = None

    def before_call(self, task: str | None) -> None:
        if self.spent >= self.left:
            raise BudgetReached(f"the attempt reached the introspective run's spend ({self.left:g} {self.measure})")

    def after_call(self, task: str | None, usage: Usage) -> None:
        self.spent += spend_of(usage, self.measure)
        if self.outer is not None:
            self.outer.after_call(task, usage)


def cut(row: Mapping[str, Any]) -> bool:
    """Whether an attempt's row ended because it reached the spend (not a failure of the run)."""
    return str(row.get("error") or "").startswith(f"{BudgetReached.__name__}:")


async def run_arm(
    run: Run, repeat: int, folder: Path, saver: Any, gate: asyncio.Semaphore, stop: Stop, outer: Meter | None
) -> Summary | None:
    """The arm of ``run``'s ``repeat``, on the tasks its results file holds finished rows of that
    spent something; None when it has none (nothing to match)."""
    assert run.baseline is not None
    method, base, measure = run.method, run.baseline.context, run.baseline.spend
    spent_by = {
        str(r["task_id"]): spend_of(r, measure)
        for r in read_rows(folder / run.results(repeat))
        if r.get("label") == run.label and not r.get("error")
    }
    tasks = [t for t in run.tasks if spent_by.get(t, 0) > 0]  # a task the run spent nothing on has no match
    if not tasks:
        return None
    path = folder / results_of(run, repeat)

    def thread(task_id: str, attempt: int) -> str:
        return f"{eval_thread_id(method, base, task_id, repeat)}-a{attempt}"

    async def attempts(task_id: str) -> dict[str, Any] | None:
        target, spent = spent_by[task_id], 0.0
        rows: list[dict[str, Any]] = []
        while spent < target and not any(r["success"] for r in rows):
            name = thread(task_id, len(rows) + 1)
            before = (await outcome_of(method, name, saver)).state.get("usage") or {}
            allowance = Allowance(measure, target - spent, spend_of(before, measure), outer)
            token = METER.set(allowance)
            try:
                row = await run_one(method, base, task_id, saver, repeat, stop, thread=name)
            finally:
                METER.reset(token)
            if row is None:  # drained: the attempt waits at its checkpoint
                return None
            if row.get("error") and not cut(row):
                return row  # an error row: the task is tried again when the study continues
            rows.append({**row, "spent": allowance.spent})
            spent += allowance.spent
        return combined(target, spent, rows)

    def combined(target: float, spent: float, rows: list[dict[str, Any]]) -> dict[str, Any]:
        """The arm's row of a task: its best attempt's, with the attempts' spending added up."""
        best = next((r for r in rows if r["success"]), rows[-1])  # the first attempt always runs
        row = {k: v for k, v in best.items() if k != "spent"}
        row.update(
            success=any(r["success"] for r in rows),
            reward=max(float(r.get("reward") or 0) for r in rows),
            error="",
            cost_usd=sum_costs(r.get("cost_usd") for r in rows),
            baseline={
                "kind": "equal_cost",
                "of": run.label,
                "spend": measure,
                "target": target,
                "spent": spent,
                "attempts": [
                    {"thread_id": r["thread_id"], "success": r["success"], "spent": r["spent"], "cut": cut(r)}
                    for r in rows
                ],
            },
        )
        for key in ("model_calls", "input_tokens", "output_tokens", "retries", "steps", "seconds"):
            row[key] = sum(r.get(key) or 0 for r in rows)
        return row

    async def gated(task_id: str) -> dict[str, Any] | None:
        async with gate:
            return await attempts(task_id)

    async def forget(task_id: str) -> None:
        """A stale row's attempts start over: every attempt thread of the task goes."""
        attempt = 1
        while (await outcome_of(method, thread(task_id, attempt), saver)).state:
            await saver.adelete_thread(thread(task_id, attempt))
            attempt += 1

    return await evaluate(
        method,
        base,
        tasks,
        path,
        saver,
        run.concurrency if isinstance(run.concurrency, int) else 4,
        run=gated,
        reuse=await reused(method, base, path, tasks),
        forget=forget,
        repeat=repeat,
        label=label_of(run),
        stop=stop,
    )
