"""The WebArena env on the local shop in the real Chromium: observation, actions, allowlist,
snapshot/restore, and every local task solved by a known-correct action sequence.

Element ids are read from the observation text by role and name, as a person reading the screen
would, never hard-coded.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from envs import EnvError, make_env
from envs.base import Env, StepResult
from envs.sites.serve import shared_site
from envs.webarena import login as webarena_login
from envs.webarena import tasks as webarena_tasks
from nodes.runtime.llm import Caller

pytestmark = pytest.mark.browser
LINE = re.compile(r"^\t*\[-?\d+\] \S+ (?:'[^\n]*'|\"[^\n]*\")(?: .*)?$")


def element(text: str, role: str, name: str, after: str | None = None) -> str:
    """The id of the first ``[id] role 'name'`` line (after the line containing ``after``)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if after in line) if after else 0
    wanted = f"] {role} {name!r}"
    for line in lines[start:]:
        if wanted in line:
            return line.strip().split("]", 1)[0][1:]
    raise AssertionError(f"no {role} {name!r} on the screen:\n{text}")


async def ok(env: Env, action: str) -> StepResult:
    result = await env.step(action)
    assert result.valid is True, (action, result.feedback)
    return result


async def open_order(env: Env, screen: str, number: str, page: int = 1) -> str:
    """From a screen showing the header: My Orders, (page 2,) View Order of order ``number``."""
    obs = (await ok(env, f"click [{element(screen, 'link', 'My Orders')}]")).observation.text
    if page == 2:
        obs = (await ok(env, "scroll [down]")).observation.text
        obs = (await ok(env, f"click [{element(obs, 'link', 'Page 2')}]")).observation.text
    result = await ok(env, f"click [{element(obs, 'link', 'View Order', after=f'cell {number!r}')}]")
    assert f"Order # {number}" in result.observation.text
    return result.observation.text


@pytest.fixture
async def env():
    environment = make_env("webarena")
    yield environment
    await environment.close()


async def start(env: Env, task_id: str) -> str:
    return (await env.reset(task_id)).text


# --- observation ----------------------------------------------------------------------------------


async def test_observation_has_tab_header_url_and_tree_lines_of_the_viewport_only(env) -> None:
    obs = await env.reset("shop-0")
    lines = obs.text.splitlines()
    assert lines[0] == "Tab 0 (current): One Stop Market"
    assert lines[2] == f"URL: {obs.url}" and obs.url.startswith("http://127.0.0.1:")
    assert lines[4].startswith("[") and "] RootWebArea 'One Stop Market' focused: True" in lines[4]
    assert all(LINE.match(line) for line in lines[4:]), [bad for bad in lines[4:] if not LINE.match(bad)]
    assert "\t[" in obs.text and element(obs.text, "link", "My Orders")
    assert obs.info["intent"] == webarena_tasks.config("shop-0")["intent"]
    assert obs.info["tabs"] == ["One Stop Market"] and obs.info["notes"] == []
    assert obs.info["sites"] == ["shop"] and obs.info["site_urls"] == {"shop": obs.url.rstrip("/")}
    orders = (await ok(env, f"click [{element(obs.text, 'link', 'My Orders')}]")).observation.text
    assert "StaticText 'Welcome, Emma Lopez!'" in orders
    assert "Privacy and Cookie Policy" not in orders  # the footer is below the viewport
    scrolled = (await ok(env, "scroll [down]")).observation.text
    assert "link 'Privacy and Cookie Policy'" in scrolled
    assert "Welcome, Emma Lopez!" not in scrolled  # the header scrolled out of view
    up = (await ok(env, "scroll [up]")).observation.text
    assert "Welcome, Emma Lopez!" in up


async def test_form_fields_show_their_values_and_required_state(env) -> None:
    obs = await start(env, "shop-11")
    assert re.search(r"\[\d+\] textbox 'Name' value: 'Emma Lopez' required: True", obs)
    assert re.search(r"\[\d+\] textbox 'Phone Number' required: False", obs)


# --- actions --------------------------------------------------------------------------------------


