"""Fault injection (issue 28): one 12-task evaluation against the OpenAI-compatible stub,
interrupted in turn by a SIGKILL of the evaluating process, of one of its worker processes, by
a LangGraph server stopped and started again, and by Chromium killed under a browser env, each at
a seeded point (tests.support.fault_injection). After continuing, by running the same command
again, the rows equal an uninterrupted run's and the stub has answered exactly as many requests:
every reply answered before the fault is taken from the reply journal (nodes.journal), never
asked again. The requests in flight at the fault are the only ones asked twice, and only when
their process died before the reply came (a server stopped with SIGTERM waits for them)."""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import STUB_KEY
from tests.support.cli import child_env, children, command_line, output, spawn, wait_gone
from tests.support.fault_injection import compared, ended, eval_args, fault_point, instructions, strike, stub
from tests.support.openai_stub import OpenAIStub

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


@dataclass
class Reference:
    rows: dict[str, tuple[Any, ...]]
    answered: int


def stub_env(served: OpenAIStub) -> dict[str, str]:
    return child_env(OPENAI_BASE_URL=served.base_url, OPENAI_API_KEY=STUB_KEY)


def local(folder: Path, *more: str) -> list[str]:
    """The evaluation on a SQLite checkpoint database in ``folder``."""
    return eval_args(folder / "r.jsonl", "--checkpoint", f"sqlite:///{folder / 'c.sqlite'}", *more)


@pytest.fixture(scope="module")
def markers() -> list[str]:
    return instructions()


@pytest.fixture(scope="module")
def reference(markers, tmp_path_factory) -> Reference:
    """The evaluation run to its end without a fault."""
    folder = tmp_path_factory.mktemp("whole")
    with stub(markers) as served:
        child = spawn(local(folder, "--concurrency", "3"), cwd=folder, env=stub_env(served), logs=folder, name="whole")
        assert ended(child, folder, "whole") == 0, output(folder, "whole")
    rows = compared(folder / "r.jsonl")
    assert len(rows) == 12 and all(not row[-1] for row in rows.values())  # no error
    assert served.answered == len(served.requests) == 48  # four calls a task
    return Reference(rows, served.answered)


def test_the_evaluating_process_sigkilled_and_continued_asks_nothing_twice(markers, reference, tmp_path):
    args = local(tmp_path, "--concurrency", "3")
    with stub(markers) as served:
        child = spawn(args, cwd=tmp_path, env=stub_env(served), logs=tmp_path, name="killed")

        def kill() -> None:
            child.kill()
            child.wait(timeout=60)

        fault = strike(served, fault_point(1, reference.answered), 3, kill)
        first = len(served.requests)
        again = spawn(args, cwd=tmp_path, env=stub_env(served), logs=tmp_path, name="again")
        assert ended(again, tmp_path, "again") == 0, output(tmp_path, "again")
    print(
        f"killed at request {fault.at} with {fault.in_flight} in flight; {first} requests before the kill, "
        f"{len(served.requests)} in all, {served.answered} answered (uninterrupted: {reference.answered})"
    )
    assert compared(tmp_path / "r.jsonl") == reference.rows
    assert served.answered == reference.answered
    assert served.abandoned == fault.in_flight == 3


def test_a_worker_process_sigkilled_and_continued_asks_nothing_twice(markers, reference, tmp_path):
    args = local(tmp_path, "--workers", "2", "--concurrency", "2")
    with stub(markers) as served:
        child = spawn(args, cwd=tmp_path, env=stub_env(served), logs=tmp_path, name="first")
        killed: list[int] = []

        def kill_a_worker() -> None:
            workers = [pid for pid in children(child.pid) if any("spawn_main" in a for a in command_line(pid))]
            assert len(workers) == 2, workers
            os.kill(workers[0], signal.SIGKILL)
            wait_gone(workers[0])
            killed.append(workers[0])

        fault = strike(served, fault_point(2, reference.answered), 4, kill_a_worker)
        ended(child, tmp_path, "first")  # the dead worker's tasks are error rows
        assert any("WorkerDied" in str(row[-1]) for row in compared(tmp_path / "r.jsonl").values())
        again = spawn(args, cwd=tmp_path, env=stub_env(served), logs=tmp_path, name="again")
        assert ended(again, tmp_path, "again") == 0, output(tmp_path, "again")
    print(
        f"worker {killed} killed at request {fault.at} with {fault.in_flight} in flight; "
        f"{len(served.requests)} requests in all, {served.answered} answered (uninterrupted: {reference.answered})"
    )
    assert compared(tmp_path / "r.jsonl") == reference.rows
    assert served.answered == reference.answered
    assert served.abandoned == 2  # the dead worker's two calls in flight
