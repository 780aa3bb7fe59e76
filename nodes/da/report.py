"""Devil's Advocate's tables as paper 000 reports them.

Table 1: per configuration, the success rate, the average number of actions in the first and
in the last episode (trial) and the average number of plan revisions, over the tasks that ran
(a task that succeeded in its first episode has the same first and last episode). Success by
episode (the paper's figure of success rate over seven episodes): a task counts at episode k
when it succeeded in one of its first k episodes; a run stops at its successful episode, so
that is success with ``episodes <= k``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nodes.da.context import DAContext
from nodes.report import NONE, Config, Curves, Figure, Table, counted, mean, number, percent, rate

TABLE_1 = ("actions_first_episode", "actions_last_episode", "plan_revisions", "backtracks")  # averaged per task


def by_episode(config: Config) -> list[float]:
    """Success rate by episode 1..the episode limit (the paper's 7 unless set otherwise)."""
    ran = config.ran
    if not ran:
        return []
    last = max(
        [config.limit("max_episodes", DAContext.default("max_episodes")), *(int(r.get("episodes") or 1) for r in ran)]
    )
    return [
        sum(bool(r.get("success")) and int(r.get("episodes") or 1) <= k for r in ran) / len(ran)
        for k in range(1, last + 1)
    ]


def tables(mine: list[Config], training: Mapping[str, dict[str, Any]] | None = None) -> list[Table]:
    """Table 1 and success by episode over Devil's Advocate's configurations ``mine``."""
    if not mine:
        return []
    table1 = Table(
        "Devil's Advocate: Table 1",
        [
            "configuration",
            "tasks",
            "success %",
            "actions, first episode",
            "actions, last episode",
            "plan revisions",
            "backtracks",
        ],
        note="averages over the tasks that ran to an outcome",
    )
    for c in mine:
        averages = [number(mean([float(r.get(key) or 0) for r in c.ran])) for key in TABLE_1]
        table1.rows.append([c.label, counted(c.ran), percent(rate(c.ran)), *averages])
    curves = {c.label: by_episode(c) for c in mine}
    longest = max((len(v) for v in curves.values()), default=0)
    episodes = Table(
        "Devil's Advocate: success rate (%) by episode",
        ["configuration", *(f"episode {k}" for k in range(1, longest + 1))],
        note="episode k: the share of tasks that succeeded within their first k episodes",
    )
    for label, values in curves.items():
        episodes.rows.append([label, *(percent(v) for v in values), *[NONE] * (longest - len(values))])
    return [table1, episodes]


def figures(mine: list[Config], training: Mapping[str, dict[str, Any]] | None = None) -> list[Figure]:
    """Success by episode, one line per configuration that ran."""
    ran = [c for c in mine if c.ran]
    if not ran:
        return []
    return [
        Curves(
            "da_episodes",
            "Devil's Advocate: success by episode",
            "episode",
            "success rate (%)",
            [(c, by_episode(c)) for c in ran],
        )
    ]
