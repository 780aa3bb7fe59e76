"""The trial end conditions of paper 002 (section 3.4, prompts in Appendix D).

    correct      the episode ended with a positive reward
    failed       the episode ended without a positive reward
    exception    an action could not be grounded or executed (the env refused it)
    cycle        the screen after the last action is a screen seen before the previous one
    no change    the last action left the screen exactly as it was
    in progress  a step budget ran out with the task unfinished ("too many steps"): the
                 trial's, or the current stage's (the original code stops a stage after
                 its 9th action: ``max_step_per_view=10``, checked as ``inner_step_idx + 1 >= 10``)
    incomplete   the planner produced no further action and the task is unfinished

``trial_status`` returns the status that ends the trial now, or None while the trial goes on
(so ``IN_PROGRESS`` always means "stopped by a step budget"; the original code ends both budgets
as failed, which Structured Reflection offers as an option, nodes/sr/stage.py). ``screens`` are the compact
screens the comparisons look at, in order: the screen the current stage started on, then the
screen after each of its actions. The paper's released code compares within a stage (one plan
followed on one screen; Structured Reflection keeps track of stages) and says nothing about
screens of earlier stages, so going back to a screen of an earlier stage is not a cycle.

Cycle and no change compare screens as that code does: it checks for a cycle first (the new
screen equals a screen from before the previous action), then for no change (the new screen
equals the screen right before the action); the comparison is exact text, which is why the
compact screen carries no timers or other text that changes by itself.
"""

from __future__ import annotations

from enum import Enum


class TrialStatus(str, Enum):
    CORRECT = "correct"
    CYCLE = "cycle"
    NO_CHANGE = "no change"
    INCOMPLETE = "incomplete"
    IN_PROGRESS = "in progress"
    EXCEPTION = "exception"
    FAILED = "failed"


def trial_status(
    screens: list[str],
    *,
    reward: float,
    done: bool,
    steps: int,
    max_steps: int,
    stage_steps: int = 0,
    max_stage_steps: int | None = None,
    exception: bool,
    stopped: bool,
) -> TrialStatus | None:
    """The status that ends the trial after the latest action, or None if it continues.

    ``reward`` is the raw reward of the episode (used once ``done``); ``steps`` the actions taken
    in this trial, ``stage_steps`` those of the current stage (no stage budget when
    ``max_stage_steps`` is None); ``exception`` whether the latest action was refused; ``stopped`` whether the
    planner produced no further action.
    """
    if done:
        return TrialStatus.CORRECT if reward > 0 else TrialStatus.FAILED
    if exception:
        return TrialStatus.EXCEPTION
    if len(screens) >= 3 and screens[-1] in screens[:-2]:
        return TrialStatus.CYCLE
    if len(screens) >= 2 and screens[-1] == screens[-2]:
        return TrialStatus.NO_CHANGE
    if steps >= max_steps or (max_stage_steps is not None and stage_steps >= max_stage_steps):
        return TrialStatus.IN_PROGRESS
    if stopped:
        return TrialStatus.INCOMPLETE
    return None
