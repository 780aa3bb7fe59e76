"""An ablation's budget in dollars, tokens and seconds, kept call by call as a study keeps its
own (introspect.study.budget: the same ``Limits``, ``Purse`` and ``RunMeter``).

What counts is what the forks spend, not the prefix they share with their runs: each row's
``spent`` is its fork's usage minus the usage at the checkpoint it started from, with the fork's
seconds. The purse starts from the rows already written (each fork's latest), so an ablation run
again continues against the same budget. Once it is spent, the forks still waiting do not start,
and those in flight stop at their next await, keeping their checkpoints and writing no row: the
same command with a higher budget continues them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from introspect.study.budget import KEYS, Limits, Purse, RunMeter, spending
from nodes.runtime.usage import METER


def spent_by_fork(fork_row: Mapping[str, Any], prefix: Mapping[str, Any] | None) -> dict[str, float]:
    """What a fork itself spent, in each budget's kind: its row's usage minus ``prefix``, the
    usage of the run at the checkpoint the fork started from (shared with the run, not spent by
    the ablation)."""
    total, shared = spending(fork_row), spending(prefix or {})
    return {kind: round(total[kind] - (shared[kind] if kind != "seconds" else 0.0), 6) for kind in KEYS}


@dataclass
class Budget:
    """What an ablation may still spend, told every fork's calls while ``metering``; ``skipped``
    counts the forks the budget kept from running (or stopped) in this session."""

    purse: Purse
    skipped: int = 0
    in_fork: set[asyncio.Task[Any]] = field(default_factory=set)  # the tasks running a fork now

    @classmethod
    def of(cls, limits: Limits, rows: list[dict[str, Any]]) -> Budget:
        """A budget of ``limits``, with what the ablation rows ``rows`` already spent (each fork's latest row)."""
        purse = Purse(limits)
        latest = {(r.get("thread_id"), r.get("intervention"), r.get("count")): r for r in rows if "intervention" in r}
        for row in latest.values():
            purse.add(row.get("spent") or {})
        return cls(purse)

    def spent(self) -> bool:
        return bool(self.purse.reached())

    def name(self) -> str:
        """The budget reached: "the ablation's max_tokens_total (100 tokens)"."""
        return self.purse.name("the ablation's")

    @contextmanager
    def metering(self) -> Iterator[None]:
        """Every model call made within (by the tasks created here) counted against the budget;
        when it is spent, the forks in flight are cancelled."""
        if not self.purse.limits.given():
            yield
            return

        def halt(everything: bool) -> None:
            for task in self.in_fork:
                task.cancel()

        token = METER.set(RunMeter(self.purse, Purse(Limits()), Limits(), halt))
        try:
            yield
        finally:
            METER.reset(token)

    @contextmanager
    def fork_running(self) -> Iterator[None]:
        """Marks the current task as running a fork: the one a spent budget cancels."""
        task = asyncio.current_task()
        assert task is not None
        self.in_fork.add(task)
        try:
            yield
        finally:
            self.in_fork.discard(task)
