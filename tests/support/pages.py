"""A page the project writes (a viewer page, a report's index), opened in Chromium as a person
would open the file, with every request that would leave the file refused and recorded."""

from __future__ import annotations

from pathlib import Path
from typing import Any


async def opened(page_file: Path, script: str, picture: Path | None = None) -> dict[str, Any]:
    """Open ``page_file`` offline and run ``script`` (a function of the page's document) there;
    ``seen``: what it returns, ``asked``: the requests that left the file (refused). With
    ``picture``, a full-page screenshot is saved there first."""
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        try:
            page = await browser.new_page(viewport={"width": 1300, "height": 900})
            asked: list[str] = []

            async def refuse(route: Any) -> None:
                if route.request.url.startswith(("file:", "data:")):
                    await route.continue_()
                else:
                    asked.append(route.request.url)
                    await route.abort()

            await page.route("**/*", refuse)
            await page.goto(page_file.as_uri())
            if picture is not None:
                await page.screenshot(path=str(picture), full_page=True)
            return {"seen": await page.evaluate(script), "asked": asked}
        finally:
            await browser.close()
