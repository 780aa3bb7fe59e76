"""Recording, replaying and keeping screenshots never block the event loop: a run records
its model calls and keeps its pages' pictures under the strict blocking-call guard
(tests.support.blocking), then replays its recording under the same guard and ends the same."""

from __future__ import annotations

import pytest

from graphs import compiled, studio_graphs
from nodes.runtime.recording import recording
from nodes.runtime.screenshots import SCREENSHOTS
from tests.support.blocking import no_blocking
from tests.support.scenarios import SCENARIOS

pytestmark = [pytest.mark.slow, pytest.mark.browser]


@pytest.mark.parametrize("method", ["laser", "devils_advocate"])
async def test_record_screenshots_and_replay_never_block(method, run_graph, tmp_path):
    scenario = SCENARIOS[method]
    compiled(*studio_graphs()[method])  # imported before the guard, as the server imports graphs at startup
    recorded = tmp_path / "run.jsonl"
    token = SCREENSHOTS.set(tmp_path / "screenshots")
    try:
        with recording(recorded), no_blocking():
            first = await run_graph(
                method,
                scenario.graph_input,
                model=scenario.write_script(tmp_path / "s.jsonl"),
                env=scenario.env,
                thread="recorded",
                **scenario.context,
            )
    finally:
        SCREENSHOTS.reset(token)
    with no_blocking():
        again = await run_graph(
            method,
            scenario.graph_input,
            model=f"replay:{recorded}",
            env=scenario.env,
            thread="replayed",
            **scenario.context,
        )
    scenario.check(again.state)
    assert again.state["trajectory"] == first.state["trajectory"]
    assert again.state["usage"]["model_calls"] == len(recorded.read_text().splitlines())
    pictures = list((tmp_path / "screenshots" / "recorded").glob("*.png"))
    assert len(pictures) == (len(first.state["trajectory"]) if method == "devils_advocate" else 0)
