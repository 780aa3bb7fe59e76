"""``introspect train METHOD``: learn a plan (AutoPlan)."""

from __future__ import annotations

import argparse
import uuid
from pathlib import Path

from envs.base import make_env
from graphs import method_named
from introspect.asking import answer_all
from introspect.checkpoint import open_checkpointer, thread_exists
from introspect.commands.arguments import method_argument, run_options
from introspect.commands.command import Command
from introspect.console import print_training, training_printer
from introspect.gaveup import resumable, resume_command
from introspect.options import UsageError, called_models, context_from, start_local_models
from nodes.runtime.context import TrainingContext


async def cmd_train(args: argparse.Namespace) -> int:
    from introspect.training import train

    method = method_named(args.method)
    if method.training is None:
        raise UsageError(f"{method.name} has no training phase")
    from nodes.runtime.served import check_served  # the model stack loads only when a command runs

    context = context_from(args, method, model_named="--model")
    assert isinstance(context, TrainingContext)  # a method with a training phase declares such settings
    method.check(context, True)
    tasks = method.training.pool(make_env(context.env, **context.env_settings()), args.split, args.task_type)
    await check_served({**called_models(context), **context.training_models()})  # before anything runs
    await start_local_models(context)
    plan_out = Path(args.plan_out)
    thread_id = args.thread or f"train-{method.name}-{uuid.uuid4().hex[:10]}"
    async with open_checkpointer(args.checkpoint) as saver:
        if args.thread and await thread_exists(saver, args.thread):
            raise UsageError(
                f"thread {args.thread!r} already exists: continue it with "
                f"`{resume_command(args.thread, args.checkpoint)}`"
            )
        print(
            f"thread: {thread_id}  training {method.name} on {len(tasks)} {context.env} tasks: batch "
            f"{min(context.batch_size, len(tasks))}, {context.iterations} iterations",
            flush=True,
        )
        if len(tasks) < context.batch_size:
            print(
                f"note: the training pool has only {len(tasks)} tasks, fewer than --batch {context.batch_size}: "
                f"every batch is the whole pool",
                flush=True,
            )
        with resumable(thread_id, args.checkpoint):
            record = await train(
                method,
                context,
                task_ids=tasks,
                plan_out=plan_out,
                checkpointer=saver,
                thread_id=thread_id,
                on_update=training_printer(method),
                on_question=answer_all,
            )
    print_training(record, plan_out)
    return 0


def arguments(parser: argparse.ArgumentParser) -> None:
    method_argument(parser)
    parser.add_argument("--task-type", help="only tasks of this type (ALFWorld)")
    parser.add_argument("--split")
    parser.add_argument("--batch", type=int, help="tasks per batch (default 4)")
    parser.add_argument("--iterations", type=int, help="training iterations (default 3)")
    parser.add_argument("--plan-out", default="plans/plan.json")
    parser.add_argument("--thread")
    run_options(parser)


COMMAND = Command("train", "learn a plan (AutoPlan)", arguments, cmd_train, method_help=True)