async def test_goto_outside_the_allowlist_is_refused_with_feedback(env) -> None:
    obs = await env.reset("shop-0")
    for url in ("https://example.com/", "file:///etc/passwd", "file:///etc/passwd%00.html", "http://127.0.0.2:1/"):
        result = await env.step(f"goto [{url}]")
        assert result.valid is False and "not allowed" in result.feedback
        assert result.observation.url == obs.url and result.done is False
    moved = await ok(env, f"goto [{obs.url}contact/]")
    assert moved.observation.url.endswith("/contact/")


async def test_malformed_and_impossible_actions_never_raise(env) -> None:
    obs = await start(env, "shop-0")
    stale = element(obs, "link", "Contact Us")
    for action in [
        "",
        "click",
        "click [abc]",
        "fly [1]",
        "type [3]",
        "tab_focus [7]",
        "scroll [left]",
        "go_forward",
        "click [999999]",
        "press [NoSuchKey]",
        "new_tab extra",
        "```",
    ]:
        result = await env.step(action)
        assert result.valid is False and result.feedback, action
        assert result.done is False
    await ok(env, f"click [{element(obs, 'link', 'My Orders')}]")
    result = await env.step(f"type [{stale}] [hello]")  # an id of the previous screen
    assert result.valid is False


async def test_type_appends_to_the_field_and_enter_submits_unless_zero(env) -> None:
    obs = await start(env, "shop-8")
    box = element(obs, "textbox", "Search")
    typed = await ok(env, f"type [{box}] [picture] [0]")
    assert "/catalogsearch/" not in typed.observation.url and "value: 'picture'" in typed.observation.text
    box = element(typed.observation.text, "textbox", "Search")
    searched = await ok(env, f"type [{box}] [ frame]")  # appended to what the field holds (WebArena), then Enter
    assert searched.observation.url.endswith("/catalogsearch/result/?q=picture+frame")
    assert "link 'Solid Wood Picture Frame, Wall and Tabletop Display'" in searched.observation.text


async def test_tabs_go_back_and_notes(env) -> None:
    obs = await start(env, "shop-0")
    home = env._ep.session.page.url  # type: ignore[attr-defined]
    await ok(env, f"click [{element(obs, 'link', 'Contact Us')}]")
    back = await ok(env, "go_back")
    assert back.observation.url == home
    assert (await ok(env, "go_forward")).observation.url.endswith("/contact/")
    opened = await ok(env, "new_tab")
    assert opened.observation.text.startswith("Tab 0: Contact Us | Tab 1 (current): ")
    focused = await ok(env, "tab_focus [0]")
    assert focused.observation.text.startswith("Tab 0 (current): Contact Us | Tab 1: ")
    await ok(env, "tab_focus [1]")
    closed = await ok(env, "close_tab")
    assert closed.observation.text.startswith("Tab 0 (current): Contact Us\n")
    noted = await ok(env, "note_down [order 171 has the frame]")
    assert noted.info["notes"] == ["order 171 has the frame"]


async def test_snapshot_restore_brings_back_url_scroll_tabs_and_notes_on_a_fresh_env(env) -> None:
    obs = await start(env, "shop-2")
    await ok(env, f"click [{element(obs, 'link', 'My Orders')}]")
    scrolled = await ok(env, "scroll [down]")
    await ok(env, "note_down [Apr 2022 is on page 2]")
    snap = await env.snapshot()
    assert snap["task_id"] == "shop-2" and snap["tabs"][0]["scroll"][1] > 0
    assert snap["notes"] == ["Apr 2022 is on page 2"]
    # the local shop's port is this process's: a snapshot names the site, so another process resumes it
    assert snap["tabs"][0]["url"].startswith("__SHOP__/") and not scrolled.observation.url.startswith("__")
    other = make_env("webarena")
    try:
        with pytest.raises(EnvError, match="snapshot"):
            await other.restore({"tabs": snap["tabs"]})
        restored = await other.restore(snap)
        assert restored.url == scrolled.observation.url
        assert restored.text == scrolled.observation.text  # ids included: the same page, the same ids
        assert restored.info["notes"] == ["Apr 2022 is on page 2"]
        page2 = await ok(other, f"click [{element(restored.text, 'link', 'Page 2')}]")
        assert page2.observation.url.endswith("?p=2")
        assert await other.snapshot() != snap
    finally:
        await other.close()
    site = scrolled.observation.url.split("/sales/")[0]
    assert (await ok(env, f"goto [{site}/contact/]")).observation.url == f"{site}/contact/"
    back = await env.restore(snap)  # the used instance, as backtracking does
    assert back.url == scrolled.observation.url and (await env.snapshot())["tabs"] == snap["tabs"]


