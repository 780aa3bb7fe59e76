"""AutoPlan's tables as paper 004 reports them.

Table 3a (ALFWorld): success rate per task type (Pick, Light, Clean, Heat, Cool, Pick Two, the
type read from the game's folder name as ALFWorld names it) and over all games. Table 3b
(HotpotQA): the official exact match and F1 (an unanswered question, the step cap reached,
scores 0) and the judged accuracy the paper reports (over the questions a judge saw, an
unanswered one counting as wrong when the configuration was judged at all). Table 4: model
calls, tokens and cost per question (unpriced when the model has no list price). Training
(Figure 3): from the plan records ``introspect train`` wrote, the success rate of each
iteration's batch and the training cost per question; several records of one training
configuration (env, model, batch size, reflection: independent runs, as the paper's five)
are drawn as the paper draws them, the mean per iteration with a band of one standard
deviation, and tabled as mean ± standard deviation.
"""

from __future__ import annotations

from collections.abc import Mapping
from statistics import fmean, stdev
from typing import Any

from nodes.report import NONE, Config, Curves, Figure, Table, counted, mean, number, percent, rate, total_cost
from nodes.runtime.usage import dollars

TYPE_LABELS = ("Pick", "Light", "Clean", "Heat", "Cool", "Pick Two")  # in ALFWorld's type order, as Table 3a


def task_types(config: Config) -> dict[str, list[dict[str, Any]]]:
    """The rows that ran, by ALFWorld task type label."""
    from envs.alfworld.games import TASK_TYPES, task_type_of

    label = dict(zip(TASK_TYPES, TYPE_LABELS))
    out: dict[str, list[dict[str, Any]]] = {name: [] for name in TYPE_LABELS}
    for row in config.ran:
        out.setdefault(label.get(task_type_of(str(row["task_id"])), "other"), []).append(row)
    return out


def alfworld_table(configs: list[Config]) -> Table:
    table = Table(
        "AutoPlan: ALFWorld success rate (%) per task type (Table 3a)",
        ["configuration", *TYPE_LABELS, "All"],
        note="each cell: rate (games)",
    )
    for c in configs:
        types = task_types(c)
        cells = [
            f"{percent(rate(rows))} ({len(rows)})" if rows else NONE
            for name, rows in types.items()
            if name in TYPE_LABELS
        ]
        table.rows.append([c.label, *cells, f"{percent(rate(c.ran))} ({len(c.ran)})"])
    return table


def hotpotqa_scores(config: Config) -> dict[str, Any]:
    """EM, F1 and judged accuracy over the questions that ran."""
    ran = config.ran
    evaluations = [r.get("evaluation") or {} for r in ran]
    judged = [e.get("judge") for e in evaluations]
    any_judged = any(v is not None for v in judged)
    return {
        "questions": counted(ran),
        "answered": sum("answer" in e for e in evaluations),
        "em": mean([float(e.get("em") or 0) for e in evaluations]),
        "f1": mean([float(e.get("f1") or 0) for e in evaluations]),
        "judge": mean([float(bool(v)) for v in judged]) if any_judged else None,
        "success": rate(ran),
        "judged_by": ", ".join(dict.fromkeys(str(e["judged_by"]) for e in evaluations if e.get("judged_by"))),
    }


def hotpotqa_table(configs: list[Config]) -> Table:
    table = Table(
        "AutoPlan: HotpotQA (Table 3b)",
        [
            "configuration",
            "questions",
            "answered",
            "EM %",
            "F1 %",
            "judged accuracy %",
            "judged by",
            "success %",
            "caveat",
        ],
        note="EM and F1 as HotpotQA's official script; judged accuracy by the model named (an exact match asks none); "
        "a caveat says why a configuration does not stand beside the paper's",
    )
    for c in configs:
        s = hotpotqa_scores(c)
        table.rows.append(
            [
                c.label,
                s["questions"],
                str(s["answered"]),
                percent(s["em"]),
                percent(s["f1"]),
                percent(s["judge"]),
                s["judged_by"] or NONE,
                percent(s["success"]),
                c.caveat or NONE,
            ]
        )
    return table


def cost_table(configs: list[Config]) -> Table:
    table = Table(
        "AutoPlan: model use per question (Table 4, inference)",
        ["configuration", "questions", "model calls", "tokens in", "tokens out", "cost"],
        note="per question, over every task (errors too: their calls were made)",
    )
    for c in configs:
        rows = c.rows
        cost = total_cost(rows)
        table.rows.append(
            [
                c.label,
                counted(rows),
                *(
                    number(mean([float(r.get(k) or 0) for r in rows]), 1)
                    for k in ("model_calls", "input_tokens", "output_tokens")
                ),
                dollars(None if cost is None else cost / len(rows)),
            ]
        )
    return table


