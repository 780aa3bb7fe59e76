"""The graph state of Structured Reflection: RunState plus the method's JSON structures.

A trial is one attempt at the task from an env reset (same seed). Within a trial, ``steps``
holds what was executed and ``screens`` what was seen; across trials, ``memory`` holds the
structured reflections (paper 002, Sec. 5) and ``trials`` one record per finished trial.

A trial runs in stages, as the paper's code runs them: a stage starts on a screen with one
plan (the planner's, the memory's replayed steps, or the enforced B alone) and ends when the
plan is used up or reaches a step the memory speaks about. Cycles are detected within a stage.
"""

from __future__ import annotations

from typing import Annotated

from typing_extensions import TypedDict  # pydantic (Studio's schemas) reads only this one below Python 3.12

from nodes.runtime.channels import record
from nodes.runtime.state import RunState


class StepRecord(TypedDict, total=False):
    """One action of the current trial, as executed."""

    action: str  # the canonical action, or the raw line when it was malformed or executed as nothing
    written: str  # the plan's line, when the paper's code reading shows it instead of the action
    source: str  # "plan" (the planner), "replay" (memory, before A) or "enforce" (B at A)
    description: str  # the paraphrase (Appendix C) the planner reads
    valid: bool
    feedback: str  # why the env (or the parser) refused it
    screen: str  # the screen it was taken on, as shown (that step's disabled ids removed)
    disabled: list[str]  # the click ids disabled on that screen (envs with DisablesElements)
    stage: int  # the stage of the trial it belongs to (0-based); replayed steps keep stages apart


class PlannedAction(TypedDict, total=False):
    """An action waiting to be executed: from the plan, the replay prefix or the memory."""

    action: str
    source: str
    error: str  # set when the plan line was not an action of the grammar
    written: str  # the plan's line as written, when it differs from the action (the code's reading)
    reading: str  # "ground": a click whose id the model names; "noop": executed as nothing (the code's reading)
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
    reflections: list[str]  # every statement so far, in order (the ablation without structure)


class Reflected(TypedDict, total=False):
    """What the reflection after a trial adds to the trial's record."""

    reflection: str
    reflection_error: str


class TrialRecord(Reflected, total=False):
    """One finished trial, for the result and for the reflection that follows it."""

    trial: int
    status: str
    actions: list[str]
    sources: list[str]
    planning_calls: int
    reward: float


class SRState(RunState, total=False):
    task_name: str
    intro: str  # the env's introduction (a task's own, else its interface's), for the generic prompts
    trial: int  # 1-based
    screens: Annotated[list[str], record()]  # screens of this trial: the first one, then one after each action
    steps: Annotated[list[StepRecord], record()]  # this trial's executed actions
    pending: list[PlannedAction]  # the rest of the current stage's plan
    stage: int  # the current stage of this trial (0-based)
    stage_start: int  # index in ``screens`` of the screen the current stage started on
    planning_calls: int  # this trial's planner calls
    disabled: list[str]  # the click ids the env has disabled now (the memory's set for this step)
    status: str  # "" while the trial runs, else a trial status (nodes.sr.status)
    memory: Annotated[Memory, record()]
    trials: Annotated[list[TrialRecord], record()]


def empty_memory() -> Memory:
    return Memory(replay=[], entries={}, reflections=[])


def shown(step: StepRecord) -> str:
    """A step's action as the model is shown it: the plan's line where the paper's code shows that
    (``written``), else the action."""
    return step.get("written") or step["action"]
