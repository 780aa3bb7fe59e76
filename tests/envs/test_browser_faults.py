"""Pages that misbehave and a browser that dies: every step ends, in bounded time, with feedback
the agent can read (``valid`` False and a sentence), or the env goes on as if nothing happened.

WebArena task 7 runs on a local site (WEBARENA_MAP points at it) whose pages never answer, never
finish loading, open dialogs, ask before being left, or weigh 10 MB; every step is bounded with
``asyncio.wait_for`` so that a hang fails the test instead of stalling the suite.
"""

from __future__ import annotations

import asyncio
import re

import pytest
from aiohttp import web
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from envs import browser, make_env
from envs.base import StepResult
from envs.miniwob import MiniWoBEnv
from tests.support.chromium import RandomKills, kill_chromium

pytestmark = pytest.mark.browser

LOAD_S = 2.0  # the env's load timeout in these tests
BOUND_S = 4 * LOAD_S + 10  # a step that takes longer than this hangs
HOME = """<html><head><title>Home</title></head><body>
<a href="/never">Never answers</a> <a href="/big">Big page</a>
<button onclick="alert('Saved!')">Alert</button>
<button onclick="window.answer = confirm('Delete everything?')">Confirm</button>
<button onclick="window.answer = prompt('Your name?')">Prompt</button>
</body></html>"""
HANGING = "<html><head><title>Hanging</title></head><body><p>Partly here</p><img src='/never'></body></html>"
UNLOAD = """<html><head><title>Draft</title></head><body><button>Edit</button><script>
addEventListener('beforeunload', (e) => { e.preventDefault(); e.returnValue = ''; });
</script></body></html>"""
BIG_LINKS = 200_000  # about 10.5 MB of HTML, 400,000 elements


@pytest.fixture(scope="module")
async def site():
    release = asyncio.Event()
    big = (
        "<html><head><title>Big</title></head><body>"
        + "".join(f"<p><a href='/p{i}'>link number {i}</a> text {i}</p>" for i in range(BIG_LINKS))
        + "</body></html>"
    )
    assert len(big) > 10_000_000

    def page(text: str):
        async def handler(request: web.Request) -> web.Response:
            return web.Response(text=text, content_type="text/html")

        return handler

    async def never(request: web.Request) -> web.Response:
        await release.wait()
        return web.Response(text="too late", content_type="text/html")

    app = web.Application()
    for path, text in (("/", HOME), ("/hanging", HANGING), ("/unload", UNLOAD), ("/big", big)):
        app.router.add_get(path, page(text))
    app.router.add_get("/never", never)
    runner = web.AppRunner(app)
    await runner.setup()
    tcp = web.TCPSite(runner, "127.0.0.1", 0)
    await tcp.start()
    yield f"http://127.0.0.1:{tcp._server.sockets[0].getsockname()[1]}"  # type: ignore[union-attr]
    release.set()
    await runner.cleanup()