async def test_a_restored_snapshot_keeps_what_was_typed_ticked_and_chosen(env) -> None:
    """The paper's message draft survives a backtrack: restore refills changed fields (and only those)."""
    contact = await start(env, "shop-11")
    site = contact.split("URL: ", 1)[1].split("/contact/", 1)[0]
    await ok(env, f"type [{element(contact, 'textbox', 'Phone Number')}] [555-0142] [0]")
    draft = await ok(
        env, f"type [{element(contact, 'textbox', 'What’s on your mind?')}] [Please refund order 174.] [0]"
    )
    typed = await env.snapshot()
    product = (await ok(env, f"goto [{site}/solid-wood-picture-frame.html]")).observation.text
    await ok(env, f"type [{element(product, 'combobox', 'Color')}] [Walnut]")
    chosen = await ok(env, f"type [{element(product, 'spinbutton', 'Qty')}] [2] [0]")
    picked = await env.snapshot()
    edit = (await ok(env, f"goto [{site}/customer/account/edit/]")).observation.text
    first_name = re.search(r"textbox 'First Name' value: '([^']*)'", edit).group(1)  # type: ignore[union-attr]
    await ok(env, f"click [{element(edit, 'checkbox', 'Change Email')}]")
    ticked = await ok(env, f"type [{element(edit, 'textbox', 'First Name')}] [Emmy] [0]")
    checked = await env.snapshot()

    assert [f["id"] for f in typed["tabs"][0]["fields"]] == ["telephone", "comment"]  # Name kept its value
    other = make_env("webarena")
    try:
        for snap, seen in ((typed, draft), (picked, chosen), (checked, ticked)):
            restored = await other.restore(snap)
            assert restored.text == seen.observation.text
        assert "checkbox 'Change Email' checked: true" in restored.text
        assert f"textbox 'First Name' value: '{first_name}Emmy'" in restored.text  # typed after the name
        again = await other.restore(typed)
        assert "textbox 'What’s on your mind?' value: 'Please refund order 174.'" in again.text
        assert await other._ep.session.page.input_value("#comment") == "Please refund order 174."  # type: ignore[attr-defined]
        assert await other.snapshot() == typed
    finally:
        await other.close()


async def test_stop_ends_the_episode_and_later_actions_are_refused(env) -> None:
    await env.reset("shop-3")
    final = await env.step("stop [4]")
    assert final.done and final.reward == 0.0 and final.success is False
    assert final.info["evaluators"][0]["evaluator"] == "string_match"
    again = await env.step("scroll [down]")
    assert again.valid is False and "ended" in again.feedback


# --- every local task, solved ---------------------------------------------------------------------


async def finish(env: Env, answer: str = "") -> StepResult:
    final = await env.step(f"stop [{answer}]")
    assert final.done and final.valid is True
    assert final.success is True, final.info["evaluators"]
    assert final.reward == 1.0 and all(e["passed"] for e in final.info["evaluators"])
    return final


async def test_shop_0_frame_colour_with_backtracking(env) -> None:
    home = await start(env, "shop-0")
    wrong = await open_order(env, home, "000000172")  # the other Sep 2022 order: no frame
    assert "Picture Frame" not in wrong
    history = (await ok(env, "go_back")).observation.text
    detail = (
        await ok(env, f"click [{element(history, 'link', 'View Order', after=repr('000000171'))}]")
    ).observation.text
    assert "Solid Wood Picture Frame" in detail and "StaticText 'Walnut'" in detail
    await finish(env, "Walnut")


