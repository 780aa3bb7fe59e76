"""A run thread read back step by step: what ``introspect view`` draws and ``introspect export``
writes.

The thread's checkpoints (LangGraph's ``aget_state_history``), oldest first, become cards:
every environment step with the observation it was taken on, the method's structures and
introspection after it (``Method.view``), and the model calls made since the step before
(the calls that led to it); what happened between steps is a mark (the method's
``View.marks``). Calls made after the last step (a final reflection) form a card of their own.

A step's calls come from the state's call log (nodes.runtime.calls), each with its request and
reply read from the reply journal (nodes.runtime.journal), which keeps them once, where the log
says (a thread checkpointed before that has them whole in its log). A thread checkpointed before
that log existed has only its counts; its calls are then read from its recording (``--record``:
the same records, keyed by task and position, the model-call count each checkpoint's usage
holds), the one named or the one the thread's metadata names. Without either, a card says
how many calls were made and that they were not recorded.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graphs.method import Method, grown
from introspect.runner import graph_for, thread_context
from nodes.runtime.calls import ModelCall, at_positions, whole
from nodes.runtime.context import Context
from nodes.runtime.journal import journaled


@dataclass
class Card:
    """One environment step, a mark between steps, or the calls after the last step."""

    kind: str  # "step", "calls" (after the last step) or a mark's kind (View.marks: "backtrack", ...)
    text: str = ""
    step: dict[str, Any] = field(default_factory=dict)
    index: int = 0
    observed: str = ""  # the observation the step was taken on
    structures: list[tuple[str, Any]] = field(default_factory=list)
    introspection: dict[str, Any] = field(default_factory=dict)
    calls: list[ModelCall] = field(default_factory=list)  # those known (the log, a recording)
    made: int = 0  # the calls made, as the usage counts them (more than ``calls`` when unrecorded)


@dataclass
class Trajectory:
    """A run thread as cards, with its method, settings and final state."""

    thread_id: str
    method: Method
    context: Context
    final: dict[str, Any]
    cards: list[Card]

    @property
    def steps(self) -> list[Card]:
        return [card for card in self.cards if card.kind == "step"]

    def calls(self) -> list[ModelCall]:
        """Every known call, in the order made."""
        return [call for card in self.cards for call in card.calls]


def _count(values: dict[str, Any]) -> int:
    return int((values.get("usage") or {}).get("model_calls", 0))


def read_lines(path: Path) -> list[dict[str, Any]]:
    """A recording's lines (a torn or foreign line is skipped)."""
    lines = []
    for text in path.read_text(encoding="utf-8").splitlines():
        try:
            line = json.loads(text)
        except json.JSONDecodeError:
            continue
        if isinstance(line, dict):
            lines.append(line)
    return lines


async def read_trajectory(saver: Any, thread_id: str, recording: Path | None = None) -> Trajectory:
    """Thread ``thread_id`` as cards (see the module docstring); ``recording`` names the
    recording its calls are read from where its checkpoints do not hold them."""
    method, context = await thread_context(saver, thread_id)
    snapshots = [
        s async for s in graph_for(method, saver).aget_state_history({"configurable": {"thread_id": thread_id}})
    ]
    snapshots.reverse()
    if recording is None:  # the recording the run named, if it is still there
        named = [s.metadata.get("introspect_recording") for s in snapshots if s.metadata]
        recording = next((Path(n) for n in reversed(named) if n and Path(n).is_file()), None)
    lines = await asyncio.to_thread(read_lines, recording) if recording is not None else []
    kept = await journaled(saver, thread_id)
    cards: list[Card] = []
    before: dict[str, Any] = {}
    states: list[dict[str, Any]] = []
    calls: list[ModelCall] = []  # made since the last step card
    made = 0
    for snap in snapshots:
        values = dict(snap.values)
        states.append(values)
        cards += [Card(kind, text) for kind, text in method.view.marks(before, values)]
        logged = [whole(call, kept) for call in grown(before, values, "calls")]
        if not logged and _count(values) > _count(before):
            logged = at_positions(lines, values.get("task_id"), _count(before), _count(values))
        calls += logged
        made += max(_count(values) - _count(before), len(logged))
        done = len(before.get("trajectory") or [])
        observed = str(before.get("observation") or "")
        for offset, step in enumerate(grown(before, values, "trajectory")):
            cards.append(
                Card(
                    "step",
                    step=step,
                    index=done + offset,
                    observed=observed,
                    structures=method.view.structures(states),
                    introspection=method.view.introspection(states),
                    calls=calls,
                    made=made,
                )
            )
            calls, made, observed = [], 0, str(step.get("observation", ""))
        before = values
    if made:
        cards.append(Card("calls", calls=calls, made=made))
    return Trajectory(thread_id, method, context, before, cards)
