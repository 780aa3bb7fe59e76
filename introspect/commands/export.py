"""``introspect export``: trajectories as training data (the work is in ``introspect.export``)."""

from __future__ import annotations

import argparse

from introspect.commands.arguments import checkpoint_option
from introspect.commands.command import Command, lazy


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("source", metavar="RESULTS.jsonl|STUDY")
    parser.add_argument(
        "--format",
        required=True,
        choices=("chat", "steps"),
        help="chat: one line per model call, in OpenAI's fine-tuning format; steps: one line per env step "
        "with its observation, action, reward and the method's introspection",
    )
    parser.add_argument(
        "--per",
        choices=("call", "run"),
        default="call",
        help="chat lines: one per model call (earlier turns weight 0), or one per conversation of a run (a chat "
        "that goes on is one line, each reply trained once)",
    )
    parser.add_argument("--out", metavar="FILE", help="the JSONL to write (default NAME.FORMAT.jsonl here)")
    parser.add_argument("--success-only", action="store_true", help="only the runs that succeeded")
    parser.add_argument("--method", help="only this method's runs")
    parser.add_argument("--env", help="only the runs on this env")
    checkpoint_option(parser)


COMMAND = Command(
    "export",
    "a results file's or a study's trajectories as JSONL for training",
    arguments,
    lazy("introspect.export", "cmd_export"),
)
