"""``introspect report``: each method's paper tables, comparisons and plots from results files
(the work is in ``introspect.report``)."""

from __future__ import annotations

import argparse

from introspect.commands.command import Command
from introspect.report import command


def arguments(parser: argparse.ArgumentParser) -> None:
    """``introspect report RESULTS.jsonl [MORE.jsonl ...] [--out DIR] [--markdown FILE] [--plots DIR]
    [--training PLANS.json] [--ablations ABLATIONS.jsonl]``."""
    parser.add_argument(
        "results",
        nargs="+",
        metavar="RESULTS.jsonl|STUDY",
        help="results files written by `introspect eval`, or study folders (their results/*.jsonl)",
    )
    parser.add_argument(
        "--out", metavar="DIR", help="write the whole report into this folder: report.md, the PNGs and index.html"
    )
    parser.add_argument("--markdown", metavar="FILE", help="also write the report as Markdown")
    parser.add_argument("--plots", metavar="DIR", help="write PNG figures into this folder")
    parser.add_argument(
        "--training",
        action="append",
        metavar="PLANS.json",
        help="a plan record of `introspect train` (--plan-out): AutoPlan's success per iteration",
    )
    parser.add_argument(
        "--ablations",
        action="append",
        metavar="ABLATIONS.jsonl",
        help="the rows of `introspect ablate`: what each intervention earned (a study folder's own are read)",
    )


COMMAND = Command("report", "each method's paper tables, comparisons and plots from eval results", arguments, command)
