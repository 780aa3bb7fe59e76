"""A graceful stop of ``introspect eval``: SIGINT or SIGTERM, sent at a random point (seeded),
lets the steps under way finish and checkpoint (LangGraph's drain), writes no partial row,
exits 128+signal with a line saying how to continue; the same command then ends with the rows
and model-call counts of an evaluation that was never stopped."""

from __future__ import annotations

import random
import signal
import time
from pathlib import Path

import pytest

from introspect.evaluate import read_rows
from tests.graphs.laser_scripts import ROW_FIELDS, paging_eval, paging_script
from tests.support.cli import ROOT, child_env, output, run_main, spawn

pytestmark = pytest.mark.slow
TASKS = [f"synthetic-{i}" for i in range(500, 506)]
DRAWS = random.Random(21)
CASES = [(signal.SIGINT, DRAWS.uniform(0.2, 2.0)), (signal.SIGTERM, DRAWS.uniform(0.2, 2.0))]


def eval_args(spec: str, results: Path, checkpoints: Path) -> list[str]:
    return paging_eval(TASKS, spec, results, "--concurrency", "2", "--checkpoint", f"sqlite:///{checkpoints}")


def compared(rows: list[dict]) -> list[tuple]:
    return sorted(tuple(r.get(k) for k in ROW_FIELDS) for r in rows)


@pytest.fixture(scope="module")
def script(tmp_path_factory) -> str:
    return paging_script(tmp_path_factory.mktemp("script") / "s.jsonl", delay=0.3)  # four calls, 1.2 s a task


@pytest.fixture(scope="module")
def never_stopped(script, tmp_path_factory) -> list[tuple]:
    """The rows of the same evaluation, run to its end without a signal."""
    folder = tmp_path_factory.mktemp("whole")
    assert run_main(eval_args(script, folder / "whole.jsonl", folder / "whole.sqlite"), logs=folder, name="whole") == 0
    return compared(read_rows(folder / "whole.jsonl"))


@pytest.mark.parametrize(("signum", "delay"), CASES, ids=[s.name for s, _ in CASES])
def test_a_signal_stops_the_evaluation_gracefully_and_the_same_command_continues(
    signum, delay, script, never_stopped, tmp_path
):
    spec = script
    args = eval_args(spec, tmp_path / "stopped.jsonl", tmp_path / "stopped.sqlite")
    child = spawn(args, cwd=ROOT, env=child_env(), logs=tmp_path, name="stopped")
    deadline = time.monotonic() + 120
    while not (tmp_path / "stopped.jsonl").exists():  # the first row: the evaluation is under way
        assert child.poll() is None and time.monotonic() < deadline, output(tmp_path, "stopped")
        time.sleep(0.05)
    time.sleep(delay)
    child.send_signal(signum)
    code = child.wait(timeout=120)
    _, err = output(tmp_path, "stopped")
    assert code == 128 + signum, err
    assert err.strip().splitlines()[-1].startswith(f"introspect: stopped by {signum.name}: ")
    assert "run the same command again" in err and "Traceback" not in err
    text = (tmp_path / "stopped.jsonl").read_text()
    assert text.endswith("\n")  # whole rows only
    written = read_rows(tmp_path / "stopped.jsonl")
    assert 0 < len(written) < len(TASKS) and not any(r["error"] for r in written)

    assert run_main(args, logs=tmp_path, name="continued") == 0
    assert compared(read_rows(tmp_path / "stopped.jsonl")) == never_stopped


def test_a_second_sigint_ends_the_process_at_once(tmp_path):
    """The first SIGINT drains (here a model reply 20 s away); the second does not wait for it,
    nor for Python's KeyboardInterrupt to unwind the tasks: the process ends by the signal."""
    spec = paging_script(tmp_path / "slow.jsonl", delay=20.0)
    args = eval_args(spec, tmp_path / "r.jsonl", tmp_path / "c.sqlite")
    child = spawn(args, cwd=ROOT, env=child_env(), logs=tmp_path, name="twice")
    deadline = time.monotonic() + 120
    while "laser on webshop" not in output(tmp_path, "twice")[1]:  # the bar: the tasks are under way
        assert child.poll() is None and time.monotonic() < deadline, output(tmp_path, "twice")
        time.sleep(0.05)
    time.sleep(1.0)
    child.send_signal(signal.SIGINT)
    time.sleep(1.0)  # the first is handled: the drain waits for the model's reply
    assert child.poll() is None
    child.send_signal(signal.SIGINT)
    code = child.wait(timeout=15)  # far less than the reply's 20 s
    assert code == -signal.SIGINT, output(tmp_path, "twice")
    assert "Traceback" not in output(tmp_path, "twice")[1]
