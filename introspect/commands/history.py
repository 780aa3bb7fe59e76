"""``introspect history THREAD_ID``: a run's checkpoints (the work is in ``introspect.timetravel``)."""

from __future__ import annotations

import argparse

from introspect.commands.arguments import checkpoint_option
from introspect.commands.command import Command, lazy


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("thread_id")
    checkpoint_option(parser)


COMMAND = Command(
    "history",
    "list a run's checkpoints: id, step, node, action, reward",
    arguments,
    lazy("introspect.timetravel", "cmd_history"),
)
