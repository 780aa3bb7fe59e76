"""``introspect study run|status|report``: a study file's runs, their progress, their report
(the work is in ``introspect.study.command``, imported when the command runs)."""

from __future__ import annotations

import argparse

from introspect.commands.command import Command, lazy

WORK = "introspect.study.command"


def run_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("spec", metavar="SPEC.toml")
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="print each run's tasks and the bound and expectation of its calls, tokens, cost and time; "
        "run nothing (needs no key)",
    )
    parser.add_argument("--out", metavar="DIR", help="the study's folder (default studies/NAME in introspect's home)")
    parser.add_argument(
        "--earlier",
        action="append",
        metavar="RESULTS.jsonl",
        help="earlier results whose rows of the same configuration give the estimate's expectation (repeatable)",
    )


def folder_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("folder", metavar="DIR")


COMMAND = Command(
    "study",
    "run a study file: methods, settings and models compared, repeated, budgeted",
    actions=(
        Command("run", "run (or continue) the study SPEC.toml into its folder", run_arguments, lazy(WORK, "cmd_run")),
        Command("status", "progress per run and repeat of the study in DIR", folder_argument, lazy(WORK, "cmd_status")),
        Command(
            "report",
            "write the report and viewer pages of the study in DIR again",
            folder_argument,
            lazy(WORK, "cmd_report"),
        ),
    ),
)
