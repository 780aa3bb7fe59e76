"""The tables every report has: the comparison of every configuration (success over repeats,
pass@k, pass^k, cost, the Pareto front), the runs (model, settings, tasks, success, tokens,
cost, time), pass@k and pass^k per k, the side-by-side comparison with paired differences, the
failures by stop reason and with their examples, and WebArena's per-template average. A
``Table`` (nodes.report, where the methods' own tables are written too) is plain text cells,
rendered for the terminal or as Markdown by introspect.report.render."""

from __future__ import annotations

from collections import defaultdict

from graphs import methods
from introspect.report.frontier import dollars_per_run, frontier, tokens_per_run
from introspect.report.repeats import repeated, task_means
from introspect.report.stats import RESAMPLES, SEED, Difference, Spread, paired_bootstrap
from nodes.report import NONE, Config, Table, counted, mean, number, percent, rate, total_cost
from nodes.runtime.usage import dollars

EXAMPLES = 5  # task ids listed per failure kind


def configurations_table(configs: list[Config]) -> Table:
    table = Table(
        "Configurations",
        ["configuration", "model", "settings (besides the defaults)", "fingerprint", "results", "caveat"],
        note="caveat: what the env said about setting these results beside the paper's (its corpus, its split), "
        "and a model other than the one the paper's numbers came from",
    )
    for c in configs:
        caveat = "; ".join(part for part in (c.caveat, other_model(c)) if part)
        table.rows.append([c.label, c.model_name, c.settings_text, c.fingerprint, ", ".join(c.sources), caveat or NONE])
    return table


def other_model(config: Config) -> str:
    """The flag of a configuration run with another model than its paper's (Method.paper_model)."""
    paper = next((m.paper_model for m in methods() if m.name == config.method), "")
    return f"run with {config.model_name}, not the paper's {paper}" if paper and config.model != paper else ""


