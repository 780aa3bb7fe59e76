"""MiniWoBEnv behaviour in the real Chromium: seeding, the compact screen's visibility rules and
grid positions, refused actions, disabled ids, snapshot/restore, task lists."""

from __future__ import annotations

import asyncio
import re

import pytest

from envs import make_env
from envs.base import EnvError, UnknownTaskError
from envs.miniwob import MiniWoBEnv
from envs.miniwob.screen import GRID
from envs.miniwob.tasks import CATEGORIES, PAPER_43
from tests.support.chromium import kill_chromium

pytestmark = pytest.mark.browser

POSITIONS = {p for row in GRID for p in row}


@pytest.fixture(scope="module")
async def env():
    env = MiniWoBEnv()
    yield env
    await env.close()


def line_with(text: str, screen: str) -> str:
    lines = [line for line in screen.splitlines() if f">{text}<" in line]
    assert len(lines) == 1, f"{text!r} on {len(lines)} lines of:\n{screen}"
    return lines[0]


def id_of(text: str, screen: str) -> str:
    match = re.search(r" id=(\d+)", line_with(text, screen))
    assert match, f"{text!r} has no id"
    return match[1]


def test_task_lists_and_suites() -> None:
    env = MiniWoBEnv()
    everything = env.task_ids()
    assert len(everything) == 130 and everything == env.task_ids("all")
    assert all(t.endswith("/0") for t in everything)
    paper = env.task_ids("paper-43")
    assert len(paper) == 43 and {t.split("/")[0] for t in paper} == set(PAPER_43)
    assert sorted(set(PAPER_43.values())) == sorted(CATEGORIES)
    assert [len(env.task_ids(c)) for c in CATEGORIES] == [10, 20, 13]
    assert len(env.task_ids("paper-43@3")) == 129 and "click-pie/2" in env.task_ids("paper-43@3")
    env.check_task("click-test/17")
    for bad in ("no-such-task/0", "click-test/x", "click-test/1/2"):
        with pytest.raises(UnknownTaskError):
            env.check_task(bad)
    with pytest.raises(UnknownTaskError):
        env.task_ids("paper-44")


def test_make_env_and_options() -> None:
    assert isinstance(make_env("miniwob"), MiniWoBEnv)
    with pytest.raises(EnvError):
        make_env("miniwob", episode_seconds=-1)
    with pytest.raises(EnvError):
        make_env("miniwob", no_such_option=1)
    with pytest.raises(EnvError, match="hover_first must be true or false"):
        make_env("miniwob", hover_first="yes")
    for option in ({"screen": "pretty"}, {"typing": "paste"}):
        with pytest.raises(EnvError, match="screen must be one of code, annotated and typing one of"):
            make_env("miniwob", **option)


async def test_same_seed_same_task_other_seed_other_task(env: MiniWoBEnv) -> None:
    first = await env.reset("click-checkboxes/5")
    again = await env.reset("click-checkboxes/5")
    other = await env.reset("click-checkboxes/6")
    assert first.info["utterance"] == again.info["utterance"] and first.text == again.text
    assert (other.info["utterance"], other.text) != (first.info["utterance"], first.text)
    assert first.info["goal"] == first.info["utterance"].strip() != ""
    assert first.info["category"] == "1-screen-n-step" and first.info["seed"] == 5


async def test_structured_goal_of_natural_language_tasks(env: MiniWoBEnv) -> None:
    obs = await env.reset("email-inbox-nl-turk/0")
    assert isinstance(obs.info["utterance"], str) and "{" not in obs.info["utterance"]
    assert obs.info["fields"] and all(isinstance(v, str) for v in obs.info["fields"].values())


async def test_screen_lines_carry_grid_positions_and_verbatim_text(env: MiniWoBEnv) -> None:
    obs = await env.reset("focus-text-2/0")
    positions = re.findall(r'<input id=\d+ type="text" class="tt\d" pos="([^"]+)">', obs.text)
    assert positions == ["top", "center", "bottom"]
    obs = await env.reset("click-link/0")
    for line in obs.text.splitlines():
        assert re.search(r' pos="([^"]+)"', line)[1] in POSITIONS  # type: ignore[index]
    # prose beside the links is shown, verbatim, without an id
    prose = [line for line in obs.text.splitlines() if line.startswith("<text ")]
    assert prose and all(" id=" not in line for line in prose)
    assert any(re.search(r"[A-Z].*[,.]", line) for line in prose)


async def test_collapsed_content_appears_only_after_expanding(env: MiniWoBEnv) -> None:
    obs = await env.reset("click-collapsible/0")
    assert "ui-accordion-content" not in obs.text
    header = re.search(r"<h3 id=(\d+)", obs.text)[1]  # type: ignore[index]
    result = await env.step(f"click id={header}")
    assert result.valid and "ui-accordion-content" in result.observation.text


