"""One process per run (introspect.runlock): while one ``introspect eval`` executes a run, a second
process started on it (the same command, ``--workers 2`` beside it, or on another machine sharing
its Postgres) refuses in one line naming the first's pid and host, with exit 2 and nothing
written; the first ends with one row per task, each model call made once. A holder that was
SIGKILLed blocks nothing."""

from __future__ import annotations

import hashlib
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from introspect.evaluate import read_rows
from tests.graphs.laser_scripts import paging_eval, paging_script
from tests.support.cli import child_env, output, spawn

pytestmark = pytest.mark.slow
TASKS = [f"synthetic-{i}" for i in range(700, 704)]


def eval_args(spec: str, results: Path, checkpoint: str, *more: str) -> list[str]:
    return paging_eval(TASKS, spec, results, "--concurrency", "2", "--checkpoint", checkpoint, *more)


def started(child: subprocess.Popen, logs: Path, name: str) -> None:
    """Wait until ``child`` shows its progress bar: it holds the run's lock."""
    deadline = time.monotonic() + 120
    while "laser on webshop" not in output(logs, name)[1]:
        assert child.poll() is None and time.monotonic() < deadline, output(logs, name)
        time.sleep(0.05)


def tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha1(p.read_bytes()).hexdigest() for p in root.rglob("*") if p.is_file()}


def refused(first: subprocess.Popen, second: subprocess.Popen, logs: Path, name: str) -> str:
    """The second process's one line: exit 2, naming the first."""
    code = second.wait(timeout=120)
    out, err = output(logs, name)
    assert code == 2, (out, err)
    assert out == "" and err.count("\n") == 1 and "Traceback" not in err, err
    assert f"pid {first.pid} on {socket.gethostname()}" in err and "one process per run" in err
    return err


@pytest.fixture(scope="module")
def script(tmp_path_factory) -> str:
    return paging_script(tmp_path_factory.mktemp("script") / "s.jsonl", delay=2.5)  # 10 s a task


@pytest.mark.parametrize("second", ["the same eval", "--workers 2"])
def test_a_second_process_on_a_run_being_executed_refuses_naming_the_first(second, script, tmp_path):
    results, checkpoint = tmp_path / "out" / "r.jsonl", f"sqlite:///{tmp_path / 'c.sqlite'}"
    first = spawn(eval_args(script, results, checkpoint), cwd=tmp_path, env=child_env(), logs=tmp_path, name="first")
    started(first, tmp_path, "first")
    more = ["--workers", "2"] if second == "--workers 2" else []
    before = {k: v for k, v in tree(tmp_path / "out").items() if k != "r.jsonl"}  # the first writes its rows
    other = spawn(eval_args(script, results, checkpoint, *more), cwd=tmp_path, env=child_env(), logs=tmp_path, name="2")
    refused(first, other, tmp_path, "2")
    if first.poll() is not None:  # on a loaded machine the first may end meanwhile: its lock goes with it
        before.pop("r.jsonl.lock")
    assert {k: v for k, v in tree(tmp_path / "out").items() if k != "r.jsonl"} == before
    assert first.wait(timeout=120) == 0, output(tmp_path, "first")
    rows = read_rows(results)
    assert sorted(r["task_id"] for r in rows) == TASKS  # one row per task: nothing ran twice
    assert all(r["model_calls"] == 4 for r in rows)
    assert list((tmp_path / "out").iterdir()) == [results]  # the lock went with its run


def test_a_sigkilled_holder_blocks_nothing(script, tmp_path):
    results, checkpoint = tmp_path / "r.jsonl", f"sqlite:///{tmp_path / 'c.sqlite'}"
    args = eval_args(script, results, checkpoint)
    first = spawn(args, cwd=tmp_path, env=child_env(), logs=tmp_path, name="first")
    started(first, tmp_path, "first")
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=60)
    assert (tmp_path / "r.jsonl.lock").exists()  # left behind, naming a process that is gone
    again = spawn(args, cwd=tmp_path, env=child_env(), logs=tmp_path, name="again")
    assert again.wait(timeout=180) == 0, output(tmp_path, "again")
    assert sorted(r["task_id"] for r in read_rows(results)) == TASKS


def test_processes_sharing_a_postgres_database_refuse_a_run_another_one_executes(script, tmp_path):
    """Two machines: each its own results file (here two folders), one Postgres database."""
    url = os.environ.get("INTROSPECT_TEST_POSTGRES")
    if not url:
        pytest.skip("INTROSPECT_TEST_POSTGRES is unset: no PostgreSQL server to test against")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    # a run of its own, 20 s a task: the second process must meet it still running, also under load
    spec = paging_script(tmp_path / f"{os.getpid()}-{time.time_ns()}.jsonl", delay=5)
    env = child_env()
    first = spawn(eval_args(spec, tmp_path / "a" / "r.jsonl", url), cwd=tmp_path, env=env, logs=tmp_path, name="a")
    started(first, tmp_path, "a")
    other = spawn(eval_args(spec, tmp_path / "b" / "r.jsonl", url), cwd=tmp_path, env=env, logs=tmp_path, name="b")
    assert "on the same Postgres" in refused(first, other, tmp_path, "b")
    assert list((tmp_path / "b").iterdir()) == []
    assert first.wait(timeout=240) == 0, output(tmp_path, "a")
    assert sorted(r["task_id"] for r in read_rows(tmp_path / "a" / "r.jsonl")) == TASKS
