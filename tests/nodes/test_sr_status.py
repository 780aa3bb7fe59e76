"""Paper 002's trial statuses (3.4), judged from any env's success/done and its screens."""

from __future__ import annotations

from nodes.sr.status import TrialStatus, trial_status


def status(screens: list[str], **kw) -> TrialStatus | None:
    args = {
        "success": False,
        "done": False,
        "steps": len(screens) - 1,
        "max_steps": 10,
        "exception": False,
        "stopped": False,
    }
    args.update(kw)
    return trial_status(screens, **args)


def test_statuses_carry_the_papers_names() -> None:
    assert [s.value for s in TrialStatus] == [
        "correct",
        "cycle",
        "no change",
        "incomplete",
        "in progress",
        "exception",
        "failed",
    ]


def test_each_end_condition() -> None:
    assert status(["A", "B"], done=True, success=True) is TrialStatus.CORRECT
    assert status(["A", "B"], done=True, success=False) is TrialStatus.FAILED
    assert status(["A", "B"], done=True) is TrialStatus.FAILED
    assert status(["A", "B"], exception=True) is TrialStatus.EXCEPTION
    assert status(["A", "A"]) is TrialStatus.NO_CHANGE
    assert status(["A", "B", "A"]) is TrialStatus.CYCLE
    assert status(["A", "B", "C"], steps=10) is TrialStatus.IN_PROGRESS
    assert status(["A", "B"], stopped=True) is TrialStatus.INCOMPLETE
    assert status(["A", "B", "C"], stage_steps=3, max_stage_steps=3) is TrialStatus.IN_PROGRESS
    assert status(["A", "B", "C"], stage_steps=2, max_stage_steps=3) is None
    assert status(["A", "B", "C"]) is None
    assert status(["A"]) is None


def test_precedence_follows_the_papers_code() -> None:
    # the episode's end decides first, then a refused action, then the screen comparisons
    assert status(["A", "A"], done=True, success=True) is TrialStatus.CORRECT
    assert status(["A", "A"], exception=True) is TrialStatus.EXCEPTION
    assert status(["A", "B", "B", "B"]) is TrialStatus.CYCLE  # seen before the previous screen
    assert status(["A", "B", "B"], steps=10, stopped=True) is TrialStatus.NO_CHANGE
    assert status(["A", "B", "B"], stage_steps=2, max_stage_steps=2) is TrialStatus.NO_CHANGE
    assert status(["A", "B"], stage_steps=9, max_stage_steps=9, stopped=True) is TrialStatus.IN_PROGRESS
