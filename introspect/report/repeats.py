"""What a configuration's repeats say (a study runs each task more than once because models
sample): the success rate of each repeat, their mean and standard error, pass@k and pass^k
over the tasks, and each task's mean over its repeats for the paired comparisons.

Only runs that ran to an outcome count (an error is not a failure). pass@k and pass^k for k
are averaged over the tasks with at least k such runs, so k goes from 1 to the most runs a
task has.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from introspect.report.stats import Spread, over_repeats, pass_at_k, pass_hat_k
from nodes.report import Config, Curves, Figure, by_task, mean, rate, repeat_of


@dataclass(frozen=True)
class Repeated:
    """A configuration over its repeats."""

    success: Spread | None  # the success rate of each repeat: mean and standard error
    pass_at: list[float]  # pass@k for k = 1, 2, ...
    pass_all: list[float]  # pass^k for k = 1, 2, ...

    @property
    def k(self) -> int:
        return len(self.pass_at)


def repeated(config: Config) -> Repeated:
    """Success per repeat, pass@k and pass^k of ``config``."""
    rates = [rate([r for r in config.ran if repeat_of(r) == repeat]) for repeat in config.repeats]
    counts = [(len(runs), sum(bool(r.get("success")) for r in runs)) for runs in by_task(config.ran).values()]
    most = max((n for n, _ in counts), default=0)

    def averaged(estimator: Callable[[int, int, int], float], k: int) -> float:
        return mean([estimator(n, c, k) for n, c in counts if n >= k]) or 0.0

    return Repeated(
        over_repeats([r for r in rates if r is not None]),
        [averaged(pass_at_k, k) for k in range(1, most + 1)],
        [averaged(pass_hat_k, k) for k in range(1, most + 1)],
    )


def task_means(config: Config, key: str) -> dict[str, float]:
    """Each task's mean of ``key`` (success as 0/1, reward) over its runs that ran to an outcome."""
    return {task: sum(float(r.get(key) or 0) for r in runs) / len(runs) for task, runs in by_task(config.ran).items()}


def one_repeat(config: Config, repeat: int) -> Config:
    """``config`` with the rows of one of its repeats only."""
    return replace(config, latest={a: row for a, row in config.latest.items() if a[1] == repeat})


def curve_errors(curves: Curves, draw: Callable[[list[Config]], list[Figure]]) -> dict[int, list[float]]:
    """Error bars for the lines of ``curves``: for each configuration with two or more
    repeats, the standard error over its repeats at each x, from the same figure drawn
    (``draw``, the method's own figures) for each repeat alone; 0 where fewer than two repeats
    reach that x."""
    out: dict[int, list[float]] = {}
    for key, values in curves.lines:
        if not isinstance(key, Config) or len(key.repeats) < 2:
            continue
        per_repeat = [
            figure.lines[0][1]
            for repeat in key.repeats
            for figure in draw([one_repeat(key, repeat)])
            if isinstance(figure, Curves) and figure.name == curves.name and figure.lines
        ]
        if len(per_repeat) < 2:
            continue
        spreads = [over_repeats([line[x] for line in per_repeat if x < len(line)]) for x in range(len(values))]
        out[key.number] = [s.error or 0.0 if s is not None else 0.0 for s in spreads]
    return out
