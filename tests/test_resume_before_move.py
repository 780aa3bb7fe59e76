"""A thread checkpointed by an older layout of the code resumes with this one.

``tests/data/before-move/checkpoints.sqlite`` was written at commit ad3da9d, when the command
line and the runtime still lived in ``introspect`` and ``nodes``: each shipped demo (its
recording copied beside the database, named by a path relative to the checkout) was started
and stopped after a few steps, one thread per method (``before-move-<method>``). Checkpoints
hold plain data and the graphs' node names, never module paths, so the code may move; this
test is what says so. Each thread must finish as the demo finishes when run whole today.
"""

from __future__ import annotations

import shutil

import pytest

from tests.support.cli import ROOT, output, run_main

DATA = ROOT / "tests" / "data" / "before-move"


def finished_line(text: str) -> str:
    return next(line for line in text.splitlines() if line.startswith("finished:"))


@pytest.mark.parametrize(
    "method",
    [
        "laser",
        "structured_reflection",
        "autoplan",
        pytest.param("devils_advocate", marks=pytest.mark.browser),
    ],
)
def test_a_thread_checkpointed_before_the_move_resumes_to_the_end_a_whole_run_reaches(method, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)  # the threads name their recordings relative to the checkout
    database = tmp_path / "checkpoints.sqlite"
    shutil.copy(DATA / "checkpoints.sqlite", database)
    thread = f"before-move-{method}"

    code = run_main(["resume", thread, "--checkpoint", f"sqlite:///{database}"], logs=tmp_path, name="resumed")
    assert code == 0, output(tmp_path, "resumed")
    assert run_main(["demo", method, "--checkpoint", "memory"], logs=tmp_path, name="whole") == 0
    resumed, whole = output(tmp_path, "resumed")[0], output(tmp_path, "whole")[0]
    assert finished_line(resumed) == finished_line(whole)  # success, reward, steps, calls, tokens
    assert f"thread: {thread}" in resumed
