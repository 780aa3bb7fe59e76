"""Enough tasks to decide: how many task runs a paired comparison of success needs, for
``study run --dry-run`` (introspect.study.command) before anything runs.

The report compares each configuration on an env with the env's first one, task by task, and
tests the difference with McNemar's test, Holm-corrected over its comparisons
(introspect.report.decisions). The number of paired tasks that test needs to detect a difference
``delta`` in success rate, with power ``POWER`` at a two-sided level ``alpha`` (Connor 1987, the
sample size of McNemar's test for paired proportions), is

    n = (z_{1 - alpha/2} * sqrt(psi) + z_{power} * sqrt(psi - delta^2))^2 / delta^2

where psi is the discordance: the share of tasks on which the two configurations disagree (one
succeeds, the other fails); delta can be no larger than psi. Assumptions, each said in the line
the dry run prints:

- delta is the study's ``min_detectable`` (default 0.05: five points of success rate);
- psi is measured on earlier rows when two of the study's runs on one env have at least
  ``MIN_SHARED`` tasks (and repeats) in common in them (the rows the cost estimate reads:
  introspect.study.estimate), else the study's ``discordance``, else ``DISCORDANCE``; it is
  never taken below delta;
- alpha is ``ALPHA`` divided by the study's number of comparisons (on each env, its runs but the
  first): Holm's first step, the strictest, so the figure holds for every comparison;
- a repeat of a task counts as another paired task: true when runs of a task vary independently,
  optimistic when they agree with each other (then more tasks, not repeats, are needed).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from statistics import NormalDist

from introspect.report.decisions import ALPHA
from introspect.study.estimate import similar_rows, study_files
from introspect.study.spec import Run, Study

POWER = 0.8
DISCORDANCE = 0.2  # assumed share of tasks on which two configurations disagree
MIN_SHARED = 10  # paired task runs earlier rows must share to measure the discordance


def tasks_needed(delta: float, discordance: float, alpha: float = ALPHA, power: float = POWER) -> int:
    """Paired task runs for McNemar's test to detect ``delta`` (see the module docstring)."""
    if not 0 < delta <= discordance <= 1:
        raise ValueError("need 0 < delta <= discordance <= 1")
    normal = NormalDist()
    z_alpha, z_power = normal.inv_cdf(1 - alpha / 2), normal.inv_cdf(power)
    root = z_alpha * math.sqrt(discordance) + z_power * math.sqrt(discordance - delta**2)
    return math.ceil(root**2 / delta**2)


def discordance_of(a: Iterable[dict], b: Iterable[dict]) -> tuple[float, int] | None:
    """The share of task runs (task, repeat) both sets of rows ran on which their success differs,
    and how many they share; None when they share none."""
    first = {(str(r["task_id"]), int(r.get("repeat") or 1)): bool(r.get("success")) for r in a}
    second = {(str(r["task_id"]), int(r.get("repeat") or 1)): bool(r.get("success")) for r in b}
    shared = [key for key in first if key in second]
    if not shared:
        return None
    return sum(first[k] != second[k] for k in shared) / len(shared), len(shared)


@dataclass(frozen=True)
class Need:
    """What one env's comparisons need: the discordance used (and where it came from) and the
    paired task runs per configuration."""

    env: str
    discordance: float
    source: str
    task_runs: int


def comparisons(study: Study) -> dict[str, list[Run]]:
    """The study's runs by env, in order: the report compares each with its env's first."""
    out: dict[str, list[Run]] = defaultdict(list)
    for run in study.runs:
        out[run.context.env].append(run)
    return dict(out)


def needs(study: Study, folder: Path, earlier: Iterable[Path] = ()) -> tuple[list[Need], int]:
    """Each env's need, and the number of comparisons the alpha is divided by."""
    groups = comparisons(study)
    count = max(1, sum(len(runs) - 1 for runs in groups.values()))
    files = study_files(folder, earlier)
    out = []
    for env, runs in groups.items():
        measured = [
            found
            for run in runs[1:]
            if (found := discordance_of(similar_rows(runs[0], files), similar_rows(run, files))) is not None
        ]
        shared = sum(n for _, n in measured)
        if shared >= MIN_SHARED:
            psi = sum(d * n for d, n in measured) / shared
            source = f"measured on {shared} task runs of earlier rows"
        elif study.discordance is not None:
            psi, source = study.discordance, "the study's discordance"
        else:
            psi, source = DISCORDANCE, "assumed"
        if psi < study.min_detectable:
            psi, source = study.min_detectable, f"{source}, raised to min_detectable"
        out.append(Need(env, psi, source, tasks_needed(study.min_detectable, psi, ALPHA / count, POWER)))
    return out, count


def lines(study: Study, folder: Path, earlier: Iterable[Path] = ()) -> list[str]:
    """The dry run's lines on power: the assumptions once, then per env what its runs need and have."""
    found, count = needs(study, folder, earlier)
    alpha = ALPHA / count
    out = [
        f"power: to detect a difference of {100 * study.min_detectable:.1f} points of success (min_detectable) "
        f"with power {POWER}, paired (McNemar), two-sided alpha {ALPHA} over {count} comparison(s) "
        f"(Holm's strictest step: {alpha:.4g}), a repeat counted as another task:"
    ]
    runs = comparisons(study)
    for need in found:
        out.append(
            f"  {need.env}: {need.task_runs} task runs (tasks x repeats) per configuration, at a discordance of "
            f"{need.discordance:.2f} ({need.source})"
        )
        for run in runs[need.env]:
            have = len(run.tasks) * run.repeats
            standing = "enough" if have >= need.task_runs else f"short by {need.task_runs - have}"
            out.append(f"    {run.label}: {len(run.tasks)} tasks x {run.repeats} = {have}: {standing}")
    return out