async def test_the_screen_keeps_every_element_with_a_box_as_miniwobs_dom_reader_does(env: MiniWoBEnv) -> None:
    await env.reset("click-test/0")
    await env.page.evaluate(
        """() => {
      const area = document.getElementById('area');
      const add = (html) => area.insertAdjacentHTML('beforeend', html);
      add('<button style="display:none">NONE</button>');
      add('<div style="height:0; overflow:hidden"><button>FOLDED</button></div>');
      add('<button style="visibility:hidden">HIDDEN</button>');
      add('<div style="opacity:0"><button>GHOST</button></div>');
      add('<button style="position:absolute; left:-9999px">AWAY</button>');
      add('<div style="height:4px; overflow:hidden"><div style="height:4px"></div><button>CLIPPED</button></div>');
      add('<button style="width:2px; height:2px; padding:0; border:0">TINY</button>');
    }"""
    )
    screen = (await env.observe()).text
    for kept in ("HIDDEN", "GHOST", "AWAY", "CLIPPED", "TINY"):  # a box, however unseen
        assert f">{kept}<" in screen
    for dropped in ("NONE", "FOLDED"):  # no box, or inside an element with none
        assert dropped not in screen


async def test_a_click_waits_for_hover_effects_unless_hover_first_is_off(env: MiniWoBEnv) -> None:
    # the page reacts to the hover 100 ms later (a menu opening); the press comes after that
    # reaction by default (as the SR code's move_to_element().click(), whose move lasts 250 ms), at once
    # with hover_first off
    hover_effect = """() => { const b = document.querySelector('#subbtn');
      b.addEventListener('mouseover', () => setTimeout(() => { window.hovered = true; }, 100));
      b.addEventListener('mousedown', () => { window.pressedAfterHover = !!window.hovered; }); }"""
    at_once = MiniWoBEnv(hover_first=False)
    try:
        for each, expected in ((env, True), (at_once, False)):
            obs = await each.reset("click-test/0")
            await each.page.evaluate(hover_effect)
            button = re.search(r'<button id=(\d+) class="subbtn"', obs.text)[1]  # type: ignore[index]
            assert (await each.step(f"click id={button}")).success
            assert await each.page.evaluate("window.pressedAfterHover") is expected
    finally:
        await at_once.close()


async def test_invalid_actions_give_feedback_and_change_nothing(env: MiniWoBEnv) -> None:
    obs = await env.reset("enter-text/0")
    for action, words in [
        ("scroll down", "unknown action"),
        ("click the submit button", "click id="),
        ("click id=999", "no element with id=999"),
        ('enter "x" to id=999', "no element with id=999"),
        ("press NOSUCHKEY", "unknown key"),
        ("hold SPACE", "CTRL"),
        ("", "empty action"),
    ]:
        result = await env.step(action)
        assert result.valid is False and words in result.feedback, (action, result.info)
        assert not result.done and result.reward == 0.0
    assert (await env.snapshot())["actions"] == []
    assert (await env.observe()).text == obs.text


async def test_step_after_the_episode_ended_is_refused(env: MiniWoBEnv) -> None:
    obs = await env.reset("click-test/0")
    done = await env.step(f"click id={id_of('Click Me!', obs.text)}")
    assert done.done and done.success and done.reward == 1.0
    again = await env.step("press ENTER")
    assert again.valid is False and "over" in again.feedback


async def test_disabled_ids_lose_their_id_and_are_refused(env: MiniWoBEnv) -> None:
    obs = await env.reset("click-test-2/0")
    one = id_of("ONE", obs.text)
    shown = await env.disable_ids([one])
    assert ">ONE<" in shown.text and f"id={one} " not in shown.text
    assert one not in shown.info["ids"] and shown.info["disabled_ids"] == [one]
    refused = await env.step(f"click id={one}")
    assert refused.valid is False and "disabled" in refused.feedback
    assert not refused.done and (await env.snapshot())["disabled_ids"] == [one]
    cleared = await env.reset("click-test-2/0")
    assert f"id={one} " in cleared.text and cleared.info["disabled_ids"] == []


async def test_snapshot_restore_replays_on_fresh_and_used_envs(env: MiniWoBEnv) -> None:
    obs = await env.reset("login-user/3")
    user, password = re.findall(r'"(.*?)"', obs.info["utterance"])
    user_box = re.search(r'<input id=(\d+) type="text" class="username"', obs.text)[1]  # type: ignore[index]
    pass_box = re.search(r'<input id=(\d+) type="password"', obs.text)[1]  # type: ignore[index]
    await env.step(f'enter "{user}" to id={user_box}')
    await env.step("press TAB")
    result = await env.step(f'enter "{password}" to id={pass_box}')
    await env.disable_ids([user_box])
    snap = await env.snapshot()
    assert snap == {
        "task_id": "login-user/3",
        "actions": [f'enter "{user}" to id={user_box}', "press Tab", f'enter "{password}" to id={pass_box}'],
        "disabled_ids": [user_box],
    }

    fresh = MiniWoBEnv()
    try:
        restored = await fresh.restore(snap)
        assert restored.text == (await env.observe()).text
        assert f'value="{user}"' in restored.text and "replay_failures" not in restored.info
        login = id_of("Login", restored.text)
        final = await fresh.step(f"click id={login}")
        assert final.done and final.success
    finally:
        await fresh.close()

    await env.reset("click-test/0")  # a used env, now on another task
    again = await env.restore(snap)
    assert again.text == result.observation.text.replace(f" id={user_box} ", " ")
    assert again.info["steps"] == 3 and again.info["disabled_ids"] == [user_box]


