"""Nothing a graph does blocks the event loop: every graph Studio serves runs its scenario
(tests.support.scenarios: the four demos on their real envs, AutoPlan training on HotpotQA)
under a blocking-call guard stricter than LangGraph's server (file reads count), and every
method graph is stopped after two steps and continued, so an env rebuilt from its snapshot
(what resume and Studio's forks do) is covered too. The scripted model reads its file, the
prompts are rendered, envs are made, reset, stepped, snapshotted and restored, all with the
guard on."""

from __future__ import annotations

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from graphs import compiled, studio_graphs
from tests.support.blocking import no_blocking
from tests.support.scenarios import GRAPH_IDS, SCENARIOS

pytestmark = [pytest.mark.slow, pytest.mark.browser]


class Stop(Exception):
    pass


@pytest.mark.parametrize("graph", GRAPH_IDS)
async def test_graph_never_blocks_the_event_loop(graph, run_graph, tmp_path):
    scenario = SCENARIOS[graph]
    method, attribute = studio_graphs()[graph]
    compiled(method, attribute)  # imported before the guard, as the server imports graphs at startup
    spec = scenario.write_script(tmp_path / "script.jsonl")
    saver = InMemorySaver()
    steps: list[str] = []

    def stop_after_two(node: str, update: dict) -> None:
        steps.append(node)
        if len(steps) == 2:
            raise Stop

    with no_blocking():
        if attribute == "graph":
            with pytest.raises(Stop):
                await run_graph(
                    graph,
                    scenario.graph_input,
                    model=spec,
                    env=scenario.env,
                    checkpointer=saver,
                    thread="guarded",
                    on_update=stop_after_two,
                    **scenario.context,
                )
            outcome = await run_graph(
                graph, None, model=spec, env=scenario.env, checkpointer=saver, thread="guarded", **scenario.context
            )
        else:
            outcome = await run_graph(
                graph,
                scenario.graph_input,
                model=spec,
                env=scenario.env,
                checkpointer=saver,
                thread="guarded",
                **scenario.context,
            )
    assert outcome.finished
    scenario.check(outcome.state)
    assert len(steps) in (0, 2)
