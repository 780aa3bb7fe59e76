"""The places where a method judges its own progress, and the verdicts it gives there.

A method asks itself whether it is getting somewhere: Devil's Advocate whether the task and the
subtask are done and whether an action served its subtask, LASER whether an item perfectly
matches the instruction (it buys it, or leaves it), Structured Reflection how a trial ended (the
status its reflection is given), AutoPlan whether it has the answer (it delivers one). Each such
place is declared once, as a ``Place`` in the method's node package, and listed in the method's
registry entry (``Method.verdicts``); the node that reads the verdict from a reply calls
``Caller.verdict(place, ...)``, which marks that call's record (nodes.runtime.calls) as ``unreadable``
marks a reply it could not read, and the evaluation lists the run's verdicts in its results row
beside the true outcome (introspect.evaluate). The report sets them against each other
(introspect.report.calibration): how often a verdict agreed with the outcome, its Brier score, and
a reliability diagram where the verdict is graded.

A verdict ``says`` success or not: that the task is done, or will be, as far as this place can
tell. A graded verdict also gives a number in [0, 1] (Devil's Advocate's share of its plan done
after a subtask check), which the report reads as the chance of success the verdict implies.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Place:
    """One place where a method judges its own progress."""

    kind: str  # the name rows and the report give it: "task_done", "aligned", "matches", ...
    node: str  # the node that reads it from a reply
    claim: str  # what a verdict that says success claims, in words (the report's and the docs' text)
    graded: bool = False  # it also gives a number in [0, 1]


def verdicts(calls: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The verdicts a run gave, in order, for its results row: position and node of the call whose
    reply gave it, its place's kind, the verdict as read (``value``), whether it ``says`` success,
    and ``graded`` where the place is graded."""
    out = []
    for call in calls:
        verdict = call.get("verdict")
        if verdict:
            out.append(
                {"position": call.get("position"), "step": call.get("step"), "node": call.get("node"), **verdict}
            )
    return out
