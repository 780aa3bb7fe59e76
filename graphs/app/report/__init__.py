"""``introspect report``: what an evaluation found, as the papers report it.

From results files of ``introspect eval`` (and optionally plan records of ``introspect
train``) it prints the runs (model, settings, tasks, success, tokens, cost, time), each
method's own tables (as its ``Method.report`` declares them), a side-by-side comparison
with paired bootstrap intervals when there are several configurations, and the failures with
their stop reasons; ``--markdown FILE`` writes the same as Markdown and ``--plots DIR`` the
figures. Every input is read and checked before anything is printed or written.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from graphs.app.report.load import ReportInputError

# The tables, numpy, rich and matplotlib are imported by the command, not here: the CLI imports
# this package to register ``report``, and `introspect --help` stays light.


def _check_targets(markdown: Path | None, plots: Path | None) -> None:
    if markdown is not None and (markdown.is_dir() or (markdown.parent.exists() and not markdown.parent.is_dir())):
        raise ReportInputError(f"--markdown {markdown} is a directory, or its folder is a file")
    if plots is not None and plots.exists() and not plots.is_dir():
        raise ReportInputError(f"--plots {plots} is a file, not a folder")


def command(args: argparse.Namespace) -> int:
    """The ``report`` subcommand (graphs.app.cli registers it)."""
    from graphs.app.report import plots as figures
    from graphs.app.report import render
    from graphs.app.report.contents import report_tables
    from graphs.app.report.load import configurations, read_training

    markdown = Path(args.markdown) if args.markdown else None
    folder = Path(args.plots) if args.plots else None
    _check_targets(markdown, folder)
    configs = configurations([Path(p) for p in args.results])
    training = {Path(p).name: read_training(Path(p)) for p in args.training or []}
    tables = report_tables(configs, training)
    render.terminal(tables)
    written = figures.write(configs, training, folder) if folder is not None else []
    for path in written:
        print(f"plot: {path}")
    if markdown is not None:
        markdown.parent.mkdir(parents=True, exist_ok=True)
        markdown.write_text(render.markdown(tables, list(args.results), written, markdown), encoding="utf-8")
        print(f"markdown: {markdown}")
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    """``introspect report RESULTS.jsonl [MORE.jsonl ...] [--markdown FILE] [--plots DIR] [--training PLANS.json]``."""
    rp = sub.add_parser("report", help="each method's paper tables, comparisons and plots from eval results")
    rp.add_argument("results", nargs="+", metavar="RESULTS.jsonl", help="results files written by `introspect eval`")
    rp.add_argument("--markdown", metavar="FILE", help="also write the report as Markdown")
    rp.add_argument("--plots", metavar="DIR", help="write PNG figures into this folder")
    rp.add_argument(
        "--training",
        action="append",
        metavar="PLANS.json",
        help="a plan record of `introspect train` (--plan-out): AutoPlan's success per iteration",
    )
    rp.set_defaults(handler=command)
