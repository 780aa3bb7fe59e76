"""``introspect view``: a real run's page, opened in Chromium with every network request
refused (the page must stand alone), shows its steps, the Devil's Advocate backtrack and
the screenshots the run kept (``--screenshots``); a results file gets an index page."""

from __future__ import annotations

import asyncio
import json

import pytest

from graphs.app.cli import main
from tests.support.laser_demo import write_demo_script


def cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


async def rendered(page_file, picture) -> dict:
    """What a person sees in the page: counted in the DOM of Chromium's rendering."""
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        try:
            page = await browser.new_page(viewport={"width": 1300, "height": 900})
            asked: list[str] = []

            async def refuse(route):
                if not route.request.url.startswith(("file:", "data:")):
                    asked.append(route.request.url)
                    await route.abort()
                else:
                    await route.continue_()

            await page.route("**/*", refuse)
            await page.goto(page_file.as_uri())
            await page.screenshot(path=str(picture), full_page=True)
            seen = await page.evaluate("""() => ({
                steps: [...document.querySelectorAll('section.step h2')].map(h => h.innerText),
                actions: [...document.querySelectorAll('section.step .action')].map(a => a.innerText),
                backtracks: [...document.querySelectorAll('.mark.backtrack')].map(m => m.innerText),
                shots: [...document.querySelectorAll('img.shot')].map(i => [i.naturalWidth, i.naturalHeight]),
                stack: [...document.querySelectorAll('summary')].filter(s => s.innerText.startsWith('stack')).length,
            })""")
            return {**seen, "asked": asked}
        finally:
            await browser.close()


@pytest.mark.browser
def test_a_devils_advocate_run_page_shows_its_steps_backtrack_and_screenshots(tmp_path):
    db = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    assert main(["demo", "devils_advocate", "--checkpoint", db, "--screenshots"]) == 0
    pictures = sorted((tmp_path / "screenshots").glob("*/*.png"))
    assert len(pictures) == 3  # one per executed step, beside the checkpoint database
    thread = pictures[0].parent.name
    assert main(["view", thread, "--out", str(tmp_path / "views"), "--checkpoint", db]) == 0
    page_file = tmp_path / "views" / f"{thread}.html"

    seen = asyncio.run(rendered(page_file, tmp_path / "page.png"))
    assert seen["asked"] == []  # nothing outside the file
    assert [" ".join(s.split()) for s in seen["steps"]] == [
        "Step 1 (execute) reward 0.00",
        "Step 2 (execute) reward 0.00",
        "Step 3 (complete) reward 1.00",
    ]
    assert seen["actions"][:2] == ["click [36]", "click [44]"]
    [backtrack] = seen["backtracks"]
    assert "backtrack (episode 1): back to http://127.0.0.1:" in backtrack and "to try click [39]" in backtrack
    assert len(seen["shots"]) == 3 and all(w > 100 and h > 100 for w, h in seen["shots"])  # decoded pictures
    assert seen["stack"] == 3
    assert (tmp_path / "page.png").stat().st_size > 10_000


def test_a_results_file_gets_an_index_linking_each_run(capsys, tmp_path):
    db, results = f"sqlite:///{tmp_path / 'runs.sqlite'}", tmp_path / "results.jsonl"
    code, _, err = cli(
        capsys,
        "eval",
        "laser",
        "--tasks",
        "synthetic-0,synthetic-1",
        "--results",
        str(results),
        "--model",
        write_demo_script(tmp_path / "script.jsonl"),
        "--checkpoint",
        db,
    )
    assert code == 0, err
    code, _, err = cli(capsys, "view", str(results), "--out", str(tmp_path / "views"), "--checkpoint", db)
    assert code == 0, err
    index = (tmp_path / "views" / "index.html").read_text()
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    for row in rows:
        page = tmp_path / "views" / f"{row['thread_id']}.html"
        assert f"href='{page.name}'>{row['task_id']}</a>" in index
        text = page.read_text()
        assert "state path" in text and "search -&gt; results -&gt; item" in text  # LASER's own structure
        assert text.count("<section class='step'") == row["steps"]


@pytest.mark.parametrize(
    "target,message",
    [
        ("nope", "no checkpointed thread 'nope'"),
        ("missing.jsonl", "no results file missing.jsonl"),
    ],
)
def test_bad_view_input_is_one_line(capsys, tmp_path, target, message):
    code, _, err = cli(
        capsys,
        "view",
        target,
        "--checkpoint",
        f"sqlite:///{tmp_path / 'runs.sqlite'}",
        "--out",
        str(tmp_path / "views"),
    )
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "views").exists()
