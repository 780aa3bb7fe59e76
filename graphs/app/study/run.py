"""Running a study: every run and repeat through ``graphs.app.evaluate``, into one folder.

The folder holds the spec as given (``spec.toml``), one results file per run and repeat
(``results/<label>.r<K>.jsonl``), the journal, the runs' checkpoints (``checkpoints.sqlite``,
unless the spec names a ``checkpoint``), the report (``report/``) and the viewer's pages
(``views/<label>.r<K>/``). Running a study again continues it: the evaluation skips finished
tasks, resumes unfinished threads and tries errored tasks again. A spec changed since the
folder's last session is refused unless it only adds runs (or changes what decides no
outcome: repeats, concurrency, budgets, workers, server).

Runs go one after another, each with its own concurrency, so a budget stops the study at
a clear point and the journal reads in order.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import tomllib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphs.app.checkpoint import home, open_checkpointer
from graphs.app.evaluate import (
    Summary,
    eval_thread_id,
    evaluate,
    fingerprint,
    read_rows,
    reused,
    run_one,
    summarize,
)
from graphs.app.pacing import Pacer
from graphs.app.provenance import Reuse
from graphs.app.runlock import database_lock
from graphs.app.runner import outcome_of
from graphs.app.stopping import Stop, stopping_on_signals
from graphs.app.study import journal
from graphs.app.study.budget import Purse, RunMeter
from graphs.app.study.spec import FREE, Run, Study, StudyError
from nodes.usage import METER, dollars, sum_costs

SPEC = "spec.toml"
WHAT = {"fingerprint": "settings"}  # a plan's keys in the words a refusal uses
STOPPED = 3  # exit status of a study a budget stopped (graphs.app.cli's docstring)


def folder_of(study: Study, out: str | None) -> Path:
    """The study's folder: ``--out``, else ``studies/<name>`` in introspect's home."""
    folder = Path(out) if out else home() / "studies" / study.name
    if folder.exists() and not folder.is_dir():
        raise StudyError(f"{folder} is a file, not a study folder")
    return folder


def identity(run: Run) -> dict[str, Any]:
    """What a run is, as the journal's plan records it: a later session may add runs, never change one."""
    return {
        "label": run.label,
        "method": run.method.name,
        "env": run.context.env,
        "model": run.context.model,
        "fingerprint": fingerprint(run.method, run.context),
        "tasks": run.tasks,
        "repeats": run.repeats,
    }


def check_continuation(study: Study, folder: Path) -> None:
    """Refuse, in one line, a spec that changes a run the folder already holds."""
    before = journal.latest_plan(folder)
    if before is None:
        return
    now = {r.label: identity(r) for r in study.runs}
    kept = [k for k in identity(study.runs[0]) if k not in FREE]
    for old in before:
        new = now.get(old["label"])
        if new is None:
            raise StudyError(
                f"{folder} holds run {old['label']!r}, which the spec no longer names: a study "
                "continues with its runs (add runs, never remove one), or use --out for a new study"
            )
        changed = [WHAT.get(k, k) for k in kept if old.get(k) != new.get(k)]
        if changed:
            raise StudyError(
                f"{folder}: run {old['label']!r} changed its {', '.join(changed)} since the study "
                "started: a study continues only with runs added (or repeats, concurrency, budgets "
                "changed); use --out for a new study"
            )


def spent_before(study: Study, folder: Path) -> dict[str, float]:
    """Each run's spending so far: the cost of each task's latest row, over its repeats."""
    spent = {}
    for run in study.runs:
        total = 0.0
        for repeat in range(1, run.repeats + 1):
            latest = {str(r["task_id"]): r for r in read_rows(folder / run.results(repeat))}
            total += sum(float(r.get("cost_usd") or 0.0) for r in latest.values())
        spent[run.label] = total
    return spent


@dataclass
class Outcome:
    summaries: list[tuple[str, int, Summary]]
    stopped: str  # which budget stopped the study ("" when none did)
    spent: float
    signal: Stop | None = None  # a SIGINT/SIGTERM that drained the study (graphs.app.stopping)


def checkpoint_url(folder: Path, checkpoint: str | None) -> str:
    """Where a study's runs keep their checkpoints: the study's ``checkpoint``, else the folder's
    own ``checkpoints.sqlite`` (export and the viewer read them there too)."""
    return checkpoint or f"sqlite:///{(folder / 'checkpoints.sqlite').resolve()}"


