"""``introspect study run|status|report``: the command's three actions (introspect.commands.study declares them).

Exit status of ``study run``: 0 when every task of every run and repeat ran to an outcome;
1 when some task errored (a model that gave up: running the study again tries it again);
2 for a study file that cannot run (nothing is written); 3 when a budget stopped the study
(the line says what it spent and how to continue).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from introspect.evaluate import read_rows
from introspect.options import called_models, start_local_models
from introspect.runlock import results_lock
from introspect.study import journal, power
from introspect.study.baseline import forecast_line
from introspect.study.budget import BudgetReached
from introspect.study.estimate import ASSUMED, Bound, against_budgets, duration, estimate
from introspect.study.folder import SPEC, folder_checkpoint, results_files
from introspect.study.run import (
    STOPPED,
    Outcome,
    check_continuation,
    check_stores,
    execute,
    folder_of,
    identity,
    in_flight,
    make_folder,
    say,
    status_lines,
    warn,
    write_report,
    write_viewer,
)
from introspect.study.spec import Study, StudyError, load
from nodes.runtime.usage import dollars, sum_costs


def cmd_run(args: argparse.Namespace) -> int:
    study = load(Path(args.spec), models=not args.dry_run)  # a dry run needs no key
    folder = folder_of(study, args.out)
    check_continuation(study, folder)
    earlier = [Path(p) for p in args.earlier or []]
    for path in earlier:
        if not path.is_file():
            raise StudyError(f"--earlier {path}: no such results file")
    if args.dry_run:
        forecast(study, folder, earlier)
        say(f"study {study.name}: nothing was run or written")
        return 0
    from nodes.runtime.served import check_served  # the model stack loads only when a command runs

    asyncio.run(check_served(study_models(study)))  # every model of every run, before anything is written
    asyncio.run(start_models(study))  # the embedded model's servers, as eval starts them: not within a first call
    asyncio.run(check_stores(study))  # its checkpoint database and servers, before its folder
    make_folder(folder)  # a folder that cannot be made is refused before a line is printed
    forecast(study, folder, earlier)
    with results_lock(folder / journal.NAME, "give another --out"):  # one process per study (introspect.runlock)
        (folder / SPEC).write_text(study.text, encoding="utf-8")
        journal.append(folder, "session", spec=str(args.spec), argv=sys.argv[1:])
        journal.append(folder, "plan", runs=[identity(run) for run in study.runs])
        say(f"study {study.name}: {len(study.runs)} runs into {folder}")
        outcome = asyncio.run(_session(study, folder))
    report = write_report(folder)
    if report is not None:
        say(f"report: {report / 'index.html'}  views: {folder / 'views'}")
    return _ending(study, folder, outcome, args)


def study_models(study: Study) -> dict[str, str]:
    """The models the study's runs will call, by the key of the study file that sets each
    (``run 2 settings.judge``)."""
    keys = {"--model": "model", "--set ": "settings.", "--env-option ": "env_options."}
    models: dict[str, str] = {}
    for run in study.runs:
        for option, spec in called_models(run.context).items():
            key = next(option.replace(flag, name) for flag, name in keys.items() if option.startswith(flag))
            models[f"{run.label} {key}"] = spec
    return models


async def start_models(study: Study) -> None:
    """Start the embedded model's servers (``local``, ``gguf:``) of the runs that call it here,
    before anything is written: a file llama.cpp cannot load is refused in one line, and the first
    call does not spend its timeout waiting for a server to start (workers start their own)."""
    for run in study.runs:
        if not run.server and run.workers <= 1:
            await start_local_models(run.context)


async def _session(study: Study, folder: Path) -> Outcome:
    outcome = await execute(study, folder, say)
    await write_viewer(folder, study.checkpoint)
    return outcome


def _ending(study: Study, folder: Path, outcome: Outcome, args: argparse.Namespace) -> int:
    again = f"introspect study run {args.spec}" + (f" --out {args.out}" if args.out else "")
    errors = [(label, r, task, e) for label, r, s in outcome.summaries for task, e in s.errors]
    task_budget = [e for e in errors if e[3].startswith(BudgetReached.__name__)]
    if outcome.signal is not None and outcome.signal.signal is not None:
        journal.append(folder, "stopped", reason=outcome.signal.signal.name, spent_usd=round(outcome.spent, 6))
        warn(outcome.signal.line("", f"run `{again}` to continue"))
        return outcome.signal.exit_status()
    if outcome.stopped or task_budget:
        which = outcome.stopped or f"{_task_budget(task_budget[0][3])} ({len(task_budget)} tasks)"
        journal.append(folder, "stopped", reason=f"{which} reached", spent_usd=round(outcome.spent, 6))
        warn(
            f"introspect: stopped: {which} reached; the study has spent ${outcome.spent:.4f} "
            f"({outcome.tokens:.0f} tokens, {outcome.seconds:.0f} task-seconds) and its "
            f"tasks in flight are checkpointed. To continue, raise the budget in {args.spec} and run `{again}`"
        )
        return STOPPED
    journal.append(folder, "finished", spent_usd=round(outcome.spent, 6), errors=len(errors))
    if errors:
        warn(f"introspect: {len(errors)} task runs errored; `{again}` tries them again")
        return 1
    return 0


def _task_budget(error: str) -> str:
    """The task budget a ``BudgetReached`` row names: "task_max_tokens_total"."""
    return error.rpartition("(")[2].rstrip(")") or "a task's budget"


def forecast(study: Study, folder: Path, earlier: list[Path]) -> None:
    """Each run's tasks, the bound and the expectation of what they will spend, and where
    the expectation meets the study's budgets (read only: nothing is written)."""
    guesses = []
    for run in study.runs:
        shown = ", ".join(run.tasks[:5]) + (f", ... ({len(run.tasks)} tasks)" if len(run.tasks) > 5 else "")
        say(f"{run.label}: {run.method.name} on {run.context.env}, {run.context.model}, x{run.repeats}: {shown}")
        for why in run.blockers:  # a dry run goes on; `study run` refuses in this line
            say(f"  cannot run here: {why}")
        guess = estimate(run, folder, earlier)
        for line in guess.lines(run.concurrency if isinstance(run.concurrency, int) else 1):
            say(f"  {line}")
        if run.baseline:
            say(f"  {forecast_line(run.baseline)}")
        guesses.append(guess)
    known = [g.expected for g in guesses if g.expected]
    calls, tokens = sum(e.calls for e in known), sum(e.input_tokens + e.output_tokens for e in known)
    cost = dollars(sum_costs(e.cost_usd for e in known))
    of = f" ({len(known)} of {len(guesses)} runs)" if len(known) < len(guesses) else ""
    expected = f"expected ~{calls:.0f} calls, ~{tokens:.0f} tokens, {cost}{of}" if known else "no expectation yet"
    say(f"study {study.name}: {bound_total([g.bound for g in guesses if g.bound], in_flight(study))}; {expected}")
    for line in against_budgets(study, guesses):
        say(f"  {line}")
    for line in power.lines(study, folder, earlier):
        say(line)


