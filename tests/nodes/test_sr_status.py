"""Trial end conditions of paper 002 (Sec. 3.4)."""

from nodes.sr.status import TrialStatus, trial_status


def status(screens, **kw):
    args = dict(reward=0.0, done=False, steps=len(screens) - 1, max_steps=10, exception=False, stopped=False)
    args.update(kw)
    return trial_status(screens, **args)


def test_end_conditions():
    assert status(["a", "b"], done=True, reward=1.0) is TrialStatus.CORRECT
    assert status(["a", "b"], done=True, reward=-1.0) is TrialStatus.FAILED
    assert status(["a", "b"], exception=True) is TrialStatus.EXCEPTION
    assert status(["a", "b", "b"]) is TrialStatus.NO_CHANGE
    assert status(["a", "b", "a"]) is TrialStatus.CYCLE
    assert status(["a", "b", "c"], max_steps=2) is TrialStatus.IN_PROGRESS
    assert status(["a", "b"], stopped=True) is TrialStatus.INCOMPLETE
    assert status(["a", "b", "c"]) is None
    assert status(["a"]) is None
