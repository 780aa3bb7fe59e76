"""``introspect fork THREAD_ID --at CHECKPOINT_ID``: continue a run from one of its checkpoints
(the work is in ``introspect.timetravel``)."""

from __future__ import annotations

import argparse

from introspect.commands.arguments import run_options
from introspect.commands.command import Command, lazy


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("thread_id")
    parser.add_argument(
        "--at",
        required=True,
        metavar="CHECKPOINT_ID",
        help="the step to continue from: a checkpoint id (or its unique prefix) that introspect history lists; "
        "--checkpoint names the database the thread is in",
    )
    parser.add_argument("--thread", help="the new thread's id (default THREAD_ID-fork-XXXXXX)")
    run_options(parser)


COMMAND = Command(
    "fork",
    "continue a run from one of its checkpoints on a new thread",
    arguments,
    lazy("introspect.timetravel", "cmd_fork"),
)
