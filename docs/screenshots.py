"""Take the docs' pictures of the report, its pages and the viewer again, from this code, offline.

    python docs/screenshots.py            (from the checkout's root; rewrites docs/images/)

It runs what docs/reports.md and docs/viewer.md describe, with scripted models (no key, no
network): the report study (three runs on WebShop, two repeats: LASER with its demo's replies as
a script on the demo's task, Devil's Advocate and Structured Reflection with the script that
gives up, their limits at their smallest, on that task and one more), a study of two LASER runs
of the demo's task (the second stopped after two actions) compared with ``introspect view
--compare``, the Devil's Advocate demo with screenshots, the shipped matrix study
(studies/matrix.toml) for docs/studies.md, and for docs/papers.md the LASER paper study on three
tasks with the script that gives up standing in for its model. Then it opens the pages in headless
Chromium (Debian's ``chromium`` through playwright) with every request but ``file://`` refused,
fails if a page asked for anything, and saves the pictures at the sizes the docs show; the
report's figures are copied as the report drew them. ``--keep DIR`` keeps the studies and pages.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IMAGES = ROOT / "docs" / "images"
WIDTH = 1300  # the width of the page pictures of reports.md and viewer.md
HEIGHT = 900
STUDY_WIDTH = 1100  # and of studies.md

REPORT_STUDY = """\
name = "report"
repeats = 2
concurrency = 1

[[runs]]
method = "devils_advocate"
env = "webshop"
tasks = "synthetic-0,synthetic-1"
model = "scripted:studies/giveup.jsonl"
label = "da-giveup"
settings = {max_episodes = 1, max_actions = 2}

[[runs]]
method = "laser"
env = "webshop"
tasks = "synthetic-0"
model = "scripted:introspect/demos/laser.jsonl"
label = "laser-demo"

[[runs]]
method = "structured_reflection"
env = "webshop"
tasks = "synthetic-0,synthetic-1"
model = "scripted:studies/giveup.jsonl"
label = "sr-giveup"
settings = {max_trials = 1, max_actions = 2}
"""

COMPARE_STUDY = """\
name = "compare"
model = "scripted:introspect/demos/laser.jsonl"

[[runs]]
method = "laser"
env = "webshop"
tasks = "synthetic-0"
label = "whole"

