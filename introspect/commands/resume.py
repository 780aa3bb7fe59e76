"""``introspect resume THREAD_ID``: continue an interrupted run (or training) from its checkpoint."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from introspect.asking import answer_all
from introspect.checkpoint import open_checkpointer
from introspect.commands.arguments import checkpoint_option, record_options
from introspect.commands.command import Command
from introspect.console import print_outcome, print_training, training_printer, update_printer
from introspect.gaveup import resumable, resume_command
from introspect.runner import resume, thread_metadata, thread_method


async def cmd_resume(args: argparse.Namespace) -> int:
    from introspect.training import train

    async with open_checkpointer(args.checkpoint, existing=True) as saver:
        meta = await thread_metadata(saver, args.thread_id)
        with resumable(args.thread_id, args.checkpoint):
            if meta.get("introspect_training"):  # a training thread continues its training loop
                method = thread_method(meta, "introspect_training")
                context = method.context.from_dict(json.loads(meta["introspect_context"]))
                plan_out = Path(meta["introspect_plan_out"])
                record = await train(
                    method,
                    context,
                    task_ids=[],
                    plan_out=plan_out,
                    checkpointer=saver,
                    thread_id=args.thread_id,
                    resume=True,
                    on_update=training_printer(method),
                    on_question=answer_all,
                )
                print_training(record, plan_out)
                return 0
            printer = update_printer(thread_method(meta, "introspect_method"))
            outcome = await resume(saver, args.thread_id, printer, answer_all)
    print_outcome(outcome.state, args.thread_id, outcome.finished, resume_command(args.thread_id, args.checkpoint))
    return 0


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("thread_id")
    checkpoint_option(parser)
    record_options(parser)


COMMAND = Command("resume", "continue an interrupted run from its checkpoint", arguments, cmd_resume)