@pytest.mark.parametrize(
    ("task_id", "order", "page", "answer", "seen"),
    [
        ("shop-1", "000000174", 1, "Gold", "StaticText 'Gold'"),
        ("shop-2", "000000167", 2, "Size 8", "StaticText '8'"),
        ("shop-5", "000000168", 2, "$60.97", "cell '$60.97'"),
        ("shop-6", "000000170", 1, "", "Order # 000000170"),
    ],
)
async def test_tasks_answered_from_an_order_page(env, task_id, order, page, answer, seen) -> None:
    detail = await open_order(env, await start(env, task_id), order, page)
    assert seen in detail
    await finish(env, answer)


async def test_shop_3_and_4_answered_from_the_order_list(env) -> None:
    obs = await start(env, "shop-3")
    orders = (await ok(env, f"click [{element(obs, 'link', 'My Orders')}]")).observation.text
    assert len(re.findall(r"cell '11/\d+/22'", orders)) == 3
    await finish(env, "3")
    obs = await start(env, "shop-4")
    orders = (await ok(env, f"click [{element(obs, 'link', 'My Orders')}]")).observation.text
    assert orders.index("cell '000000178'") < orders.index("cell 'Canceled'") < orders.index("cell '000000177'")
    await finish(env, "000000178")


async def test_shop_7_second_page_of_orders(env) -> None:
    obs = await start(env, "shop-7")
    orders = (await ok(env, f"click [{element(obs, 'link', 'My Orders')}]")).observation.text
    lower = (await ok(env, "scroll [down]")).observation.text
    assert element(lower, "link", "Page 2") and "link 'Page 2'" not in orders
    await ok(env, f"click [{element(lower, 'link', 'Page 2')}]")
    await finish(env)


async def test_shop_8_search(env) -> None:
    obs = await start(env, "shop-8")
    await ok(env, f"type [{element(obs, 'textbox', 'Search')}] [yoga mat]")
    await finish(env)


async def test_shop_9_product_page_of_the_shoes(env) -> None:
    detail = await open_order(env, await start(env, "shop-9"), "000000177")
    assert "Women's Lightweight Running Shoes" in detail
    results = await ok(env, f"type [{element(detail, 'textbox', 'Search')}] [running shoes]")
    await ok(
        env, f"click [{element(results.observation.text, 'link', 'Women' + chr(39) + 's Lightweight Running Shoes')}]"
    )
    await finish(env)


async def test_shop_14_the_frame_with_a_hanging_template_after_a_wrong_one(env) -> None:
    """The product pages tell the frames apart; the home page lists a viewed product first on return."""
    home = await start(env, "shop-14")
    at_home = await env.snapshot()
    wood = await ok(env, f"click [{element(home, 'link', 'Solid Wood Picture Frame, Wall and Tabletop Display')}]")
    # restoring on the running instance navigates the same browser back: the site remembers the view
    assert "heading 'Recently Viewed'" in (await env.restore(at_home)).text
    fresh = make_env("webarena")
    try:
        assert (await fresh.restore(at_home)).text == home  # a new browser: the page as first seen
    finally:
        await fresh.close()
    await ok(env, f"goto [{wood.observation.url}]")
    assert "hanging template" not in wood.observation.text
    back = (await ok(env, "go_back")).observation.text
    assert "heading 'Recently Viewed'" in back
    gallery = element(back, "link", "Gallery Collage Picture Frame Set, 7 Frames")
    assert gallery != element(home, "link", "Gallery Collage Picture Frame Set, 7 Frames")  # the list moved down
    page = await ok(env, f"click [{gallery}]")
    assert "with a hanging template" in page.observation.text
    await finish(env)


async def test_shop_10_contact_draft_is_checked_unsent(env) -> None:
    obs = await start(env, "shop-10")
    form = (await ok(env, f"click [{element(obs, 'link', 'Contact Us')}]")).observation.text
    await ok(env, f"type [{element(form, 'textbox', 'Order Number')}] [000000174] [0]")
    await ok(
        env,
        f"type [{element(form, 'textbox', 'What’s on your mind?')}] "
        "[The taper candles arrived broken. I would like a replacement.] [0]",
    )
    final = await finish(env)
    assert final.observation.url.endswith("/contact/")


