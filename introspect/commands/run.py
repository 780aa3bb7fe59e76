"""``introspect run METHOD --task ID``: one task, streaming each step; ``--fork``/``--force`` on an existing thread."""

from __future__ import annotations

import argparse
import uuid
from typing import Any

from envs.base import make_env
from graphs import method_named
from graphs.method import Method
from introspect.asking import answer_all
from introspect.checkpoint import open_checkpointer, thread_exists
from introspect.commands.arguments import method_argument, run_options
from introspect.commands.command import Command
from introspect.console import print_outcome, update_printer
from introspect.gaveup import resumable, resume_command
from introspect.options import UsageError, context_from, start_local_models
from introspect.runner import ThreadError, drive, fork, outcome_of, thread_context
from nodes.runtime.context import Context


async def cmd_run(args: argparse.Namespace) -> int:
    method = method_named(args.method)
    if (args.fork or args.force) and not args.thread:
        raise UsageError("--fork and --force name an existing thread: add --thread ID")
    if not args.task and not args.fork:
        raise UsageError("run needs --task ID")
    context = context_from(args, method)
    await start_local_models(context)
    if args.task:
        env = make_env(context.env, **context.env_settings())
        try:
            env.check_task(args.task)
        finally:
            await env.close()
    thread_id = args.thread or f"{method.name}-{uuid.uuid4().hex[:10]}"
    graph_input: dict[str, Any] | None = {"task_id": args.task}
    async with open_checkpointer(args.checkpoint) as saver:
        if args.thread and await thread_exists(saver, args.thread):
            if args.fork:
                context, thread_id = await _fork(args, method, saver)
                graph_input = None
            elif args.force:
                await saver.adelete_thread(args.thread)
            else:
                state = "finished" if (await outcome_of(method, args.thread, saver)).finished else "unfinished"
                raise UsageError(
                    f"thread {args.thread!r} already exists ({state}): continue it with "
                    f"`{resume_command(args.thread, args.checkpoint)}`, or add --fork (continue a copy on a new "
                    "thread) or --force (start it over)"
                )
        elif args.fork:
            raise ThreadError(f"no checkpointed thread {args.thread!r} to fork")
        task = args.task or "(from the forked thread)"
        print(
            f"thread: {thread_id}  method: {method.name}  env: {context.env}  task: {task}  model: {context.model}",
            flush=True,
        )
        with resumable(thread_id, args.checkpoint):
            outcome = await drive(method, context, thread_id, saver, graph_input, update_printer(method), answer_all)
    print_outcome(outcome.state, thread_id, outcome.finished, resume_command(thread_id, args.checkpoint))
    return 0


async def _fork(args: argparse.Namespace, method: Method, saver: Any) -> tuple[Context, str]:
    """``run --thread ID --fork``: copy thread ID to a new thread that continues from ID's
    last checkpoint with ID's Context and this command's options over it; ID stays as it was."""
    source_method, base = await thread_context(saver, args.thread)
    if source_method is not method:
        raise UsageError(f"thread {args.thread!r} ran {source_method.name}, not {method.name}")
    where = await outcome_of(method, args.thread, saver)
    if where.finished:
        raise UsageError(
            f"thread {args.thread!r} has finished: there is nothing to continue; run the task "
            "again without --thread, or start it over with --force"
        )
    if args.task and args.task != str(where.state.get("task_id")):
        raise UsageError(f"thread {args.thread!r} runs task {where.state.get('task_id')!r}, not {args.task!r}")
    context = context_from(args, method, base)
    target = f"{args.thread}-fork-{uuid.uuid4().hex[:6]}"
    await fork(saver, args.thread, target)
    print(f"forked thread {args.thread} at its last checkpoint into {target}", flush=True)
    return context, target


def arguments(parser: argparse.ArgumentParser) -> None:
    method_argument(parser)
    parser.add_argument("--task", help="the task id (required unless --fork)")
    parser.add_argument(
        "--thread", help="thread id (default: a new one); an existing id is refused unless --fork or --force"
    )
    how = parser.add_mutually_exclusive_group()
    how.add_argument(
        "--fork",
        action="store_true",
        help="continue a copy of the unfinished thread --thread on a new thread, from its last "
        "checkpoint, with its settings and this command's options over them",
    )
    how.add_argument("--force", action="store_true", help="delete thread --thread and start the task over on it")
    run_options(parser)


COMMAND = Command("run", "run one task, streaming each step", arguments, cmd_run, method_help=True)
