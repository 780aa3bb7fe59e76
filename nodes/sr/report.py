"""Structured Reflection's tables as paper 002 reports them.

Completion rate at T trials (Appendix F, Tables 10-12): a task id is ``task/seed`` and an
episode is completed at T when it succeeded within its first T trials (the row's ``trials``
is the trial it ended in, so success with ``trials <= T``). A task's rate is over its seeds
(and their repeats: the paper reports "the correct completion rate over multiple runs");
a category's (1-screen-1-step, 1-screen-n-step, n-screen-n-step) and the overall rate are the
mean of its tasks' rates, so a task with more seeds does not weigh more.

Planning calls, staged vs iterative (Table 8), when the files hold both planners for the same
env and model and otherwise the same settings: per task, the planning calls summed over the
seeds that both configurations completed at their first trial ("T=1, success only") and over
the first three trials of every seed both ran ("T=3"), and the saving 1 - staged/iterative;
with repeats, a seed's run in repeat K is paired with the other planner's run in repeat K.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from nodes.report import NONE, Config, Curves, Figure, Table, mean, percent, repeat_of
from nodes.sr.context import SRContext

TRIALS = (1, 3, 5)  # the paper's columns
OTHER = "other"  # tasks outside the paper's 43, or an env without categories


def task_name(task_id: str, env: str) -> str:
    """The task a row ran: MiniWoB++'s ``task/seed`` without its seed (the paper's tables are per
    task, over seeds); any other env's id whole (an ALFWorld game's path is one game)."""
    return task_id.split("/", 1)[0] if env == "miniwob" else task_id


def completed(row: dict[str, Any], trials: int) -> bool:
    """Succeeded within its first ``trials`` trials."""
    return bool(row.get("success")) and int(row.get("trials") or 1) <= trials


def categories(config: Config) -> dict[str, str]:
    """Task name -> paper 002's category (MiniWoB++ only; the rest is ``other``)."""
    names = {task_name(str(r["task_id"]), config.env) for r in config.ran}
    if config.env != "miniwob":
        return dict.fromkeys(names, OTHER)
    # the paper's table of 43 tasks (no browser needed)
    from envs.miniwob.tasks import category

    return {name: category(name) or OTHER for name in names}


def per_task(config: Config, trials: int) -> dict[str, float]:
    """Completion rate at ``trials`` per task name, over its seeds."""
    by_task: dict[str, list[float]] = defaultdict(list)
    for row in config.ran:
        by_task[task_name(str(row["task_id"]), config.env)].append(float(completed(row, trials)))
    return {name: sum(values) / len(values) for name, values in by_task.items()}


def curve(config: Config, upto: int) -> list[float]:
    """Overall completion rate (mean over tasks) at 1..``upto`` trials."""
    return [mean(list(per_task(config, t).values())) or 0.0 for t in range(1, upto + 1)]


def _order(config: Config) -> list[str]:
    kinds = categories(config)
    if config.env == "miniwob":
        from envs.miniwob.tasks import CATEGORIES, PAPER_43

        rank = {name: i for i, name in enumerate(PAPER_43)}
        order = {c: i for i, c in enumerate(CATEGORIES)}
        return sorted(kinds, key=lambda n: (order.get(kinds[n], len(order)), rank.get(n, len(rank)), n))
    return sorted(kinds)


def completion_tables(config: Config) -> list[Table]:
    kinds = categories(config)
    rates = {t: per_task(config, t) for t in TRIALS}
    seeds: dict[str, int] = defaultdict(int)
    for row in config.ran:
        seeds[task_name(str(row["task_id"]), config.env)] += 1
    columns = [f"T={t}" for t in TRIALS]
    tasks = Table(
        f"Structured Reflection: completion rate (%) per task, {config.label}",
        ["category", "task", "runs (seeds x repeats)", *columns],
        note="Appendix F, Tables 10-12",
    )
    for name in _order(config):
        tasks.rows.append([kinds[name], name, str(seeds[name]), *(percent(rates[t][name]) for t in TRIALS)])
    groups = Table(
        f"Structured Reflection: completion rate (%) per category, {config.label}",
        ["category", "tasks", "episodes", *columns],
        note="a category's rate is the mean of its tasks' rates",
    )
    present = list(dict.fromkeys(kinds[name] for name in _order(config)))
    for kind in [*present, "all"]:
        names = [n for n in kinds if kind in ("all", kinds[n])]
        groups.rows.append(
            [
                kind,
                str(len(names)),
                str(sum(seeds[n] for n in names)),
                *(percent(mean([rates[t][n] for n in names])) for t in TRIALS),
            ]
        )
    return [tasks, groups]


def _planning_calls(row: dict[str, Any], trials: int) -> int:
    records = row.get("trial_records") or []
    return sum(int(r.get("planning_calls") or 0) for r in records[:trials])


def planning_table(staged: Config, iterative: Config) -> Table:
    table = Table(
        f"Structured Reflection: planning calls, iterative {iterative.label} (IP) vs staged {staged.label} (SP)",
        ["task", "T=1 success-only IP", "SP", "saving %", "T=3 IP", "SP", "saving %"],
        note="Table 8: T=1 over the seeds both completed at their first trial; T=3 over the first "
        "three trials of every seed both ran",
    )
    sp = {(str(r["task_id"]), repeat_of(r)): r for r in staged.ran}
    ip = {(str(r["task_id"]), repeat_of(r)): r for r in iterative.ran}
    shared = [t for t in sp if t in ip]
    for name in sorted({task_name(t, staged.env) for t, _ in shared}):
        ids = [t for t in shared if task_name(t[0], staged.env) == name]
        first = [t for t in ids if completed(sp[t], 1) and completed(ip[t], 1)]
        cells = []
        for chosen, trials in ((first, 1), (ids, 3)):
            calls_ip = sum(_planning_calls(ip[t], trials) for t in chosen)
            calls_sp = sum(_planning_calls(sp[t], trials) for t in chosen)
            cells += [str(calls_ip), str(calls_sp), percent(1 - calls_sp / calls_ip) if calls_ip else NONE]
        table.rows.append([name, *cells])
    return table


def tables(mine: list[Config], training: Mapping[str, dict[str, Any]] | None = None) -> list[Table]:
    """Completion rates per configuration, and Table 8 for every staged/iterative pair among
    Structured Reflection's configurations ``mine``."""
    out = [t for c in mine for t in completion_tables(c)]
    pairs: dict[tuple[Any, ...], dict[str, Config]] = defaultdict(dict)
    for c in mine:
        rest = tuple(sorted((k, str(v)) for k, v in c.settings.items() if k != "planning"))
        pairs[(c.env, c.model, rest)][str(c.settings.get("planning", "staged"))] = c
    for pair in pairs.values():
        if {"staged", "iterative"} <= set(pair):
            out.append(planning_table(pair["staged"], pair["iterative"]))
    return out


def figures(mine: list[Config], training: Mapping[str, dict[str, Any]] | None = None) -> list[Figure]:
    """Completion vs trials, one line per configuration that ran, each up to its own trial
    limit: a run allowed one trial has no completion rate at three."""
    ran = [c for c in mine if c.ran]
    if not ran:
        return []
    return [
        Curves(
            "sr_trials",
            "Structured Reflection: completion vs trials",
            "trials (T)",
            "completion rate (%)",
            [(c, curve(c, c.limit("max_trials", SRContext.default("max_trials")))) for c in ran],
        )
    ]