def iteration_rates(record: dict[str, Any]) -> list[float]:
    """The success rate of each training iteration's batch."""
    return [
        sum(bool(j.get("success")) for j in it.get("jobs") or []) / max(1, len(it.get("jobs") or []))
        for it in record.get("history") or []
    ]


def training_table(name: str, record: dict[str, Any]) -> Table:
    usage = record.get("usage") or {}
    table = Table(
        f"AutoPlan training: {name}",
        ["iteration", "batch", "succeeded", "success %"],
        note=f"{record.get('env', '?')} {record.get('model', '?')}, pool of {record.get('pool_size', '?')} "
        f"tasks, batch {record.get('batch_size', '?')}; training cost per question "
        f"{dollars(record.get('cost_per_question'))}, {usage.get('model_calls', 0)} model calls",
    )
    for it, value in zip(record.get("history") or [], iteration_rates(record)):
        jobs = it.get("jobs") or []
        table.rows.append(
            [
                str(int(it.get("iteration", 0)) + 1),
                str(len(jobs)),
                str(sum(bool(j.get("success")) for j in jobs)),
                percent(value),
            ]
        )
    return table


def runs_of(training: Mapping[str, dict[str, Any]]) -> dict[str, dict[str, list[float]]]:
    """Each training configuration's plan records (file name -> iteration rates): records that
    differ only in their seed and pool are independent runs of one configuration."""
    out: dict[str, dict[str, list[float]]] = {}
    for name, record in training.items():
        key = f"{record.get('env', '?')} {record.get('model', '?')}, batch {record.get('batch_size', '?')}" + (
            "" if record.get("reflect_flaw_revision", True) else ", summary only"
        )
        out.setdefault(key, {})[name] = iteration_rates(record)
    return out


def over_runs(runs: list[list[float]]) -> tuple[list[float], list[float], list[int]]:
    """Per iteration: the mean over the runs that reached it, the standard deviation (0 with
    one run) and how many runs reached it."""
    longest = max(len(r) for r in runs)
    at = [[r[i] for r in runs if len(r) > i] for i in range(longest)]
    return [fmean(v) for v in at], [stdev(v) if len(v) > 1 else 0.0 for v in at], [len(v) for v in at]


def repeated_training_table(key: str, runs: list[list[float]]) -> Table:
    means, sds, counts = over_runs(runs)
    table = Table(
        f"AutoPlan training over {len(runs)} runs: {key} (Figure 3)",
        ["iteration", "runs", "batch success % (mean)", "standard deviation (points)"],
        note="as the paper's Figure 3: the mean and standard deviation over independent training runs",
    )
    for i, (m, sd, n) in enumerate(zip(means, sds, counts), 1):
        table.rows.append([str(i), str(n), percent(m), percent(sd)])
    return table


def tables(mine: list[Config], training: Mapping[str, dict[str, Any]] | None = None) -> list[Table]:
    """Tables 3a, 3b and 4 over AutoPlan's configurations ``mine``, then one table per plan
    record of ``introspect train`` (``training``: file name -> record)."""
    out = []
    if alfworld := [c for c in mine if c.env == "alfworld"]:
        out.append(alfworld_table(alfworld))
    if hotpotqa := [c for c in mine if c.env == "hotpotqa"]:
        out.append(hotpotqa_table(hotpotqa))
    if mine:
        out.append(cost_table(mine))
    out += [training_table(name, record) for name, record in (training or {}).items()]
    repeated = runs_of(training or {}).items()
    return out + [repeated_training_table(k, list(runs.values())) for k, runs in repeated if len(runs) > 1]


def figures(mine: list[Config], training: Mapping[str, dict[str, Any]] | None = None) -> list[Figure]:
    """Batch success per training iteration: one line per plan record, or, for several records
    of one training configuration, their mean with a band of one standard deviation."""
    if not training:
        return []
    lines: list[tuple[Config | str, list[float]]] = []
    spread: dict[str, list[float]] = {}
    for key, runs in runs_of(training).items():
        if len(runs) == 1:
            lines += list(runs.items())
            continue
        means, sds, _ = over_runs(list(runs.values()))
        name = f"mean of {len(runs)} runs: {key}"
        lines.append((name, means))
        spread[name] = sds
    return [
        Curves(
            "autoplan_training",
            "AutoPlan: batch success per training iteration",
            "training iteration",
            "batch success rate (%)",
            lines,
            spread,
        )
    ]
