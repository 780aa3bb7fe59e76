"""``introspect ablate``: finished runs forked before each introspective intervention and run on
without it (the work is in ``introspect.ablation``)."""

from __future__ import annotations

import argparse

from introspect.commands.command import Command, lazy
from introspect.options import positive, positive_amount


def arguments(parser: argparse.ArgumentParser) -> None:
    """``introspect ablate RUNS... [--out FILE] [--intervention KIND] [--each] [--concurrency N] [--views DIR]
    [--model SPEC] [--max-cost-usd USD] [--max-tokens-total N] [--max-seconds S]``."""
    parser.add_argument("runs", nargs="+", metavar="RESULTS.jsonl|STUDY", help="results files or study folders")
    parser.add_argument(
        "--out",
        metavar="FILE",
        help="the ablation results (default: a study's ablations.jsonl, else beside the results)",
    )
    parser.add_argument("--intervention", action="append", metavar="KIND", help="only this kind (default: every kind)")
    parser.add_argument(
        "--each",
        action="store_true",
        help="fork before every time an intervention happened (default: its first time in each run, which "
        "gives the run without it)",
    )
    parser.add_argument("--concurrency", type=positive, default=4, metavar="N", help="forks in flight (default 4)")
    parser.add_argument(
        "--views",
        metavar="DIR",
        help="also write each fork beside its original as a viewer page (view --compare) into DIR",
    )
    parser.add_argument(
        "--model",
        metavar="SPEC",
        help="the model the forks run on, as eval's --model (default: each run's own; a run replayed from a "
        "recording needs one, since a recording answers only the requests it holds)",
    )
    budgets = parser.add_argument_group(
        "budgets (as a study's: what the forks spend; once spent, the rest are skipped)"
    )
    budgets.add_argument("--max-cost-usd", type=positive_amount, metavar="USD", help="dollars (a priced model)")
    budgets.add_argument("--max-tokens-total", type=positive, metavar="N", help="input plus output tokens (any model)")
    budgets.add_argument("--max-seconds", type=positive_amount, metavar="S", help="the forks' seconds, added up")
    parser.add_argument("--checkpoint", help="the checkpointer of the runs (default: a study's own, else introspect's)")


COMMAND = Command(
    "ablate",
    "fork finished runs before each introspective intervention, run on without it, record both outcomes",
    arguments,
    lazy("introspect.ablation.command", "cmd_ablate"),
)