async def test_shop_10_fails_when_the_message_misses_the_point(env) -> None:
    obs = await start(env, "shop-10")
    form = (await ok(env, f"click [{element(obs, 'link', 'Contact Us')}]")).observation.text
    await ok(env, f"type [{element(form, 'textbox', 'Order Number')}] [000000173] [0]")
    final = await env.step("stop []")
    assert final.success is False and final.reward == 0.0
    assert final.info["evaluators"][0]["passed"] is False


async def test_shop_15_message_sent_once_through_the_contact_form(env) -> None:
    from envs.sites.serve import shared_site

    before = len(shared_site("shop").records)
    form = await start(env, "shop-15")
    await ok(env, f"type [{element(form, 'textbox', 'Order Number')}] [000000174] [0]")
    await ok(env, f"type [{element(form, 'textbox', 'What’s on your mind?')}] [Can this order still be changed?] [0]")
    lower = (await ok(env, "scroll [down]")).observation.text
    sent = await ok(env, f"click [{element(lower, 'button', 'Submit')}]")
    assert "Thanks for contacting us" in sent.observation.text
    await finish(env)
    [record] = shared_site("shop").records[before:]  # the site kept the one message sent
    assert record["form"] == "/contact/post" and record["fields"]["order"] == "000000174"
    assert record["fields"]["comment"] == "Can this order still be changed?"


async def test_a_page_a_form_submission_returned_is_restored_without_submitting_again(env) -> None:
    """The contact form's answer comes from a POST: its URL alone shows something else (asked
    again, the shop answers 404), so the snapshot keeps the page; restoring it, in this env or a
    fresh one, shows the same page and sends nothing to the site."""
    from envs.sites.serve import shared_site

    records = shared_site("shop").records
    form = await start(env, "shop-15")
    await ok(env, f"type [{element(form, 'textbox', 'What’s on your mind?')}] [Is it shipped?] [0]")
    before = await env.snapshot()
    assert "document" not in before["tabs"][0]  # a page a GET returned: its URL shows it again
    lower = (await ok(env, "scroll [down]")).observation.text
    sent = (await ok(env, f"click [{element(lower, 'button', 'Submit')}]")).observation
    after = await env.snapshot()
    assert "Thanks for contacting us" in after["tabs"][0]["document"]
    count = len(records)
    fresh = make_env("webarena")
    try:
        again = await fresh.restore(after)
        assert again.text == sent.text and again.url == sent.url
        assert "document" in (await fresh.snapshot())["tabs"][0]  # still the submission's answer
    finally:
        await fresh.close()
    back = (await env.restore(before)).text  # the draft, before it was sent
    assert "value: 'Is it shipped?'" in back and "Thanks for contacting us" not in back
    assert len(records) == count  # restoring sent nothing
    await env.restore(after)
    await finish(env)


async def test_shop_11_phone_and_question_draft(env) -> None:
    form = await start(env, "shop-11")
    await ok(env, f"type [{element(form, 'textbox', 'Phone Number')}] [555-0142] [0]")
    await ok(
        env,
        f"type [{element(form, 'textbox', 'What’s on your mind?')}] "
        "[Is the Solid Wood Picture Frame available in grey?] [0]",
    )
    await finish(env)


async def test_shop_12_unachievable_task_answered_na(env) -> None:
    await start(env, "shop-12")
    await finish(env, "N/A")


async def test_shop_13_fuzzy_match_needs_a_judge(env, write_script: Callable[..., str]) -> None:
    await open_order(env, await start(env, "shop-13"), "000000176")
    unjudged = await env.step("stop [A yoga mat and a water bottle]")
    assert unjudged.success is False and unjudged.reward == 0.0
    assert unjudged.info["evaluators"][0]["passed"] is None
    assert "needs a model" in unjudged.info["evaluators"][0]["detail"]
    env.judge = Caller(write_script([{"content": "correct"}]), temperature=0.0, max_tokens=64, calls_before=0).judge()
    await open_order(env, await start(env, "shop-13"), "000000176")
    await finish(env, "A yoga mat and a water bottle")


