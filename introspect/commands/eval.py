"""``introspect eval METHOD``: a method on many tasks, into a results file."""

from __future__ import annotations

import argparse
import contextlib
import functools
import sys
from typing import TYPE_CHECKING, Any

from graphs import method_named
from introspect.checkpoint import default_url, open_checkpointer
from introspect.commands.arguments import method_argument, run_options
from introspect.commands.command import Command
from introspect.gaveup import errored_line, in_memory
from introspect.options import (
    UsageError,
    called_models,
    concurrency_option,
    context_from,
    positive,
    results_path,
    start_local_models,
    task_list,
)
from introspect.stopping import Stop, stopping_on_signals

if TYPE_CHECKING:
    from tqdm import tqdm

    from introspect.pacing import Pacer


async def cmd_eval(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from introspect.evaluate import eval_thread_id, evaluate, reused
    from introspect.runlock import run_lock
    from nodes.runtime.served import check_served  # the model stack loads only when a command runs

    method = method_named(args.method)
    context = context_from(args, method, model_named="--model")
    if context.confirm:
        raise UsageError("eval does not stop to ask a person: confirm is for run, resume and train")
    tasks = task_list(context, args.split, args.tasks)
    results = results_path(args.results, method, context)
    await check_served(called_models(context))  # every model the run will call, before anything runs
    pacer = checked_pacing(args)
    concurrency = pacer or args.concurrency
    if args.server:
        from introspect.remote import ServerEvaluation

        server = ServerEvaluation(args.server, method, context, on_step=lambda task_id, node: progress.step())
        await server.check()  # reachable, serving the graph: before the bar or any row
    # one process per run: refused here, before a row, a bar or a checkpoint (introspect.runlock)
    database = "" if args.server else args.checkpoint or default_url()
    if not args.server and args.workers <= 1:
        await start_local_models(context)  # workers and a server start their own; nothing written yet
    # the bar is closed on the way out, so a line printed after it (an error) starts on its own
    async with contextlib.AsyncExitStack() as shown:
        # opened first: a checkpoint home that cannot be written is the command's one line, nothing made
        saver = None if args.server else await shown.enter_async_context(open_checkpointer(args.checkpoint))
        await shown.enter_async_context(run_lock(results, database, eval_thread_id(method, context, "*")))
        reuse = await reused(method, context, results, tasks, args.keep_stale)
        for line in reuse.notes(f"{method.name} on {context.env} with {context.model}"):
            print(line, file=sys.stderr)
        print(to_run_line(len(tasks), len(reuse.finished)), file=sys.stderr)
        bar = shown.enter_context(
            tqdm(total=len(tasks), desc=f"{method.name} on {context.env}", unit="task", file=sys.stderr)
        )
        bar.update(len(reuse.finished))
        progress = Progress(bar)
        # every path evaluates these tasks into these results, showing each row on the bar
        tasks_into = functools.partial(evaluate, method, context, tasks, results, on_row=progress.row, reuse=reuse)
        if args.server:
            summary = await tasks_into(None, concurrency, run=server.run_one, forget=server.forget)
        elif args.workers > 1:
            from introspect.workers import WorkerPool

            slots = pacer.ceiling if pacer else args.concurrency  # per worker; the pacer admits fewer
            # the saver (checked and created once, before the workers) deletes a stale task's thread
            async with WorkerPool(
                args.workers, slots, method, context, args.checkpoint or default_url(), progress.retry, pacer
            ) as pool:
                summary = await tasks_into(saver, pacer or args.workers * slots, run=pool.run_one)
        else:
            with stopping_on_signals() as stop:
                summary = await tasks_into(saver, concurrency, on_retry=progress.retry, stop=stop)
            if stop.requested:
                bar.close()
                return stopped(stop, summary.tasks, len(tasks), in_memory(args.checkpoint))
        bar.close()
        print(f"results: {results}")
        print("\n".join(summary.lines()))
        if pacer:
            print(pacer.line())
        if summary.errors:
            kept = bool(args.server) or not in_memory(args.checkpoint)
            print(errored_line(len(summary.errors), summary.tasks, kept), file=sys.stderr)
            return 1
        return 0


def checked_pacing(args: argparse.Namespace) -> Pacer | None:
    """The pacer of ``--concurrency auto`` (None for a fixed number), once the options that
    go with it and with ``--workers`` and ``--server`` agree."""
    from introspect.pacing import DEFAULT_CEILING, Pacer

    if args.max_concurrency and args.concurrency != "auto":
        raise UsageError("--max-concurrency is the ceiling of --concurrency auto: add --concurrency auto")
    pacer = Pacer(args.max_concurrency or DEFAULT_CEILING) if args.concurrency == "auto" else None
    if args.workers > 1 and (args.checkpoint or default_url()) == "memory":
        raise UsageError("--workers share one checkpoint database: in-memory checkpoints are per process")
    if args.server:
        if args.checkpoint or args.workers > 1:
            raise UsageError(
                "--server runs the tasks and keeps their checkpoints on the server: drop --checkpoint and --workers"
            )
        if pacer:
            raise UsageError("--concurrency auto paces by the model's answers, which --server does not show here")
    return pacer


class Progress:
    """The evaluation's bar: each row, retry and (on a server) graph step moves or annotates it."""

    def __init__(self, bar: tqdm) -> None:
        self.bar = bar
        self.errors = 0
        self.retries = 0
        self.steps = 0

    def row(self, row: dict[str, Any]) -> None:
        self.errors += bool(row.get("error"))
        self.bar.update(1)
        self.bar.set_postfix(
            success=row["success"], reward=f"{row['reward']:.2f}", errors=self.errors, retries=self.retries
        )

    def step(self) -> None:
        """A graph step of a task on the server (the local path shows rows only)."""
        self.steps += 1
        self.bar.set_postfix(steps=self.steps, errors=self.errors, refresh=False)

    def retry(self, task_id: str, notice: str) -> None:
        self.retries += 1
        self.bar.write(f"  task {task_id}: {notice}", file=sys.stderr)


def to_run_line(asked: int, finished: int) -> str:
    """How many tasks will run, said before the first starts."""
    have = f" ({finished} already have their rows)" if finished else ""
    return f"{asked - finished} of {asked} tasks to run{have}"


def stopped(stop: Stop, written: int, asked: int, memory: bool) -> int:
    """The line a gracefully stopped evaluation ends with, and its exit status."""
    then = (
        "in-memory checkpoints are gone: the same command runs the rest again"
        if memory
        else "run the same command again to continue them from their checkpoints"
    )
    print(stop.line(f"{written} of {asked} tasks have their rows; ", then), file=sys.stderr)
    return stop.exit_status()


def arguments(parser: argparse.ArgumentParser) -> None:
    method_argument(parser)
    parser.add_argument("--tasks", help="slice START:STOP of the split's task list, or ids a,b,c")
    parser.add_argument("--split", help="the env's split or suite (e.g. paper-43)")
    parser.add_argument(
        "--concurrency",
        type=concurrency_option,
        default=4,
        help="tasks in flight (default 4), or auto: as many as the model's provider answers without 429s "
        "or timeouts (rises while requests succeed, halves on a refusal)",
    )
    parser.add_argument("--max-concurrency", type=positive, help="the ceiling of --concurrency auto (default 32)")
    parser.add_argument(
        "--keep-stale",
        action="store_true",
        help="reuse finished rows written by other prompts or code (by default they run again)",
    )
    parser.add_argument("--results", help="results JSONL (default results/METHOD-ENV-MODEL.jsonl)")
    parser.add_argument("--server", metavar="URL", help="run each task on this LangGraph server (langgraph-sdk)")
    parser.add_argument(
        "--workers",
        type=positive,
        default=1,
        help="worker processes sharing the checkpoint database (--concurrency tasks each)",
    )
    run_options(parser)


COMMAND = Command("eval", "evaluate a method on many tasks", arguments, cmd_eval, method_help=True)
