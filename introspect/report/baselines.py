"""Introspection's gain over equal-cost retrying: each study run with a baseline arm
(introspect.study.baseline) against its arm, per method and env, paired on tasks.

An arm's rows say whose arm they are (``baseline.of``: the run's label) and what their attempts
spent; the run's configuration is the one of the same method and env with that label. The gain
is the run's success minus the arm's on the tasks both ran to an outcome (a task's mean over its
repeats), with the paired bootstrap interval of introspect.report.stats and the paired sign-flip
test of introspect.report.decisions, Holm-corrected over this table's comparisons.
"""

from __future__ import annotations

from typing import Any

from introspect.report.decisions import ALPHA, holm, paired_p
from introspect.report.stats import RESAMPLES, SEED, paired_bootstrap
from introspect.report.tables import interval, shared_values
from nodes.report import NONE, Config, Table, mean, number, percent


def arm_of(config: Config) -> dict[str, Any] | None:
    """What an arm's first row says of it (None: ``config`` is not a baseline arm)."""
    return next((r["baseline"] for r in config.rows if isinstance(r.get("baseline"), dict)), None)


def pairs(configs: list[Config]) -> list[tuple[Config, Config]]:
    """(the introspective run, its equal-cost arm) for each arm whose run is among ``configs``."""
    found = []
    for arm in configs:
        said = arm_of(arm)
        if said is None:
            continue
        run = next(
            (c for c in configs if c.run_label == said.get("of") and (c.method, c.env) == (arm.method, arm.env)), None
        )
        if run is not None:
            found.append((run, arm))
    return found


def baselines_table(configs: list[Config]) -> Table | None:
    """Each run against its equal-cost arm; None when no run has one."""
    found = pairs(configs)
    if not found:
        return None
    tests = [paired_p(*shared_values(arm, run, "success")) for run, arm in found]
    table = Table(
        "Introspection against equal-cost retrying",
        [
            "method",
            "env",
            "run",
            "shared tasks",
            "introspective success %",
            "retries success %",
            "attempts per task",
            "spend per task (run / retries)",
            "gain (points) [95% CI]",
            "p",
            "Holm p",
            f"decided at {ALPHA}",
        ],
        note="retries: the method's base agent (its introspective steps switched off, Method.base_agent) "
        "started afresh until it had spent what the run spent on the task, a success when any attempt "
        "succeeded (best-of-k at equal cost). gain: run - retries on the tasks both ran to an outcome, with a "
        f"paired percentile bootstrap 95% interval ({RESAMPLES} resamples, seed {SEED}); p: the paired "
        "sign-flip test (McNemar's exact test when each task ran once), Holm p adjusted over this table.",
    )
    for (run, arm), p, adjusted in zip(found, tests, holm(tests)):
        retries, introspective = shared_values(arm, run, "success")
        gain = paired_bootstrap(retries, introspective)
        said = [r["baseline"] for r in arm.ran if isinstance(r.get("baseline"), dict)]
        measure = str(said[0].get("spend", "")) if said else ""
        target, spent = mean([float(s["target"]) for s in said]), mean([float(s["spent"]) for s in said])
        table.rows.append(
            [
                run.method,
                run.env,
                run.run_label,
                str(len(retries)),
                percent(mean(introspective)),
                percent(mean(retries)),
                number(mean([float(len(s.get("attempts") or [])) for s in said]), 1),
                f"{number(target, 1)} / {number(spent, 1)} {measure}" if said else NONE,
                interval(gain, 100, ""),
                f"{p:.4f}",
                f"{adjusted:.4f}",
                "yes" if adjusted < ALPHA else "no",
            ]
        )
    return table