def test_every_local_task_has_a_solution_here() -> None:
    solved = {
        "shop-0",
        "shop-1",
        "shop-2",
        "shop-3",
        "shop-4",
        "shop-5",
        "shop-6",
        "shop-7",
        "shop-8",
        "shop-9",
        "shop-10",
        "shop-11",
        "shop-12",
        "shop-13",
        "shop-14",
        "shop-15",
    }
    assert set(webarena_tasks.task_ids("local")) == solved


async def test_a_covered_target_is_clicked_where_it_is_and_a_select_takes_a_typed_option(env) -> None:
    obs = await start(env, "shop-0")
    link = element(obs, "link", "Contact Us")
    await env._ep.session.page.evaluate(  # type: ignore[attr-defined]
        "() => { const d = document.createElement('div'); d.id = 'veil';"
        " d.style = 'position:fixed;top:0;left:0;width:100%;height:100%;z-index:99';"
        " d.onclick = () => { window.veilClicked = true; }; document.body.appendChild(d); }"
    )
    veiled = await env.step(f"click [{link}]")  # WebArena's mouse click: the veil on top takes it
    assert veiled.valid, veiled.feedback
    assert await env._ep.session.page.evaluate("window.veilClicked")  # type: ignore[attr-defined]
    assert not veiled.observation.url.endswith("/contact/")
    product = await ok(env, "goto [" + veiled.observation.url + "solid-wood-picture-frame.html]")
    colour = element(product.observation.text, "combobox", "Color")
    chosen = await ok(env, f"type [{colour}] [Walnut]")
    assert re.search(r"combobox 'Color' value: 'Walnut'", chosen.observation.text)


async def test_typing_into_a_select_and_hovering_a_covered_target_act_as_webarenas_mouse_and_keyboard(env) -> None:
    """WebArena types into a <select> as into any field: a mouse click on it, the text typed, Enter;
    the browser takes the first option whose label starts with the text (case aside), and a text no
    label starts with changes nothing, without a refusal. It hovers with ``mouse.move`` to the
    centre: over a covered target the cover is hovered, and the action is not refused."""
    home = (await env.reset("shop-0")).url or ""
    product = await ok(env, "goto [" + home + "solid-wood-picture-frame.html]")
    colour = element(product.observation.text, "combobox", "Color")
    chosen = await ok(env, f"type [{colour}] [wal]")
    assert re.search(r"combobox 'Color' value: 'Walnut'", chosen.observation.text)
    kept = await ok(env, f"type [{element(chosen.observation.text, 'combobox', 'Color')}] [Purple]")
    assert re.search(r"combobox 'Color' value: 'Walnut'", kept.observation.text)
    orders = element(kept.observation.text, "link", "My Orders")
    page = env._ep.session.page  # type: ignore[attr-defined]
    await page.evaluate(
        "() => { const d = document.createElement('div');"
        " d.style = 'position:fixed;top:0;left:0;width:100%;height:100%;z-index:99';"
        " d.onmouseover = () => { window.veilHovered = true; }; document.body.appendChild(d); }"
    )
    hovered = await ok(env, f"hover [{orders}]")
    assert await page.evaluate("window.veilHovered") and hovered.observation.url == product.observation.url


async def test_a_webarena_task_runs_on_the_site_its_variable_names(env, monkeypatch, tmp_path) -> None:
    """Placeholder resolution and login end to end: point WEBARENA_SHOPPING at the local shop (a
    Magento-like storefront), sign in with WebArena's recipe for shopping, start a shopping task."""
    shop = shared_site("shop").url
    monkeypatch.setenv("WEBARENA_SHOPPING", shop + "/")
    monkeypatch.setenv("WEBARENA_AUTH_DIR", str(tmp_path))
    task_id = next(
        t
        for t in webarena_tasks.task_ids("webarena")
        if webarena_tasks.config(t)["start_url"] == "__SHOPPING__" and webarena_tasks.config(t)["sites"] == ["shopping"]
    )
    assert webarena_tasks.config(task_id)["storage_state"] == "./.auth/shopping_state.json"
    with pytest.raises(EnvError, match="introspect webarena login"):
        await env.reset(task_id)  # no login stored yet: never a silent signed-out run
    monkeypatch.setenv("WEBARENA_SHOPPING_USER", "emma.lopez@example.com")
    monkeypatch.setenv("WEBARENA_SHOPPING_PASSWORD", "Password.123")
    assert await webarena_login.login(["shopping"], tmp_path) == [tmp_path / "shopping_state.json"]
    obs = await env.reset(task_id)
    assert obs.url == shop + "/" and obs.info["site_urls"] == {"shopping": shop}
    assert obs.info["intent"] == webarena_tasks.config(task_id)["intent"]
    assert "StaticText 'Welcome, Emma Lopez!'" in obs.text  # signed in from the stored login
    refused = await env.step("goto [http://localhost:7770/]")  # WebArena's usual port, not this task's
    assert refused.valid is False


