"""Statistics over tasks and repeats: the paired comparison of two configurations on the
tasks both ran, the mean over repeats with its standard error, and pass@k and pass^k.

For tasks i = 1..n run by both A and B, the differences d_i = b_i - a_i (a task's success as
0/1, or reward; with repeats, its mean over the task's repeats, so a task's repeats are
resampled together with it and every task weighs the same) are resampled with replacement,
n at a time, ``RESAMPLES`` times; the interval is the 2.5th and 97.5th percentile of the
resampled means (the percentile bootstrap, Efron & Tibshirani 1993, ch. 13). Pairing by task
removes the spread due to task difficulty, which is most of the spread on these benchmarks.
The generator is seeded (``SEED``), so a report is the same every time it is made from the
same files.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import comb, sqrt
from statistics import fmean, stdev

import numpy as np

RESAMPLES = 10_000
SEED = 0
LEVEL = 0.95


@dataclass(frozen=True)
class Difference:
    """Mean of B - A over ``n`` shared tasks (or of one configuration's values over its ``n``
    tasks), and its bootstrap interval."""

    n: int
    mean: float
    low: float
    high: float


def paired_bootstrap(
    a: list[float], b: list[float], *, resamples: int = RESAMPLES, seed: int = SEED, level: float = LEVEL
) -> Difference | None:
    """B - A on paired values (same order: one task each); None without a shared task."""
    if len(a) != len(b):
        raise ValueError("paired values need one a and one b per task")
    diffs = np.asarray(b, dtype=float) - np.asarray(a, dtype=float)
    return bootstrap_mean(list(diffs), resamples=resamples, seed=seed, level=level)


def bootstrap_mean(
    values: list[float], *, resamples: int = RESAMPLES, seed: int = SEED, level: float = LEVEL
) -> Difference | None:
    """The mean of per-task values and its percentile bootstrap interval (tasks resampled with
    replacement, as for a paired difference); None without a task. What a reproduced figure is
    set against the paper's with (introspect.report.papers)."""
    if not values:
        return None
    data = np.asarray(values, dtype=float)
    picks = np.random.default_rng(seed).integers(0, len(data), size=(resamples, len(data)))
    means = data[picks].mean(axis=1)
    tail = (1.0 - level) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return Difference(len(data), float(data.mean()), float(low), float(high))


def pass_at_k(n: int, c: int, k: int) -> float:
    """The chance that at least one of ``k`` runs drawn from a task's ``n`` (``c`` of them
    successes) succeeded: 1 - C(n-c, k) / C(n, k), the unbiased estimator of Chen et al. 2021
    (HumanEval). Needs k <= n."""
    return 1.0 - comb(n - c, k) / comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """The chance that all ``k`` runs drawn from a task's ``n`` succeeded: C(c, k) / C(n, k),
    pass^k of Yao et al. 2024 (tau-bench), which asks whether an agent is reliable, not lucky."""
    return comb(c, k) / comb(n, k)


@dataclass(frozen=True)
class Spread:
    """A mean over repeats and its standard error (None with a single repeat)."""

    mean: float
    error: float | None
    n: int


def over_repeats(values: list[float]) -> Spread | None:
    """The mean of per-repeat values and its standard error s / sqrt(n) (sample s, n - 1)."""
    if not values:
        return None
    error = stdev(values) / sqrt(len(values)) if len(values) > 1 else None
    return Spread(fmean(values), error, len(values))
