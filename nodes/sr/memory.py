"""Structured thought management (paper 002, Sec. 5.1-5.2, Algorithm 1).

The memory is keyed by step. A reflection "For action index=A, you should B." on a failed
trial (1) keeps the trial's steps before A as a replay prefix, executed without model calls
in the next trial (the env is reset with the same seed, so they lead to the same screen);
(2) stores the reflection at A, with B enforced there (as the original code does; with
``enforce_failed=False``, as the paper says, unless B is itself an action that already failed
at A); (3) adds the action taken at A to A's failed set and, for a click, its id to A's
disabled ids (by the rule ``disable_clicks`` picks; removed from the screens the model sees at A,
nodes/sr/constrain.py; element ids as the env's interface reads them from an action; an env
without element ids has none, and an env that cannot disable elements keeps them on screen:
there the failed list alone keeps a failed B from being enforced again, with
``enforce_failed=False``); (4) clears every entry
after A, now outdated. Replayed steps keep the stage they were
taken in, so the next trial replays them stage by stage. Every reflection is also kept in
order (``reflections``), which is all the ablation without structured memory shows the
planner (Sec. 7.1).

The reply is read as the paper's code reads it (``parse_reflection_action``): A is the first
``index=N`` written exactly so, B what follows the first ", you should "; a reply with an A but
no B is kept at A as a lesson with nothing to enforce; the whole reply is what the planner
later reads. B is one action (the paper: "B is the suggested action"), so its first line is
read as the action; later lines stay in the lesson.

Which failed click is disabled is where the paper and its code part: the paper disables the
failed click actions (Sec. 5.2, "We only do so for click-type actions"; ``disable_clicks="failed"``);
the code only when B is also a click, on another element (``disable_clicks="when_b_clicks"``, the
default, as the code produced the published numbers).
All functions are pure: they take and return the JSON structures kept in graph state.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from envs.base import Interface
from errors import IntrospectError
from nodes.sr.actions import ORIGINAL_CLICKS, clicked_element, original_click, parse_action
from nodes.sr.state import Memory, MemoryEntry, StepRecord

DisableRule = Literal["failed", "when_b_clicks"]
Reading = Literal["code", "grammar"]


@dataclass(frozen=True)
class Suggestion:
    """A parsed reflection: 0-based step, B as written ('' if none), B as a canonical action ('' if not one)."""

    step: int
    text: str
    action: str


class ReflectionError(IntrospectError, ValueError):
    """The reflection named no action of the trajectory; the message says why."""


_INDEX = re.compile(r"index=(\d+)")
_SHOULD = ", you should "


def parse_reflection(
    text: str, steps_taken: int, interface: Interface, *, past_end: bool = False, reading: Reading = "code"
) -> Suggestion:
    """Read "For action index=A, you should B." from untrusted text, as the paper's code does.

    A runs from 1 to the number of actions taken; ``past_end`` also allows the index right
    after the last action (an addition: an incomplete trial that needed one more action).
    ``reading="code"``: a B that the paper's code executes as a click (it starts with click, tap or
    move and has a number) is enforced as that click, ``click id=<its first number>``; any other B
    (and every B with ``reading="grammar"``) only when it reads as an action of the env's grammar.
    """
    index = _INDEX.search(text)
    if not index:
        raise ReflectionError(
            'the reflection must read "For action index=A, you should B."; got: ' + text.strip()[:200]
        )
    step = int(index.group(1)) - 1
    last = steps_taken + (1 if past_end else 0)
    if not 0 <= step < last:
        raise ReflectionError(f"action index={step + 1} is outside the trajectory (1..{last})")
    body = text.split(_SHOULD)[1].strip() if _SHOULD in text else ""
    first = body.splitlines()[0] if body else ""
    if reading == "code" and (click := original_click(first, interface)):
        return Suggestion(step=step, text=body, action=click)
    parsed = parse_action(first, interface) if first else None
    return Suggestion(step=step, text=body, action=parsed.action if parsed and not parsed.error else "")


def entry_at(memory: Memory, step: int) -> MemoryEntry | None:
    return memory["entries"].get(str(step))


def enforced_action(
    memory: Memory, step: int, interface: Interface, *, again: bool = False, refused: bool = True
) -> str:
    """B at ``step`` if it may be enforced: a grammar action, not already failed there unless
    ``again`` (the original code enforces every B; the paper only one that has not failed,
    Sec. 5.2), and not a click on an id the env refuses there when ``refused``."""
    entry = entry_at(memory, step)
    if not entry or not entry.get("action"):
        return ""
    action = entry["action"]
    if not again and action in entry.get("failed", []):
        return ""
    if refused and clicked_element(action, interface) in entry.get("disabled", []):
        return ""
    return action


def disabled_ids(memory: Memory, step: int) -> list[str]:
    entry = entry_at(memory, step)
    return list(entry.get("disabled", [])) if entry else []


def disables(taken_id: str, suggestion: Suggestion, failed: list[str], rule: DisableRule, interface: Interface) -> bool:
    """Is the failed click target ``taken_id`` disabled at A?

    ``failed``: every action tried at A so far. The paper: yes, unless B is to be taken on that
    element (it acts on it and has not failed there), since disabling it would refuse B. The
    original code: only when B as written is a click (it starts with click, tap or move) whose
    first number is another id.
    """
    if rule == "when_b_clicks":
        number = re.search(r"\d+", suggestion.text)
        return suggestion.text.lower().startswith(ORIGINAL_CLICKS) and (number.group() if number else None) != taken_id
    return not (interface.action_element(suggestion.action) == taken_id and suggestion.action not in failed)


def update(
    memory: Memory,
    suggestion: Suggestion,
    steps: list[StepRecord],
    reflection: str,
    disable: DisableRule,
    *,
    interface: Interface,
) -> Memory:
    """The memory after a reflection on the trial that executed ``steps``."""
    a = suggestion.step
    entries = {k: v for k, v in memory["entries"].items() if int(k) < a}  # later ones are outdated
    old = memory["entries"].get(str(a), MemoryEntry())
    failed = list(old.get("failed", []))
    disabled = list(old.get("disabled", []))
    if a < len(steps):
        taken = steps[a]["action"]
        if taken not in failed:  # it was part of a failed trial, even if B repeats it
            failed.append(taken)
        taken_id = clicked_element(taken, interface)
        if (
            taken_id is not None
            and taken_id not in disabled
            and disables(taken_id, suggestion, failed, disable, interface)
        ):
            disabled.append(taken_id)
    entries[str(a)] = MemoryEntry(reflection=reflection, action=suggestion.action, failed=failed, disabled=disabled)
    replay = [
        StepRecord(
            action=s["action"],
            source="replay",
            description=s.get("description", ""),
            valid=True,
            stage=int(s.get("stage", 0)),
        )
        for s in steps[:a]
    ]
    return Memory(replay=replay, entries=entries, reflections=[*memory.get("reflections", []), reflection])
