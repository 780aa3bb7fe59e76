"""What a study would spend, for ``study run --dry-run`` and before a real run: two figures per run.

The bound: the most the runs can spend, never exceeded. Each method declares its cost
structure (``Method.bound``, nodes.runtime.bound: the calls one task can make at the configuration's
limits, and the largest reply a call may ask for); an env that judges answers with a model
(``judge`` not off) adds one call per episode. Calls and output tokens are bounded; input
tokens grow with the pages the env shows, so they are bounded only by the model's context
window (the price table's) per call, and priced at that (every call at the run's model's price);
without a window, only the output is priced. Its time is no bound: it is the calls at an assumed
``SECONDS_PER_CALL``, said so wherever it is shown.

The expectation: the mean per task of earlier rows of the same configuration (method, env,
model, settings fingerprint), from the study's own results files, ``eval``'s ``results/``
folder and any results file given (``--earlier``), times the task runs still to do; with the
time those tasks take at the tokens per second the rows measured. Without earlier rows there
is none: the bound is what is known.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envs.base import JudgedEnv, make_env
from introspect.evaluate import fingerprint, read_rows
from introspect.study.budget import KEYS, amount
from introspect.study.spec import Run, Study
from nodes.runtime.usage import context_window, cost, dollars

# The time a bound is given at: an assumption, stated wherever it is shown (a call of a hosted
# model that writes a few hundred tokens takes seconds; the expectation measures its own).
SECONDS_PER_CALL = 10.0
ASSUMED = f"{SECONDS_PER_CALL:.0f} s per call assumed"


@dataclass
class Bound:
    calls: int
    output_tokens: int
    # the most input tokens: each call at most the model's context window (None: the price table
    # gives none, and input is not bounded before a run)
    input_tokens: int | None
    cost_usd: float | None  # both at list price (the output's alone when input is not bounded); None: unpriced

    @property
    def seconds(self) -> float:
        """Task-seconds at ``SECONDS_PER_CALL`` (an assumption, not a bound)."""
        return self.calls * SECONDS_PER_CALL

    def line(self, concurrency: int = 1) -> str:
        tokens = f"{self.output_tokens} output tokens, " + (
            f"{self.input_tokens} input tokens (a context window per call)"
            if self.input_tokens is not None
            else "input tokens not bounded before a run"
        )
        price = dollars(self.cost_usd) + ("" if self.input_tokens is not None or self.cost_usd is None else " (output)")
        time = f"~{duration(self.seconds / concurrency)} at {concurrency} in flight"
        return f"at most {self.calls} model calls, {tokens}, {price} (bound); {time} ({ASSUMED})"


def duration(seconds: float) -> str:
    """42 s, 7.5 min, 3.2 h, 12.4 days."""
    for unit, size in (("days", 86400.0), ("h", 3600.0), ("min", 60.0)):
        if seconds >= 2 * size:
            return f"{seconds / size:.1f} {unit}"
    return f"{seconds:.0f} s"


@dataclass
class Expectation:
    calls: float
    input_tokens: float
    output_tokens: float
    cost_usd: float | None
    seconds: float | None  # task-seconds, at the measured tokens per second
    rows: int

    def line(self, concurrency: int) -> str:
        time = ""
        if self.seconds is not None:
            time = f", ~{self.seconds / concurrency:.0f} s at {concurrency} in flight"
        return (
            f"expected ~{self.calls:.0f} model calls, ~{self.input_tokens:.0f} in / ~{self.output_tokens:.0f} out "
            f"tokens, ~{dollars(self.cost_usd)}{time} (from {self.rows} earlier rows of this configuration)"
        )

    def spending(self) -> dict[str, float | None]:
        """In each budget's kind."""
        return {"cost_usd": self.cost_usd, "tokens": self.input_tokens + self.output_tokens, "seconds": self.seconds}


@dataclass
class Estimate:
    tasks: int  # task runs still to do: tasks x repeats without a finished row
    bound: Bound | None  # None: the method declares no cost structure
    expected: Expectation | None  # None: no earlier rows of this configuration

    def lines(self, concurrency: int) -> list[str]:
        out = [
            f"{self.tasks} task runs; "
            + (self.bound.line(concurrency) if self.bound else "no bound: the method declares none")
        ]
        out.append(
            self.expected.line(concurrency)
            if self.expected
            else "no expectation yet: no earlier rows of this configuration"
        )
        return out