def bound_total(bounds: list[Bound], concurrency: int) -> str:
    """The study's bound: its runs' added up, with the time at the study's tasks in flight."""
    calls = sum(b.calls for b in bounds)
    tokens_in = None if any(b.input_tokens is None for b in bounds) else sum(b.input_tokens or 0 for b in bounds)
    tokens_out = sum(b.output_tokens for b in bounds)
    tokens = (
        f"{tokens_out} output tokens (input not bounded)"
        if tokens_in is None
        else f"{tokens_out} output and {tokens_in} input tokens"
    )
    cost = sum_costs(b.cost_usd for b in bounds)
    seconds = sum(b.seconds for b in bounds) / concurrency
    return (
        f"at most {calls} model calls, {tokens}, "
        f"{dollars(cost)}{' (output)' if tokens_in is None and cost is not None else ''} (bound); "
        f"~{duration(seconds)} at {concurrency} in flight ({ASSUMED})"
    )


def cmd_status(args: argparse.Namespace) -> int:
    for line in status_lines(Path(args.folder)):
        say(line)
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    folder = Path(args.folder)
    status_lines(folder)  # refuses a folder that holds no study
    if not any(read_rows(p) for p in results_files(folder)):
        raise StudyError(f"{folder} has no results yet: run the study first")
    asyncio.run(write_viewer(folder, folder_checkpoint(folder)))  # the pages first: the report's index links them
    report = write_report(folder)
    assert report is not None
    say(f"report: {report / 'report.md'}  views: {folder / 'views'}")
    return 0
