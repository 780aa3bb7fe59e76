"""Fault injection (issue 28): one 12-task evaluation against the OpenAI-compatible stub,
interrupted in turn by a SIGKILL of the evaluating process, of one of its worker processes, by
a LangGraph server stopped and started again, and by Chromium killed under a browser env, each at
a seeded point (tests.support.fault_injection). After continuing, by running the same command
again, the rows equal an uninterrupted run's and the stub has answered exactly as many requests:
every reply answered before the fault is taken from the reply journal (nodes.runtime.journal), never
asked again. The requests in flight at the fault are the only ones asked twice, and only when
their process died before the reply came (a server stopped with SIGTERM waits for them)."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import STUB_KEY
from tests.support.cli import child_env, children, command_line, descendants, ended, output, spawn, wait_gone
from tests.support.deployment import Deployment, deployment
from tests.support.fault_injection import (
    Fault,
    asked_twice,
    browser_eval_args,
    browser_stub,
    compared,
    eval_args,
    fault_point,
    instructions,
    restock,
    strike,
    stub,
)
from tests.support.openai_stub import OpenAIStub

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]
# three groups a worker each (tests/conftest.py), each making the module fixtures it uses
LOCAL, SERVER, BROWSER = (pytest.mark.xdist_group(f"fault-injection-{g}") for g in ("local", "server", "browser"))
LATER = 12  # calls after the fault point: three tasks' (four calls each), one per slot held


@dataclass
class Reference:
    rows: dict[str, tuple[Any, ...]]
    answered: int


def stub_env(served: OpenAIStub) -> dict[str, str]:
    return child_env(OPENAI_BASE_URL=served.base_url, OPENAI_API_KEY=STUB_KEY)


def local(folder: Path, *more: str) -> list[str]:
    """The evaluation on a SQLite checkpoint database in ``folder``."""
    return eval_args(folder / "r.jsonl", "--checkpoint", f"sqlite:///{folder / 'c.sqlite'}", *more)


def run_again(args: list[str], env: dict[str, str], folder: Path) -> None:
    """The same command, run to its end."""
    child = spawn(args, cwd=folder, env=env, logs=folder, name="again")
    assert ended(child, folder, "again") == 0, output(folder, "again")


def continued_as(reference: Reference, served: OpenAIStub, results: Path, fault: Fault, what: str) -> None:
    """The rows and the stub's answered requests are the uninterrupted run's (the counts printed)."""
    print(
        f"{what} at request {fault.at} with {fault.in_flight} in flight: {len(served.requests)} requests, "
        f"{served.answered} answered, {served.abandoned} abandoned (uninterrupted: {reference.answered})"
    )
    assert compared(results) == reference.rows
    assert served.answered == reference.answered, asked_twice(served)


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


@LOCAL
def test_the_evaluating_process_sigkilled_and_continued_asks_nothing_twice(markers, reference, tmp_path):
    args = local(tmp_path, "--concurrency", "3")
    with stub(markers) as served:
        child = spawn(args, cwd=tmp_path, env=stub_env(served), logs=tmp_path, name="killed")

        def kill() -> None:
            child.kill()
            child.wait(timeout=60)

        fault = strike(served, fault_point(1, reference.answered, LATER), 3, kill)
        run_again(args, stub_env(served), tmp_path)
    continued_as(reference, served, tmp_path / "r.jsonl", fault, "the evaluating process killed")
    assert served.abandoned == fault.in_flight == 3


@LOCAL
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

        fault = strike(served, fault_point(2, reference.answered, LATER), 4, kill_a_worker)
        ended(child, tmp_path, "first")  # the dead worker's tasks are error rows
        assert any("WorkerDied" in str(row[-1]) for row in compared(tmp_path / "r.jsonl").values())
        run_again(args, stub_env(served), tmp_path)
    continued_as(reference, served, tmp_path / "r.jsonl", fault, f"worker {killed} killed")
    assert served.abandoned == 2  # the dead worker's two calls in flight


@pytest.fixture(scope="module")
def served_stub(markers) -> Iterator[OpenAIStub]:
    with stub(markers) as served:
        yield served


@pytest.fixture(scope="module")
def deployed(served_stub, tmp_path_factory) -> Iterator[Deployment]:
    """Two ``introspect serve`` workers (three runs each) asking the stub."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_BASE_URL", served_stub.base_url)
        patch.setenv("OPENAI_API_KEY", STUB_KEY)
        with deployment(tmp_path_factory.mktemp("deployment"), workers=2, jobs=3) as running:
            yield running


def on_server(deployed: Deployment, tmp_path: Path, model: str) -> list[str]:
    return eval_args(tmp_path / "r.jsonl", "--server", deployed.url, "--concurrency", "6", model=model)


