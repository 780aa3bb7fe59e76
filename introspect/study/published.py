"""A paper's published numbers, as a study carries them (``[[published]]``), checked before
anything runs.

A study that reproduces a paper's table says which numbers it reproduces: each entry names
where they stand in the paper (``table``, and ``page`` when the source gives pages), the paper's
``method`` and ``env``, the ``metric``, and the paper's figure: ``value``, or ``between = [low,
high]`` when the source bounds it without giving it (a cell whose decimals the text lost, a
point read off a plot). ``run`` names the study run that reproduces it (default: every run of
that method on that env); ``row`` is the paper's own name for its row ("AR", "ReAct (0 Shot)");
``task`` (a MiniWoB++ task, over its seeds), ``task_type`` (an ALFWorld task type, as Table 3a
of AutoPlan labels them) and ``trials`` (success within the first T trials, Structured
Reflection's T) narrow what is counted; ``note`` says anything a reader needs. The report
(introspect.report.papers) prints each beside the reproduced figure.

Rates are shares (0.235 for 23.5%), as the results rows hold them. Every bad value is one line
that names the entry, and the study does not run.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envs.base import ENV_CLASSES
from errors import UserError
from nodes.autoplan.report import TYPE_LABELS as TASK_TYPES  # AutoPlan's Table 3a labels

# metric -> (its kind, what it is): a share lies in [0, 1]; a count or dollars are >= 0
METRICS: dict[str, tuple[str, str]] = {
    "success_rate": ("share", "the share of tasks that succeeded (within `trials` trials when given)"),
    "reward": ("share", "the mean reward (WebShop's 0-1 score)"),
    "actions_first_episode": ("count", "actions in a task's first episode (Devil's Advocate), averaged"),
    "actions_last_episode": ("count", "actions in a task's last episode (Devil's Advocate), averaged"),
    "plan_revisions": ("count", "plan revisions per task (Devil's Advocate), averaged"),
    "cost_usd": ("dollars", "dollars per task at list prices"),
}
KEYS: tuple[str, ...] = ("table", "page", "method", "env", "metric", "value", "between", "run", "row")
KEYS += ("task", "task_type", "trials", "note")


class PublishedError(UserError, ValueError):
    """A published number that cannot stand as written: one line, and the study does not run."""


@dataclass(frozen=True)
class Published:
    """One number a paper published, and what in a study's rows reproduces it."""

    table: str  # "Table 1", "Section 4.2": where it stands in the paper
    method: str
    env: str
    metric: str  # a key of METRICS
    low: float  # the paper's value (low == high), or the bounds a source gives it
    high: float
    page: int | None = None
    run: str | None = None  # the study run that reproduces it (None: every run of method on env)
    row: str = ""  # the paper's name for its row
    task: str | None = None
    task_type: str | None = None
    trials: int | None = None
    note: str = ""

    @property
    def exact(self) -> bool:
        return self.low == self.high

    @property
    def where(self) -> str:
        """``Table 1, p. 7``: where it stands in the paper."""
        return self.table + (f", p. {self.page}" if self.page is not None else "")

    @property
    def share(self) -> bool:
        """A rate, shown in percent."""
        return METRICS[self.metric][0] == "share"


def parse(data: dict[str, Any], where: str, runs: dict[str, tuple[str, str]] | None = None) -> list[Published]:
    """The ``published`` entries of a study file's TOML ``data``; ``runs`` (label -> method, env)
    checks that a named run is one of the study's and reproduces that method on that env, and
    that some run does (None: not checked, a study folder read back)."""
    entries = data.get("published", [])
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise PublishedError(f"study {where}: 'published' must be tables ([[published]])")
    return [_entry(entry, f"study {where}: published[{n}]", runs) for n, entry in enumerate(entries, 1)]


def of_spec(path: Path) -> list[Published]:
    """The published entries of a study folder's ``spec.toml`` (none when it has none or is
    unreadable: the study was checked when it ran)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        return parse(data, str(path))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, PublishedError):
        return []


def _entry(entry: dict[str, Any], where: str, runs: dict[str, tuple[str, str]] | None) -> Published:
    for key in entry:
        if key not in KEYS:
            raise PublishedError(f"{where}: unknown key {key!r}; known: {', '.join(KEYS)}")
    table, method, env, metric = (_required(entry.get(k), k, where) for k in ("table", "method", "env", "metric"))
    from graphs import method_named

    try:
        known = method_named(method)
    except UserError as exc:
        raise PublishedError(f"{where}: {exc}") from None
    if env not in ENV_CLASSES or env not in known.envs:
        raise PublishedError(f"{where}: {known.name} does not run on env {env!r}; its envs: {', '.join(known.envs)}")
    if metric not in METRICS:
        raise PublishedError(f"{where}: unknown metric {metric!r}; choose from: {', '.join(METRICS)}")
    low, high = _figure(entry, METRICS[metric][0], where)
    run = _words(entry.get("run"), "run", where)
    if runs is not None:
        named = {label: pair for label, pair in runs.items() if pair == (known.name, env)}
        if run is not None and run not in named:
            raise PublishedError(
                f"{where}: run {run!r} is not a run of {known.name} on {env} in this study"
                + (f"; those are: {', '.join(named)}" if named else "")
            )
        if not named:
            raise PublishedError(f"{where}: no run of this study reproduces it (no run of {known.name} on {env})")
    task_type = _words(entry.get("task_type"), "task_type", where)
    if task_type is not None and task_type not in TASK_TYPES:
        raise PublishedError(f"{where}: unknown task_type {task_type!r}; choose from: {', '.join(TASK_TYPES)}")
    return Published(
        table=table,
        method=known.name,
        env=env,
        metric=metric,
        low=low,
        high=high,
        page=_whole(entry.get("page"), "page", where),
        run=run,
        row=_words(entry.get("row"), "row", where) or "",
        task=_words(entry.get("task"), "task", where),
        task_type=task_type,
        trials=_whole(entry.get("trials"), "trials", where),
        note=_words(entry.get("note"), "note", where) or "",
    )


def _figure(entry: dict[str, Any], kind: str, where: str) -> tuple[float, float]:
    """The paper's value as (low, high): ``value`` (low == high) or ``between``."""
    if ("value" in entry) == ("between" in entry):
        raise PublishedError(f"{where}: give the paper's figure as value = N, or between = [LOW, HIGH], not both")
    given = [entry["value"]] if "value" in entry else entry["between"]
    if "between" in entry and (not isinstance(given, list) or len(given) != 2):
        raise PublishedError(f"{where}: between must be two numbers [LOW, HIGH], got {given!r}")
    top = 1.0 if kind == "share" else math.inf
    for number in given:
        if isinstance(number, bool) or not isinstance(number, int | float) or not 0 <= number <= top:
            shown = "a share from 0 to 1 (0.235 for 23.5%)" if kind == "share" else f"a number of {kind} >= 0"
            raise PublishedError(f"{where}: the paper's figure must be {shown}, got {number!r}")
    low, high = float(given[0]), float(given[-1])
    if low > high:
        raise PublishedError(f"{where}: between's LOW {low} is above its HIGH {high}")
    return low, high


def _words(value: Any, key: str, where: str) -> str | None:
    return None if value is None else _required(value, key, where)


def _required(value: Any, key: str, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        got = " (it is required)" if value is None else f", got {value!r}"
        raise PublishedError(f"{where}: {key} must be text{got}")
    return value


def _whole(value: Any, key: str, where: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise PublishedError(f"{where}: {key} must be a whole number >= 1, got {value!r}")
    return value
