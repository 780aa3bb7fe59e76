"""Where a finished run's introspective interventions happened, read from its checkpoints.

The thread's root checkpoints, oldest first (LangGraph's ``aget_state_history``): checkpoint i
was written by the nodes checkpoint i-1 names as ``next``. An intervention (``Intervention``)
fired there when its node is among them and its ``fired`` holds of the two states. The decision
to intervene was taken in that node or by the edge into it, in the step before (checkpoint i-2
-> i-1), so that checkpoint is where a fork without it starts: the step that chose runs again
with the intervention switched off.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from graphs.method import Method
from introspect.runner import graph_for


@dataclass(frozen=True)
class Firing:
    """One time an intervention of ``kind`` happened in a run."""

    kind: str
    count: int  # 1 for its first time in the run, 2 for the second, ...
    checkpoint_id: str  # the fork's starting point: the checkpoint before the step that led to it
    step: int  # LangGraph's step number of the intervention's own step


async def firings(method: Method, saver: Any, thread_id: str) -> list[Firing]:
    """Every intervention ``method`` declares that happened in thread ``thread_id``, in the
    order they happened."""
    graph = graph_for(method, saver)
    snapshots = [s async for s in graph.aget_state_history({"configurable": {"thread_id": thread_id}})][::-1]
    counts: dict[str, int] = {}
    found: list[Firing] = []
    for i in range(1, len(snapshots)):
        before, after = snapshots[i - 1], snapshots[i]
        for intervention in method.interventions:
            if intervention.node not in before.next or not intervention.fired(before.values, after.values):
                continue
            counts[intervention.kind] = counts.get(intervention.kind, 0) + 1
            start = snapshots[max(i - 2, 1)]  # never before the checkpoint that holds the run's input
            found.append(
                Firing(
                    intervention.kind,
                    counts[intervention.kind],
                    start.config["configurable"]["checkpoint_id"],
                    int((after.metadata or {}).get("step", i - 1)),
                )
            )
    return found
