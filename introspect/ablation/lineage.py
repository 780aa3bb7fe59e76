"""Which thread an ablation's fork came from, kept in the fork's own checkpoints, so that the
viewer marks a fork beside its original without the ablation results at hand.

The checkpoints a fork writes carry two metadata keys besides its method and Context:
``introspect_ablation_of`` (the original thread, which a checkpointer's metadata filter finds
its forks by) and ``introspect_ablation`` (JSON: the intervention switched off, which time in the
run, the checkpoint and step the fork started at, the settings it ran with).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

from introspect.runner import outcome_of, thread_metadata, thread_method

OF = "introspect_ablation_of"
WHAT = "introspect_ablation"


@dataclass(frozen=True)
class Lineage:
    """One fork of an ablation: what it is a fork of, and without what."""

    fork: str  # the fork's thread
    of: str  # the original run's thread
    intervention: str  # the kind switched off
    count: int  # which time in the run it happened (1: its first)
    step: int  # LangGraph's step of the intervention in the original run
    checkpoint: str  # the original's checkpoint the fork started from
    off: dict[str, Any]  # the settings that switched it off

    def marks(self) -> dict[str, str]:
        """The metadata the fork's checkpoints carry (``runner.drive``'s ``marks``)."""
        return {OF: self.of, WHAT: json.dumps(asdict(self))}


@dataclass(frozen=True)
class Fork:
    """A fork as the original's page lists it: its lineage and where it ended."""

    lineage: Lineage
    success: bool
    reward: float
    finished: bool


def lineage_in(metadata: dict[str, Any]) -> Lineage | None:
    """The lineage a checkpoint's metadata records, or None for a thread that is no fork."""
    text = metadata.get(WHAT)
    return Lineage(**json.loads(text)) if isinstance(text, str) else None


async def ablated_from(saver: Any, thread_id: str) -> Lineage | None:
    """What thread ``thread_id`` is an ablation of (None: it is none)."""
    return lineage_in(await thread_metadata(saver, thread_id))


async def forks_of(saver: Any, thread_id: str) -> list[Fork]:
    """The ablation forks of ``thread_id`` in ``saver``, in the order their interventions
    happened, each with its outcome (a fork still unfinished: where it stands)."""
    found: dict[str, Lineage] = {}
    async for item in saver.alist(None, filter={OF: thread_id}):
        lineage = lineage_in(dict(item.metadata or {}))
        if lineage is not None and lineage.of == thread_id:
            found.setdefault(lineage.fork, lineage)
    forks = []
    for lineage in sorted(found.values(), key=lambda f: (f.step, f.intervention, f.count)):
        meta = await thread_metadata(saver, lineage.fork)
        reached = await outcome_of(thread_method(meta, "introspect_method"), lineage.fork, saver)
        state = reached.state
        forks.append(Fork(lineage, bool(state.get("success")), float(state.get("reward", 0.0)), reached.finished))
    return forks
