"""Threads and failures through the ``introspect`` command: an existing thread id is
refused unless --fork or --force, a model that gives up names the resume command, and
``eval`` keeps errors apart from failures (exit 1) and shows and counts retries."""

from __future__ import annotations

import asyncio
import json
import re

import pytest

from graphs import method_named
from introspect.checkpoint import open_checkpointer
from introspect.runner import outcome_of
from tests.support.cli import run_cli
from tests.support.laser_demo import DEMO, REPLIES, demo_replies, write_demo_script
from tests.support.openai_stub import OpenAIStub, Reply

TASK = DEMO["task_id"]


async def state_of(db, thread_id: str):
    async with open_checkpointer(f"sqlite://{db}") as saver:
        return await outcome_of(method_named("laser"), thread_id, saver)


@pytest.fixture
def where(tmp_path):
    db = tmp_path / "cp.sqlite"
    return db, ["--checkpoint", f"sqlite://{db}"]


async def _run(capsys, *args):  # main() runs its own event loop: keep it off the test's
    return await asyncio.to_thread(run_cli, capsys, *args)


async def test_an_existing_thread_is_refused_unless_force(capsys, tmp_path, where):
    db, checkpoint = where
    model = write_demo_script(tmp_path / "demo.jsonl")
    run = ["run", "laser", "--task", TASK, "--model", model, "--thread", "t1", *checkpoint]
    code, out, _ = await _run(capsys, *run)
    assert code == 0 and "finished: success=True" in out
    first = await state_of(db, "t1")

    code, out, err = await _run(capsys, *run)
    assert code == 2 and out == ""
    assert "thread 't1' already exists (finished)" in err and "introspect resume t1" in err
    assert len(err.strip().splitlines()) == 1
    assert (await state_of(db, "t1")).state == first.state  # untouched

    code, out, _ = await _run(capsys, *run, "--force")
    assert code == 0 and "finished: success=True" in out
    again = await state_of(db, "t1")
    assert again.state["trajectory"] == first.state["trajectory"]  # started over, not appended to
    assert again.state["usage"]["model_calls"] == len(REPLIES)

    code, _, err = await _run(capsys, *run, "--fork")
    assert code == 2 and "has finished: there is nothing to continue" in err


async def test_a_model_that_gives_up_names_the_resume_command_and_fork_continues_a_copy(capsys, tmp_path, where):
    db, checkpoint = where
    short = write_demo_script(tmp_path / "short.jsonl", replies=7)
    code, out, err = await _run(capsys, "run", "laser", "--task", TASK, "--model", short, "--thread", "t2", *checkpoint)
    assert code == 1 and "finished:" not in out
    assert len(err.strip().splitlines()) == 1 and "7 replies" in err
    command = re.search(r"`introspect (resume t2 --checkpoint \S+)`", err).group(1).split()
    interrupted = await state_of(db, "t2")
    assert not interrupted.finished

    full = write_demo_script(tmp_path / "full.jsonl")
    code, out, err = await _run(capsys, "run", "laser", "--thread", "t2", "--fork", "--model", full, *checkpoint)
    assert code == 0, err
    copy = re.search(r"into (t2-fork-\w+)", out).group(1)
    assert "finished: success=True" in out
    assert (await state_of(db, copy)).state["usage"]["model_calls"] == len(REPLIES)
    assert (await state_of(db, "t2")).state == interrupted.state  # the original is as it was

    write_demo_script(tmp_path / "short.jsonl")  # the model is back: the printed command continues t2
    from nodes.runtime import llm

    llm.clear_models()
    code, out, err = await _run(capsys, *command)
    assert code == 0, err
    assert "finished: success=True" in out


def test_run_shows_retries_and_a_run_that_gave_up_names_its_resume_command(capsys, monkeypatch, tmp_path, where):
    db, checkpoint = where
    with OpenAIStub() as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        stub.replies.extend([demo_replies()[0], *[Reply(status=429, headers={"retry-after-ms": "10"})] * 2])
        code, out, err = run_cli(
            capsys,
            "run",
            "laser",
            "--task",
            TASK,
            "--model",
            "openai:gpt-4o-mini",
            "--set",
            "retries=1",
            "--thread",
            "t3",
            *checkpoint,
        )
        assert code == 1 and "finished:" not in out
        assert err.splitlines()[0].strip() == "retrying after 429, attempt 2/2"
        assert "model call failed after 2 attempts" in err
        assert f"continue it with `introspect resume t3 --checkpoint sqlite://{db}`" in err
        stub.replies.extend(demo_replies())
        code, out, err = run_cli(capsys, "resume", "t3", *checkpoint)
    assert code == 0, err
    assert "finished: success=True" in out


@pytest.mark.parametrize(
    "checkpoint, again",
    [
        ("memory", "their checkpoints were in memory: the same command again runs them from the start"),
        ("sqlite", "run the same command again to resume them from their checkpoints"),
    ],
)
def test_eval_where_every_task_errored_exits_1_and_counts_no_failures(capsys, monkeypatch, tmp_path, checkpoint, again):
    """The last line says what the same command does next: resume the tasks, or (their
    checkpoints gone with the process) run them from the start."""
    where = "memory" if checkpoint == "memory" else f"sqlite://{tmp_path / 'cp.sqlite'}"
    with OpenAIStub() as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        stub.replies.extend([Reply(status=400), Reply(status=400)])
        code, out, err = run_cli(
            capsys,
            "eval",
            "laser",
            "--tasks",
            "0,1",
            "--model",
            "openai:gpt-4o-mini",
            "--concurrency",
            "1",
            "--results",
            str(tmp_path / "r.jsonl"),
            "--checkpoint",
            where,
        )
    assert code == 1
    assert "(ran to an outcome: 0, errors: 2)" in out and "error         task 0: " in out
    assert err.strip().splitlines()[-1] == f"introspect: 2 of 2 tasks errored (not counted as failures); {again}"


def test_eval_shows_retries_live_and_counts_them_per_task(capsys, monkeypatch, tmp_path):
    results = tmp_path / "r.jsonl"
    with OpenAIStub() as stub:
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        fast = {"retry-after-ms": "10"}
        replies = demo_replies()
        stub.replies.extend(
            [replies[0], Reply(status=429, headers=fast), Reply(status=503, headers=fast), *replies[1:]]
        )
        code, out, err = run_cli(
            capsys,
            "eval",
            "laser",
            "--tasks",
            TASK,
            "--model",
            "openai:gpt-4o-mini",
            "--results",
            str(results),
            "--checkpoint",
            "memory",
        )
    assert code == 0, err
    assert f"task {TASK}: retrying after 429, attempt 2/5" in err
    assert f"task {TASK}: retrying after 503, attempt 3/5" in err
    row = json.loads(results.read_text())
    assert row["retries"] == 2 and row["model_calls"] == len(REPLIES)
    assert "(retried requests: 2)" in out