def estimate(run: Run, folder: Path, earlier: Iterable[Path] = ()) -> Estimate:
    """The estimate of what ``run``'s unfinished task runs will spend."""
    todo = 0
    for repeat in range(1, run.repeats + 1):
        done = {r["task_id"] for r in read_rows(folder / run.results(repeat)) if not r.get("error")}
        todo += sum(1 for t in run.tasks if t not in done)
    files = study_files(folder, earlier)
    return Estimate(todo, bound_of(run, todo), expectation(similar_rows(run, files), todo))


def study_files(folder: Path, earlier: Iterable[Path] = ()) -> list[Path]:
    """The results files earlier rows are read from: the study's own, ``eval``'s ``results/``
    folder and those given (``--earlier``)."""
    return [*(folder / "results").glob("*.jsonl"), *Path("results").glob("*.jsonl"), *earlier]


def bound_of(run: Run, todo: int) -> Bound | None:
    """The method's declared bound per task, times the task runs still to do, with the judge's
    calls at the end of each episode where the env judges answers with a model."""
    declared = run.method.bound(run.context)
    if declared is None:
        return None
    env = make_env(run.context.env, **run.context.env_settings())  # a task list's env: nothing started
    judged = isinstance(env, JudgedEnv) and env.judge_model is not None
    judge = max((type(env).judge_calls(t) for t in run.tasks), default=0) if judged else 0
    calls = (declared.calls + declared.episodes * judge) * todo
    out = calls * declared.output_tokens
    window = context_window(run.context.model)
    tokens_in = calls * window if window is not None else None
    return Bound(calls, out, tokens_in, cost(run.context.model, tokens_in or 0, out))


def expectation(rows: list[dict[str, Any]], todo: int) -> Expectation | None:
    """The mean per task of ``rows``, times ``todo``; time at the rows' tokens per second."""
    if not rows:
        return None

    def total(key: str) -> float:
        return sum(float(r.get(key) or 0) for r in rows)

    n = len(rows)
    tokens, seconds = total("input_tokens") + total("output_tokens"), total("seconds")
    per_second = tokens / seconds if seconds > 0 else None
    priced = all(r.get("cost_usd") is not None for r in rows)
    tokens_in, tokens_out = total("input_tokens") / n * todo, total("output_tokens") / n * todo
    return Expectation(
        calls=total("model_calls") / n * todo,
        input_tokens=tokens_in,
        output_tokens=tokens_out,
        cost_usd=total("cost_usd") / n * todo if priced else None,
        seconds=(tokens_in + tokens_out) / per_second if per_second else None,
        rows=n,
    )


def similar_rows(run: Run, files: list[Path]) -> list[dict[str, Any]]:
    """Rows without error of ``run``'s configuration (method, env, model, settings) in ``files``,
    each row once (a file named twice, or both in the folder and given, counts once)."""
    want = (run.method.name, run.context.env, run.context.model, fingerprint(run.method, run.context))
    seen = dict.fromkeys(p.resolve() for p in files if p.is_file())
    return [
        row
        for path in seen
        for row in read_rows(path)
        if (row.get("method"), row.get("env"), row.get("model"), row.get("fingerprint")) == want
        and not row.get("error")
        and not row.get("from_checkpoint")  # reported from a finished thread: its seconds are not its own
        and not row.get("baseline")  # a baseline arm's: its attempts added up, not one run of the configuration
    ]


def against_budgets(study: Study, estimates: list[Estimate]) -> list[str]:
    """Where the expectation meets each budget: the study's, in the order of its runs ("the
    study's max_cost_usd ($5.0000) stops it during run 2 of 3 (label)"), and each run's."""
    lines = []
    for kind, limit in study.budget.given().items():
        total, line = 0.0, ""
        for number, guess in enumerate(estimates, 1):
            expected = guess.expected.spending()[kind] if guess.expected else None
            if expected is None:
                line = f"cannot be set against run {number} ({study.runs[number - 1].label}): no expectation yet"
                break
            total += expected
            if total >= limit:
                line = f"stops it during run {number} of {len(estimates)} ({study.runs[number - 1].label}), as expected"
                break
        else:
            line = f"holds: {amount(kind, total)} expected in all"
        lines.append(f"the study's {KEYS[kind]} ({amount(kind, limit)}) {line}")
    for run, guess in zip(study.runs, estimates):
        for kind, limit in run.budget.given().items():
            expected = guess.expected.spending()[kind] if guess.expected else None
            verdict = (
                "cannot be set against it: no expectation yet"
                if expected is None
                else ("stops it, as expected" if expected >= limit else "holds")
                + f" ({amount(kind, expected)} expected)"
            )
            lines.append(f"run {run.label}'s {KEYS[kind]} ({amount(kind, limit)}) {verdict}")
    return lines