async def test_a_link_that_opens_a_new_tab_makes_it_current(env) -> None:
    await env.reset("shop-0")
    await env._ep.session.page.evaluate(  # type: ignore[attr-defined]
        "() => { const a = document.createElement('a'); a.href = '/contact/'; a.target = '_blank';"
        " a.textContent = 'Contact in a new tab'; document.querySelector('main').prepend(a); }"
    )
    screen = (await ok(env, "scroll [up]")).observation.text
    opened = await ok(env, f"click [{element(screen, 'link', 'Contact in a new tab')}]")
    assert opened.observation.text.startswith("Tab 0: One Stop Market | Tab 1 (current): Contact Us\n")
    assert opened.observation.url.endswith("/contact/") and len((await env.snapshot())["tabs"]) == 2


async def test_a_link_outside_the_allowlist_leaves_the_page_and_says_so(env) -> None:
    obs = await env.reset("shop-0")
    await env._ep.session.page.evaluate(  # type: ignore[attr-defined]
        "() => { const a = document.createElement('a'); a.href = 'https://example.com/away';"
        " a.textContent = 'Away'; document.querySelector('main').prepend(a); }"
    )
    screen = (await ok(env, "scroll [up]")).observation.text
    result = await env.step(f"click [{element(screen, 'link', 'Away')}]")
    assert result.valid is False and result.done is False
    assert "https://example.com/away is not allowed" in result.feedback
    assert "stayed" in result.feedback
    assert result.observation.url == obs.url and "Away" in result.observation.text


async def test_every_configured_webarena_site_is_listed_and_reachable(env, monkeypatch) -> None:
    """As WebArena lets an agent reach all its sites (and the appendix's prompts list all six), a
    WebArena task may go to every configured site, not only its own; its own stay its introduction.
    A local task keeps to its own site, whatever the shell has configured."""
    shop = shared_site("shop").url
    other = shop.replace("127.0.0.1", "localhost")  # the same server on another origin, as a Reddit site
    for name in ("SHOPPING", "SHOPPING_ADMIN", "WIKIPEDIA", "HOMEPAGE"):
        monkeypatch.delenv(f"WEBARENA_{name}", raising=False)
    monkeypatch.setenv("WEBARENA_MAP", shop)  # the shop's pages stand in for the map's
    monkeypatch.setenv("WEBARENA_REDDIT", other + "/")
    monkeypatch.setenv("WEBARENA_GITLAB", "http://127.0.0.9:8023")
    task_id = next(
        t
        for t in webarena_tasks.task_ids("webarena")
        if webarena_tasks.config(t)["sites"] == ["map"] and not webarena_tasks.config(t)["storage_state"]
    )
    obs = await env.reset(task_id)
    assert obs.info["websites"] == (
        f"A Reddit site (Postmill): {other}\nA GitLab site: http://127.0.0.9:8023\nA map site (OpenStreetMap): {shop}"
    )  # the appendix's order
    assert obs.info["intro"] == f"A map site (OpenStreetMap): {shop}"
    moved = await ok(env, f"goto [{other}/contact/]")
    assert moved.observation.url == f"{other}/contact/"
    refused = await env.step("goto [http://127.0.0.10:3000/]")  # a site no variable names
    assert refused.valid is False and "not allowed" in refused.feedback

    local = await env.reset("shop-0")
    assert local.info["websites"] == local.info["intro"]
    kept = await env.step(f"goto [{other}/contact/]")
    assert kept.valid is False and "not allowed" in kept.feedback
