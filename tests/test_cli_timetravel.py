"""``introspect history`` and ``introspect fork --at``: a run's checkpoints listed with their
step, node, action and reward; a fork from a checkpoint in the middle of a run continues on a
new thread with the env restored from that checkpoint's snapshot. The forks replay the
original run's recording, which checks every prompt the fork sends (each shows the env's
screen) against the original's: a fork whose env were elsewhere would be refused."""

from __future__ import annotations

import asyncio

import pytest

from introspect.checkpoint import open_checkpointer
from introspect.runner import thread_context
from tests.support.cli import run_cli
from tests.support.laser_demo import DEMO, write_demo_script


def rows(out: str) -> list[list[str]]:
    """History rows: checkpoint, step, node, next, then the reward and action if any."""
    return [line.split(None, 4) for line in out.splitlines()[1:]]


def final(out: str) -> str:
    return next(line for line in out.splitlines() if line.startswith("finished:"))


def test_history_and_a_fork_from_the_middle_of_a_webshop_run(capsys, tmp_path):
    db, recording = f"sqlite:///{tmp_path / 'runs.sqlite'}", tmp_path / "run.jsonl"
    code, out, err = run_cli(
        capsys,
        "run",
        "laser",
        "--task",
        DEMO["task_id"],
        "--thread",
        "shop",
        "--model",
        write_demo_script(tmp_path / "script.jsonl"),
        "--record",
        str(recording),
        "--checkpoint",
        db,
    )
    assert code == 0, err
    original = final(out)

    code, out, err = run_cli(capsys, "history", "shop", "--checkpoint", db)
    assert code == 0, err
    history = rows(out)
    assert history[0][1:3] == ["-1", "input"] and history[-1][2] == "finish"
    assert [int(r[1]) for r in history] == list(range(-1, len(history) - 1))
    [opened] = [r for r in history if r[-1].endswith("  click[B0743JKHBV]")]
    assert opened[2:4] == ["execute", "item"] and opened[4].startswith("0.00")
    assert history[-2][2] == "execute" and history[-2][4] == '1.00  click[28" x 28"]; click[Buy Now]'

    code, out, err = run_cli(
        capsys,
        "fork",
        "shop",
        "--at",
        opened[0][:18],
        "--thread",
        "shop-2",
        "--model",
        f"replay:{recording}",
        "--set",
        "max_actions=9",
        "--checkpoint",
        db,
    )
    assert code == 0, err
    assert f"forked thread shop at checkpoint {opened[0]} (step {opened[1]}) into shop-2" in out
    assert "-> click[Buy Now]  reward=1.00" in out and "click[B0743JKHBV]" not in out  # only what followed
    assert final(out) == original

    code, out, _ = run_cli(capsys, "history", "shop-2", "--checkpoint", db)
    forked = rows(out)
    assert [r[0] for r in forked[: len(history) - 3]] == [r[0] for r in history[: len(history) - 3]]
    assert len(rows(run_cli(capsys, "history", "shop", "--checkpoint", db)[1])) == len(history)  # untouched
    assert asyncio.run(context_of(db, "shop-2")).max_actions == 9  # --set over the thread's settings


async def context_of(db: str, thread: str):
    async with open_checkpointer(db) as saver:
        return (await thread_context(saver, thread))[1]


@pytest.mark.parametrize(
    "args,message",
    [
        (["history", "nope"], "no checkpointed thread 'nope'"),
        (["fork", "shop", "--at", "zzz"], "no checkpoint of the thread matches 'zzz'"),
        (["fork", "shop", "--at", ""], "no checkpoint of the thread matches ''"),
        (["fork", "shop", "--at", "1", "--env", "alfworld"], "a fork cannot change the env"),
        (["fork", "shop"], "the following arguments are required: --at"),
    ],
)
def test_bad_time_travel_input_is_one_line(capsys, tmp_path, args, message):
    db = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    assert (
        run_cli(
            capsys,
            "run",
            "laser",
            "--task",
            DEMO["task_id"],
            "--thread",
            "shop",
            "--checkpoint",
            db,
            "--model",
            write_demo_script(tmp_path / "script.jsonl", replies=2),
        )[0]
        == 1
    )  # out of replies
    code, _, err = run_cli(capsys, *args, "--checkpoint", db)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


@pytest.mark.browser
def test_a_fork_restores_the_miniwob_page_of_its_checkpoint(capsys, tmp_path):
    """Structured Reflection's demo: the first trial clicks the wrong button; a fork from the
    checkpoint right after that click describes the page as it was then (the recording checks
    the prompt), reflects, and the second trial succeeds, as in the original run."""
    db = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    code, out, err = run_cli(capsys, "demo", "structured_reflection", "--checkpoint", db)
    assert code == 0, err
    thread = next(line.split()[1] for line in out.splitlines() if line.startswith("thread:"))
    history = rows(run_cli(capsys, "history", thread, "--checkpoint", db)[1])
    [wrong] = [r for r in history if r[2] == "execute" and r[-1].endswith("click id=3")]
    assert wrong[3] == "describe"
    code, forked, err = run_cli(capsys, "fork", thread, "--at", wrong[0], "--checkpoint", db)
    assert code == 0, err
    assert "trial 1 ended" in forked and "-> click id=5  reward=1.00" in forked
    assert final(forked) == final(out)
