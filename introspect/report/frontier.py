"""Cost against success, one point per configuration, and the Pareto front among them (HAL's
cost-versus-accuracy view): a configuration is on the front when no other one on the same env
is at least as cheap and at least as successful, and strictly one of the two.

Cost is per run (a task in one repeat, errors too: their calls were made): dollars when every
configuration is priced, tokens in + out otherwise (scripted and unpriced models), so that the
points always stand on one axis.
"""

from __future__ import annotations

from dataclasses import dataclass

from nodes.report import Config, rate, total_cost


@dataclass(frozen=True)
class Point:
    config: Config
    cost: float  # per run, in the axis' unit
    success: float  # success rate over the runs that ran to an outcome


@dataclass(frozen=True)
class Frontier:
    axis: str  # what cost is measured in, for the table and the figure
    points: list[Point]
    front: list[Point]  # the Pareto front, cheapest first


DOLLARS = "cost per run ($)"
TOKENS = "tokens per run (in + out)"


def tokens_per_run(config: Config) -> float:
    """Tokens in + out per run (a task in one repeat), over every run, errors too."""
    rows = config.rows
    return sum(int(r.get("input_tokens") or 0) + int(r.get("output_tokens") or 0) for r in rows) / len(rows)


def dollars_per_run(config: Config) -> float | None:
    """Cost per run; None when the model is unpriced."""
    cost = total_cost(config.rows)
    return None if cost is None else cost / len(config.rows)


def frontier(configs: list[Config]) -> Frontier:
    """The points of ``configs`` that ran to an outcome (one env's, to be comparable) and their front."""
    ran = [c for c in configs if c.ran]
    costs = {c.number: dollars_per_run(c) for c in ran}
    priced = all(cost is not None for cost in costs.values())
    points = [Point(c, (costs[c.number] or 0.0) if priced else tokens_per_run(c), rate(c.ran) or 0.0) for c in ran]
    front = [p for p in points if not any(_dominates(q, p) for q in points)]
    return Frontier(DOLLARS if priced else TOKENS, points, sorted(front, key=lambda p: (p.cost, p.success)))


def _dominates(q: Point, p: Point) -> bool:
    return q.cost <= p.cost and q.success >= p.success and (q.cost < p.cost or q.success > p.success)
