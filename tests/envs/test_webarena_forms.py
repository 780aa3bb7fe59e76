"""What the user typed, captured from a page and put back after a reload (envs.webarena.forms)."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from envs.browser import BrowserSession, UrlPolicy
from envs.webarena import forms

pytestmark = pytest.mark.browser

PAGE = "data:text/html," + quote(
    "<form><input id=q name=q value=start><input id=pw type=password>"
    "<input type=checkbox name=opt checked><input type=radio name=r value=a checked><input type=radio name=r value=b>"
    "<select id=s multiple><option>x</option><option selected>y</option><option>z</option></select>"
    "<input name=dup><input name=dup></form>"
    "<div id=note contenteditable>Dear shop,</div><div id=untouched contenteditable>Keep</div>"
)


async def test_changed_fields_come_back_after_a_reload_and_passwords_never_leave_the_page() -> None:
    session = await BrowserSession.open(UrlPolicy())
    try:
        page = session.page
        await session.context.add_init_script(forms.EDIT_TRACKER)
        await page.goto(PAGE)
        assert await forms.capture(page) == []  # nothing changed yet
        await page.fill("#q", "yoga mat")
        await page.fill("#pw", "secret")
        await page.uncheck("input[name=opt]")
        await page.check("input[value=b]")
        await page.select_option("#s", ["x", "z"])
        await page.locator("input[name=dup]").nth(1).fill("second")
        await page.click("#note")
        await page.keyboard.press("End")
        await page.keyboard.type(" my order broke.")
        fields = await forms.capture(page)
        assert "secret" not in str(fields) and all(f["type"] != "password" for f in fields)
        changed = [
            (f["name"] or f["id"], f["nth"], {k: f[k] for k in ("value", "checked", "selected", "html") if k in f})
            for f in fields
        ]
        assert changed == [
            ("q", 0, {"value": "yoga mat"}),
            ("opt", 0, {"checked": False}),
            ("r", 0, {"checked": False}),
            ("r", 1, {"checked": True}),
            ("s", 0, {"selected": [0, 2]}),
            ("dup", 1, {"value": "second"}),
            ("note", 0, {"html": "Dear shop, my order broke."}),
        ]
        await page.goto(PAGE)  # a reload resets everything
        assert await page.input_value("#q") == "start"
        assert await forms.apply(page, fields) == len(fields) == 7
        assert await page.input_value("#q") == "yoga mat"
        assert await page.input_value("#pw") == ""
        assert not await page.is_checked("input[name=opt]") and await page.is_checked("input[value=b]")
        assert await page.eval_on_selector("#s", "s => [...s.selectedOptions].map(o => o.text)") == ["x", "z"]
        assert await page.locator("input[name=dup]").nth(0).input_value() == ""
        assert await page.locator("input[name=dup]").nth(1).input_value() == "second"
        assert await page.inner_text("#note") == "Dear shop, my order broke."
        assert await page.inner_text("#untouched") == "Keep"
        assert await page.evaluate("document.activeElement.id") == "note"  # the cursor is back
        assert await forms.capture(page) == fields  # the page is as it was
    finally:
        await session.close()


async def test_fields_no_longer_on_the_page_are_skipped() -> None:
    session = await BrowserSession.open(UrlPolicy())
    try:
        await session.page.goto(PAGE)
        gone = [{"tag": "input", "type": "text", "name": "nope", "id": "", "nth": 0, "value": "x"}]
        assert await forms.apply(session.page, gone) == 0
    finally:
        await session.close()