[[runs]]
method = "laser"
env = "webshop"
tasks = "synthetic-0"
label = "short"
settings = {max_actions = 2}
"""

# the LASER paper study as docs/papers.md pictures it: offline, three tasks, two actions
PAPER_CHANGES = [
    ('model = "openai:gpt-4-0613"', 'model = "scripted:studies/giveup.jsonl"'),
    ("max_actions = 15", "max_actions = 2"),
    ('split = "test"', 'split = "test"\ntasks = "0:3"'),
]

# the report's figures of WebShop, under the names the docs give them
FIGURES = {
    "comparison_webshop.png": "report-comparison.png",
    "cost_success_webshop.png": "report-cost_success.png",
    "sr_trials_webshop.png": "report-sr_trials.png",
    "laser_transitions_webshop.png": "report-laser_transitions.png",
}


def introspect(work: Path, *args: str) -> str:
    """Run ``introspect ARGS`` from the checkout (the specs' paths are relative to it), with its
    home in ``work``; its output, or exit with it on a failure."""
    env = {**os.environ, "INTROSPECT_HOME": str(work / "home")}
    done = subprocess.run(
        [sys.executable, "-m", "introspect.cli", *args], cwd=ROOT, env=env, capture_output=True, text=True
    )
    if done.returncode != 0:
        sys.exit(f"introspect {' '.join(args)} failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    return done.stdout


def study(work: Path, name: str, spec: str) -> Path:
    """Run the study ``spec`` into ``work/name``; its folder."""
    (work / f"{name}.toml").write_text(spec, encoding="utf-8")
    introspect(work, "study", "run", str(work / f"{name}.toml"), "--out", str(work / name))
    return work / name


def written(output: str) -> Path:
    """The page ``introspect view`` says it wrote."""
    found = re.search(r"^wrote (.+)$", output, re.MULTILINE)
    if found is None:
        sys.exit(f"introspect view named no page:\n{output}")
    return Path(found.group(1))


def pages(work: Path) -> dict[str, Path]:
    """Every page to picture, made by the commands the docs name."""
    report = study(work, "report", REPORT_STUDY)
    for figure, image in FIGURES.items():
        shutil.copyfile(report / "report" / figure, IMAGES / image)
    compared = study(work, "compare", COMPARE_STUDY)
    results = compared / "results"
    whole_short = written(
        introspect(
            work,
            "view",
            "--compare",
            str(results / "whole.r1.jsonl"),
            str(results / "short.r1.jsonl"),
            "--task",
            "synthetic-0",
            "--out",
            str(work / "compare-views"),
        )
    )
    demo = introspect(work, "demo", "devils_advocate", "--checkpoint", "sqlite", "--screenshots")
    thread = re.search(r"^thread: (\S+)$", demo, re.MULTILINE)
    if thread is None:
        sys.exit(f"the demo named no thread:\n{demo}")
    viewer = written(introspect(work, "view", thread.group(1), "--out", str(work / "demo-views")))
    (da_vs_laser,) = (report / "views" / "compare").glob("*devils_advocate*synthetic-0-vs-*laser*.html")
    matrix = study(work, "matrix", (ROOT / "studies" / "matrix.toml").read_text(encoding="utf-8"))
    shutil.copyfile(matrix / "report" / "comparison_webshop.png", IMAGES / "study-matrix-comparison.png")
    (laser,) = (
        path for path in (matrix / "views" / "laser-webshop-demo.r1").glob("*.html") if path.name != "index.html"
    )
    paper = (ROOT / "studies" / "papers" / "laser-webshop.toml").read_text(encoding="utf-8")
    for shipped, offline in PAPER_CHANGES:
        if shipped not in paper:
            sys.exit(f"studies/papers/laser-webshop.toml no longer says {shipped}: update PAPER_CHANGES")
        paper = paper.replace(shipped, offline)
    papers = study(work, "paper", paper)
    return {
        "index": report / "report" / "index.html",
        "da_vs_laser": da_vs_laser,
        "whole_short": whole_short,
        "viewer": viewer,
        "matrix": matrix / "report" / "index.html",
        "laser": laser,
        "paper": papers / "report" / "index.html",
    }


def pictures(found: dict[str, Path]) -> None:
    """Open each page offline in headless Chromium and save its pictures into docs/images/."""
    sys.path.insert(0, str(ROOT))
    from playwright.sync_api import Route, sync_playwright

    from envs.browser import chromium_path

    asked: list[str] = []

    def refuse(route: Route) -> None:
        if route.request.url.startswith("file:"):
            route.continue_()
        else:
            asked.append(route.request.url)
            route.abort()

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), headless=True)
        page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
        page.route("**/*", refuse)

        page.goto(found["index"].as_uri())
        page.screenshot(path=IMAGES / "report-index.png")
        tasks = page.locator("h2", has_text="Tasks: their runs and comparisons")
        tasks.scroll_into_view_if_needed()
        top = tasks.bounding_box()
        table = page.locator("h2 ~ h3", has_text="Tasks on webshop").locator("xpath=following::table[1]")
        bottom = table.bounding_box()
        assert top is not None and bottom is not None
        y = top["y"] - 16
        page.screenshot(
            path=IMAGES / "report-tasks.png",
            clip={"x": 0, "y": y, "width": WIDTH, "height": bottom["y"] + bottom["height"] + 12 - y},
        )

        page.goto(found["da_vs_laser"].as_uri())
        page.screenshot(path=IMAGES / "report-compare.png")

        page.goto(found["whole_short"].as_uri())
        page.screenshot(path=IMAGES / "viewer-compare.png")
        page.click("p.difference a")  # the jump the page offers to the first difference
        page.evaluate("window.scrollBy(0, -24)")  # a margin above the outlined row
        page.screenshot(path=IMAGES / "viewer-compare-difference.png")

        page.goto(found["viewer"].as_uri())
        page.locator("details.calls").first.evaluate("element => element.open = true")
        page.locator("details.call").first.evaluate("element => element.open = true")
        page.screenshot(path=IMAGES / "viewer-devils-advocate.png", full_page=True)

        page.set_viewport_size({"width": STUDY_WIDTH, "height": HEIGHT})
        page.goto(found["matrix"].as_uri())
        page.screenshot(path=IMAGES / "study-index.png")
        page.goto(found["laser"].as_uri())
        page.locator("details.calls").first.evaluate("element => element.open = true")
        for call in page.locator("details.calls").first.locator("details.call").all():
            call.evaluate("element => element.open = true")
        page.screenshot(path=IMAGES / "study-viewer-calls.png")

        page.set_viewport_size({"width": WIDTH, "height": 820})
        page.goto(found["paper"].as_uri())
        page.screenshot(path=IMAGES / "papers-report-index.png")
        browser.close()
    if asked:
        sys.exit("the pages asked for what they should not (refused):\n" + "\n".join(asked))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", metavar="DIR", help="make the studies and pages in DIR and keep them")
    args = parser.parse_args()
    if args.keep:
        work = Path(args.keep).resolve()
        work.mkdir(parents=True, exist_ok=True)
        pictures(pages(work))
    else:
        with tempfile.TemporaryDirectory(prefix="introspect-screenshots-") as folder:
            pictures(pages(Path(folder)))
    print(f"pictures in {IMAGES.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
