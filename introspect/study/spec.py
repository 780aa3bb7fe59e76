"""A study file (TOML) read into runs, every value checked before anything runs.

A study names what to compare: top-level ``name`` and the defaults every run takes unless it
gives its own (``model``, ``repeats``, ``concurrency``, ``max_cost_usd``, ``max_tokens_total``
and ``max_seconds`` for the whole study, ``task_max_cost_usd``, ``task_max_tokens_total`` and
``task_max_seconds`` for each task, ``workers``, ``server``); then ``[[runs]]``, each one
method on one env's tasks, and ``[[grid]]``, lists of methods, envs, models and setting
values expanded into one run per combination. A run's settings are checked by the same code
that checks ``eval --set`` (introspect.options), so a study refuses what ``eval`` refuses, in
the same words, naming the run.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from envs.base import ENV_CLASSES, env_class
from errors import UserError
from graphs import method_named
from graphs.method import Method
from introspect.options import context_from, task_list
from introspect.study.budget import Limits
from introspect.study.published import Published, PublishedError
from introspect.study.published import parse as parse_published
from nodes.runtime.context import Context


class StudyError(UserError, ValueError):
    """A study file that cannot run as written; the message names the file and the run."""


# defaults a run inherits from the top of the study file
TASK_BUDGETS = ("task_max_cost_usd", "task_max_tokens_total", "task_max_seconds")
BUDGETS = ("max_cost_usd", "max_tokens_total", "max_seconds")  # the study's, or a run's
DEFAULTS = ("model", "repeats", "concurrency", *TASK_BUDGETS, "workers", "server", "baseline_spend")
TOP = ("name", *BUDGETS, "checkpoint", "min_detectable", "discordance", "published", *DEFAULTS)
RUN = ("method", "env", "tasks", "split", "settings", "env_options", "plan", "label", "baseline", *BUDGETS, *DEFAULTS)
GRID = ("methods", "envs", "models", *(k for k in RUN if k not in ("method", "env", "model", "label")))
# keys that decide no outcome: a study may change them between sessions (a higher budget)
LABEL = r"[A-Za-z0-9][A-Za-z0-9._=,-]*"  # a label names files
FREE = ("repeats", "concurrency", *BUDGETS, *TASK_BUDGETS, "workers", "server")
BASELINES = ("equal_cost",)  # the baseline arms a run may add
# what "the same budget" of an equal-cost arm counts: a row's model calls, its tokens (input plus
# output), or its dollars
SPENDS = ("model_calls", "tokens", "cost_usd")


@dataclass(frozen=True)
class Baseline:
    """A run's equal-cost baseline arm: the method's base agent (``Method.base_agent``'s settings
    over the run's own: ``context``) retried from a fresh start until it has spent, as ``spend``
    counts, what the run spent on the task (introspect.study.baseline)."""

    spend: str  # one of SPENDS
    context: Context


@dataclass
class Run:
    """One configuration of a study: a method with its settings on an env's tasks, repeated."""

    label: str
    method: Method
    context: Context
    tasks: list[str]
    repeats: int
    concurrency: int | Literal["auto"]  # tasks in flight, or "auto": eval's --concurrency auto
    budget: Limits  # the run's max_cost_usd, max_tokens_total, max_seconds
    task_budget: Limits  # each task's: task_max_cost_usd, task_max_tokens_total, task_max_seconds
    workers: int
    server: str | None
    given: dict[str, Any]  # the run's table as expanded from the file (what changes a run)
    baseline: Baseline | None = None  # its equal-cost baseline arm, when the spec adds one
    # what stops it from running here, found by a dry run (a plan file not trained yet); a real
    # run refuses such a run in one line instead
    blockers: list[str] = field(default_factory=list)

    def results(self, repeat: int) -> Path:
        """Its results file for ``repeat``, inside the study folder."""
        return Path("results") / f"{self.label}.r{repeat}.jsonl"


@dataclass
class Study:
    name: str
    runs: list[Run]
    budget: Limits  # max_cost_usd, max_tokens_total, max_seconds of the whole study
    checkpoint: str | None
    text: str  # the file as given
    # the smallest difference in success rate its comparisons should detect, and the share of tasks
    # on which two configurations are assumed to disagree (None: measured, else assumed; study.power)
    min_detectable: float = 0.05
    discordance: float | None = None
    # the paper's numbers the study reproduces (introspect.study.published), which its report prints
    published: list[Published] = field(default_factory=list)


def load(path: Path, models: bool = True) -> Study:
    """The study in ``path``, every run checked (method, env, settings, model, tasks, budgets);
    a ``StudyError`` (one line) on the first thing wrong. ``models=False`` checks each model's
    spec but not its key or script (a dry run)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise StudyError(f"cannot read study file {path}: {exc.strerror}") from None
    return parse(text, str(path), models)


def parse(text: str, where: str, models: bool = True) -> Study:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise StudyError(f"study {where}: not TOML ({exc})") from None
    _known(data, TOP + ("runs", "grid"), f"study {where}")
    name = data.get("name")
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name):
        raise StudyError(
            f"study {where}: 'name' must be a name of letters, digits, '.', '-' or '_' (it names its folder)"
        )
    tables = expanded(data, where)
    if not tables:
        raise StudyError(f"study {where}: no [[runs]] or [[grid]]: nothing to run")
    labels = unique_labels(tables)
    runs = [_run(table, label, data, f"study {where}: run {label!r}", models) for table, label in zip(tables, labels)]
    reproduced = {run.label: (run.method.name, run.context.env) for run in runs}
    try:
        numbers = parse_published(data, where, reproduced)
    except PublishedError as exc:
        raise StudyError(str(exc)) from None
    return Study(
        name=name,
        runs=runs,
        budget=_limits(data, "", f"study {where}: "),
        checkpoint=_text(data.get("checkpoint"), f"study {where}: checkpoint"),
        text=text,
        min_detectable=_share(data.get("min_detectable", 0.05), f"study {where}: min_detectable"),
        discordance=None if "discordance" not in data else _share(data["discordance"], f"study {where}: discordance"),
        published=numbers,
    )


def expanded(data: dict[str, Any], where: str) -> list[dict[str, Any]]:
    """The run tables: each ``[[runs]]`` as written, then each ``[[grid]]``'s combinations
    (a method x env pair the method does not run on is left out; an env no method knows is refused)."""
    tables: list[dict[str, Any]] = []
    for number, table in enumerate(_tables(data, "runs", where), 1):
        _known(table, RUN, f"study {where}: runs[{number}]")
        if "method" not in table:
            raise StudyError(f"study {where}: runs[{number}] names no method")
        tables.append(dict(table))
    for number, grid in enumerate(_tables(data, "grid", where), 1):
        _known(grid, GRID, f"study {where}: grid[{number}]")
        methods = _listed(grid, "methods")
        if not methods:
            raise StudyError(f"study {where}: grid[{number}] names no methods")
        envs = _listed(grid, "envs") or [None]
        for env in envs:
            if env is not None and env not in ENV_CLASSES:  # never left out unseen, as a cell that does not run is
                raise StudyError(
                    f"study {where}: grid[{number}]: unknown env {env!r}; choose from: {', '.join(ENV_CLASSES)}"
                )
        models = _listed(grid, "models") or [None]
        settings = grid.get("settings", {})
        if not isinstance(settings, dict):
            raise StudyError(f"study {where}: grid[{number}].settings must be a table")
        names = list(settings)
        values = [v if isinstance(v, list) else [v] for v in settings.values()]
        rest = {k: v for k, v in grid.items() if k not in ("methods", "envs", "models", "settings")}
        for method, env, model, chosen in itertools.product(methods, envs, models, itertools.product(*values)):
            if env is not None and env not in _method(method, f"study {where}: grid[{number}]").envs:
                continue
            table = {"method": method, **rest, **({"env": env} if env else {}), **({"model": model} if model else {})}
            if names:
                table["settings"] = dict(zip(names, chosen))
            tables.append(table)
    return tables


def unique_labels(tables: list[dict[str, Any]]) -> list[str]:
    """Each run's label: its own, else METHOD-ENV, with the model's name and the settings
    that tell it from the other runs of the same METHOD-ENV (a grid's); a label still taken
    gets -2, -3. A run edited alone keeps its label, so a changed run is named as changed."""
    given = [t.get("label") for t in tables]
    for label in given:
        if label is not None and (not isinstance(label, str) or not re.fullmatch(LABEL, label)):
            raise StudyError(f"label {label!r}: use letters, digits and . _ = , - (it names files)")
        if label is not None and given.count(label) > 1:
            raise StudyError(f"two runs are labelled {label!r}")
    bases = [f"{t['method']}-{t.get('env', 'default')}" for t in tables]
    labels: list[str] = []
    for table, base, own in zip(tables, bases, given):
        if own is not None:
            labels.append(own)
            continue
        peers = [t for t, b in zip(tables, bases) if b == base]
        parts = [base]
        if len({str(t.get("model")) for t in peers}) > 1 and "model" in table:
            parts.append(str(table["model"]).rpartition("/")[2].removesuffix(".jsonl"))
        settings = table.get("settings", {})
        for key in sorted(settings):
            if len({json.dumps(t.get("settings", {}).get(key), sort_keys=True) for t in peers}) > 1:
                parts.append(f"{key}={json.dumps(settings[key], sort_keys=True)}")
        label = stem = re.sub(r"[^A-Za-z0-9._=,-]+", "_", "-".join(parts)).strip("_")[:100]
        n = 1
        while label in labels or label in given:
            n += 1
            label = f"{stem}-{n}"
        labels.append(label)
    return labels


def _run(table: dict[str, Any], label: str, top: dict[str, Any], where: str, models: bool = True) -> Run:
    def value(key: str, default: Any) -> Any:
        return table.get(key, top.get(key, default))

    try:
        method = _method(table["method"], where)
        settings = table.get("settings", {})
        env_options = table.get("env_options", {})
        if not isinstance(settings, dict) or not isinstance(env_options, dict):
            raise StudyError("settings and env_options are tables")
        plan, blockers = table.get("plan"), []
        if not models and isinstance(plan, str) and not Path(plan).is_file():  # a dry run estimates it all the same
            train = f"introspect train {table['method']} ... --plan-out {plan}"
            blockers.append(f"plan file not found: {plan} (write it with `{train}`)")
            plan = None
        args = argparse.Namespace(
            env=table.get("env"),
            model=value("model", None),
            set=[f"{k}={json.dumps(v)}" for k, v in settings.items()],
            env_option=[f"{k}={json.dumps(v)}" for k, v in env_options.items()],
            plan=plan,
        )
        context = context_from(args, method, models=models, model_named='model = "local" (or a provider:model)')
        if context.confirm:
            raise StudyError("a study does not stop to ask a person: leave confirm out")
        selected = task_list(context, _text(table.get("split"), "split"), _text(table.get("tasks"), "tasks"))
        tasks = list(dict.fromkeys(selected))  # a task named twice runs once (its thread is one)
        if not tasks:
            raise StudyError("its tasks select none")
        if why := env_class(context.env).unreachable(tasks):  # a live site with no URL set
            blockers.append(why)
        if models and blockers:  # a real run: refused before anything is written
            raise StudyError(blockers[0])
        run = Run(
            label=label,
            method=method,
            context=context,
            tasks=tasks,
            repeats=_count(value("repeats", 1), "repeats"),
            concurrency=_concurrency(value("concurrency", 4)),
            budget=_limits(table, ""),
            task_budget=_limits({k: value(k, None) for k in TASK_BUDGETS}, "task_"),
            workers=_count(value("workers", 1), "workers"),
            server=_text(value("server", None), "server"),
            given={**table, "label": label},
            blockers=blockers,
        )
        run.baseline = _baseline(table, value("baseline_spend", "model_calls"), run, args, models)
    except UserError as exc:
        raise StudyError(f"{where}: {exc}") from None
    dollars = bool(top.get("max_cost_usd") or run.budget.cost_usd or run.task_budget.cost_usd)
    budgeted = dollars or any(top.get(k) for k in BUDGETS) or bool(run.budget.given() or run.task_budget.given())
    if dollars and not priced(run.context.model):
        raise StudyError(
            f"{where}: the model {run.context.model} has no known price, so a dollar budget cannot be kept: "
            "limit it by max_tokens_total or max_seconds instead (task_max_tokens_total, task_max_seconds)"
        )
    if (run.workers > 1 or run.server) and run.repeats > 1:
        raise StudyError(f"{where}: repeats run here only (drop workers and server, or repeats)")
    if (run.workers > 1 or run.server) and budgeted:
        raise StudyError(f"{where}: budgets are kept call by call here only (drop workers and server, or the budgets)")
    if run.workers > 1 and run.server:
        raise StudyError(f"{where}: workers and server exclude each other")
    if run.baseline and (run.workers > 1 or run.server):
        raise StudyError(f"{where}: a baseline arm runs here only (drop workers and server, or baseline)")
    if run.baseline and run.baseline.spend == "cost_usd" and not priced(run.context.model):
        raise StudyError(
            f'{where}: the model {run.context.model} has no known price, so baseline_spend = "cost_usd" cannot be '
            'kept: count "model_calls" or "tokens" instead'
        )
    if run.concurrency == "auto" and (run.workers > 1 or run.server):
        raise StudyError(f'{where}: concurrency = "auto" paces the calls made here only (drop workers and server)')
    return run


def _baseline(table: dict[str, Any], spend: Any, run: Run, args: argparse.Namespace, models: bool) -> Baseline | None:
    """The run's baseline arm (``baseline`` names its kind), its base agent's settings checked as
    the run's are; None when the run adds none."""
    kind = table.get("baseline")
    if spend not in SPENDS:
        raise StudyError(f"baseline_spend must be one of {', '.join(map(repr, SPENDS))}, got {spend!r}")
    if kind is None:
        return None
    if kind not in BASELINES:
        raise StudyError(f"baseline must be one of {', '.join(map(repr, BASELINES))}, got {kind!r}")
    agent = run.method.base_agent
    if agent is None:
        raise StudyError(f"{run.method.name} declares no base agent to retry at equal cost: leave baseline out")
    base = argparse.Namespace(set=[f"{k}={json.dumps(v)}" for k, v in agent.settings.items()])
    return Baseline(spend, context_from(base, run.method, base=run.context, models=models))


def _concurrency(value: Any) -> int | Literal["auto"]:
    """Tasks in flight, or "auto" (introspect.pacing: raised while calls succeed, cut on 429s)."""
    return "auto" if value == "auto" else _count(value, "concurrency")


def priced(model: str) -> bool:
    """Whether genai-prices knows the price of ``model`` (the spec as runs give it)."""
    from nodes.runtime.usage import cost

    return cost(model, 1000, 1000) is not None


def _method(name: Any, where: str) -> Method:
    if not isinstance(name, str):
        raise StudyError(f"{where}: a method is a name, got {name!r}")
    try:
        return method_named(name)
    except UserError as exc:
        raise StudyError(f"{where}: {exc}") from None


def _tables(data: dict[str, Any], key: str, where: str) -> list[dict[str, Any]]:
    tables = data.get(key, [])
    if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
        raise StudyError(f"study {where}: '{key}' must be tables ([[{key}]])")
    return tables


def _known(table: dict[str, Any], keys: tuple[str, ...], where: str) -> None:
    for key in table:
        if key not in keys:
            raise StudyError(f"{where}: unknown key {key!r}; known: {', '.join(keys)}")


def _listed(table: dict[str, Any], key: str) -> list[Any]:
    value = table.get(key, [])
    return value if isinstance(value, list) else [value]


def _text(value: Any, key: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise StudyError(f"{key} must be a string, got {value!r}")


def _count(value: Any, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise StudyError(f"{key} must be a whole number >= 1, got {value!r}")
    return value


def _share(value: Any, key: str) -> float:
    """A share of tasks: a number above 0 and at most 1."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 1:
        raise StudyError(f"{key} must be a share of tasks above 0 and at most 1, got {value!r}")
    return float(value)


def _budget(value: Any, key: str, unit: str = "dollars") -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < math.inf:  # nan too
        raise StudyError(f"{key} must be a positive number of {unit}, got {value!r}")
    return float(value)


def _limits(table: dict[str, Any], prefix: str, where: str = "") -> Limits:
    """The budgets ``table`` gives (``prefix``: "task_" for each task's)."""
    tokens = table.get(f"{prefix}max_tokens_total")
    if tokens is not None and (isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 1):
        raise StudyError(f"{where}{prefix}max_tokens_total must be a whole number of tokens >= 1, got {tokens!r}")
    return Limits(
        cost_usd=_budget(table.get(f"{prefix}max_cost_usd"), f"{where}{prefix}max_cost_usd"),
        tokens=tokens,
        seconds=_budget(table.get(f"{prefix}max_seconds"), f"{where}{prefix}max_seconds", "seconds"),
    )