def folder_checkpoint(folder: Path) -> str:
    """The checkpoints of the study in ``folder``, from its spec as given."""
    spec = tomllib.loads((folder / SPEC).read_text(encoding="utf-8"))
    return checkpoint_url(folder, spec.get("checkpoint"))


async def execute(study: Study, folder: Path, say: Callable[[str], None]) -> Outcome:
    """Run every unfinished task of every run and repeat; stop when a budget is reached, or
    drain on SIGINT/SIGTERM (the steps under way finish and are checkpointed)."""
    with stopping_on_signals() as stop:
        return await _execute(study, folder, say, stop)


async def _execute(study: Study, folder: Path, say: Callable[[str], None], stop: Stop) -> Outcome:
    checkpoint = checkpoint_url(folder, study.checkpoint)
    before = await asyncio.to_thread(spent_before, study, folder)
    purse = Purse(study.max_cost_usd, sum(before.values()))
    summaries: list[tuple[str, int, Summary]] = []
    for run in study.runs:
        run_purse = Purse(run.max_cost_usd, before[run.label])
        for repeat in range(1, run.repeats + 1):
            if purse.reached() or run_purse.reached():
                which = purse.name("the study's") if purse.reached() else run_purse.name(f"run {run.label}'s")
                return Outcome(summaries, which, purse.spent)
            # which rows stand, and the provenance (code, prompts, packages) the journal records: worked out once
            reuse = await reused(run.method, run.context, folder / run.results(repeat), run.tasks)
            made_by = reuse.provenance.to_dict()
            await asyncio.to_thread(journal.append, folder, "run", label=run.label, repeat=repeat, provenance=made_by)
            summary, reached = await _evaluate(run, repeat, folder, checkpoint, purse, run_purse, stop, reuse)
            if stop.requested:
                return Outcome(summaries, "", purse.spent, stop)
            await asyncio.to_thread(
                journal.append, folder, "ran", label=run.label, repeat=repeat, summary=_summary_record(summary)
            )
            say(f"{run.label} r{repeat}: {_summary_line(summary)}")
            summaries.append((run.label, repeat, summary))
            if reached:
                return Outcome(summaries, reached, purse.spent)
    return Outcome(summaries, "", purse.spent)


async def _evaluate(
    run: Run, repeat: int, folder: Path, checkpoint: str, purse: Purse, run_purse: Purse, drain: Stop, reuse: Reuse
) -> tuple[Summary, str]:
    """One repeat of one run through the evaluation, metered; the summary, and which budget
    stopped it ("" when none did)."""
    results = folder / run.results(repeat)
    evaluation: asyncio.Task[Summary] | None = None

    def stop() -> None:
        if evaluation is not None:
            evaluation.cancel()

    meter = RunMeter(purse, run_purse, run.task_max_cost_usd, stop)
    token = METER.set(meter)  # the evaluation's tasks copy this context: their calls are metered
    try:
        held = database_lock("" if run.server else checkpoint, eval_thread_id(run.method, run.context, "*", repeat))
        async with held, _runner(run, repeat, checkpoint, meter, drain) as (saver, runner, concurrency):
            evaluation = asyncio.create_task(
                evaluate(
                    run.method,
                    run.context,
                    run.tasks,
                    results,
                    saver,
                    concurrency,
                    run=runner,
                    repeat=repeat,
                    label=run.label,
                    stop=drain,
                    reuse=reuse,
                )
            )
            try:
                summary = await evaluation
            except asyncio.CancelledError:
                if not meter.reached:
                    raise
                rows = {str(r["task_id"]): r for r in read_rows(results) if r.get("label") == run.label}
                summary = summarize([rows[t] for t in run.tasks if t in rows])
    finally:
        METER.reset(token)
    return summary, meter.reached


