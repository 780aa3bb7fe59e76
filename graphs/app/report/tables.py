"""The tables every report has: the runs (model, settings, tasks, success, tokens, cost,
time), the failures with their stop reasons, and the side-by-side comparison with paired
differences. A ``Table`` (nodes.report, where the methods' own tables are written too) is
plain text cells, rendered for the terminal or as Markdown by graphs.app.report.render."""

from __future__ import annotations

from collections import defaultdict

from graphs.app.report.stats import RESAMPLES, SEED, Difference, paired_bootstrap
from nodes.report import NONE, Config, Table, mean, number, percent, rate, total_cost
from nodes.usage import dollars

EXAMPLES = 5  # task ids listed per failure kind


def configurations_table(configs: list[Config]) -> Table:
    table = Table(
        "Configurations",
        ["configuration", "model", "settings (besides the defaults)", "fingerprint", "results", "caveat"],
        note="caveat: what the env said about setting these results beside the paper's (its corpus, its split)",
    )
    for c in configs:
        table.rows.append(
            [c.label, c.model_name, c.settings_text, c.fingerprint, ", ".join(c.sources), c.caveat or NONE]
        )
    return table


def runs(configs: list[Config]) -> Table:
    table = Table(
        "Runs",
        [
            "configuration",
            "tasks",
            "ran",
            "errors",
            "success %",
            "mean reward",
            "mean steps",
            "model calls",
            "tokens in / out",
            "cost",
            "time (s)",
        ],
        note="success, reward and steps over the tasks that ran to an outcome; calls, tokens, cost "
        "and time over every task (errors too). Time is the sum of the tasks' own seconds "
        "(0 for a row rebuilt from a finished checkpoint).",
    )
    for c in configs:
        rows, ran = c.rows, c.ran
        table.rows.append(
            [
                c.label,
                str(len(rows)),
                str(len(ran)),
                str(len(rows) - len(ran)),
                percent(rate(ran)),
                number(mean([float(r.get("reward") or 0) for r in ran]), 3),
                number(mean([float(r.get("steps") or 0) for r in ran]), 1),
                str(sum(int(r.get("model_calls") or 0) for r in rows)),
                f"{sum(int(r.get('input_tokens') or 0) for r in rows)} / "
                f"{sum(int(r.get('output_tokens') or 0) for r in rows)}",
                dollars(total_cost(rows)),
                number(sum(float(r.get("seconds") or 0) for r in rows), 1),
            ]
        )
    return table


def failures(configs: list[Config]) -> Table:
    """Failed tasks by stop reason, and errored tasks by error, per configuration."""
    table = Table(
        "Failures and errors",
        ["configuration", "kind", "why", "tasks", "examples"],
        note="a failure ran to an outcome without success (by its stop reason); an error did not run "
        "to an outcome (the model gave up, a script ran out) and is left out of the success rate.",
    )
    for c in configs:
        groups: dict[tuple[str, str], list[str]] = defaultdict(list)
        for task, row in c.by_task.items():
            if row.get("error"):
                groups[("error", str(row["error"]).splitlines()[0])].append(task)
            elif not row.get("success"):
                groups[("failure", str(row.get("stop_reason") or "(none)"))].append(task)
        for (kind, why), tasks in sorted(groups.items(), key=lambda item: (item[0][0], -len(item[1]), item[0][1])):
            tasks = sorted(tasks)
            more = f" (+{len(tasks) - EXAMPLES})" if len(tasks) > EXAMPLES else ""
            table.rows.append([c.label, kind, why, str(len(tasks)), ", ".join(tasks[:EXAMPLES]) + more])
    if not table.rows:
        table.note = "every task succeeded"
    return table


def shared_values(a: Config, b: Config, key: str) -> tuple[list[float], list[float]]:
    """Paired values of ``key`` on the tasks both configurations ran to an outcome."""
    ran_a = {str(r["task_id"]): r for r in a.ran}
    ran_b = {str(r["task_id"]): r for r in b.ran}
    shared = [t for t in ran_a if t in ran_b]
    return ([float(ran_a[t].get(key) or 0) for t in shared], [float(ran_b[t].get(key) or 0) for t in shared])


def _interval(d: Difference | None, scale: float, unit: str) -> str:
    if d is None:
        return NONE
    return f"{scale * d.mean:+.1f}{unit} [{scale * d.low:+.1f}, {scale * d.high:+.1f}]"


def comparisons(configs: list[Config]) -> list[Table]:
    """Per env with two or more configurations: each against the env's first one, on the tasks
    both ran (configurations on different envs share no task)."""
    by_env: dict[str, list[Config]] = defaultdict(list)
    for c in configs:
        by_env[c.env].append(c)
    return [comparison(group) for group in by_env.values() if len(group) > 1]


def comparison(configs: list[Config]) -> Table:
    """Each configuration against the first one, on the tasks both ran to an outcome."""
    base = configs[0]
    table = Table(
        f"Side by side on {base.env} (against {base.label})",
        [
            "configuration",
            "ran",
            "success %",
            "mean reward",
            "shared tasks",
            "success diff (points) [95% CI]",
            "reward diff (x100) [95% CI]",
        ],
        note=f"differences are B - A on the tasks both ran to an outcome, with a paired percentile "
        f"bootstrap 95% interval ({RESAMPLES} resamples of the tasks, seed {SEED}).",
    )
    for c in configs:
        ran = c.ran
        row = [c.label, str(len(ran)), percent(rate(ran)), number(mean([float(r.get("reward") or 0) for r in ran]), 3)]
        if c is base:
            table.rows.append([*row, NONE, "(baseline)", "(baseline)"])
            continue
        success = paired_bootstrap(*shared_values(base, c, "success"))
        reward = paired_bootstrap(*shared_values(base, c, "reward"))
        shared = str(success.n) if success else "0"
        table.rows.append([*row, shared, _interval(success, 100, ""), _interval(reward, 100, "")])
    return table
