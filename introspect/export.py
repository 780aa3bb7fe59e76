"""``introspect export``: the trajectories of a results file or a study as JSONL for training.

Two formats, from the threads the rows name (read back as introspect.trajectory reads them for
the viewer, so the export and the page agree):

- ``chat``: one line per model call as it was made, in OpenAI's fine-tuning format:
  ``{"messages": [...], "tools": [...]}``, the messages sent (system, user, assistant, tool)
  followed by the reply as the assistant's message, its tool calls in OpenAI's form. Assistant
  turns of the history sent carry ``weight: 0``: only the reply trains, so no turn trains twice.
  ``--per run``: one line per conversation of a run instead (a chat that goes on takes its earlier
  calls' place; each of its replies trains once). The calls come from the state's call log
  (nodes.runtime.calls), or the run's recording for a thread checkpointed before the log; calls neither
  holds are left out, and counted.
- ``steps``: one line per environment step: the observation it was taken on, the action, the
  rationale, who chose the action (``by``: the model, or the harness, as for an answer sent when
  a budget ran out), the reward, the observation it led to, and the method's introspection at that step
  (``View.introspection``: its plan, reflection, remedies), with the run's identity and outcome.

A study folder (recognised by its ``spec.toml``) exports every ``results/*.jsonl``. Rows are
filtered (``--success-only``, ``--method``, ``--env``); errored rows are left out (their
runs ended in no outcome); a thread re-run after an error is exported once. Everything is
checked before anything is written, every line passes through ``redact`` (nodes.runtime.secrets),
and the file is written whole under a temporary name and then renamed, so an interrupted
export leaves no half file.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from introspect.options import UsageError

if TYPE_CHECKING:
    from introspect.trajectory import Trajectory


@dataclass
class Export:
    """What an export wrote: its lines, the runs they came from, what it had to leave out."""

    lines: list[str]
    runs: int
    missing_threads: int = 0  # rows whose thread is not in the checkpointer
    unrecorded_calls: int = 0  # calls neither the call log nor a recording holds (chat)


def results_files(source: Path) -> list[Path]:
    """The results files of ``source``: itself, or a study folder's ``results/*.jsonl``."""
    if source.is_dir():
        if not (source / "spec.toml").is_file():
            raise UsageError(f"{source} is a folder but not a study (no spec.toml): name a results file or a study")
        files = sorted((source / "results").glob("*.jsonl"))
        if not files:
            raise UsageError(f"study {source} has no results yet (results/*.jsonl)")
        return files
    if not source.is_file():
        raise UsageError(f"no results file or study folder {source}")
    return [source]


def selected_rows(
    files: list[Path], *, success_only: bool, method: str | None, env: str | None
) -> list[dict[str, Any]]:
    """The rows to export, the latest per thread, in file order: those that ran to an outcome
    and pass the filters. A file read as the report reads it: one that is not results (not
    JSONL, or lines that are no rows of ``eval``) is refused in one line, an empty one has none."""
    from graphs import method_named
    from introspect.report.load import read_results

    wanted = method_named(method).name if method else None
    latest: dict[str, dict[str, Any]] = {}
    for file in files:
        for row in read_results(file) if file.stat().st_size else []:
            if row.get("thread_id"):
                latest.pop(str(row["thread_id"]), None)  # a re-run's row replaces the errored one
                latest[str(row["thread_id"])] = row
    return [
        row
        for row in latest.values()
        if not row.get("error")
        and (wanted is None or row.get("method") == wanted)
        and (env is None or row.get("env") == env)
        and (not success_only or row.get("success"))
    ]


def trained_once(line: dict[str, Any]) -> dict[str, Any]:
    """A chat line whose earlier assistant turns (a call's history, which the call before
    already trained on as its reply) carry ``weight: 0``, OpenAI's fine-tuning key for an
    assistant message not to train on: each turn is trained once, as the reply it was."""
    messages = line["messages"]
    earlier = [{**m, "weight": 0} if m.get("role") == "assistant" else m for m in messages[:-1]]
    return {**line, "messages": [*earlier, messages[-1]]}


