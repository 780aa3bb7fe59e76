"""What a report holds, in the order it is shown."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from graphs import methods
from graphs.method import Method
from introspect.report.ablation import ablation_tables
from introspect.report.baselines import baselines_table
from introspect.report.calibration import calibration_table
from introspect.report.decisions import decisions_table
from introspect.report.papers import paper_tables
from introspect.report.repeats import curve_errors
from introspect.report.tables import (
    by_env,
    comparison_table,
    comparisons,
    configurations_table,
    failures,
    repeats_table,
    runs,
    stop_reasons,
    templates,
)
from introspect.study.published import Published
from nodes.report import Config, Curves, Figure, Table


def _mine(method: Method, configs: list[Config]) -> list[Config]:
    return [c for c in configs if c.method == method.name]


def _training(method: Method, training: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The plan records, for a method with a training phase (the records are of its training)."""
    return training if method.training is not None else {}


@dataclass(frozen=True)
class Section:
    """A heading of the report and its tables, in the order shown."""

    heading: str
    tables: list[Table]


ANSWER, METHODS, RUNS = "The answer", "Each method's tables", "The runs"


def report_sections(
    configs: list[Config],
    training: dict[str, dict[str, Any]],
    published: Sequence[Published] = (),
    ablations: Sequence[dict[str, Any]] = (),
) -> list[Section]:
    """What the report holds, the answer first: the paper's published numbers beside the
    reproduced ones (introspect.report.papers), the paired comparisons of configurations on the
    same tasks with their intervals (several on an env), which of their differences are decided
    (introspect.report.decisions), each study run against its equal-cost baseline arm
    (introspect.report.baselines), what each intervention earned (``ablations``: rows of
    ``introspect ablate``, introspect.report.ablation) and the comparison of every configuration;
    then each method's paper tables (``Method.report``, in the registry's order), WebArena's
    per-template average and the calibration of the methods' own verdicts
    (introspect.report.calibration); then the runs: the configurations and their runs, pass@k and
    pass^k (when tasks were repeated), and the failures, by stop reason and with examples."""
    answer = paper_tables(configs, list(published)) + comparisons(configs)
    answer += [t for t in (decisions_table(configs), baselines_table(configs)) if t is not None]
    answer += ablation_tables(list(ablations))
    answer.append(comparison_table(configs))
    own: list[Table] = []
    for method in methods():
        mine, records = _mine(method, configs), _training(method, training)
        if mine or records:
            own += method.report.tables(mine, records)
    own += [t for t in (templates(configs), calibration_table(configs)) if t is not None]
    done = [configurations_table(configs), runs(configs)]
    done += [t for t in (repeats_table(configs),) if t is not None]
    done += [stop_reasons(configs), failures(configs)]
    return [Section(ANSWER, answer), Section(METHODS, own), Section(RUNS, done)]


def report_tables(
    configs: list[Config],
    training: dict[str, dict[str, Any]],
    published: Sequence[Published] = (),
    ablations: Sequence[dict[str, Any]] = (),
) -> list[Table]:
    """Every table of the report, in its sections' order (report_sections)."""
    return [t for section in report_sections(configs, training, published, ablations) for t in section.tables]


def method_figures(configs: list[Config], training: dict[str, dict[str, Any]]) -> list[Figure]:
    """Each method's figures (``Method.report``), in the registry's order: those of its
    configurations once per env (``NAME_ENV``: envs share no task, so one figure each), with
    error bars over each configuration's repeats; those of plan records once."""
    out: list[Figure] = []
    for method in methods():
        for env, group in by_env(_mine(method, configs)).items():
            for figure in method.report.figures(group, {}):
                out.append(_on_env(figure, env, method))
        if records := _training(method, training):
            out += method.report.figures([], records)
    return out


def _on_env(figure: Figure, env: str, method: Method) -> Figure:
    """``figure`` of one env's configurations, named for the env; a line figure with its error bars."""
    if isinstance(figure, Curves):
        figure = replace(figure, errors=curve_errors(figure, lambda one: method.report.figures(one, {})))
    return replace(figure, name=f"{figure.name}_{env}", title=f"{figure.title} on {env}")
