"""The evaluation harness: many tasks, concurrently, each a resumable checkpointed thread.

Each task becomes one JSON line in the results file, written whole and flushed, so an
interrupted evaluation loses nothing. Each line records the data the env ran on (``data``:
the env's ``data_info``, asked once per evaluation), so a sample run is never mistaken for
a full one, and what produced it (``provenance``: versions, the hashes of the prompts and
of the code; introspect.provenance), so a finished row written by other prompts or other
code is not silently reused: it is stale, and its task runs again. A row belongs to one
configuration: the method, env, model and the settings ``fingerprint`` (a hash of every
Context field that can change an outcome; timeouts and retries cannot). Re-running with
the same configuration skips its finished rows; another model or other settings are a
different evaluation (their own rows, their own threads), and the summary covers only the
rows of the configuration asked for.

Thread ids are derived from the configuration and the task, so a re-run finds each
task's thread: an unfinished one (a crash, an error) is resumed from its checkpoint, a
finished one is reported from its final state (its row rebuilt, nothing re-run), unless
its row is stale: then its thread is deleted and the task starts over.
An error (the model gave up, a script ran out) is not a failure of the agent: the
summary counts success over the tasks that ran to an outcome and lists errors apart.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from envs.base import env_class, make_env
from errors import UserError
from graphs.method import Method
from introspect.pacing import Pacer
from introspect.provenance import Reuse, provenance_of, reuse_of
from introspect.runner import Outcome, drive, outcome_of
from introspect.stopping import Stop
from nodes.runtime.calls import unreadable_replies
from nodes.runtime.context import Context
from nodes.runtime.llm import PACING, RETRY_NOTICE, ModelCallError
from nodes.runtime.usage import Usage, add_usage, dollars, sum_costs
from nodes.runtime.verdicts import verdicts

SETTING_TEXT = 80  # longer settings (a plan) appear in rows as a hash


def fingerprint(method: Method, context: Context) -> str:
    """A short hash of what decides a task's outcome: method and result settings (the
    method's own and the shared fields, each at its effective value: a setting given at its
    default is the configuration that leaves it out)."""
    key = json.dumps([method.name, context.result_settings()], sort_keys=True, default=str)
    return hashlib.sha256(key.encode()).hexdigest()[:12]


def changed_settings(context: Context) -> dict[str, Any]:
    """The result settings that differ from the defaults (model and env have columns)."""
    default = type(context)(model=context.model, env=context.env).result_settings()
    out: dict[str, Any] = {}
    for key, value in context.result_settings().items():
        if key in ("model", "env") or value == default[key]:
            continue
        if isinstance(value, str) and len(value) > SETTING_TEXT:
            value = "sha256:" + hashlib.sha256(value.encode()).hexdigest()[:12]
        out[key] = value
    return out


def eval_thread_id(method: Method, context: Context, task_id: str, repeat: int = 1) -> str:
    """A stable thread id per configuration, task and repeat, so re-runs resume; repeat 1 keeps
    the id a plain ``eval`` gives, repeat K>1 appends ``-rK`` (a study's repeated runs)."""
    thread = f"eval-{method.name}-{context.env}-{fingerprint(method, context)[:8]}-{task_id}"
    return thread if repeat == 1 else f"{thread}-r{repeat}"


def results_name(method: Method, context: Context) -> Path:
    """The default results file: results/METHOD-ENV-MODEL.jsonl, the model spec sanitised (a
    script's or recording's own ``.jsonl`` left out: ``scripted:demo.jsonl`` -> ``scripted_demo``)."""
    spec = re.sub(r"\.jsonl$", "", context.model, flags=re.IGNORECASE)
    model = re.sub(r"[^A-Za-z0-9.-]+", "_", spec).strip("_")[:80]
    return Path("results") / f"{method.name}-{context.env}-{model}.jsonl"


@dataclass
class Summary:
    tasks: int  # rows of the configuration among the requested tasks
    ran: int  # of them, tasks that ran to an outcome (no error)
    success_rate: float  # over the tasks that ran
    mean_reward: float
    mean_steps: float
    model_calls: int  # all rows, errors too: the calls were made
    input_tokens: int
    output_tokens: int
    cost_usd: float | None  # None: some row's model has no known price
    retries: int
    errors: list[tuple[str, str]] = field(default_factory=list)  # (task id, error)

    def lines(self) -> list[str]:
        out = [
            f"tasks         {self.tasks}  (ran to an outcome: {self.ran}, errors: {len(self.errors)})",
            f"success rate  {self.success_rate:.1%}  (of the {self.ran} that ran)",
            f"mean reward   {self.mean_reward:.3f}",
            f"mean steps    {self.mean_steps:.1f}",
            f"model calls   {self.model_calls}  (retried requests: {self.retries})",
            f"tokens        {self.input_tokens} in / {self.output_tokens} out",
            f"cost          {dollars(self.cost_usd)}",
        ]
        out += [f"error         task {task}: {error}" for task, error in self.errors]
        return out


def row_for(
    method: Method,
    context: Context,
    task_id: str,
    thread_id: str,
    state: dict[str, Any],
    seconds: float,
    error: str = "",
    spent: Usage | None = None,
) -> dict[str, Any]:
    """One results line: configuration, outcome, steps, usage and the method's own fields.
    An error row carries the usage its thread had reached plus what the failing node
    ``spent`` (its earlier calls, the failed call's retries)."""
    usage = add_usage(state.get("usage"), spent)
    row: dict[str, Any] = {
        "task_id": task_id,
        "method": method.name,
        "env": context.env,
        "model": context.model,
        "fingerprint": fingerprint(method, context),
        "settings": changed_settings(context),
        "thread_id": thread_id,
        "success": bool(state.get("success", False)) and not error,
        "reward": float(state.get("reward", 0.0)),
        "steps": int(state.get("actions", 0)),
        "stop_reason": state.get("stop_reason", ""),
        "model_calls": int(usage.get("model_calls", 0)),
        "input_tokens": int(usage.get("input_tokens", 0)),
        "output_tokens": int(usage.get("output_tokens", 0)),
        "cost_usd": usage["cost_usd"],
        "retries": int(usage.get("retries", 0)),
        "seconds": round(seconds, 3),
        "error": error,
    }
    row["unreadable"] = unreadable_replies(state.get("calls") or [])  # replies the method could not read
    row["verdicts"] = verdicts(state.get("calls") or [])  # the method's own judgements (nodes.runtime.verdicts)
    if state.get("evaluation"):
        row["evaluation"] = state["evaluation"]  # the benchmark's own scoring: evaluators, EM/F1, judge
    if caveat := caveat_of(state):
        row["caveat"] = caveat
    if not error:
        row.update(method.result(state))
    return row


def caveat_of(state: dict[str, Any]) -> str:
    """Why the env says its scores do not stand beside the paper's (HotpotQA's local corpus:
    "distractor corpus: not comparable with the paper"), or "": its evaluation's ``caveat``, or
    its snapshot's when the method stopped before the env ended the episode."""
    for reported in (state.get("evaluation"), state.get("env_snapshot")):
        if isinstance(reported, dict) and reported.get("caveat"):
            return str(reported["caveat"])
    return ""


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The results already in ``path`` (a torn last line from a crash is ignored)."""
    if not path.exists():
        return []
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(row, dict) and "task_id" in row:
            rows.append(row)
    return rows


def matching_rows(path: Path, method: Method, context: Context) -> dict[str, dict[str, Any]]:
    """The latest row per task of this configuration (method, env, model, fingerprint)."""
    want = (method.name, context.env, context.model, fingerprint(method, context))
    latest: dict[str, dict[str, Any]] = {}
    for row in read_rows(path):
        if (row.get("method"), row.get("env"), row.get("model"), row.get("fingerprint")) == want:
            latest[str(row["task_id"])] = row
    return latest


async def reused(method: Method, context: Context, path: Path, task_ids: list[str], keep_stale: bool = False) -> Reuse:
    """Which finished rows of ``task_ids`` in ``path`` this evaluation reuses, and which are
    stale (introspect.provenance); worked out once per evaluation."""
    rows = matching_rows(path, method, context)
    wanted = {task: rows[task] for task in task_ids if task in rows}
    return reuse_of(await provenance_of(method, context), wanted, keep_stale)


def summarize(rows: list[dict[str, Any]]) -> Summary:
    ran = [r for r in rows if not r.get("error")]

    def total(key: str, among: list[dict[str, Any]]) -> float:
        return sum(float(r.get(key, 0) or 0) for r in among)

    def mean(key: str) -> float:
        return total(key, ran) / len(ran) if ran else 0.0

    return Summary(
        tasks=len(rows),
        ran=len(ran),
        success_rate=mean("success"),
        mean_reward=mean("reward"),
        mean_steps=mean("steps"),
        model_calls=int(total("model_calls", rows)),
        input_tokens=int(total("input_tokens", rows)),
        output_tokens=int(total("output_tokens", rows)),
        cost_usd=sum_costs(r.get("cost_usd", 0.0) for r in rows),
        retries=int(total("retries", rows)),
        errors=[(str(r["task_id"]), str(r["error"])) for r in rows if r.get("error")],
    )


class ResultsWriteError(UserError):
    """The results file could not be written (a full disk, a file size limit): the evaluation
    stops at once, its threads kept at their checkpoints."""


class ResultsFile:
    """Appends whole JSON lines, flushed and fsynced, one writer at a time."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = asyncio.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() and path.stat().st_size and not path.read_bytes().endswith(b"\n"):
            with path.open("a", encoding="utf-8") as handle:  # end a torn line before appending
                handle.write("\n")

    async def append(self, row: dict[str, Any]) -> None:
        async with self._lock:
            await asyncio.to_thread(self._write, row)

    def _write(self, row: dict[str, Any]) -> None:
        try:
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
                handle.flush()
                os.fsync(handle.fileno())
        except OSError as exc:
            raise ResultsWriteError(
                f"cannot write results file {self.path}: {exc.strerror}; the run stopped, its tasks kept at their "
                "checkpoints: run the same command again once the file can be written"
            ) from None


async def run_one(
    method: Method,
    context: Context,
    task_id: str,
    checkpointer: BaseCheckpointSaver,
    repeat: int = 1,
    stop: Stop | None = None,
    thread: str | None = None,
) -> dict[str, Any] | None:
    """The row of one task: a finished thread is reported from its final state, an
    unfinished one resumed, a new one started (errors become rows too). None when ``stop``
    drained the run before its end: no row, the thread waits at its checkpoint. ``thread``:
    another thread than the configuration's own (a baseline arm's attempt, introspect.study.baseline)."""
    thread_id = thread or eval_thread_id(method, context, task_id, repeat)
    existing = await outcome_of(method, thread_id, checkpointer)
    if existing.finished:
        return {**row_for(method, context, task_id, thread_id, existing.state, 0.0), "from_checkpoint": True}
    graph_input = None if existing.state else {"task_id": task_id}
    started = time.monotonic()
    control = stop.control() if stop is not None else None
    try:
        outcome: Outcome = await drive(method, context, thread_id, checkpointer, graph_input, control=control)
        if stop is not None and stop.requested and not outcome.finished:
            return None
    except Exception as exc:  # noqa: BLE001 - one task's failure must not end the evaluation
        reached = await outcome_of(method, thread_id, checkpointer)
        return row_for(
            method,
            context,
            task_id,
            thread_id,
            reached.state,
            time.monotonic() - started,
            error=f"{type(exc).__name__}: {exc}",
            spent=exc.usage if isinstance(exc, ModelCallError) else None,
        )
    finally:
        if stop is not None and control is not None:
            stop.release(control)
    return row_for(method, context, task_id, thread_id, outcome.state, time.monotonic() - started)


async def data_of(context: Context) -> dict[str, str] | None:
    """Which data the env of ``context`` runs on (the env's ``data_info``: name, sample or full,
    sha256), asked once per evaluation: every row records it."""
    env = make_env(context.env, **context.env_settings())
    try:
        info = await asyncio.to_thread(env.data_info)
    finally:
        await env.close()
    return asdict(info) if info is not None else None


async def evaluate(
    method: Method,
    context: Context,
    task_ids: list[str],
    results_path: Path,
    checkpointer: BaseCheckpointSaver | None,
    concurrency: int | Pacer = 4,
    on_row: Callable[[dict[str, Any]], None] | None = None,
    on_retry: Callable[[str, str], None] | None = None,
    run: Callable[[str], Awaitable[dict[str, Any] | None]] | None = None,
    reuse: Reuse | None = None,
    forget: Callable[[str], Awaitable[None]] | None = None,
    repeat: int = 1,
    label: str = "",
    stop: Stop | None = None,
) -> Summary:
    """Evaluate ``task_ids``, skipping those this configuration already finished (``reuse``,
    by default every finished row that is not stale); returns the summary over this
    configuration's rows of the requested tasks. ``concurrency``: tasks in flight, or a
    ``Pacer`` that decides (``--concurrency auto``). ``on_retry(task, notice)`` hears every
    retried model request as it happens. ``run(task_id)`` gives a task's row when the tasks
    run elsewhere (introspect.remote: a LangGraph server; introspect.workers); by default
    ``run_one`` runs them here with ``checkpointer``. A stale task's finished thread is
    deleted before it runs again, by ``forget(task_id)`` (default: from ``checkpointer``).
    A study (introspect.study) gives each repeat of its run its own ``results_path`` and
    ``repeat`` (its own threads) and its run's ``label``; rows carry both (a row without
    ``repeat`` is repeat 1). After ``stop`` is requested (introspect.stopping) no task
    starts, and a drained task writes no row."""
    results = ResultsFile(results_path)
    reuse = reuse or await reused(method, context, results_path, task_ids)
    todo = [t for t in task_ids if t not in reuse.finished]
    gate = concurrency if isinstance(concurrency, Pacer) else asyncio.Semaphore(max(1, concurrency))
    data = await data_of(context) if todo else None
    provenance = reuse.provenance.to_dict()
    # what the env says about each task (WebArena's intent template), read once, in a thread
    fields = await asyncio.to_thread(lambda: {t: env_class(context.env).task_fields(t) for t in todo})

    async def forget_here(task_id: str) -> None:
        assert checkpointer is not None, "a stale task that runs elsewhere needs forget"
        await checkpointer.adelete_thread(eval_thread_id(method, context, task_id, repeat))

    async def worker(task_id: str) -> None:
        if on_retry is not None:  # this task's own context: its graph's nodes inherit it
            RETRY_NOTICE.set(lambda notice: on_retry(task_id, notice))
        if isinstance(gate, Pacer):
            PACING.set(gate)
        async with gate:
            if stop is not None and stop.requested:
                return
            if task_id in reuse.stale:  # its thread finished under other prompts or code: start it over
                await (forget or forget_here)(task_id)
            if run is not None:
                row: dict[str, Any] | None = await run(task_id)
            else:
                assert checkpointer is not None  # tasks that run here run with the caller's checkpointer
                row = await run_one(method, context, task_id, checkpointer, repeat, stop)
        if row is None:
            return
        if label:
            row.update(repeat=repeat, label=label)
        if data is not None:
            row.setdefault("data", data)  # a server's rows say it is not known here (introspect.remote)
        row["provenance"] = provenance
        row.update(fields[task_id])
        await results.append(row)
        if on_row is not None:
            on_row(row)

    running = [asyncio.ensure_future(worker(t)) for t in todo]
    try:
        await asyncio.gather(*running)
    except BaseException:  # a row that cannot be written stops every task at once, not at the end
        for task in running:
            task.cancel()
        raise
    rows = matching_rows(results_path, method, context)
    return summarize([rows[t] for t in dict.fromkeys(task_ids) if t in rows])
