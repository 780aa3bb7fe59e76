"""Running a study: every run and repeat through ``introspect.evaluate``, into one folder.

The folder holds the spec as given (``spec.toml``), one results file per run and repeat
(``results/<label>.r<K>.jsonl``), the journal, the runs' checkpoints (``checkpoints.sqlite``,
unless the spec names a ``checkpoint``), the report (``report/``) and the viewer's pages
(``views/<label>.r<K>/``). Running a study again continues it: the evaluation skips finished
tasks, resumes unfinished threads and tries errored tasks again. A run with ``baseline``
runs its equal-cost baseline arm after each repeat (introspect.study.baseline), into
``results/<label>.baseline.r<K>.jsonl``. A spec changed since the
folder's last session is refused unless it only adds runs (or changes what decides no
outcome: repeats, concurrency, budgets, workers, server).

The runs and repeats run at once, each with its own concurrency, and all of them together
with at most the study's (the largest a run gives) task runs in flight; a run's budget stops
that run, the study's stops them all.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from introspect.checkpoint import home, open_checkpointer
from introspect.evaluate import (
    ResultsWriteError,
    Summary,
    eval_thread_id,
    evaluate,
    fingerprint,
    read_rows,
    reused,
    run_one,
    summarize,
)
from introspect.pacing import Pacer
from introspect.provenance import Reuse
from introspect.runlock import database_lock
from introspect.runner import outcome_of
from introspect.stopping import Stop, stopping_on_signals
from introspect.study import journal
from introspect.study.baseline import SUFFIX, run_arm
from introspect.study.baseline import label_of as baseline_label
from introspect.study.baseline import results_of as baseline_results
from introspect.study.budget import Purse, RunMeter, spending
from introspect.study.folder import SPEC, checkpoint_url, results_files
from introspect.study.progress import Progress
from introspect.study.spec import FREE, Run, Study, StudyError
from nodes.runtime.usage import METER, dollars, sum_costs

WHAT = {"fingerprint": "settings"}  # a plan's keys in the words a refusal uses
STOPPED = 3  # exit status of a study a budget stopped (introspect.cli's docstring)


def folder_of(study: Study, out: str | None) -> Path:
    """The study's folder: ``--out``, else ``studies/<name>`` in introspect's home."""
    folder = Path(out) if out else home() / "studies" / study.name
    if folder.exists() and not folder.is_dir():
        raise StudyError(f"{folder} is a file, not a study folder")
    return folder


async def check_stores(study: Study) -> None:
    """The study's own checkpoint database and its servers answer, before its folder is made:
    one that cannot be used is refused in one line with nothing written (``existing``: a SQLite
    file that does not exist yet is not created by the check)."""
    if study.checkpoint and any(not run.server for run in study.runs):
        async with open_checkpointer(study.checkpoint, existing=True):
            pass
    servers = {run.server: run for run in study.runs if run.server}
    if servers:
        from introspect.remote import ServerEvaluation

        for url, run in servers.items():
            await ServerEvaluation(url, run.method, run.context).check()


def make_folder(folder: Path) -> None:
    """The study folder and its ``results``; a folder that cannot be made (a read-only home) is
    refused in one line."""
    try:
        (folder / "results").mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StudyError(f"cannot create the study folder {folder}: {exc.strerror} (--out names another)") from None


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


def spent_before(study: Study, folder: Path) -> dict[str, dict[str, float]]:
    """Each run's spending so far in each budget's kind: each task's latest row, over its repeats."""
    spent = {}
    for run in study.runs:
        total = Purse(run.budget)
        for repeat in range(1, run.repeats + 1):
            files = [run.results(repeat), *([baseline_results(run, repeat)] if run.baseline else [])]
            for path in files:
                latest = {str(r["task_id"]): r for r in read_rows(folder / path)}
                for row in latest.values():
                    total.add(spending(row))
        spent[run.label] = total.spent
    return spent


@dataclass
class Outcome:
    summaries: list[tuple[str, int, Summary]]
    stopped: str  # which budget stopped the study or a run ("" when none did)
    spent: float  # dollars
    tokens: float = 0.0  # input plus output, and task-seconds: what the token and second budgets count
    seconds: float = 0.0
    signal: Stop | None = None  # a SIGINT/SIGTERM that drained the study (introspect.stopping)


async def execute(study: Study, folder: Path, say: Callable[[str], None]) -> Outcome:
    """Run every unfinished task of every run and repeat; stop when a budget is reached, or
    drain on SIGINT/SIGTERM (the steps under way finish and are checkpointed)."""
    with stopping_on_signals() as stop:
        return await _execute(study, folder, say, stop)


def in_flight(study: Study) -> int:
    """The study's concurrency: task runs in flight across all its runs, the largest a run asks
    for (a run's own concurrency still limits that run; "auto" runs pace themselves)."""
    return max((r.concurrency for r in study.runs if isinstance(r.concurrency, int)), default=4)


