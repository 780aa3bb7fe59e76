"""Time travel from the command line: ``introspect history`` lists a run's checkpoints,
``introspect fork --at`` continues from one of them on a new thread.

A row of the history is one checkpoint of the thread's root graph, oldest first: its id,
LangGraph's step number, the node(s) whose writes made it (``input`` for the first), and the
action the environment executed in that step with the reward after it, when that step
executed one. A fork copies that checkpoint and its ancestors to a new thread (the source
stays as it was) and runs on from there; the env is restored from the snapshot in that
checkpoint's state (envs.sessions), as on resume.
"""

from __future__ import annotations

import argparse
import uuid
from dataclasses import dataclass
from typing import Any

from introspect.checkpoint import open_checkpointer
from introspect.options import UsageError, context_from
from introspect.runner import ThreadError, drive, fork, graph_for, thread_context


@dataclass
class Checkpoint:
    """One row of ``introspect history``."""

    checkpoint_id: str
    step: int
    node: str  # the node(s) that wrote it; "input" for the thread's first checkpoint
    next: str  # the node(s) a fork from here runs first
    action: str  # the action executed in this step ("" when none was)
    reward: float | None  # the reward after that action


async def history(saver: Any, thread_id: str) -> list[Checkpoint]:
    """The thread's root checkpoints, oldest first (LangGraph's ``aget_state_history``)."""
    method, _ = await thread_context(saver, thread_id)
    graph = graph_for(method, saver)
    snapshots = [s async for s in graph.aget_state_history({"configurable": {"thread_id": thread_id}})]
    rows: list[Checkpoint] = []
    before: Any = None
    for snap in reversed(snapshots):
        done = len(snap.values.get("trajectory") or [])
        new = (snap.values.get("trajectory") or [])[
            len((before.values.get("trajectory") or []) if before else []) : done
        ]
        rows.append(
            Checkpoint(
                checkpoint_id=snap.config["configurable"]["checkpoint_id"],
                step=int((snap.metadata or {}).get("step", -1)),
                node=",".join(before.next) if before is not None and before.next else "input",
                next=",".join(snap.next),
                action="; ".join(str(s.get("action", "")) for s in new),
                reward=snap.values.get("reward") if new else None,
            )
        )
        before = snap
    return rows


def pick(rows: list[Checkpoint], wanted: str) -> Checkpoint:
    """The checkpoint named by its id or a unique prefix of it."""
    matches = [r for r in rows if r.checkpoint_id.startswith(wanted)] if wanted else []
    if len(matches) != 1:
        how = "no checkpoint of the thread matches" if not matches else f"{len(matches)} checkpoints match"
        raise UsageError(f"{how} {wanted!r}: name one with `introspect history THREAD_ID`")
    return matches[0]


async def cmd_history(args: argparse.Namespace) -> int:
    async with open_checkpointer(args.checkpoint, existing=True) as saver:
        rows = await history(saver, args.thread_id)
    print(f"{'checkpoint':<38} {'step':>4}  {'node':<14} {'next':<14} {'reward':>6}  action")
    for row in rows:
        reward = "" if row.reward is None else f"{row.reward:.2f}"
        print(f"{row.checkpoint_id:<38} {row.step:>4}  {row.node:<14} {row.next:<14} {reward:>6}  {row.action}")
    return 0


async def cmd_fork(args: argparse.Namespace) -> int:
    from introspect.console import print_outcome, update_printer
    from introspect.gaveup import resumable, resume_command

    async with open_checkpointer(args.checkpoint, existing=True) as saver:
        method, base = await thread_context(saver, args.thread_id)
        if args.env and args.env != base.env:
            raise UsageError(f"thread {args.thread_id!r} runs on {base.env}; a fork cannot change the env")
        context = context_from(args, method, base)
        at = pick(await history(saver, args.thread_id), args.at)
        target = args.thread or f"{args.thread_id}-fork-{uuid.uuid4().hex[:6]}"
        if await saver.aget_tuple({"configurable": {"thread_id": target}}) is not None:
            raise ThreadError(f"thread {target!r} already exists: name a new one with --thread")
        await fork(saver, args.thread_id, target, at.checkpoint_id)
        print(
            f"forked thread {args.thread_id} at checkpoint {at.checkpoint_id} (step {at.step}) into {target}",
            flush=True,
        )
        with resumable(target, args.checkpoint):
            outcome = await drive(method, context, target, saver, None, update_printer(method))
    print_outcome(outcome.state, target, outcome.finished, resume_command(target, args.checkpoint))
    return 0
