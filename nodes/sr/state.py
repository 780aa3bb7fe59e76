"""The graph state of Structured Reflection: RunState plus the method's JSON structures.

A trial is one attempt at the task from an env reset (same seed). Within a trial, ``steps``
holds what was executed and ``screens`` what was seen; across trials, ``memory`` holds the
structured reflections (paper 002, Sec. 5) and ``trials`` one record per finished trial.
"""

from __future__ import annotations

from typing import TypedDict

from nodes.state import RunState


class StepRecord(TypedDict, total=False):
    """One action of the current trial, as executed."""

    action: str  # the canonical action, or the raw line when it was malformed
    source: str  # "plan" (the planner), "replay" (memory, before A) or "enforce" (B at A)
    description: str  # the paraphrase (Appendix C) the planner and reflection read
    valid: bool
    feedback: str  # why the env (or the parser) refused it


class PlannedAction(TypedDict, total=False):
    """An action waiting to be executed: from the plan, the replay prefix or the memory."""

    action: str
    source: str
    error: str  # set when the plan line was not an action of the grammar
    description: str  # replayed actions keep the description of the trial they come from


class MemoryEntry(TypedDict, total=False):
    """What reflection taught about one step (0-based) of the trial."""

    reflection: str  # the model's statement "For action index=A, you should B."
    action: str  # B as a canonical action; "" when B was not an action of the grammar
    failed: list[str]  # actions already tried at this step in earlier trials
    disabled: list[str]  # click ids disabled on the screen at this step


class Memory(TypedDict):
    """Structured reflection memory: the replay prefix and the entries keyed by step."""

    replay: list[StepRecord]  # steps before the latest A, replayed without model calls
    entries: dict[str, MemoryEntry]  # str(step) -> entry (JSON object keys are strings)


class TrialRecord(TypedDict, total=False):
    """One finished trial, for the result and for the reflection that follows it."""

    trial: int
    status: str
    actions: list[str]
    sources: list[str]
    planning_calls: int
    reward: float
    reflection: str
    reflection_error: str


class SRState(RunState, total=False):
    task_name: str
    trial: int  # 1-based
    screens: list[str]  # screens of this trial: the first one, then one after each action
    steps: list[StepRecord]  # this trial's executed actions
    pending: list[PlannedAction]  # the rest of the current stage's plan
    planning_calls: int  # this trial's planner calls
    disabled: list[str]  # the click ids the env has disabled now (the memory's set for this step)
    status: str  # "" while the trial runs, else a trial status (envs.miniwob_status)
    memory: Memory
    trials: list[TrialRecord]


def empty_memory() -> Memory:
    return Memory(replay=[], entries={})