def runs(configs: list[Config]) -> Table:
    table = Table(
        "Runs",
        [
            "configuration",
            "tasks (x repeats)",
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
                counted(rows),
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
        ["configuration", "kind", "why", "runs", "examples"],
        note="a failure ran to an outcome without success (by its stop reason); an error did not run "
        "to an outcome (the model gave up, a script ran out) and is left out of the success rate.",
    )
    for c in configs:
        groups: dict[tuple[str, str], list[str]] = defaultdict(list)
        for (task_id, repeat), row in c.latest.items():
            task = task_id if repeat == 1 else f"{task_id} r{repeat}"
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
    """Paired values of ``key`` on the tasks both configurations ran to an outcome: each
    task's mean over its repeats, so that a resampled task brings its repeats along."""
    means_a, means_b = task_means(a, key), task_means(b, key)
    shared = [t for t in means_a if t in means_b]
    return [means_a[t] for t in shared], [means_b[t] for t in shared]


def interval(d: Difference | None, scale: float, unit: str) -> str:
    if d is None:
        return NONE
    return f"{scale * d.mean:+.1f}{unit} [{scale * d.low:+.1f}, {scale * d.high:+.1f}]"


def comparisons(configs: list[Config]) -> list[Table]:
    """Per env with two or more configurations: each against the env's first one, on the tasks
    both ran (configurations on different envs share no task)."""
    return [comparison(group) for group in by_env(configs).values() if len(group) > 1]


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
        note=f"differences are B - A on the tasks both ran to an outcome (a task's mean over its repeats), "
        f"with a paired percentile bootstrap 95% interval ({RESAMPLES} resamples of the tasks with their "
        f"repeats, seed {SEED}).",
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
        table.rows.append([*row, shared, interval(success, 100, ""), interval(reward, 100, "")])
    return table


def _spread(spread: Spread | None) -> str:
    """A success rate over repeats: ``62.5 ± 4.1`` (standard error), or the one repeat's rate."""
    if spread is None:
        return NONE
    if spread.error is None:
        return percent(spread.mean)
    return f"{percent(spread.mean)} ± {percent(spread.error)}"


def by_env(configs: list[Config]) -> dict[str, list[Config]]:
    """Configurations grouped by env, in the order first seen: only those share tasks."""
    out: dict[str, list[Config]] = defaultdict(list)
    for c in configs:
        out[c.env].append(c)
    return dict(out)


def comparison_table(configs: list[Config]) -> Table:
    """Every configuration on one line: success over repeats, pass@k and pass^k at its most
    repeats, cost per run, and whether it is on its env's Pareto front of cost and success."""
    table = Table(
        "Comparison",
        [
            "configuration",
            "model",
            "settings",
            "tasks (x repeats)",
            "success % ± s.e.",
            "pass@k %",
            "pass^k %",
            "k",
            "cost per run",
            "tokens per run",
            "Pareto front",
        ],
        note="success: the mean over repeats of each repeat's success rate, ± its standard error "
        "(one repeat: no error); pass@k: at least one of k runs of a task succeeded, pass^k: all k "
        "did (unbiased estimators over each task's runs, averaged over tasks), at k = the most "
        "runs a task has; Pareto front: no other configuration on the env is at least as cheap "
        "per run and as successful (cost in dollars when all are priced, else in tokens).",
    )
    for group in by_env(configs).values():
        fronts = frontier(group)
        on_front = {p.config.number for p in fronts.front}
        for c in group:
            summary = repeated(c)
            table.rows.append(
                [
                    c.label,
                    c.model_name,
                    c.settings_text,
                    counted(c.rows),
                    _spread(summary.success),
                    percent(summary.pass_at[-1]) if summary.k else NONE,
                    percent(summary.pass_all[-1]) if summary.k else NONE,
                    str(summary.k) if summary.k else NONE,
                    dollars(dollars_per_run(c)),
                    number(tokens_per_run(c), 0),
                    ("yes" if c.number in on_front else "no") if c.ran else NONE,
                ]
            )
    return table


def repeats_table(configs: list[Config]) -> Table | None:
    """pass@k and pass^k for every k, when any configuration ran a task more than once."""
    summaries = {c.label: repeated(c) for c in configs}
    most = max((s.k for s in summaries.values()), default=0)
    if most < 2:
        return None
    table = Table(
        "Repeats: pass@k and pass^k (%)",
        ["configuration", *(f"pass@{k}" for k in range(1, most + 1)), *(f"pass^{k}" for k in range(1, most + 1))],
        note="over the tasks with at least k runs that ran to an outcome; pass@1 = pass^1 = the success rate",
    )
    for label, s in summaries.items():
        missing = [NONE] * (most - s.k)
        table.rows.append([label, *map(percent, s.pass_at), *missing, *map(percent, s.pass_all), *missing])
    return table


SUCCEEDED = "succeeded"
ERRORS = "errors"


def stop_reasons(configs: list[Config]) -> Table:
    """Configuration x stop reason: how many runs ended each way (successes and errors apart)."""
    counts: dict[int, dict[str, int]] = {}
    for c in configs:
        tally: dict[str, int] = defaultdict(int)
        for row in c.rows:
            if row.get("error"):
                tally[ERRORS] += 1
            elif row.get("success"):
                tally[SUCCEEDED] += 1
            else:
                tally[str(row.get("stop_reason") or "(none)")] += 1
        counts[c.number] = tally
    totals: dict[str, int] = defaultdict(int)
    for tally in counts.values():
        for reason, n in tally.items():
            if reason not in (SUCCEEDED, ERRORS):
                totals[reason] += n
    reasons = sorted(totals, key=lambda r: (-totals[r], r))
    table = Table(
        "Failures by stop reason",
        ["configuration", "runs", SUCCEEDED, *reasons, ERRORS],
        note="runs (a task in one repeat) that ran to an outcome without success, by the stop reason "
        "the method gave; errors did not run to an outcome",
    )
    for c in configs:
        tally = counts[c.number]
        table.rows.append([c.label, str(len(c.rows)), *(str(tally.get(k, 0)) for k in (SUCCEEDED, *reasons, ERRORS))])
    return table


TEMPLATE = "intent_template_id"


def templates(configs: list[Config]) -> Table | None:
    """WebArena's per-template macro average beside the per-task one: tasks made from one intent
    template (``intent_template_id``) are near copies, so the per-task mean weighs a template by
    how many tasks it has; the macro average weighs every template the same."""
    webarena = [c for c in configs if c.env == "webarena" and c.ran]
    if not webarena:
        return None
    table = Table(
        "WebArena: success per task and per template (%)",
        ["configuration", "tasks", "templates", "per-task average", "per-template (macro) average"],
        note="per task: the mean of each task's success over its repeats; per template: the mean over "
        "intent templates of their tasks' means (a row without intent_template_id is its own template)",
    )
    for c in webarena:
        means = task_means(c, "success")
        template_of = {str(r["task_id"]): str(r.get(TEMPLATE, f"task {r['task_id']}")) for r in c.ran}
        groups: dict[str, list[float]] = defaultdict(list)
        for task, value in means.items():
            groups[template_of[task]].append(value)
        macro = mean([sum(v) / len(v) for v in groups.values()])
        table.rows.append(
            [c.label, str(len(means)), str(len(groups)), percent(mean(list(means.values()))), percent(macro)]
        )
    return table