async def _execute(study: Study, folder: Path, say: Callable[[str], None], stop: Stop) -> Outcome:
    checkpoint = checkpoint_url(folder, study.checkpoint)
    before = await asyncio.to_thread(spent_before, study, folder)
    purse = Purse(study.budget)
    for spent in before.values():
        purse.add(spent)
    purses = {run.label: Purse(run.budget, dict(before[run.label])) for run in study.runs}
    # which rows stand, and the provenance (code, prompts, packages) the journal records: worked out once
    plans = [
        (run, k, await reused(run.method, run.context, folder / run.results(k), run.tasks))
        for run in study.runs
        for k in range(1, run.repeats + 1)
    ]
    for run, _, reuse in plans:
        for line in reuse.notes(run.label):
            warn(line)
    total = sum(len(run.tasks) for run, _, _ in plans)
    kept = sum(len(reuse.finished) for _, _, reuse in plans)
    if kept:
        say(f"reused {kept} finished rows of earlier sessions; {total - kept} task runs to do")
    gate = asyncio.Semaphore(in_flight(study))
    progress = Progress(total, kept, study.name)
    evaluations: dict[tuple[str, int], asyncio.Task[None]] = {}

    meters: dict[tuple[str, int], RunMeter] = {}

    def halt(label: str, repeat: int, everything: bool) -> None:
        """Cancel the evaluation whose budget was reached, or (the study's) every one, each
        meter told why, so that its evaluation ends with the rows written so far."""
        why = meters[(label, repeat)].reached
        for key, task in evaluations.items():
            if everything or key == (label, repeat):
                if key in meters:
                    meters[key].reached = meters[key].reached or why
                task.cancel()

    summaries: list[tuple[str, int, Summary]] = []
    stopped: list[str] = []
    saver: Any = None  # the study's checkpointer, once open

    async def one(run: Run, repeat: int, reuse: Reuse) -> None:
        run_purse = purses[run.label]
        if purse.reached() or run_purse.reached():
            stopped.append(purse.name("the study's") if purse.reached() else run_purse.name(f"run {run.label}'s"))
            return
        made_by = reuse.provenance.to_dict()
        await asyncio.to_thread(journal.append, folder, "run", label=run.label, repeat=repeat, provenance=made_by)
        meter = RunMeter(purse, run_purse, run.task_budget, lambda everything: halt(run.label, repeat, everything))
        meters[(run.label, repeat)] = meter
        try:
            summary, reached = await _evaluate(
                run, repeat, folder, (checkpoint, saver), meter, stop, reuse, gate, progress.row
            )
        except ResultsWriteError:  # a full disk stops the whole study at once
            for evaluation in evaluations.values():
                if evaluation is not asyncio.current_task():
                    evaluation.cancel()
            raise
        if stop.requested:
            return
        await asyncio.to_thread(
            journal.append, folder, "ran", label=run.label, repeat=repeat, summary=_summary_record(summary)
        )
        progress.write(f"{run.label} r{repeat}: {_summary_line(summary)}")
        for task, error in summary.errors:  # each failed task's reason, as eval prints it
            progress.write(f"  error  task {task}: {error}")
        summaries.append((run.label, repeat, summary))
        if run.baseline is not None and not reached:
            try:
                arm = await run_arm(run, repeat, folder, saver, gate, stop, meter)
            except asyncio.CancelledError:  # a budget its spending reached: the rows written stand
                if not meter.reached:
                    raise
                arm = None
            if arm is not None and not stop.requested:
                progress.write(f"{baseline_label(run)} r{repeat}: {_summary_line(arm)}")
                summaries.append((baseline_label(run), repeat, arm))
        if reached or meter.reached:
            stopped.append(reached or meter.reached)

    try:
        async with contextlib.AsyncExitStack() as stack:
            # one checkpointer for every run here (SQLite takes one opener at a time); none for a server's
            if any(not run.server for run in study.runs):
                saver = await stack.enter_async_context(open_checkpointer(checkpoint))
            for run, repeat, reuse in plans:
                evaluations[(run.label, repeat)] = asyncio.create_task(one(run, repeat, reuse))
            ended = await asyncio.gather(*evaluations.values(), return_exceptions=True)
        for failure in ended:  # a run cancelled by the study's budget before it began ended without a summary
            if isinstance(failure, BaseException) and not isinstance(failure, asyncio.CancelledError):
                raise failure
    finally:
        progress.close()
    which = "" if stop.requested else (stopped[0] if stopped else "")
    spent = purse.spent
    return Outcome(
        summaries,
        which,
        spent["cost_usd"],
        tokens=spent["tokens"],
        seconds=spent["seconds"],
        signal=stop if stop.requested else None,
    )


