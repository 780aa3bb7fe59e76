"""The ablation of finished runs: one fork per intervention that happened, run to its end with
that intervention switched off, and one row per fork in the ablation results (JSONL).

The runs come as results files or a study folder (introspect.finding: a study's runs are found in
its own checkpoints); each row's thread is read back from its checkpointer. A fork's thread is
``THREAD-ablate-KIND-N`` (the N-th time KIND happened in THREAD), so an ablation run again after a
crash finds its forks as ``eval`` finds its threads: a row already written is skipped, a fork that
finished is reported from its final state, an unfinished one continues from its checkpoint.

A row names the original run (thread, task, method, env, model, fingerprint, a study's label and
repeat), the intervention (``intervention``, ``count``, ``fired``: how often it happened in the run,
``checkpoint``: where the fork started,
``off``: the settings the fork ran with) and the fork (``fork``, and ``provenance``: what produced it,
its model among the rest: the run's own, or the one ``--model`` named), and gives the outcome ``with``
the intervention (the run as it was) and ``without`` it (the fork: its prefix, shared with the
run, and what it did from there): success, reward, model calls, tokens and cost. The fork's
counts are the whole counterfactual run's, so ``with`` minus ``without`` is what the
intervention added.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from collections import Counter
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphs import method_named
from graphs.method import Intervention, Method
from introspect.ablation.budget import Budget, spent_by_fork
from introspect.ablation.firings import Firing, firings
from introspect.ablation.lineage import Lineage
from introspect.checkpoint import open_checkpointer, thread_exists
from introspect.evaluate import ResultsFile, read_rows, row_for
from introspect.finding import checkpoint_of, results_in, study_holding
from introspect.options import UsageError
from introspect.provenance import provenance_of
from introspect.report.ablation import ABLATIONS
from introspect.report.load import read_results
from introspect.runner import drive, fork, graph_for, outcome_of, thread_context
from introspect.study.budget import Limits
from nodes.runtime.context import Context

# spec kinds that answer only the requests they recorded (nodes.runtime.recording): a fork's new
# requests need another model (``--model``)
RECORDED = ("replay",)
OUTCOME = ("success", "reward", "model_calls", "input_tokens", "output_tokens", "cost_usd")
IDENTITY = ("task_id", "method", "env", "model", "fingerprint", "label", "repeat")


@dataclass(frozen=True)
class Run:
    """A finished run to ablate: its results row and the checkpointer holding its thread."""

    row: dict[str, Any]
    checkpoint: str | None  # None: the default checkpointer


def runs_of(paths: list[Path], checkpoint: str | None) -> list[Run]:
    """The runs of results files or study folders (the latest row of each thread, errored rows
    left out: they ran to no outcome). Every file is read and checked first: a file that is not
    results is refused in one line (ReportInputError, exit 2)."""
    latest: dict[tuple[str | None, str], Run] = {}
    for path in results_in(paths):
        where = checkpoint_of(path, checkpoint)
        for number, row in enumerate(read_results(path), 1):
            if not row.get("thread_id"):
                raise UsageError(f"{path} row {number} names no thread_id: ablations fork a run's checkpointed thread")
            method_named(str(row["method"]))  # a method not registered here is refused now
            latest[(where, str(row["thread_id"]))] = Run(row, where)
    return [run for run in latest.values() if not run.row.get("error")]


def check_answers(runs: list[Run]) -> None:
    """Refuse, before anything runs, a run whose model cannot answer a fork's new requests (a
    replayed recording) when no ``--model`` names one that can."""
    from nodes.runtime.llm import parse_spec

    for run in runs:
        if parse_spec(str(run.row["model"]))[0] in RECORDED:
            raise UsageError(
                f"run {run.row['thread_id']} was made with {run.row['model']}, a recording that answers only the "
                "requests it holds, not a fork's new ones: name the model the forks run on with --model SPEC "
                "(local, openai:MODEL, ...)"
            )


async def check_fork_model(spec: str) -> None:
    """The model ``--model`` names, checked as ``eval`` checks its own before anything runs (its
    spec, key or script, whether it is served) and, when it is the embedded one, started."""
    from introspect.options import called_models, check_model, start_local_models
    from nodes.runtime.served import check_served

    context = Context(model=spec)
    check_model(context)
    await check_served(called_models(context))
    await start_local_models(context)


def check_kinds(runs: list[Run], kinds: set[str]) -> None:
    """Refuse a kind no method of ``runs`` declares (a typo would ablate nothing, silently)."""
    known = {i.kind for name in {str(r.row["method"]) for r in runs} for i in method_named(name).interventions}
    if unknown := sorted(kinds - known):
        raise UsageError(
            f"no method of these runs declares the intervention {', '.join(map(repr, unknown))}: "
            f"they declare {', '.join(sorted(known)) or 'none'}"
        )


def default_out(paths: list[Path]) -> Path:
    """Where the ablation results go by default: a study's ``ablations.jsonl``, else
    ``ablations.jsonl`` beside the first results file."""
    study = study_holding(paths[0])
    return study / ABLATIONS if study is not None else paths[0].resolve().parent / ABLATIONS


def fork_thread(thread_id: str, firing: Firing) -> str:
    return f"{thread_id}-ablate-{firing.kind}-{firing.count}"


def key_of(row: dict[str, Any]) -> tuple[str, str, int]:
    """What identifies an ablation row: the original thread, the intervention, its count."""
    return str(row.get("thread_id")), str(row.get("intervention")), int(row.get("count") or 0)


def done(rows: list[dict[str, Any]]) -> set[tuple[str, str, int]]:
    """The ablations of ``rows`` (the ablation results) without an error (they are not run again)."""
    return {key_of(row) for row in rows if "intervention" in row and not row.get("error")}


def ablation_row(
    run: Run,
    intervention: Intervention,
    firing: Firing,
    fired: int,
    fork_id: str,
    fork_row: dict[str, Any],
    provenance: dict[str, Any],
    spent: dict[str, float],
) -> dict[str, Any]:
    """The ablation row of ``firing`` in ``run`` (the module docstring lists its fields)."""
    original = run.row
    row: dict[str, Any] = {"thread_id": original["thread_id"]}
    row.update({key: original[key] for key in IDENTITY if key in original})
    row.update(
        intervention=intervention.kind,
        count=firing.count,
        fired=fired,
        checkpoint=firing.checkpoint_id,
        step=firing.step,
        off=dict(intervention.off),
        fork=fork_id,
        provenance=provenance,
        seconds=fork_row["seconds"],
        spent=spent,
        error=fork_row["error"],
    )
    row["with"] = {key: original.get(key) for key in OUTCOME}
    row["without"] = {key: fork_row.get(key) for key in OUTCOME}
    return row


async def ablate_firing(
    method: Method, saver: Any, run: Run, firing: Firing, fired: int, model: str | None = None
) -> dict[str, Any]:
    """Fork the run before ``firing`` (unless an earlier ablation did), run the fork to its end
    with the intervention switched off (on ``model``, when given, instead of the run's own), and
    give its row (an error becomes the row's ``error``); ``fired``: how often the intervention
    happened in the run."""
    thread_id, task_id = str(run.row["thread_id"]), str(run.row["task_id"])
    intervention = next(i for i in method.interventions if i.kind == firing.kind)
    fork_id = fork_thread(thread_id, firing)
    _, base = await thread_context(saver, thread_id)
    context = dataclasses.replace(base, **intervention.off)
    if model:
        context = dataclasses.replace(context, model=model)
    started = time.monotonic()
    error = ""
    if not await thread_exists(saver, fork_id):
        await fork(saver, thread_id, fork_id, firing.checkpoint_id)
    reached = await outcome_of(method, fork_id, saver)
    if not reached.finished:
        try:
            lineage = Lineage(
                fork_id, thread_id, firing.kind, firing.count, firing.step, firing.checkpoint_id, dict(intervention.off)
            )
            reached = await drive(method, context, fork_id, saver, None, marks=lineage.marks())
        except Exception as exc:  # noqa: BLE001 - one fork's failure must not end the ablation
            reached, error = await outcome_of(method, fork_id, saver), f"{type(exc).__name__}: {exc}"
    fork_row = row_for(method, context, task_id, fork_id, reached.state, time.monotonic() - started, error)
    made_by = (await provenance_of(method, context)).to_dict()
    at = {"configurable": {"thread_id": thread_id, "checkpoint_id": firing.checkpoint_id}}
    prefix = (await graph_for(method, saver).aget_state(at)).values.get("usage")
    spent = spent_by_fork(fork_row, prefix)
    return ablation_row(run, intervention, firing, fired, fork_id, fork_row, made_by, spent)


@dataclass
class Tally:
    """What an ablation did, for its closing lines."""

    written: int = 0
    skipped: int = 0  # ablations already in the results
    errors: int = 0  # forks that ended in an error (their rows say which; they run again next time)
    missing: int = 0  # runs whose thread is not in their checkpointer
    budget: int = 0  # forks not run (or stopped in flight) because the budget was spent
    reached: str = ""  # the budget that was spent ("" when none was)
    without_interventions: set[str] = dataclasses.field(default_factory=set)  # methods that declare none


async def ablate(
    runs: list[Run],
    out: Path,
    concurrency: int = 4,
    kinds: set[str] | None = None,
    first_only: bool = True,
    on_row: Callable[[dict[str, Any]], None] | None = None,
    model: str | None = None,
    limits: Limits | None = None,
) -> Tally:
    """Ablate every intervention of ``runs`` (of ``kinds``, when given; its first time in each run
    only, unless not ``first_only``) into ``out``, skipping those ``out`` already holds; the forks
    run on ``model`` when given, else on each run's own, within ``limits`` (introspect.ablation.budget)."""
    results = ResultsFile(out)
    written = read_rows(out)
    skip = done(written)
    budget = Budget.of(limits or Limits(), written)
    tally = Tally()
    gate = asyncio.Semaphore(max(1, concurrency))
    by_store: dict[str | None, list[Run]] = {}
    for run in runs:
        by_store.setdefault(run.checkpoint, []).append(run)

    async def one(method: Method, saver: Any, run: Run, firing: Firing, fired: int) -> None:
        async with gate:
            if budget.spent():
                tally.budget += 1
                return
            try:
                with budget.fork_running():
                    row = await ablate_firing(method, saver, run, firing, fired, model)
            except asyncio.CancelledError:
                if not budget.spent():
                    raise
                tally.budget += 1  # stopped in flight: its checkpoint stays, the next session continues it
                return
        await results.append(row)
        tally.written += 1
        tally.errors += bool(row["error"])
        if on_row is not None:
            on_row(row)

    with budget.metering():
        for url, group in by_store.items():
            await ablate_group(url, group, one, kinds, first_only, skip, tally)
    tally.reached = budget.name() if budget.spent() else ""
    return tally


async def ablate_group(
    url: str | None,
    group: list[Run],
    one: Callable[[Method, Any, Run, Firing, int], Coroutine[Any, Any, None]],
    kinds: set[str] | None,
    first_only: bool,
    skip: set[tuple[str, str, int]],
    tally: Tally,
) -> None:
    """The forks of the runs of one checkpointer, each through ``one``, at once."""
    async with open_checkpointer(url, existing=True) as saver:
        jobs = []
        for run in group:
            method = method_named(str(run.row["method"]))
            if not method.interventions:
                tally.without_interventions.add(method.name)
                continue
            if not await thread_exists(saver, str(run.row["thread_id"])):
                tally.missing += 1
                continue
            found = await firings(method, saver, str(run.row["thread_id"]))
            fired = Counter(firing.kind for firing in found)
            for firing in found:
                if (kinds and firing.kind not in kinds) or (first_only and firing.count > 1):
                    continue
                if (str(run.row["thread_id"]), firing.kind, firing.count) in skip:
                    tally.skipped += 1
                    continue
                jobs.append(asyncio.create_task(one(method, saver, run, firing, fired[firing.kind])))
        await asyncio.gather(*jobs)


def line(row: dict[str, Any]) -> str:
    """One line per ablation: the run, the intervention, the outcome with and without it."""
    if row["error"]:
        return f"{row['thread_id']}  without {row['intervention']} #{row['count']}: error: {row['error']}"
    was, now = row["with"], row["without"]
    status = (
        f"success {json.dumps(was['success'])} -> {json.dumps(now['success'])}, "
        f"reward {was['reward']:.2f} -> {now['reward']:.2f}"
    )
    return f"{row['thread_id']}  without {row['intervention']} #{row['count']}: {status}"