async def test_hold_ctrl_selects_several_options(env: MiniWoBEnv) -> None:
    obs = await env.reset("click-scroll-list/0")
    options = re.findall(r"<option id=(\d+)", obs.text)[:2]
    assert len(options) == 2
    for action in ["hold CTRL", *(f"click id={o}" for o in options), "release CTRL"]:
        assert (await env.step(action)).valid
    count = "() => document.getElementById('options').selectedOptions.length"
    assert await env.page.evaluate(count) == 2


def field_value(box: str) -> str:
    return f"document.querySelector('[data-introspect-id=\"{box}\"]').value"


async def test_typing_is_the_sr_codes_click_clear_and_keys(env: MiniWoBEnv) -> None:
    obs = await env.reset("enter-password/0")
    box = re.search(r'<input id=(\d+) type="password"', obs.text)[1]  # type: ignore[index]
    result = await env.step(f'enter "secret" to id={box}')
    assert "secret" not in result.observation.text
    assert 'value="\u2022\u2022\u2022\u2022\u2022\u2022"' in result.observation.text
    # on a filled field Selenium's clear() empties it and blurs it: the keys that follow reach no field
    again = await env.step(f'enter "pw" to id={box}')
    assert again.valid and await env.page.evaluate(field_value(box)) == ""
    assert await env.page.evaluate("document.activeElement === document.body")
    # typed text that names a key is that key, as the code's keys() maps it
    assert (await env.step(f'enter "tab" to id={box}')).valid
    assert await env.page.evaluate(field_value(box)) == ""
    # a covered field is refused, as Selenium's element click (the SR code's, before typing) refuses it
    await env.page.evaluate(
        "() => document.body.insertAdjacentHTML('beforeend', '<div id=\"veil\" style=\"position:fixed;"
        " inset:0; z-index:9\"></div>')"
    )
    covered = await env.step(f'enter "more" to id={box}')
    assert covered.valid is False and re.search(r"cannot type into id=\d+: .*covered by <div", covered.feedback)


async def test_typing_into_what_is_no_text_field_clicks_it_then_is_refused_as_clear_refuses(env: MiniWoBEnv) -> None:
    obs = await env.reset("click-checkboxes/0")
    box = re.search(r'<input id=(\d+) type="checkbox"', obs.text)[1]  # type: ignore[index]
    refused = await env.step(f'enter "x" to id={box}')
    assert refused.valid is False and "user-editable" in refused.feedback
    assert re.search(rf'<input id={box} type="checkbox"[^>]* checked', refused.observation.text)  # clicked first
    assert (await env.snapshot())["actions"] == [f"click id={box}"]  # so a replay clicks it too


async def test_replace_typing_is_an_option() -> None:
    env = MiniWoBEnv(typing="replace")
    try:
        obs = await env.reset("enter-password/0")
        box = re.search(r'<input id=(\d+) type="password"', obs.text)[1]  # type: ignore[index]
        await env.step(f'enter "secret" to id={box}')
        assert (await env.step(f'enter "pw" to id={box}')).valid
        assert await env.page.evaluate(field_value(box)) == "pw"
    finally:
        await env.close()


async def test_label_words_carry_no_id_and_svg_classes_read_svg_class_as_the_sr_code(env: MiniWoBEnv) -> None:
    boxes = (await env.reset("click-checkboxes/0")).text
    labels = re.findall(r"<text( id=\d+)? pos=", boxes)
    assert labels and not any(labels)  # a label's words beside its checkbox: no id
    shapes = (await env.reset("click-shape/0")).text
    assert re.search(r'<text id=\d+ class="SVG_CLASS" pos=', shapes)  # an SVG <text> element
    annotated = MiniWoBEnv(screen="annotated")
    try:
        assert re.search(r"<text id=\d+ pos=", (await annotated.reset("click-checkboxes/0")).text)
        assert "SVG_CLASS" not in (await annotated.reset("click-shape/0")).text
    finally:
        await annotated.close()


async def test_the_page_time_limit_ends_the_episode() -> None:
    short = MiniWoBEnv(episode_seconds=1.0)
    try:
        await short.reset("click-test/0")
        await asyncio.sleep(1.5)
        late = await short.step("press ENTER")
        assert late.valid is False and "over" in late.feedback
        assert late.observation.info["done"] and late.observation.info["success"] is False
    finally:
        await short.close()


async def test_a_step_after_chromium_died_replays_the_episode_and_goes_on() -> None:
    env = MiniWoBEnv()
    try:
        obs = await env.reset("click-button-sequence/0")
        await env.step(f"click id={id_of('ONE', obs.text)}")
        old_browser = env.page.context.browser
        await kill_chromium(old_browser)
        result = await env.step(f"click id={id_of('TWO', obs.text)}")
        assert result.valid and result.done and result.success
        assert env.page.context.browser is not old_browser
    finally:
        await env.close()
