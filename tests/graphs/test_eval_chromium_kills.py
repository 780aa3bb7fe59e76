"""An evaluation that Chromium is killed under at random points, in every kind of env call
(reset, step, the page read after them, snapshot, restore, screenshot), ends with the rows an
undisturbed evaluation writes: no error row, the same outcome, steps and model calls.

One MiniWoB++ task (Structured Reflection: a failed trial, a reflection, a replayed second trial)
and one WebArena task on the local shop (Devil's Advocate: a wrong click, a backtrack), each
with screenshots kept. ``RandomKills`` (tests.support.chromium) kills Chromium once in each
phase, just before a seeded random Playwright call of it, so the kills land on page reads,
clicks, context openings and screenshots alike, and two of them can land in one env call and
its rerun.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from envs import browser
from envs.base import env_class
from graphs import method_named
from introspect.evaluate import evaluate, read_rows
from nodes.runtime.screenshots import SCREENSHOTS
from tests.support.chromium import RandomKills
from tests.support.scenarios import CHECKBOXES, SCENARIOS, Scenario

pytestmark = pytest.mark.browser

# What differs between any two evaluations: a row's wall time, its run's thread, and the model
# (each evaluation reads its own copy of the script; a scripted model is read once per file), which
# the provenance names too.
VARYING = ("seconds", "thread_id", "model", "fingerprint", "provenance")
# each scenario's undisturbed evaluation, run once for both seeds (the file runs on one worker)
CALM: dict[str, tuple[list[dict[str, object]], list[str]]] = {}


async def evaluated(scenario: Scenario, folder: Path) -> tuple[list[dict[str, object]], list[str]]:
    """The rows of an evaluation of the scenario's task, and the screenshots it kept."""
    folder.mkdir()
    spec = scenario.write_script(folder / "script.jsonl")
    context = scenario.settings(spec)
    shots = folder / "screenshots"
    token = SCREENSHOTS.set(shots)
    try:
        task = str(scenario.graph_input["task_id"])
        summary = await evaluate(
            method_named(scenario.method), context, [task], folder / "results.jsonl", InMemorySaver(), 1
        )
    finally:
        SCREENSHOTS.reset(token)
    assert not summary.errors
    rows = [{k: v for k, v in row.items() if k not in VARYING} for row in read_rows(folder / "results.jsonl")]
    return rows, sorted(p.name for p in shots.rglob("*.png"))


@pytest.mark.parametrize(
    ("scenario", "phases"),
    [
        (CHECKBOXES, ("reset", "step", "observe", "screenshot")),
        (SCENARIOS["devils_advocate"], ("reset", "step", "observe", "snapshot", "restore", "screenshot")),
    ],
    ids=["miniwob", "webarena"],
)
@pytest.mark.parametrize("seed", [1, 5])
async def test_an_evaluation_outlives_chromium_killed_at_random_points(
    scenario: Scenario, phases: tuple[str, ...], seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if (key := f"{scenario.method} on {scenario.env}") not in CALM:
        CALM[key] = await evaluated(scenario, tmp_path / "calm")
    calm, calm_shots = CALM[key]
    kills = RandomKills(seed, phases)
    kills.install(monkeypatch, env_class(scenario.env))
    launches = browser.launch_count()
    shaken, shaken_shots = await evaluated(scenario, tmp_path / "shaken")
    assert sorted({phase for phase, _ in kills.killed}) == sorted(phases), kills.killed
    assert browser.launch_count() >= launches + len(phases)  # every kill was outlived by a relaunch
    assert shaken == calm and not calm[0]["error"] and calm[0]["success"]
    assert shaken_shots == calm_shots and calm_shots  # a picture after every step, as undisturbed
