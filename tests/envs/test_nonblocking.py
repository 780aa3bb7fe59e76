"""No env blocks the event loop: ALFWorld and HotpotQA are made, reset, stepped, restored and
closed the way nodes use them (through the session registry) under blockbuster, the library
LangGraph's server uses to refuse blocking calls. Here it raises on any blocking call made
from envs/ on the event loop, stricter than the server (which lets file reads and os.stat
pass): disk reads, SQLite, sleeping and lock waits all have to happen in a worker thread."""

from __future__ import annotations

import shutil

import pytest
from blockbuster import blockbuster_ctx

from envs import make_env
from envs.alfworld.feedback import REFUSED
from envs.hotpotqa.questions import SHIPPED_QUESTIONS
from envs.sessions import SESSIONS

HEAT_GAME = (
    "json_2.1.1/valid_unseen/pick_heat_then_place_in_recep-Apple-None-GarbageCan-10/trial_T20190908_145050_918567"
)
QUESTION = "5a8b57f25542995d1e6f1371"  # Were Scott Derrickson and Ed Wood of the same nationality? -> yes


def no_blocking():
    """Blockbuster watching every module of the envs package."""
    return blockbuster_ctx("envs")


async def test_blockbuster_catches_a_blocking_call_from_an_env(tmp_path):
    """The guard itself: a file read on the loop from envs/ code is refused."""
    from blockbuster import BlockingError

    from envs.hotpotqa.questions import load_questions

    copy = tmp_path / "q.json.gz"
    shutil.copy(SHIPPED_QUESTIONS, copy)
    with no_blocking(), pytest.raises(BlockingError):
        load_questions(copy)


@pytest.mark.slow
async def test_alfworld_never_blocks_the_event_loop():
    with no_blocking():
        env, first, _ = await SESSIONS.start("nonblocking-alf", "alfworld", {}, HEAT_GAME)
        moved = await env.step("go to countertop 1")
        refused = await env.step("take apple 1 from countertop 9")
        snap = await env.snapshot()
        fresh = make_env("alfworld")
        restored = await fresh.restore(snap)
        await fresh.close()
        await SESSIONS.release("nonblocking-alf")
    assert "Your task is to: heat some apple" in first.text
    assert moved.valid and moved.observation.text.startswith("On the countertop 1, you see")
    assert refused.observation.text == REFUSED + "You cannot take apple 1 from countertop 9. "
    assert restored.info["steps"] == 2


async def test_hotpotqa_never_blocks_the_event_loop(tmp_path):
    questions = tmp_path / "questions.json.gz"  # a file no earlier test loaded: read here
    shutil.copy(SHIPPED_QUESTIONS, questions)
    asked: list[str] = []

    async def judge(prompt: str, *, system: str = "") -> str:
        asked.append(prompt)
        return "Yes."

    options = {"questions": str(questions), "judge": "run", "backend": "local"}
    with no_blocking():
        env, first, _ = await SESSIONS.start("nonblocking-qa", "hotpotqa", options, QUESTION)
        hit = await env.step("search[Ed Wood]")
        miss = await env.step("search[Derrickson horror director]")  # an FTS5 query
        found = await env.step("lookup[American]")
        snap = await env.snapshot()
        env.judge = judge
        answered = await env.step("finish[both American]")
        fresh = make_env("hotpotqa", **options)
        restored = await fresh.restore(snap)
        await fresh.close()
        await SESSIONS.release("nonblocking-qa")
    assert first.text.startswith("Question: Were Scott Derrickson and Ed Wood")
    assert hit.info["page"] == "Ed Wood" and miss.observation.text.startswith("Could not find")
    assert found.observation.text.startswith("(Result 1 / ")
    assert answered.info["judge"] is True and answered.info["em"] == 0.0 and len(asked) == 1
    assert restored.text == found.observation.text