@SERVER
def test_a_server_worker_sigkilled_asks_nothing_twice(markers, reference, served_stub, deployed, tmp_path):
    """The other worker takes the dead one's runs up and continues them from their checkpoints."""
    deployed.revive()
    restock(served_stub, markers)
    args = on_server(deployed, tmp_path, "openai:gpt-4o")
    client = spawn(args, cwd=tmp_path, env=child_env(), logs=tmp_path, name="client")
    victim = deployed.workers[1]
    assert victim.process is not None

    def kill_a_worker() -> None:
        victim.kill(signal.SIGKILL)

    fault = strike(served_stub, fault_point(3, reference.answered, LATER), 6, kill_a_worker)
    assert ended(client, tmp_path, "client") == 0, output(tmp_path, "client")
    continued_as(reference, served_stub, tmp_path / "r.jsonl", fault, "a server worker killed")
    assert served_stub.abandoned == 3  # the dead worker's three runs' calls in flight


@SERVER
def test_the_whole_server_stopped_and_started_again_asks_nothing_twice(
    markers, reference, served_stub, deployed, tmp_path
):
    """Stopped with SIGTERM, the workers still take the replies of the calls under way and keep them
    in the journal: nothing at all is asked twice. The evaluation's own process is killed with
    them and the same command run again once the server is back."""
    deployed.revive()
    restock(served_stub, markers)
    args = on_server(deployed, tmp_path, "openai:gpt-4.1-mini")
    client = spawn(args, cwd=tmp_path, env=child_env(), logs=tmp_path, name="client")

    def stop_the_server() -> None:
        for worker in deployed.workers:
            assert worker.process is not None
            worker.process.send_signal(signal.SIGTERM)  # the held replies go out as they stop

    fault = strike(served_stub, fault_point(9, reference.answered, LATER), 6, stop_the_server)
    client.kill()
    client.wait(timeout=60)
    deployed.stop(signal.SIGTERM)  # waits for each worker's end
    deployed.revive()
    run_again(args, child_env(), tmp_path)
    continued_as(reference, served_stub, tmp_path / "r.jsonl", fault, "the server stopped")
    assert len(served_stub.requests) == reference.answered  # nothing asked twice


def chromium(pid: int) -> list[int]:
    """The Chromium processes under process ``pid``."""
    return [p for p in descendants(pid) if "chrom" in Path(next(iter(command_line(p)), "")).name.lower()]


@pytest.fixture(scope="module")
def browser_reference(tmp_path_factory) -> Reference:
    folder = tmp_path_factory.mktemp("browser")
    with browser_stub() as served:
        args = browser_eval_args(folder / "r.jsonl", "--checkpoint", "memory", "--concurrency", "3")
        child = spawn(args, cwd=folder, env=stub_env(served), logs=folder, name="whole")
        assert ended(child, folder, "whole") == 0, output(folder, "whole")
    rows = compared(folder / "r.jsonl")
    assert len(rows) == 12 and all(not row[-1] for row in rows.values())
    assert len({row[1:] for row in rows.values()}) > 1  # outcomes differ between tasks
    assert served.answered == len(served.requests) == 12  # one plan a task
    return Reference(rows, served.answered)


@pytest.mark.browser
@BROWSER
def test_chromium_killed_mid_run_is_reopened_and_the_tasks_continue(browser_reference, tmp_path):
    """Every Chromium process of the evaluation killed while its three tasks wait on the model:
    each env reopens the browser at its snapshot and the task goes on, in the same process."""
    with browser_stub() as served:
        args = browser_eval_args(tmp_path / "r.jsonl", "--checkpoint", "memory", "--concurrency", "3")
        child = spawn(args, cwd=tmp_path, env=stub_env(served), logs=tmp_path, name="shaken")
        killed: list[int] = []

        def kill_chromium() -> None:
            browsers = chromium(child.pid)
            assert browsers, [command_line(p) for p in descendants(child.pid)]
            for pid in browsers:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            for pid in browsers:
                wait_gone(pid)
            killed.extend(browsers)

        fault = strike(served, fault_point(5, browser_reference.answered, 2), 3, kill_chromium)
        deadline = time.monotonic() + 120
        while not set(chromium(child.pid)) - set(killed):  # the tasks held go on in a relaunched browser
            assert child.poll() is None and time.monotonic() < deadline, output(tmp_path, "shaken")
            time.sleep(0.05)
        assert ended(child, tmp_path, "shaken") == 0, output(tmp_path, "shaken")
    continued_as(browser_reference, served, tmp_path / "r.jsonl", fault, f"{len(killed)} Chromium processes killed")
    assert len(served.requests) == browser_reference.answered  # nothing asked twice