@pytest.fixture
async def env(site: str, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("WEBARENA_MAP", site)  # task 7 starts at __MAP__
    environment = make_env("webarena", load_timeout_ms=LOAD_S * 1000)
    yield environment
    await environment.close()


async def step(env, action: str) -> StepResult:
    return await asyncio.wait_for(env.step(action), BOUND_S)


def element(text: str, role: str, name: str) -> str:
    match = re.search(rf"\[(-?\d+)\] {role} {re.escape(repr(name))}", text)
    assert match, f"no {role} {name!r} on the screen:\n{text}"
    return match[1]


async def test_a_page_that_never_answers_is_stopped_with_feedback(env, site: str) -> None:
    home = await asyncio.wait_for(env.reset("7"), BOUND_S)
    for action in (f"goto [{site}/never]", f"click [{element(home.text, 'link', 'Never answers')}]"):
        result = await step(env, action)
        assert result.valid is False and "did not respond within 2 s" in result.feedback
        assert result.observation.url == site + "/" and "button 'Alert'" in result.observation.text
        after = await step(env, "scroll [down]")  # the page answers again, with nothing to report
        assert after.valid is True and after.feedback == ""


async def test_a_page_that_never_finishes_loading_shows_what_loaded(env, site: str) -> None:
    await asyncio.wait_for(env.reset("7"), BOUND_S)
    result = await step(env, f"goto [{site}/hanging]")
    assert result.valid is False and "did not finish loading within 2 s" in result.feedback
    assert "StaticText 'Partly here'" in result.observation.text
    after = await step(env, "scroll [down]")
    assert after.valid is True and after.feedback == ""


@pytest.mark.parametrize(
    "button, said, answer",
    [
        ("Alert", "showed an alert: 'Saved!'; it was closed with OK", None),
        ("Confirm", "asked to confirm: 'Delete everything?'; it was answered Cancel", False),
        ("Prompt", "asked for input: 'Your name?'; it was answered Cancel", None),
    ],
)
async def test_dialogs_are_answered_and_reported(env, button: str, said: str, answer) -> None:
    home = await asyncio.wait_for(env.reset("7"), BOUND_S)
    result = await step(env, f"click [{element(home.text, 'button', button)}]")
    assert result.valid is False and said in result.feedback
    assert await env._ep.session.page.evaluate("window.answer === undefined ? null : window.answer") == answer


async def test_leaving_a_page_that_asks_before_unload(env, site: str) -> None:
    await asyncio.wait_for(env.reset("7"), BOUND_S)
    draft = await step(env, f"goto [{site}/unload]")
    await step(env, f"click [{element(draft.observation.text, 'button', 'Edit')}]")  # a user gesture
    left = await step(env, f"goto [{site}/]")
    assert left.observation.url == site + "/"
    assert left.valid is False and "asked whether to leave it; it was left" in left.feedback


async def test_a_10_mb_page_ends_in_feedback_and_the_agent_can_go_back(env, site: str) -> None:
    await asyncio.wait_for(env.reset("7"), BOUND_S)
    result = await asyncio.wait_for(env.step(f"goto [{site}/big]"), 120)
    assert result.valid is False
    assert f"more than the {browser.DEFAULT_MAX_ELEMENTS:,} that are read" in result.feedback
    assert "could not be read" in result.observation.text
    back = await step(env, "go_back")
    assert back.observation.url == site + "/" and "button 'Alert'" in back.observation.text


async def test_webarena_step_after_chromium_died_reopens_the_tabs_and_goes_on() -> None:
    env = make_env("webarena")
    try:
        home = await env.reset("shop-0")
        scrolled = await env.step("scroll [down]")
        assert scrolled.valid
        before = await env.snapshot()
        launches = browser.launch_count()
        await kill_chromium(env._ep.session.context.browser)
        noted = await asyncio.wait_for(env.step("note_down [still here]"), BOUND_S)
        assert noted.valid is True and browser.launch_count() == launches + 1
        assert noted.observation.url == home.url and noted.info["notes"] == ["still here"]
        assert (await env.snapshot())["tabs"] == before["tabs"]  # same URL, same scroll offset
        await kill_chromium(env._ep.session.context.browser)  # and again, before a click
        link = element(noted.observation.text, "link", "Privacy and Cookie Policy")  # an id of that screen
        policy = await asyncio.wait_for(env.step(f"click [{link}]"), BOUND_S)
        assert policy.valid is True and browser.launch_count() == launches + 2, policy.info
        assert policy.observation.url != home.url and "Privacy" in policy.observation.text
    finally:
        await env.close()


async def test_miniwob_dialogs_are_reported_and_the_action_is_kept() -> None:
    env = MiniWoBEnv()
    try:
        obs = await env.reset("click-test/0")
        button = re.search(r"<button id=(\d+)", obs.text)[1]  # type: ignore[index]
        await env.page.evaluate(
            '(id) => { document.querySelector(`[data-introspect-id="${id}"]`)'
            ".addEventListener('click', () => { window.answer = confirm('Sure?'); }, true); }",
            button,
        )
        result = await asyncio.wait_for(env.step(f"click id={button}"), BOUND_S)
        assert result.valid is False
        assert "asked to confirm: 'Sure?'; it was answered Cancel" in result.feedback
        assert await env.page.evaluate("window.answer") is False
        assert (await env.snapshot())["actions"] == [f"click id={button}"]  # it ran: a replay repeats it
    finally:
        await env.close()


async def test_miniwob_step_after_the_page_crashed_rebuilds_the_episode() -> None:
    env = MiniWoBEnv()
    try:
        obs = await env.reset("click-button-sequence/0")
        first, second = (
            re.search(rf"<button id=(\d+)[^>]*>{word}<", obs.text)[1]  # type: ignore[index]
            for word in ("ONE", "TWO")
        )
        assert (await env.step(f"click id={first}")).valid
        with pytest.raises(PlaywrightTimeoutError):  # the renderer dies without answering
            await env._session.cdp("Page.crash", timeout_ms=500)  # type: ignore[union-attr]
        for _ in range(50):
            if env._session.crashed:  # type: ignore[union-attr]
                break
            await asyncio.sleep(0.05)
        result = await asyncio.wait_for(env.step(f"click id={second}"), BOUND_S)
        assert result.valid and result.done and result.success
    finally:
        await env.close()


@pytest.mark.parametrize(("env_name", "task_id"), [("miniwob", "click-button/1"), ("webarena", "shop-0")])
async def test_a_reset_chromium_dies_under_starts_the_task_once_more(
    env_name: str, task_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Chromium killed while the task's first page settles: the reset opens it all again on a
    relaunched browser and returns the task's first screen, as if nothing had happened."""
    settle = browser.BrowserSession.settle
    launches: list[int] = []

    async def killed_meanwhile(self: browser.BrowserSession, page=None) -> None:
        if not launches:
            launches.append(browser.launch_count())
            await kill_chromium(self.context.browser)
        await settle(self, page)

    env = make_env(env_name)
    try:
        calm = await env.reset(task_id)
        monkeypatch.setattr(browser.BrowserSession, "settle", killed_meanwhile)
        again = await asyncio.wait_for(env.reset(task_id), BOUND_S)
        assert launches and browser.launch_count() == launches[0] + 1
        assert again.text == calm.text and again.url == calm.url
        monkeypatch.undo()
        assert (await env.step("scroll [down]" if env_name == "webarena" else "press key=TAB")).observation.text
    finally:
        await env.close()


@pytest.mark.parametrize(
    ("env_name", "task_id", "actions"),
    [("miniwob", "click-button-sequence/0", ["press key=TAB"]), ("webarena", "shop-0", ["scroll [down]"])],
)
@pytest.mark.parametrize("seed", [5, 7, 9])
async def test_a_fresh_env_restored_as_chromium_dies_is_where_the_snapshot_says(
    env_name: str, task_id: str, actions: list[str], seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A resumed run restores a fresh env (no task ran in it yet); Chromium killed at a seeded
    random call of that restore: the restore ends where the snapshot says, as undisturbed."""
    first = make_env(env_name)
    try:
        await first.reset(task_id)
        for action in actions:
            await first.step(action)
        snapshot = await first.snapshot()
        calm = await first.restore(snapshot)
    finally:
        await first.close()
    kills = RandomKills(seed, ("restore",), most_calls=12)  # past the context opening, which retries itself
    kills.install(monkeypatch, type(first))
    fresh = make_env(env_name)
    try:
        shaken = await asyncio.wait_for(fresh.restore(snapshot), 6 * BOUND_S)
        assert kills.killed and [phase for phase, _ in kills.killed] == ["restore"]
        assert (shaken.text, shaken.url) == (calm.text, calm.url)
        monkeypatch.undo()
        assert await fresh.snapshot() == snapshot
    finally:
        await fresh.close()
