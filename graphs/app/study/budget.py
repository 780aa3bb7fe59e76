"""Budgets in dollars: the study's, each run's, each task's (``max_cost_usd``,
``task_max_cost_usd``), kept call by call.

A ``RunMeter`` is the ``nodes.usage.Meter`` of one evaluation (a run's repeat): told every
call's cost, it adds it to the task, the run and the study. A task that has spent its own
budget is refused its next call (``BudgetReached``: its row says so, its thread stays
checkpointed and is tried again when the study continues with a higher budget). When the run
or the study reaches its budget the meter calls ``stop``, which cancels the evaluation: tasks
waiting never start, tasks in flight stop at their next await, keeping their last checkpoint
and writing no row. Spending is counted from the rows already written (each task's latest)
plus this session's calls; a task stopped in flight is counted again when its row is written.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from errors import IntrospectError
from nodes.usage import Usage


class BudgetReached(IntrospectError, RuntimeError):
    """A budget was spent: the study stops cleanly and says how to continue (exit 3)."""

    exit_status = 3


@dataclass
class Purse:
    """What a study (or one run) may spend and has spent."""

    limit: float | None
    spent: float = 0.0

    def reached(self) -> bool:
        return self.limit is not None and self.spent >= self.limit

    def name(self, whose: str) -> str:
        """The budget as a stop names it: "the study's max_cost_usd ($5.0000)"."""
        return f"{whose} max_cost_usd (${self.limit or 0:.4f})"


@dataclass
class RunMeter:
    study: Purse
    run: Purse
    task_limit: float | None
    stop: Callable[[], None]
    task_spent: dict[str, float] = field(default_factory=dict)  # seeded from each thread's usage
    reached: str = ""  # which budget stopped the evaluation, once one has

    def before_call(self, task: str | None) -> None:
        spent = self.task_spent.get(task or "", 0.0)
        if self.task_limit is not None and spent >= self.task_limit:
            raise BudgetReached(
                f"task {task} spent ${spent:.4f} of its ${self.task_limit:.4f} budget (task_max_cost_usd)"
            )

    def after_call(self, task: str | None, usage: Usage) -> None:
        cost = float(usage.get("cost_usd") or 0.0)
        self.task_spent[task or ""] = self.task_spent.get(task or "", 0.0) + cost
        self.run.spent += cost
        self.study.spent += cost
        if not self.reached and (self.run.reached() or self.study.reached()):
            self.reached = self.study.name("the study's") if self.study.reached() else self.run.name("the run's")
            self.stop()
