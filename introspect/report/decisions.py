"""Which of the report's paired comparisons are decided: a paired test of each success difference,
corrected for the number of comparisons the report makes (Holm 1979).

The report compares every configuration on an env with the env's first one (the side-by-side
tables, introspect.report.tables), on the tasks both ran; each task's value is its success, or its
mean success over its repeats. A difference is tested by the paired sign-flip test: under "no
difference" each task's difference d_i is as likely to have either sign, so the p-value is the
share of the 2^n sign patterns whose |sum| is at least the observed |sum d_i| (tasks with d_i = 0
carry no information and are left out). With 0/1 successes this is McNemar's exact test (the
binomial test on the discordant tasks); with more than ``EXACT`` informative tasks the patterns are
drawn at random (``RESAMPLES``, seeded: the same report every time), p = (1 + hits) / (1 + draws).

With m comparisons, some look decided by chance alone. Holm's step-down correction keeps the
chance of any false "decided" at ``ALPHA``: the p-values sorted p(1) <= ... <= p(m), the j-th is
adjusted to max over i <= j of min(1, (m - i + 1) p(i)), and a difference is decided when its
adjusted p-value is below ``ALPHA``. It is never less powerful than Bonferroni's (m p).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from introspect.report.stats import RESAMPLES, SEED
from introspect.report.tables import by_env, shared_values
from nodes.report import Config, Table

ALPHA = 0.05
EXACT = 16  # up to this many informative tasks, every sign pattern is enumerated


def paired_p(a: list[float], b: list[float], *, resamples: int = RESAMPLES, seed: int = SEED) -> float:
    """The two-sided p-value of the paired sign-flip test of B - A (see the module docstring)."""
    if len(a) != len(b):
        raise ValueError("paired values need one a and one b per task")
    diffs = np.asarray(b, dtype=float) - np.asarray(a, dtype=float)
    diffs = diffs[np.abs(diffs) > 1e-12]
    n = len(diffs)
    if n == 0:
        return 1.0
    observed = abs(diffs.sum()) - 1e-9  # a pattern as extreme as the data counts (float sums)
    if n <= EXACT:
        signs = ((np.arange(2**n)[:, None] >> np.arange(n)) & 1) * 2 - 1
        return float(np.mean(np.abs(signs @ diffs) >= observed))
    signs = np.random.default_rng(seed).choice([-1.0, 1.0], size=(resamples, n))
    return float((1 + np.sum(np.abs(signs @ diffs) >= observed)) / (1 + resamples))


def holm(pvalues: list[float]) -> list[float]:
    """Holm's adjusted p-values, in the order given."""
    m = len(pvalues)
    adjusted = [0.0] * m
    running = 0.0
    for rank, index in enumerate(sorted(range(m), key=lambda i: pvalues[i])):
        running = max(running, min(1.0, (m - rank) * pvalues[index]))
        adjusted[index] = running
    return adjusted


@dataclass(frozen=True)
class Comparison:
    """One paired comparison of the report: B against its env's first configuration A."""

    env: str
    a: str
    b: str
    shared: int
    difference: float  # mean of B - A over the shared tasks
    p: float


def paired_comparisons(configs: list[Config]) -> list[Comparison]:
    """The report's paired comparisons of success: on each env, every configuration against the
    first, on the tasks both ran to an outcome (those with no shared task are left out)."""
    out = []
    for env, group in by_env(configs).items():
        for c in group[1:]:
            a, b = shared_values(group[0], c, "success")
            if a:
                out.append(
                    Comparison(env, group[0].label, c.label, len(a), sum(b) / len(b) - sum(a) / len(a), paired_p(a, b))
                )
    return out


def decisions_table(configs: list[Config]) -> Table | None:
    """Each paired comparison with its p-value, Holm's adjusted p-value and whether it is decided;
    None when the report makes no comparison."""
    found = paired_comparisons(configs)
    if not found:
        return None
    table = Table(
        "Which differences are decided (paired test, Holm-corrected)",
        ["env", "A", "B", "shared tasks", "success diff (points)", "p", "Holm p", f"decided at {ALPHA}"],
        note=f"p: the paired sign-flip test of B - A on the shared tasks (McNemar's exact test when each task "
        f"ran once); Holm p: adjusted for the {len(found)} comparison(s) of this report (Holm 1979); decided: "
        f"the Holm p is below {ALPHA}. An undecided difference may still be real: more tasks or repeats "
        "would tell (`study run --dry-run` says how many).",
    )
    for c, adjusted in zip(found, holm([c.p for c in found])):
        decided = "yes" if adjusted < ALPHA else "no"
        diff = f"{100 * c.difference:+.1f}"
        table.rows.append([c.env, c.a, c.b, str(c.shared), diff, f"{c.p:.4f}", f"{adjusted:.4f}", decided])
    return table