async def _evaluate(
    run: Run,
    repeat: int,
    folder: Path,
    checkpoint: tuple[str, Any],
    meter: RunMeter,
    drain: Stop,
    reuse: Reuse,
    gate: asyncio.Semaphore,
    on_row: Callable[[dict[str, Any]], None],
) -> tuple[Summary, str]:
    """One repeat of one run through the evaluation, metered, each task holding a place of the
    study's ``gate``; the summary, and which budget stopped it ("" when none did)."""
    results = folder / run.results(repeat)
    token = METER.set(meter)  # the evaluation's tasks copy this context: their calls are metered
    try:
        held = database_lock("" if run.server else checkpoint[0], eval_thread_id(run.method, run.context, "*", repeat))
        async with held, _runner(run, repeat, checkpoint, meter, drain) as (saver, runner, concurrency):

            async def gated(task_id: str) -> dict[str, Any] | None:
                async with gate:
                    return await runner(task_id)

            try:
                summary = await evaluate(
                    run.method,
                    run.context,
                    run.tasks,
                    results,
                    saver,
                    concurrency,
                    on_row,
                    run=gated,
                    repeat=repeat,
                    label=run.label,
                    stop=drain,
                    reuse=reuse,
                )
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
    run: Run, repeat: int, checkpoint: tuple[str, Any], meter: RunMeter, drain: Stop
) -> AsyncIterator[tuple[Any, Callable[[str], Awaitable[dict[str, Any] | None]], int | Pacer]]:
    """Where the run's tasks run, as ``eval`` chooses it: a LangGraph server, worker
    processes, or here (each task's spending so far seeded into the meter from its thread).
    ``checkpoint``: the study's checkpoint URL and its saver, opened once for every run."""
    url, saver = checkpoint
    if run.server:
        from introspect.remote import ServerEvaluation

        assert run.concurrency != "auto"  # the spec refuses auto with a server or workers
        server = ServerEvaluation(run.server, run.method, run.context)
        await server.check()
        yield None, server.run_one, run.concurrency
    elif run.workers > 1:
        from introspect.workers import WorkerPool

        assert run.concurrency != "auto"  # the checkpoints were created when the study opened them
        async with WorkerPool(run.workers, run.concurrency, run.method, run.context, url, None) as pool:
            yield None, pool.run_one, run.workers * run.concurrency
    else:

        async def here(task_id: str) -> dict[str, Any] | None:
            thread = eval_thread_id(run.method, run.context, task_id, repeat)
            reached = await outcome_of(run.method, thread, saver)
            usage = reached.state.get("usage") or {}
            meter.task_spent[task_id] = {**spending(usage), "seconds": 0.0}
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


def write_report(folder: Path) -> Path | None:
    """The report over every results file of the study, into ``report/`` (``introspect report
    --out``'s own code: Markdown, figures and an index page linking the pages in ``views/``);
    None while the study has no rows."""
    from introspect.report import published_in
    from introspect.report import write_report as write_folder
    from introspect.report.ablation import ABLATIONS

    files = [p for p in results_files(folder) if read_rows(p)]
    if not files:
        return None
    write_folder(
        files,
        folder / "report",
        ablations=[p for p in (folder / ABLATIONS,) if p.is_file()],
        published=published_in([folder]),
    )
    return folder / "report"


async def write_viewer(folder: Path, checkpoint: str | None) -> list[Path]:
    """The viewer's pages of every results file's runs, into ``views/<label>.r<K>/``, and the
    comparisons the report links (each env's first configuration against each other one, per
    task: introspect.report.tasks), into ``views/compare/``."""
    from introspect.report.tasks import write_comparisons
    from introspect.view import write_views

    url = checkpoint_url(folder, checkpoint)
    if url.startswith("sqlite:///") and not Path(url.removeprefix("sqlite://")).is_file():
        return []  # tasks that ran on a server keep their checkpoints there
    pages = [await write_views(str(path), folder / "views" / path.stem, url) for path in results_files(folder)]
    return pages + await write_comparisons([p for p in results_files(folder) if read_rows(p)], folder / "views", url)


def status_lines(folder: Path) -> list[str]:
    """Progress per run and repeat, from the journal's latest plan and the results files."""
    plan = journal.latest_plan(folder)
    if not (folder / SPEC).is_file() or plan is None:
        raise StudyError(f"{folder} is not a study folder (no {SPEC} and journal)")
    lines = []
    total_cost: list[float | None] = []
    arms = [(f"{r['label']}{SUFFIX}", r) for r in plan]  # a run's equal-cost arm, shown when it has rows
    for label, run in [(r["label"], r) for r in plan] + arms:
        for repeat in range(1, int(run["repeats"]) + 1):
            path = folder / "results" / f"{label}.r{repeat}.jsonl"
            if label != run["label"] and not path.is_file():
                continue
            latest = {str(r["task_id"]): r for r in read_rows(path) if r.get("label") == label}
            rows = [latest[t] for t in run["tasks"] if t in latest]
            done = sum(1 for r in rows if not r.get("error"))
            errors = len(rows) - done
            cost = sum_costs(r.get("cost_usd") for r in rows)
            total_cost.append(cost)
            state = "done" if done == len(run["tasks"]) else "unfinished"
            lines.append(
                f"{label} r{repeat}: {done}/{len(run['tasks'])} finished, {errors} errored, "
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
