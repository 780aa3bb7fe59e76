"""What a method's report is written in: the rows of one evaluated configuration (``Config``),
tables of text cells (``Table``), figures as data (``Curves``, ``Histogram``) and the cell
formats every table shares.

A method declares its report (``graphs.method.Report``) as functions of these, in its own
package (``nodes.<method>.report``), so ``introspect report`` (introspect.report) shows a new
method's paper tables without naming it. They live down here, below the method graphs and the
app, because both build on them: a method's package may not import the app.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nodes.runtime.usage import sum_costs

NONE = "-"  # a cell with nothing to show (no task of that kind)


@dataclass
class Table:
    title: str
    columns: list[str]
    rows: list[list[str]] = field(default_factory=list)
    note: str = ""


@dataclass(frozen=True)
class Curves:
    """A line figure: per configuration (or training record, by name) its values at x = 1, 2, ...,
    rates between 0 and 1 drawn as percentages."""

    name: str  # the file's stem: ``sr_trials`` is written as sr_trials.png
    title: str
    xlabel: str
    ylabel: str
    lines: list[tuple[Config | str, list[float]]]
    # a band of +-1 standard deviation around a line, by the line's name (a mean over runs)
    spread: dict[str, list[float]] = field(default_factory=dict)
    # error bars: the standard error over a configuration's repeats at each x, by its number
    # (introspect.report adds them from the same figure drawn for each repeat alone)
    errors: dict[int, list[float]] = field(default_factory=dict)


@dataclass(frozen=True)
class Histogram:
    """A histogram of whole numbers, one series per configuration."""

    name: str
    title: str
    xlabel: str
    ylabel: str
    series: list[tuple[Config, list[int]]]


Figure = Curves | Histogram


Attempt = tuple[str, int]  # a task id and its repeat (1-based)


def repeat_of(row: dict[str, Any]) -> int:
    """The repeat a results row belongs to: ``repeat`` (1-based), 1 when the row has none."""
    return int(row.get("repeat") or 1)


@dataclass
class Config:
    """One evaluated configuration and its latest row per task and repeat."""

    number: int  # 1, 2, ... in the order first seen: tables name a configuration "#N method"
    method: str
    env: str
    model: str
    fingerprint: str
    settings: dict[str, Any]
    run_label: str = ""  # the study run's ``label`` its rows carry ("" for plain eval)
    sources: list[str] = field(default_factory=list)  # the files its rows came from
    latest: dict[Attempt, dict[str, Any]] = field(default_factory=dict)

    @property
    def rows(self) -> list[dict[str, Any]]:
        """Every attempt's latest row: each task once per repeat."""
        return list(self.latest.values())

    @property
    def ran(self) -> list[dict[str, Any]]:
        """Rows that ran to an outcome: an error row is not a failure (introspect.evaluate)."""
        return [r for r in self.latest.values() if not r.get("error")]

    @property
    def repeats(self) -> list[int]:
        """The repeats its rows belong to, in order (``[1]`` for a run that was not repeated)."""
        return sorted({repeat for _, repeat in self.latest})

    @property
    def label(self) -> str:
        """``#N method env`` and the study run's label: short enough for a table column;
        ``settings_text`` and ``model_name`` say the rest."""
        named = f" {self.run_label}" if self.run_label else ""
        return f"#{self.number} {self.method} {self.env}{named}"

    @property
    def model_name(self) -> str:
        """The model spec, a script named by its file (``scripted:run.jsonl``), not its folders."""
        provider, sep, name = self.model.partition(":")
        return f"{provider}{sep}{Path(name).name}" if provider in ("scripted", "replay") else self.model

    def limit(self, key: str, default: int) -> int:
        """A limit the runs had (``max_trials``, ``max_episodes``): the setting, else ``default``
        (the method's published one, which a row leaves out as unchanged)."""
        value = self.settings.get(key)
        return int(value if value is not None else default)

    @property
    def caveat(self) -> str:
        """What its rows' env said about comparing them with the paper (each distinct caveat
        once, in row order; "" when none did)."""
        return "; ".join(dict.fromkeys(str(r["caveat"]) for r in self.rows if r.get("caveat")))

    @property
    def settings_text(self) -> str:
        """The settings that differ from the defaults, ``key=value`` (long values cut)."""
        return " ".join(f"{k}={_short(self._given(v))}" for k, v in sorted(self.settings.items())) or "defaults"

    def _given(self, value: Any) -> Any:
        """A per-env setting (AutoPlan's ``max_actions``, a mapping of env names) as the run gave it:
        its value for this run's env, not every env's."""
        return value[self.env] if isinstance(value, dict) and self.env in value else value


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return text if len(text) <= 40 else text[:37] + "..."


def by_task(rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Rows grouped by task id, in the order first seen (a task's repeats together)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        out.setdefault(str(row["task_id"]), []).append(row)
    return out


def counted(rows: list[dict[str, Any]]) -> str:
    """How many runs ``rows`` are: ``5`` tasks once each, ``5 x 3`` when each task ran in 3
    repeats, ``14 of 5 tasks`` when the tasks ran unequal numbers of times."""
    tasks = by_task(rows)
    times = {len(v) for v in tasks.values()}
    if times <= {1}:
        return str(len(rows))
    if len(times) == 1:
        return f"{len(tasks)} x {times.pop()}"
    return f"{len(rows)} of {len(tasks)} tasks"


def percent(value: float | None) -> str:
    return NONE if value is None else f"{100 * value:.1f}"


def number(value: float | None, digits: int = 2) -> str:
    return NONE if value is None else f"{value:.{digits}f}"


def mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def rate(rows: list[dict[str, Any]]) -> float | None:
    """The success rate of rows (None without rows)."""
    return mean([float(bool(r.get("success"))) for r in rows])


def total_cost(rows: list[dict[str, Any]]) -> float | None:
    """Summed cost; None (unpriced) when any row's model has no known price."""
    return sum_costs(r.get("cost_usd") for r in rows)
