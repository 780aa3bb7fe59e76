"""``introspect run --confirm``: the command shows the paused graph's question (the action and
the agent's rationale) and reads approve / reject with a reason / edit from standard input; the
pause is a checkpoint, so after the process is killed ``introspect resume`` asks the same
question again."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

from tests.support.cli import ROOT, child_env
from tests.support.laser_demo import BUY_REPLIES
from tests.support.scenarios import SCENARIOS


def _script(tmp_path: Path) -> str:
    replies = SCENARIOS["laser"].replies
    again = replies[-BUY_REPLIES:]  # Buy_Now once more
    return replace(SCENARIOS["laser"], replies=replies + again).write_script(tmp_path / "laser.jsonl")


def _start(args: list[str], out: Path) -> subprocess.Popen:
    with out.open("wb") as sink:
        return subprocess.Popen(
            [sys.executable, "-m", "introspect.cli", *args],
            cwd=ROOT,
            env=child_env(),
            stdin=subprocess.PIPE,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )


def _wait_for(process: subprocess.Popen, out: Path, text: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while text not in out.read_text(errors="replace"):
        assert process.poll() is None, out.read_text(errors="replace")
        assert time.monotonic() < deadline, out.read_text(errors="replace")
        time.sleep(0.05)


def test_the_question_survives_a_kill_and_resume_asks_it_again(tmp_path):
    db = tmp_path / "runs.sqlite"
    checkpoint = ["--checkpoint", f"sqlite:///{db}"]
    first = tmp_path / "run.out"
    run = _start(
        [
            "run",
            "laser",
            "--task",
            "synthetic-0",
            "--model",
            _script(tmp_path),
            "--confirm",
            "--thread",
            "ask-me",
            *checkpoint,
        ],
        first,
    )
    _wait_for(run, first, "[a]pprove")
    run.send_signal(signal.SIGKILL)
    run.wait(timeout=20)
    shown = first.read_text()
    assert "the irreversible action: click[Buy Now]" in shown
    assert "rationale: the user wanted decorative pillows of size" in shown
    assert "finished" not in shown

    second = tmp_path / "resume.out"
    resume = _start(["resume", "ask-me", *checkpoint], second)
    resume.communicate(b"r\nthe price is too high\na\n", timeout=120)
    text = second.read_text()
    assert resume.returncode == 0, text
    assert text.count("the irreversible action: click[Buy Now]") == 2  # asked again, then after the rejection
    assert "(refused: A person rejected the action click[Buy Now]: the price is too high" in text
    assert "finished: success=True reward=1.000" in text


def test_closed_input_leaves_the_run_paused(tmp_path):
    db = tmp_path / "runs.sqlite"
    out = tmp_path / "run.out"
    run = _start(
        [
            "run",
            "laser",
            "--task",
            "synthetic-0",
            "--model",
            _script(tmp_path),
            "--confirm",
            "--thread",
            "nobody",
            "--checkpoint",
            f"sqlite:///{db}",
        ],
        out,
    )
    run.communicate(b"", timeout=120)
    text = out.read_text()
    assert run.returncode == 0, text
    assert "the run stays paused" in text and "stopped: success=False" in text
    assert "continue with: introspect resume nobody" in text


def test_eval_refuses_confirm(tmp_path):
    from introspect.cli import main

    assert (
        main(
            [
                "eval",
                "laser",
                "--tasks",
                "0:1",
                "--model",
                _script(tmp_path),
                "--confirm",
                "--checkpoint",
                "memory",
                "--results",
                str(tmp_path / "r.jsonl"),
            ]
        )
        == 2
    )
    assert not (tmp_path / "r.jsonl").exists()
