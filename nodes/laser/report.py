"""LASER's tables as paper 003 reports them.

Table 1: success rate and average reward on WebShop's 0-100 scale (the env's reward is 0-1),
with the average number of state transitions per episode and how often the backup strategy
chose the item (the step budget ran out; Section 3.3). Figure 2: success and reward by
episode length, grouped as the paper groups them (3, 4-6, 7-9, 10-13 transitions), the episodes
whose item the backup strategy chose apart (the paper's forced-stop group).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nodes.report import Config, Figure, Histogram, Table, counted, mean, number, percent, rate

GROUPS = (("3 or fewer", 0, 3), ("4-6", 4, 6), ("7-9", 7, 9), ("10-13", 10, 13), ("14 or more", 14, 10**9))
BACKUP = "backup chose"


def transitions(config: Config) -> list[int]:
    return [int(r.get("transitions") or 0) for r in config.ran]


def tables(mine: list[Config], training: Mapping[str, dict[str, Any]] | None = None) -> list[Table]:
    """Table 1 and Figure 2's groups over LASER's configurations ``mine``."""
    if not mine:
        return []
    main = Table(
        "LASER: Table 1",
        [
            "configuration",
            "tasks",
            "success %",
            "reward (0-100)",
            "transitions",
            "backup %",
            "backups that bought nothing",
        ],
        note="transitions are per episode, averaged; backup % is the share of episodes whose item "
        "the backup strategy chose",
    )
    lengths = Table(
        "LASER: by episode length (Figure 2)",
        ["configuration", "transitions", "episodes", "success %", "reward (0-100)"],
    )
    for c in mine:
        ran = c.ran
        main.rows.append(
            [
                c.label,
                counted(ran),
                percent(rate(ran)),
                percent(mean([float(r.get("reward") or 0) for r in ran])),
                number(mean([float(n) for n in transitions(c)]), 1),
                percent(mean([float(bool(r.get("backup_used"))) for r in ran])),
                str(sum(bool(r.get("backup_problem")) for r in ran)),
            ]
        )
        for name, low, high in (*GROUPS, (BACKUP, 0, 0)):
            group = (
                [r for r in ran if r.get("backup_used")]
                if name == BACKUP
                else [r for r in ran if not r.get("backup_used") and low <= int(r.get("transitions") or 0) <= high]
            )
            if group:
                lengths.rows.append(
                    [
                        c.label,
                        name,
                        str(len(group)),
                        percent(rate(group)),
                        percent(mean([float(r.get("reward") or 0) for r in group])),
                    ]
                )
    return [main, lengths]


def figures(mine: list[Config], training: Mapping[str, dict[str, Any]] | None = None) -> list[Figure]:
    """The histogram of state transitions per episode, one series per configuration that ran."""
    ran = [c for c in mine if c.ran]
    if not ran:
        return []
    return [
        Histogram(
            "laser_transitions",
            "LASER: state transitions per episode",
            "state transitions",
            "episodes",
            [(c, transitions(c)) for c in ran],
        )
    ]
