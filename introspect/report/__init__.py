"""``introspect report``: what an evaluation found, as the papers report it.

From results files of ``introspect eval`` (and optionally plan records of ``introspect
train``) it prints the runs (model, settings, tasks, success, tokens, cost, time), each
method's own tables (as its ``Method.report`` declares them), a side-by-side comparison
with paired bootstrap intervals when there are several configurations, and the failures with
their stop reasons; ``--markdown FILE`` writes the same as Markdown and ``--plots DIR`` the
figures. ``--out DIR`` (``write_report``, which ``introspect study`` calls with a study's results
files and its ``report/`` folder) writes all of it into one folder: ``report.md``, the PNGs,
``index.html``, which also links the viewer pages of a sibling ``views/`` folder, and the script
that sorts and filters its tables (``tables.js``). Every input
is read and checked before anything is printed or written.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from introspect.report.load import ReportInputError

if TYPE_CHECKING:
    from introspect.report.contents import Section
    from introspect.study.published import Published
    from nodes.report import Config

# The tables, numpy, rich and matplotlib are imported by the command, not here: the CLI imports
# this package to register ``report``, and `introspect --help` stays light.


def _check_targets(markdown: Path | None, plots: Path | None, out: Path | None = None) -> None:
    if markdown is not None and (markdown.is_dir() or (markdown.parent.exists() and not markdown.parent.is_dir())):
        raise ReportInputError(f"--markdown {markdown} is a directory, or its folder is a file")
    for option, folder in (("--plots", plots), ("--out", out)):
        if folder is not None and folder.exists() and not folder.is_dir():
            raise ReportInputError(f"{option} {folder} is a file, not a folder")


MARKDOWN, INDEX = "report.md", "index.html"


def write_report(
    results: Sequence[Path],
    out: Path,
    training: dict[str, dict[str, Any]] | None = None,
    published: Sequence[Published] = (),
    ablations: Sequence[Path] = (),
) -> Path:
    """The whole report of ``results`` (and of the ablation results ``ablations``) in folder
    ``out``: ``report.md``, the PNG figures and ``index.html`` (linking the viewer pages of
    ``out``'s sibling ``views/`` when there is one), with ``published`` (a study's paper numbers)
    beside the reproduced ones; returns the index page. Raises ReportInputError, having written
    nothing, when a file is not results or ``out`` is a file."""
    from introspect.report.ablation import ablations_in
    from introspect.report.contents import report_sections
    from introspect.report.load import configurations

    _check_targets(None, None, out)
    configs = configurations(list(results))
    sections = report_sections(configs, training or {}, published, ablations_in([], list(ablations)))
    return _write_folder(configs, sections, training or {}, [str(p) for p in results], out)


def _write_folder(
    configs: list[Config],
    sections: list[Section],
    training: dict[str, dict[str, Any]],
    sources: list[str],
    out: Path,
) -> Path:
    from introspect.report import index, render
    from introspect.report import plots as figures

    out.mkdir(parents=True, exist_ok=True)
    written = figures.write(configs, training, out)
    tables = [t for section in sections for t in section.tables]
    (out / MARKDOWN).write_text(render.markdown(tables, sources, written, out / MARKDOWN), encoding="utf-8")
    page = out / INDEX
    (out / index.SCRIPT).write_text(index.script(), encoding="utf-8")
    page.write_text(index.page(sections, written, configs, page, out.parent / "views"), encoding="utf-8")
    return page


def published_in(paths: Sequence[Path]) -> list[Published]:
    """The paper numbers of the studies ``paths`` belong to (a study folder, or a results file in
    one's ``results/``), each study once."""
    from introspect.finding import study_holding
    from introspect.study.folder import SPEC
    from introspect.study.published import of_spec

    studies = dict.fromkeys(s for s in map(study_holding, paths) if s is not None)
    return [p for study in studies for p in of_spec(study / SPEC)]


def command(args: argparse.Namespace) -> int:
    """The ``report`` subcommand (introspect.cli registers it)."""
    from introspect.report import plots as figures
    from introspect.report import render
    from introspect.report.contents import report_sections
    from introspect.report.load import configurations, read_training

    markdown = Path(args.markdown) if args.markdown else None
    folder = Path(args.plots) if args.plots else None
    out = Path(args.out) if args.out else None
    _check_targets(markdown, folder, out)
    from introspect.finding import results_in
    from introspect.report.ablation import ablations_in

    results = results_in([Path(p) for p in args.results])
    configs = configurations(results)
    training = {Path(p).name: read_training(Path(p)) for p in args.training or []}
    ablations = ablations_in([Path(p) for p in args.results], [Path(p) for p in args.ablations or []])
    sections = report_sections(configs, training, published_in([Path(p) for p in args.results]), ablations)
    tables = [t for section in sections for t in section.tables]
    render.terminal(tables)
    written = figures.write(configs, training, folder) if folder is not None else []
    for path in written:
        print(f"plot: {path}")
    if markdown is not None:
        markdown.parent.mkdir(parents=True, exist_ok=True)
        markdown.write_text(render.markdown(tables, [str(p) for p in results], written, markdown), encoding="utf-8")
        print(f"markdown: {markdown}")
    if out is not None:
        print(f"report: {_write_folder(configs, sections, training, [str(p) for p in results], out)}")
    return 0
