"""``introspect view``: a run's trajectory and model calls as HTML (the work is in ``introspect.view``)."""

from __future__ import annotations

import argparse

from introspect.commands.arguments import checkpoint_option
from introspect.commands.command import Command, lazy


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("target", metavar="THREAD_ID|RESULTS.jsonl|STUDY", nargs="?")
    parser.add_argument(
        "--compare",
        nargs=2,
        metavar=("A", "B"),
        help="two runs of one task side by side, step by step: thread ids, or results files with --task "
        "(a study's checkpoints are found without --checkpoint)",
    )
    parser.add_argument("--task", help="with --compare and results files: the task whose rows to compare")
    parser.add_argument(
        "--recording",
        metavar="FILE",
        help="a recording of the run (--record) to read model calls from where its checkpoints lack them",
    )
    parser.add_argument("--out", default="views", help="folder for the pages (default views)")
    parser.add_argument("--serve", action="store_true", help="then serve them on localhost")
    parser.add_argument("--port", type=int, default=8000)
    checkpoint_option(parser)


COMMAND = Command(
    "view",
    "a run's trajectory and model calls (or a results file's runs) as self-contained HTML",
    arguments,
    lazy("introspect.view", "cmd_view"),
)
