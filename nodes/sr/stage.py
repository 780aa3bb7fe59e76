"""Stages of a trial and the status that ends it (paper 002, Sec. 3.4 and 4.3).

A stage starts on a screen with one plan, as the paper's code runs one (``plan_and_execute``):
the planner's plan for that screen, the memory's replayed steps of one stage of the earlier
trial, or the enforced B alone. It ends when its plan is used up or reaches a step the memory
speaks about; the next stage starts on the screen reached.

Cycle and no change compare the screens of the current stage only, as that code does: a
screen that comes back from an earlier stage (a tab opened in one stage and closed in the
next) is not a cycle. An env that disables elements (DisablesElements) shows each screen with
the current step's disabled ids removed, while the paper's code compares screens as read; so the
ids disabled at any step of the stage are hidden from all of its screens before they are
compared (as the env's interface hides them, ``without_elements``), and a screen does not differ
from itself only because an id was shown on it once and hidden once.

Budgets: a trial takes at most ``max_actions`` actions and a stage at most ``max_stage_actions``
(the paper states neither; the stage's default is the original code's, which stops a stage
after its 9th action even when its plan ends there). Running out of either ends the trial as
"failed", as the original code does (``budget_status="failed"``, the default);
``budget_status="in_progress"`` ends it "in progress", the status whose prompt says "you took
too many steps" (paper, Appendix D).
"""

from __future__ import annotations

from envs.base import Interface
from nodes.sr.context import SRContext
from nodes.sr.state import SRState
from nodes.sr.status import TrialStatus, trial_status


def begin(state: SRState) -> dict[str, int]:
    """The state update that starts a new stage on the current screen."""
    first = not state.get("steps")
    return {"stage": 0 if first else state.get("stage", 0) + 1, "stage_start": len(state.get("screens", [])) - 1}


def stage_steps(state: SRState) -> int:
    """The actions taken in the current stage."""
    stage = state.get("stage", 0)
    return sum(1 for s in state.get("steps", []) if s.get("stage", 0) == stage)


def stage_screens(state: SRState, interface: Interface) -> list[str]:
    """The current stage's screens (its first, then one after each action), comparable."""
    stage = state.get("stage", 0)
    hidden = sorted({i for s in state.get("steps", []) if s.get("stage", 0) == stage for i in s.get("disabled", [])})
    screens = state.get("screens", [])[state.get("stage_start", 0) :]
    return [interface.without_elements(screen, hidden) for screen in screens]


def status(state: SRState, context: SRContext, interface: Interface, *, exception: bool, stopped: bool) -> str:
    """The trial status now ("" while the trial goes on); see nodes/sr/status.py."""
    found = trial_status(
        stage_screens(state, interface),
        success=bool(state.get("success", False)),
        done=bool(state.get("done", False)),
        steps=len(state.get("steps", [])),
        max_steps=context.max_actions,
        stage_steps=stage_steps(state),
        max_stage_steps=context.max_stage_actions,
        exception=exception,
        stopped=stopped,
    )
    if found is TrialStatus.IN_PROGRESS and context.budget_status == "failed":
        found = TrialStatus.FAILED
    return found.value if found else ""
