"""Budgets in dollars, tokens and seconds: the study's, each run's, each task's, kept call by call.

Dollars (``max_cost_usd``, ``task_max_cost_usd``) need a priced model; tokens
(``max_tokens_total``, ``task_max_tokens_total``: input plus output) and seconds
(``max_seconds``, ``task_max_seconds``) hold for any model, a local server's too. A task's
seconds run from its first model call to its latest (and a written row's ``seconds``); a run's
and the study's are the sum over their tasks (task-seconds: four tasks in flight for a minute
spend 240).

A ``RunMeter`` is the ``nodes.runtime.usage.Meter`` of one evaluation (a run's repeat): told every
call's usage, it adds it to the task, the run and the study. A task that has spent its own
budget is refused its next call (``BudgetReached``: its row says so, its thread stays
checkpointed and is tried again when the study continues with a higher budget). When the run
or the study reaches its budget the meter calls ``stop``, which cancels the evaluation (the
study's: every evaluation): tasks waiting never start, tasks in flight stop at their next
await, keeping their last checkpoint and writing no row. Spending is counted from the rows
already written (each task's latest) plus this session's calls; a task stopped in flight is
counted again when its row is written.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from errors import IntrospectError
from nodes.runtime.usage import Usage

# each budget's key in a study file, and how its amount reads
KEYS = {"cost_usd": "max_cost_usd", "tokens": "max_tokens_total", "seconds": "max_seconds"}


def amount(kind: str, value: float) -> str:
    """$5.0000, 20000 tokens, 600 s (0.25 s)."""
    return {"cost_usd": f"${value:.4f}", "tokens": f"{value:.0f} tokens"}.get(kind, f"{value:.3g} s")


class BudgetReached(IntrospectError, RuntimeError):
    """A budget was spent: the study stops cleanly and says how to continue (exit 3)."""

    exit_status = 3


@dataclass
class Limits:
    """What one study, run or task may spend (None: no limit of that kind)."""

    cost_usd: float | None = None
    tokens: int | None = None
    seconds: float | None = None

    def given(self) -> dict[str, float]:
        return {k: float(v) for k, v in vars(self).items() if v is not None}


def spending(row: Mapping[str, Any]) -> dict[str, float]:
    """What one results row spent, in each budget's kind."""
    return {
        "cost_usd": float(row.get("cost_usd") or 0.0),
        "tokens": float(row.get("input_tokens") or 0) + float(row.get("output_tokens") or 0),
        "seconds": float(row.get("seconds") or 0.0),
    }


@dataclass
class Purse:
    """What a study (or one run) may spend and has spent."""

    limits: Limits
    spent: dict[str, float] = field(default_factory=lambda: dict.fromkeys(KEYS, 0.0))

    def add(self, spent: Mapping[str, float]) -> None:
        for kind, value in spent.items():
            self.spent[kind] += value

    def reached(self) -> str:
        """The kind of the first budget spent ("" when none is)."""
        return next((k for k, limit in self.limits.given().items() if self.spent[k] >= limit), "")

    def name(self, whose: str) -> str:
        """The budget reached as a stop names it: "the study's max_cost_usd ($5.0000)"."""
        kind = self.reached() or "cost_usd"
        return f"{whose} {KEYS[kind]} ({amount(kind, self.limits.given().get(kind, 0.0))})"


@dataclass
class RunMeter:
    study: Purse
    run: Purse
    task_limits: Limits
    stop: Callable[[bool], None]  # stop(True): the study's budget, every evaluation stops
    task_spent: dict[str, dict[str, float]] = field(default_factory=dict)  # seeded from each thread's usage
    reached: str = ""  # which budget stopped the evaluation, once one has
    clock: dict[str, float] = field(default_factory=dict)  # each task's latest call, for its seconds

    def before_call(self, task: str | None) -> None:
        key = task or ""
        self.clock.setdefault(key, time.monotonic())
        spent = self.task_spent.setdefault(key, dict.fromkeys(KEYS, 0.0))
        for kind, limit in self.task_limits.given().items():
            if spent[kind] >= limit:
                of = f"{amount(kind, spent[kind])} of its {amount(kind, limit)} budget"
                raise BudgetReached(f"task {task} spent {of} (task_{KEYS[kind]})")

    def after_call(self, task: str | None, usage: Usage) -> None:
        key = task or ""
        now = time.monotonic()
        spent = {
            "cost_usd": float(usage.get("cost_usd") or 0.0),
            "tokens": float(usage.get("input_tokens", 0)) + float(usage.get("output_tokens", 0)),
            "seconds": now - self.clock.get(key, now),
        }
        self.clock[key] = now
        own = self.task_spent.setdefault(key, dict.fromkeys(KEYS, 0.0))
        for kind, value in spent.items():
            own[kind] += value
        self.run.add(spent)
        self.study.add(spent)
        if not self.reached and (self.run.reached() or self.study.reached()):
            everything = bool(self.study.reached())
            self.reached = self.study.name("the study's") if everything else self.run.name("the run's")
            self.stop(everything)
