"""An evaluation of browser tasks that Chromium dies under twice ends as if it had not: every
task finished, none an error, each row what an undisturbed evaluation writes. (The second
crash comes two seconds after the tasks relaunched the browser; on a loaded machine it lands in
the reruns of the first crash's calls, which the crash guard runs again too: envs/browser/crash.py.
``benchmarks/crash_under_load.py`` runs this test with CPU-bound processes competing.)

Six Structured Reflection tasks on MiniWoB++ run at once, as ``introspect eval --concurrency 6``
runs them, on the one shared Chromium; the scripted model answers after a delay, so pages are
open, loading or being acted on when the browser is killed.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from envs import browser
from graphs import method_named
from introspect.evaluate import evaluate, read_rows
from nodes.sr.context import SRContext
from tests.support.chromium import kill_chromium

pytestmark = pytest.mark.browser

TASKS = [f"click-button/{seed}" for seed in range(6)]
COMPARED = ("task_id", "reward", "success", "steps", "model_calls", "error")


async def evaluate_with_kills(tmp_path: Path, kills: int) -> list[dict[str, object]]:
    script = tmp_path / "script.jsonl"
    reply = {"content": "click id=999", "delay": 0.4}  # refused: each trial ends, reflected, replayed
    script.write_text("\n".join(json.dumps(reply) for _ in range(20)) + "\n", encoding="utf-8")
    context = SRContext(model=f"scripted:{script}", env="miniwob", max_trials=3)
    results = tmp_path / f"results-{kills}.jsonl"
    running = asyncio.ensure_future(
        evaluate(method_named("structured_reflection"), context, TASKS, results, InMemorySaver(), 6)
    )
    await asyncio.sleep(1.0)
    for _ in range(kills):
        assert not running.done(), "the evaluation ended before Chromium could be killed under it"
        launches = browser.launch_count()
        await kill_chromium(await browser.get_browser())
        while browser.launch_count() == launches and not running.done():
            await asyncio.sleep(0.05)
        await asyncio.sleep(2.0)  # the next crash comes after the tasks relaunched it and went on
    summary = await asyncio.wait_for(running, 120)
    assert not summary.errors
    return sorted(read_rows(results), key=lambda row: str(row["task_id"]))


async def test_an_evaluation_outlives_chromium_dying_twice(tmp_path: Path) -> None:
    calm = await evaluate_with_kills(tmp_path, 0)
    launches = browser.launch_count()
    shaken = await evaluate_with_kills(tmp_path, 2)
    assert browser.launch_count() == launches + 2
    assert [{k: row.get(k) for k in COMPARED} for row in shaken] == [{k: row.get(k) for k in COMPARED} for row in calm]
    assert all(row["steps"] == 3 and row["model_calls"] for row in calm)  # three trials each, all run
