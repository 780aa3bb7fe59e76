"""A form submission is sent once, even when the graph step that sent it runs again after a
crash (envs.webarena.journal): the step's re-run gets the site's journaled answer, the site
is not asked again; an answer lost in the crash is not guessed at, and nothing is resent."""

from __future__ import annotations

import json

import pytest

from envs import make_env
from envs.sites.serve import shared_site
from envs.webarena.journal import LOST, Journal

pytestmark = pytest.mark.browser
THREAD = "journal-thread"


def element(screen: str, role: str, name: str) -> str:
    line = next(line for line in screen.splitlines() if f"] {role} '{name}'" in line)
    return line.strip().split("]")[0].lstrip("[")


async def draft(env) -> tuple[dict, str]:
    """shop-15's form filled in; returns the snapshot before sending and the Submit action."""
    form = (await env.reset("shop-15")).text
    await env.step(f"type [{element(form, 'textbox', 'What’s on your mind?')}] [Is it shipped?] [0]")
    lower = (await env.step("scroll [down]")).observation.text
    return await env.snapshot(), f"click [{element(lower, 'button', 'Submit')}]"


async def test_a_step_run_again_gets_the_journaled_answer_and_the_site_one_message(tmp_path, monkeypatch):
    monkeypatch.setenv("INTROSPECT_HOME", str(tmp_path))
    records = shared_site("shop").records
    first, second = make_env("webarena"), make_env("webarena")
    try:
        before, submit = await draft(first)
        count = len(records)
        first.at_step(THREAD, "step-7")
        sent = await first.step(submit)
        assert "Thanks for contacting us" in sent.observation.text and len(records) == count + 1
        [kept] = list(Journal.folder_of(THREAD).iterdir())
        assert "Is it shipped" not in kept.read_text()  # the body is kept as a digest only

        await second.restore(before)  # a new process resuming the step: same page, same click
        second.at_step(THREAD, "step-7")
        again = await second.step(submit)
        assert again.observation.text == sent.observation.text and len(records) == count + 1

        await second.restore(before)  # another step (a backtrack, a new attempt) sends for real
        second.at_step(THREAD, "step-9")
        await second.step(submit)
        assert len(records) == count + 2
        await second.finish()
        assert not Journal.folder_of(THREAD).exists()
    finally:
        await first.close()
        await second.close()


async def test_an_answer_lost_in_the_crash_is_not_sent_again(tmp_path, monkeypatch):
    monkeypatch.setenv("INTROSPECT_HOME", str(tmp_path))
    records = shared_site("shop").records
    first, second = make_env("webarena"), make_env("webarena")
    try:
        before, submit = await draft(first)
        first.at_step(THREAD, "step-3")
        await first.step(submit)
        [kept] = list(Journal.folder_of(THREAD).iterdir())
        entry = json.loads(kept.read_text())
        kept.write_text(json.dumps({"request": entry["request"]}))  # died before the answer was kept
        count = len(records)
        await second.restore(before)
        second.at_step(THREAD, "step-3")
        again = await second.step(submit)
        assert "Submission interrupted" in again.observation.text and "Submission interrupted" in LOST
        assert len(records) == count
    finally:
        await first.close()
        await second.close()


async def test_outside_a_graph_step_nothing_is_journaled(tmp_path, monkeypatch):
    monkeypatch.setenv("INTROSPECT_HOME", str(tmp_path))
    env = make_env("webarena")
    try:
        _, submit = await draft(env)
        await env.step(submit)
        assert not (tmp_path / "journal").exists()
    finally:
        await env.close()
