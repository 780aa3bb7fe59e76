"""What a study would spend, for ``study run --dry-run``: model calls, tokens and cost per run.

Two sources, the better first. Rows of the same configuration already written (the study's
own results files, and ``eval``'s default ``results/`` folder): their mean per task, times the
tasks and repeats to run. Otherwise the method's limits: one acting call per action its
limits allow (``max_actions``, times ``max_trials`` or ``max_episodes`` where it has them),
each sending the method's prompt text (every prompt file, four characters a token) and
receiving ``max_tokens``, priced by genai-prices: a ceiling real runs seldom reach (they end
sooner and answer shorter), though it leaves out the observations' size. The line says
which source it used.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphs.app.evaluate import fingerprint, read_rows
from graphs.app.study.spec import Run
from nodes.usage import cost, dollars

LIMITS = ("max_trials", "max_episodes")  # multiply the actions allowed per trial or episode


@dataclass
class Estimate:
    tasks: int  # task runs still to do: tasks x repeats without a finished row
    calls: float
    input_tokens: float
    output_tokens: float
    cost_usd: float | None
    source: str

    def line(self) -> str:
        return (
            f"{self.tasks} task runs, ~{self.calls:.0f} model calls, ~{self.input_tokens:.0f} in / "
            f"~{self.output_tokens:.0f} out tokens, ~{dollars(self.cost_usd)} ({self.source})"
        )


def estimate(run: Run, folder: Path) -> Estimate:
    """The estimate of what ``run``'s unfinished task runs will spend."""
    todo = 0
    for repeat in range(1, run.repeats + 1):
        done = {r["task_id"] for r in read_rows(folder / run.results(repeat)) if not r.get("error")}
        todo += sum(1 for t in run.tasks if t not in done)
    earlier = similar_rows(run, [*(folder / "results").glob("*.jsonl"), *Path("results").glob("*.jsonl")])
    if earlier:
        n = len(earlier)

        def mean(key: str) -> float:
            return sum(float(r.get(key) or 0) for r in earlier) / n

        priced = all(r.get("cost_usd") is not None for r in earlier)
        return Estimate(
            todo,
            mean("model_calls") * todo,
            mean("input_tokens") * todo,
            mean("output_tokens") * todo,
            mean("cost_usd") * todo if priced else None,
            f"from {n} earlier rows of this configuration",
        )
    calls = acting_calls(run)
    tokens_in = prompt_tokens(run)
    tokens_out = int(run.context.max_tokens)
    per_call = cost(run.context.model, tokens_in, tokens_out)
    return Estimate(
        todo,
        calls * todo,
        calls * tokens_in * todo,
        calls * tokens_out * todo,
        None if per_call is None else per_call * calls * todo,
        "at most, from the method's limits and prompt sizes",
    )


def similar_rows(run: Run, files: list[Path]) -> list[dict[str, Any]]:
    """Rows without error of ``run``'s configuration (method, env, model, settings) in ``files``."""
    want = (run.method.name, run.context.env, run.context.model, fingerprint(run.method, run.context))
    return [
        row
        for path in dict.fromkeys(files)
        for row in read_rows(path)
        if (row.get("method"), row.get("env"), row.get("model"), row.get("fingerprint")) == want
        and not row.get("error")
    ]


def acting_calls(run: Run) -> int:
    """Actions the method's limits allow one task (one model call each)."""
    actions: Any = getattr(run.context, "max_actions", 1)
    if isinstance(actions, dict):
        actions = actions.get(run.context.env, max(actions.values()))
    calls = int(actions)
    for name in LIMITS:
        calls *= int(getattr(run.context, name, 1))
    return calls


def prompt_tokens(run: Run) -> int:
    """The method's prompt text in tokens (four characters each), as one call's input."""
    if run.method.prompts is None:
        return 0
    return sum(len(p.read_text(encoding="utf-8")) for p in run.method.prompts.root.rglob("*.md")) // 4