def conversations(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A run's chat lines (in call order) as conversations (``--per run``): a call whose messages
    begin with the previous line's whole exchange, its reply included (a chat that goes on, a
    re-ask after a refused answer), takes that line's place, so a conversation is one line. Its
    calls' replies train; any other assistant turn in it (history from elsewhere) has
    ``weight: 0``, so each reply still trains once."""
    merged: list[tuple[dict[str, Any], set[int]]] = []
    for line in lines:
        messages, replied = line["messages"], len(line["messages"]) - 1
        if merged:
            last, trained = merged[-1]
            before = last["messages"]
            if (
                len(messages) > len(before)
                and messages[: len(before)] == before
                and line.get("tools") == last.get("tools")
            ):
                merged[-1] = (line, trained | {replied})
                continue
        merged.append((line, {replied}))
    return [
        {
            **line,
            "messages": [
                {**m, "weight": 0} if m.get("role") == "assistant" and i not in trained else m
                for i, m in enumerate(line["messages"])
            ],
        }
        for line, trained in merged
    ]


def _line(value: dict[str, Any]) -> str:
    from nodes.runtime.secrets import redact

    return redact(json.dumps(value, ensure_ascii=False))


def step_lines(row: dict[str, Any], run: Trajectory) -> Iterator[str]:
    """A run's steps as ``steps`` lines."""
    for card in run.steps:
        step = card.step
        yield _line(
            {
                "thread_id": run.thread_id,
                "task_id": str(run.final.get("task_id", row.get("task_id", ""))),
                "method": run.method.name,
                "env": run.context.env,
                "model": run.context.model,
                **{key: row[key] for key in ("label", "repeat") if key in row},
                "goal": run.final.get("goal", ""),
                "step": card.index + 1,
                "observation": card.observed,
                "rationale": step.get("rationale", ""),
                "action": step.get("action", ""),
                "by": step.get("by", "model"),  # a harness-made step (a give-up's answer) is not the model's
                "valid": step.get("valid", True),
                "feedback": step.get("feedback", ""),
                "reward": float(step.get("reward", 0.0)),
                "next_observation": step.get("observation", ""),
                "introspection": card.introspection,
                "success": bool(row.get("success")),
            }
        )


async def collect(rows: list[dict[str, Any]], checkpoint: str | None, form: str, per: str = "call") -> Export:
    """The lines of ``rows``' threads in format ``form``; chat lines one per call, or per
    conversation of a run (``per="run"``: ``conversations``)."""
    from introspect.checkpoint import open_checkpointer
    from introspect.runner import ThreadError
    from introspect.trajectory import read_trajectory
    from nodes.runtime.calls import openai_chat

    done = Export(lines=[], runs=0)
    async with open_checkpointer(checkpoint, existing=True) as saver:
        for row in rows:
            try:
                run = await read_trajectory(saver, str(row["thread_id"]))
            except ThreadError:
                done.missing_threads += 1
                continue
            done.runs += 1
            if form == "chat":
                calls = run.calls()
                chats = [openai_chat(call) for call in calls]
                chats = conversations(chats) if per == "run" else [trained_once(chat) for chat in chats]
                done.lines += [_line(chat) for chat in chats]
                done.unrecorded_calls += sum(card.made for card in run.cards) - len(calls)
            else:
                done.lines += list(step_lines(row, run))
    return done


def write_atomically(path: Path, lines: list[str]) -> None:
    """``lines`` to ``path``, whole or not at all: written beside it, then renamed over it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write("".join(line + "\n" for line in lines))
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def out_path(given: str | None, source: Path, form: str) -> Path:
    """Where the export goes (default ``<results or study name>.<format>.jsonl`` here), checked."""
    path = Path(given) if given else Path(f"{source.resolve().name.removesuffix('.jsonl')}.{form}.jsonl")
    if path.is_dir():
        raise UsageError(f"--out {path} is a directory; name a .jsonl file")
    for parent in path.parents:
        if parent.exists() and not parent.is_dir():
            raise UsageError(f"cannot create {path}: {parent} is not a directory")
    return path


def cmd_export(args: argparse.Namespace) -> int:
    source = Path(args.source)
    files = results_files(source)
    out = out_path(args.out, source, args.format)
    rows = selected_rows(files, success_only=args.success_only, method=args.method, env=args.env)
    if not rows:
        raise UsageError(f"no rows of {source} to export (errored rows and filtered ones are left out)")
    from introspect.finding import checkpoint_of

    if args.per == "run" and args.format != "chat":
        raise UsageError("--per run joins a run's model calls into conversations: it goes with --format chat")
    done = asyncio.run(collect(rows, checkpoint_of(source, args.checkpoint), args.format, args.per))
    if not done.runs:
        raise UsageError(f"none of the {len(rows)} rows' threads is in this checkpointer: pass --checkpoint")
    write_atomically(out, done.lines)
    kind = {"chat": "model calls" if args.per == "call" else "conversations", "steps": "steps"}[args.format]
    print(f"wrote {len(done.lines)} {kind} of {done.runs} runs to {out}")
    if done.missing_threads:
        print(f"left out {done.missing_threads} rows whose thread is not in this checkpointer", file=sys.stderr)
    if done.unrecorded_calls:
        print(
            f"left out {done.unrecorded_calls} model calls that were not recorded (threads from before the call "
            "log, without a recording)",
            file=sys.stderr,
        )
    return 0
