"""Trial end conditions (paper 002, Sec. 3.4), each with its reflection prompt (Appendix D).

``trial_status`` returns None while the trial may go on. Cycle and no change compare the
screen after the last action with the earlier screens of the trial, as the paper does.
"""

from __future__ import annotations

from enum import Enum


class TrialStatus(str, Enum):
    CORRECT = "correct"
    CYCLE = "cycle"
    NO_CHANGE = "no change"
    INCOMPLETE = "incomplete"  # the planner produced no further action, task unfinished
    IN_PROGRESS = "in progress"  # the step budget ran out
    EXCEPTION = "exception"  # an action could not be read or grounded
    FAILED = "failed"  # the episode ended without reward


def trial_status(
    screens: list[str],
    *,
    reward: float,
    done: bool,
    steps: int,
    max_steps: int,
    exception: bool,
    stopped: bool,
) -> TrialStatus | None:
    """The status that ends the trial now, or None if it continues."""
    if done:
        return TrialStatus.CORRECT if reward > 0 else TrialStatus.FAILED
    if exception:
        return TrialStatus.EXCEPTION
    if len(screens) >= 2 and screens[-1] == screens[-2]:
        return TrialStatus.NO_CHANGE
    if len(screens) >= 3 and screens[-1] in screens[:-2]:
        return TrialStatus.CYCLE
    if steps >= max_steps:
        return TrialStatus.IN_PROGRESS
    if stopped:
        return TrialStatus.INCOMPLETE
    return None
