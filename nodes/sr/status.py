"""The trial end conditions of paper 002 (section 3.4, prompts in Appendix D), for any env.

    correct      the episode ended with success (the env's ``success``: MiniWoB's positive raw
                 reward, the paper's test, WebShop's reward 1, a correct answer, a won game)
    failed       the episode ended without success
    exception    an action could not be grounded or executed (the env refused it)
    cycle        the screen after the last action is a screen seen before the previous one
    no change    the last action left the screen exactly as it was
    in progress  a step budget ran out with the task unfinished ("too many steps"): the
                 trial's, or the current stage's (the original code stops a stage after
                 its 9th action: ``max_step_per_view=10``, checked as ``inner_step_idx + 1 >= 10``)
    incomplete   the planner produced no further action and the task is unfinished

``trial_status`` returns the status that ends the trial now, or None while the trial goes on
(so ``IN_PROGRESS`` always means "stopped by a step budget"; the original code ends both budgets
as failed, which is Structured Reflection's default, ``budget_status``: nodes/sr/stage.py). ``screens`` are the
observations the comparisons look at, in order: the screen the current stage started on, then the
screen after each of its actions. The paper's released code compares within a stage (one plan
followed on one screen; Structured Reflection keeps track of stages) and says nothing about
screens of earlier stages, so going back to a screen of an earlier stage is not a cycle.

Cycle and no change compare screens as that code does: it checks for a cycle first (the new
screen equals a screen from before the previous action), then for no change (the new screen
equals the screen right before the action); the comparison is exact text. That needs an env whose
observation does not change by itself (MiniWoB's compact screen carries no timers for this
reason). On a text env the observation is what the last action returned (ALFWorld's feedback,
HotpotQA's search result), so "no change" there means the action returned what the one before it
did (a search repeated, "Nothing happens." twice), and a cycle that an earlier answer came back.
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
    success: bool,
    done: bool,
    steps: int,
    max_steps: int,
    stage_steps: int = 0,
    max_stage_steps: int | None = None,
    exception: bool,
    stopped: bool,
) -> TrialStatus | None:
    """The status that ends the trial after the latest action, or None if it continues.

    ``success`` is the env's verdict on the episode (used once ``done``); ``steps`` the actions
    taken in this trial, ``stage_steps`` those of the current stage (no stage budget when
    ``max_stage_steps`` is None); ``exception`` whether the latest action was refused; ``stopped``
    whether the planner produced no further action.
    """
    if done:
        return TrialStatus.CORRECT if success else TrialStatus.FAILED
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
