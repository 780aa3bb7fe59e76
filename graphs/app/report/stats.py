"""The paired comparison of two configurations on the tasks both ran.

For tasks i = 1..n run by both A and B, the differences d_i = b_i - a_i (success as 0/1, or
reward) are resampled with replacement, n at a time, ``RESAMPLES`` times; the interval is the
2.5th and 97.5th percentile of the resampled means (the percentile bootstrap, Efron &
Tibshirani 1993, ch. 13). Pairing by task removes the spread due to task difficulty, which is
most of the spread on these benchmarks. The generator is seeded (``SEED``), so a report is the
same every time it is made from the same files.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

RESAMPLES = 10_000
SEED = 0
LEVEL = 0.95


@dataclass(frozen=True)
class Difference:
    """Mean of B - A over ``n`` shared tasks, and its bootstrap interval."""

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
    if not a:
        return None
    diffs = np.asarray(b, dtype=float) - np.asarray(a, dtype=float)
    picks = np.random.default_rng(seed).integers(0, len(diffs), size=(resamples, len(diffs)))
    means = diffs[picks].mean(axis=1)
    tail = (1.0 - level) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return Difference(len(diffs), float(diffs.mean()), float(low), float(high))
