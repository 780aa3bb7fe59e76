"""The paper's published numbers beside the reproduced ones: one table per paper (method) whose
numbers a study carries (``[[published]]``, introspect.study.published).

Each published number is set beside every configuration that reproduces it (the study run it
names, else every configuration of its method on its env): the reproduced figure is the mean
over tasks of each task's value (its mean over repeats, so a task weighs the same however often
it ran), with the percentile bootstrap 95% interval over tasks (introspect.report.stats); the
difference is reproduced minus paper; and the paper's value is inside when the interval holds
it (a value the paper's source only bounds, ``between``: inside when the interval holds the
whole bound, outside when it holds none of it, else partly). A number no configuration has
reproduced yet is listed all the same, so a study's report shows what it is to be set against.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any

from graphs import methods
from introspect.report.stats import RESAMPLES, SEED, Difference, bootstrap_mean
from introspect.study.published import METRICS, Published
from nodes.autoplan.report import task_types
from nodes.report import NONE, Config, Table
from nodes.sr.report import completed, task_name

Row = dict[str, Any]


def _value(published: Published) -> Callable[[Row], float | None]:
    """A results row's value of ``published``'s metric (None: the row has none, an unpriced cost)."""
    metric = published.metric
    if metric == "success_rate":
        trials = published.trials
        return lambda r: float(completed(r, trials) if trials else bool(r.get("success")))
    if metric == "cost_usd":
        return lambda r: None if r.get("cost_usd") is None else float(r["cost_usd"])
    return lambda r: float(r.get(metric) or 0)


def reproduced(config: Config, published: Published) -> Difference | None:
    """The mean over ``config``'s tasks of ``published``'s metric and its interval; None when no
    task of the kind it counts ran to an outcome (or a cost is unpriced)."""
    rows = task_types(config).get(published.task_type, []) if published.task_type else config.ran
    if published.task is not None:
        rows = [r for r in rows if task_name(str(r["task_id"]), config.env) == published.task]
    value = _value(published)
    per_task: dict[str, list[float]] = defaultdict(list)
    for row in rows:
        got = value(row)
        if got is None:
            return None
        per_task[str(row["task_id"])].append(got)
    return bootstrap_mean([sum(v) / len(v) for v in per_task.values()])


def inside(published: Published, found: Difference) -> str:
    """Whether the paper's value lies inside the reproduction's interval: yes, no, or partly
    (a bound that straddles an end of the interval)."""
    if found.low <= published.low and published.high <= found.high:
        return "yes"
    if published.high < found.low or published.low > found.high:
        return "no"
    return "partly"


def _shown(published: Published, value: float, signed: bool = False) -> str:
    kind = METRICS[published.metric][0]
    sign = "+" if signed else ""
    if kind == "share":
        return f"{100 * value:{sign}.1f}"
    if kind == "dollars":
        return f"{'-' if value < 0 else '+' if signed else ''}${abs(value):.4f}"
    return f"{value:{sign}.2f}"


def _paper(published: Published) -> str:
    low, high = _shown(published, published.low), _shown(published, published.high)
    return low if published.exact else f"{low} to {high}"


def _difference(published: Published, found: Difference) -> str:
    low = _shown(published, found.mean - published.high, signed=True)
    high = _shown(published, found.mean - published.low, signed=True)
    return low if published.exact else f"{low} to {high}"


def _what(published: Published) -> str:
    """The metric and what narrows it: ``success_rate, T=3, task click-widget``."""
    parts = [published.metric]
    parts += [f"T={published.trials}"] if published.trials else []
    parts += [f"task {published.task}"] if published.task else []
    parts += [f"type {published.task_type}"] if published.task_type else []
    return ", ".join(parts)


def _reproducing(published: Published, configs: list[Config]) -> list[Config]:
    return [
        c
        for c in configs
        if c.method == published.method
        and c.env == published.env
        and (published.run is None or c.run_label == published.run)
    ]


COLUMNS = [
    "paper's row",
    "where",
    "metric",
    "configuration",
    "model",
    "tasks",
    "reproduced [95% CI]",
    "paper",
    "difference",
    "paper's value inside the CI",
]


def paper_tables(configs: list[Config], published: list[Published]) -> list[Table]:
    """One table per paper whose numbers ``published`` carries, in the registry's order."""
    out = []
    for method in methods():
        mine = [p for p in published if p.method == method.name]
        if not mine:
            continue
        table = Table(
            f"{method.title} ({method.paper}): the paper's numbers beside the reproduced",
            COLUMNS,
            note="reproduced: the mean over tasks of each task's value (its mean over repeats), with a "
            f"percentile bootstrap 95% interval over tasks ({RESAMPLES} resamples, seed {SEED}); rates in %, "
            "reward x100; difference: reproduced - paper; a paper's value given as a bound (its source keeps "
            "only part of it) is inside when the interval holds all of it, partly when some",
        )
        for p in mine:
            first = [p.row or NONE, p.where, _what(p)]
            found = [(c, reproduced(c, p)) for c in _reproducing(p, configs)]
            if not found:
                table.rows.append([*first, "(not run yet)", NONE, "0", NONE, _paper(p), NONE, NONE])
            for config, figure in found:
                cells = [config.label, config.model_name]
                if figure is None:
                    table.rows.append([*first, *cells, "0", NONE, _paper(p), NONE, NONE])
                    continue
                shown = f"{_shown(p, figure.mean)} [{_shown(p, figure.low)}, {_shown(p, figure.high)}]"
                table.rows.append(
                    [*first, *cells, str(figure.n), shown, _paper(p), _difference(p, figure), inside(p, figure)]
                )
            if p.note:
                table.note += f"; {p.where} {p.row}: {p.note}"
        out.append(table)
    return out