@contextlib.asynccontextmanager
async def _runner(
    run: Run, repeat: int, checkpoint: str, meter: RunMeter, drain: Stop
) -> AsyncIterator[tuple[Any, Callable[[str], Awaitable[dict[str, Any] | None]] | None, int | Pacer]]:
    """Where the run's tasks run, as ``eval`` chooses it: a LangGraph server, worker
    processes, or here (each task's spending so far seeded into the meter from its thread)."""
    if run.server:
        from graphs.app.remote import ServerEvaluation

        assert run.concurrency != "auto"  # the spec refuses auto with a server or workers
        server = ServerEvaluation(run.server, run.method, run.context)
        await server.check()
        yield None, server.run_one, run.concurrency
    elif run.workers > 1:
        from graphs.app.workers import WorkerPool

        assert run.concurrency != "auto"
        async with open_checkpointer(checkpoint):  # created once, before the workers
            pass
        async with WorkerPool(run.workers, run.concurrency, run.method, run.context, checkpoint, None) as pool:
            yield None, pool.run_one, run.workers * run.concurrency
    else:
        async with open_checkpointer(checkpoint) as saver:

            async def here(task_id: str) -> dict[str, Any] | None:
                thread = eval_thread_id(run.method, run.context, task_id, repeat)
                reached = await outcome_of(run.method, thread, saver)
                meter.task_spent[task_id] = float((reached.state.get("usage") or {}).get("cost_usd") or 0.0)
                return await run_one(run.method, run.context, task_id, saver, repeat, drain)

            yield saver, here, Pacer() if run.concurrency == "auto" else run.concurrency


def _summary_record(summary: Summary) -> dict[str, Any]:
    return {
        "tasks": summary.tasks,
        "ran": summary.ran,
        "success_rate": summary.success_rate,
        "errors": len(summary.errors),
        "model_calls": summary.model_calls,
        "cost_usd": summary.cost_usd,
    }


def _summary_line(summary: Summary) -> str:
    return (
        f"{summary.tasks} tasks, {summary.ran} ran, success {summary.success_rate:.1%}, "
        f"errors {len(summary.errors)}, {summary.model_calls} model calls, {dollars(summary.cost_usd)}"
    )


def results_files(folder: Path) -> list[Path]:
    """The study's results files, in name order (a study folder is known by its spec.toml)."""
    if not (folder / SPEC).is_file():
        raise StudyError(f"{folder} is not a study folder (no {SPEC})")
    return sorted((folder / "results").glob("*.jsonl"))


def write_report(folder: Path) -> Path | None:
    """The report over every results file of the study, into ``report/`` (``introspect report
    --out``'s own code: Markdown, figures and an index page linking the pages in ``views/``);
    None while the study has no rows."""
    from graphs.app.report import write_report as write_folder

    files = [p for p in results_files(folder) if read_rows(p)]
    if not files:
        return None
    write_folder(files, folder / "report")
    return folder / "report"


async def write_viewer(folder: Path, checkpoint: str | None) -> list[Path]:
    """The viewer's pages of every results file's runs, into ``views/<label>.r<K>/``."""
    from graphs.app.view import write_views

    url = checkpoint_url(folder, checkpoint)
    if url.startswith("sqlite:///") and not Path(url.removeprefix("sqlite://")).is_file():
        return []  # tasks that ran on a server keep their checkpoints there
    return [await write_views(str(path), folder / "views" / path.stem, url) for path in results_files(folder)]


def status_lines(folder: Path) -> list[str]:
    """Progress per run and repeat, from the journal's latest plan and the results files."""
    plan = journal.latest_plan(folder)
    if not (folder / SPEC).is_file() or plan is None:
        raise StudyError(f"{folder} is not a study folder (no {SPEC} and journal)")
    lines = []
    total_cost: list[float | None] = []
    for run in plan:
        for repeat in range(1, int(run["repeats"]) + 1):
            path = folder / "results" / f"{run['label']}.r{repeat}.jsonl"
            latest = {str(r["task_id"]): r for r in read_rows(path) if r.get("label") == run["label"]}
            rows = [latest[t] for t in run["tasks"] if t in latest]
            done = sum(1 for r in rows if not r.get("error"))
            errors = len(rows) - done
            cost = sum_costs(r.get("cost_usd") for r in rows)
            total_cost.append(cost)
            state = "done" if done == len(run["tasks"]) else "unfinished"
            lines.append(
                f"{run['label']} r{repeat}: {done}/{len(run['tasks'])} finished, {errors} errored, "
                f"{len(run['tasks']) - len(rows)} not run; {dollars(cost)}  [{state}]"
            )
    stops = [e for e in journal.events(folder) if e.get("event") in ("stopped", "finished", "session")]
    if stops and stops[-1]["event"] == "stopped":
        lines.append(f"stopped: {stops[-1]['reason']}")
    lines.append(f"spent: {dollars(sum_costs(total_cost))}")
    return lines


def say(line: str) -> None:
    print(line, flush=True)


def warn(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
