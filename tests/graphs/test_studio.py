"""langgraph.json serves every graph: loaded by file path as Studio loads them, and by a
real ``langgraph dev`` server answering the LangGraph API, which runs each of them to its
result (tests.support.scenarios) with no blocking call on its event loop."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import urllib.request
from pathlib import Path

import pytest
from langgraph.graph.state import CompiledStateGraph

from graphs import studio_graphs
from introspect import generated
from tests.support.deployment import deployment
from tests.support.laser_demo import BUY_REPLIES
from tests.support.scenarios import SCENARIOS
from tests.support.studio import langgraph_dev, post

ROOT = Path(__file__).resolve().parents[2]
CONFIG = json.loads((ROOT / "langgraph.json").read_text())


def test_langgraph_json_and_the_generated_tables_are_current():
    """Run ``python -m introspect.generated`` after changing a Method or a graph."""
    assert generated.stale() == []
    assert set(CONFIG["graphs"]) == {
        "laser",
        "structured_reflection",
        "devils_advocate",
        "autoplan",
        "autoplan_training",
    }


def test_the_environment_step_is_execute_in_every_method():
    """One vocabulary: ``execute`` steps the env everywhere; ``act`` is always the model's choice."""
    from graphs import METHODS, compiled, method_named

    for name in METHODS:
        nodes = set(compiled(method_named(name), "graph").get_graph().nodes)
        assert "execute" in nodes and "step" not in nodes, name
    sr = set(compiled(method_named("sr"), "graph").get_graph().nodes)
    assert "act" not in sr and "plan" in sr  # SR's model chooses its actions in plan


@pytest.mark.parametrize("graph", sorted(CONFIG["graphs"]))
def test_studio_shows_every_graphs_input_and_output_schema(graph):
    """Studio draws a graph's input and output forms from these schemas. Pydantic builds them
    from the state classes, and below Python 3.12 it refuses ``typing.TypedDict`` (state classes
    use ``typing_extensions.TypedDict``), which left Studio on 3.11 with no form at all."""
    from graphs import compiled

    method, attribute = studio_graphs()[graph]
    compiled_graph = compiled(method, attribute)
    fields = set(compiled_graph.builder.schemas[compiled_graph.builder.state_schema])
    for schema in (compiled_graph.get_input_jsonschema(), compiled_graph.get_output_jsonschema()):
        assert schema["type"] == "object"
        assert set(schema["properties"]) <= fields and schema["properties"], graph


def test_a_stale_generated_file_is_reported(tmp_path, monkeypatch):
    readme, config = tmp_path / "README.md", tmp_path / "langgraph.json"
    readme.write_text(generated.README.read_text().replace("| **LASER**", "| **LASER (old)**"))
    config.write_text(generated.langgraph_json().replace("autoplan_training", "autoplan_train"))
    monkeypatch.setattr(generated, "README", readme)
    monkeypatch.setattr(generated, "LANGGRAPH_JSON", config)
    assert generated.stale() == [config, readme]
    assert generated.main(["--check"]) == 1
    assert generated.main([]) == 0 and generated.stale() == []
    assert "| **LASER**: state-space exploration" in readme.read_text()


@pytest.mark.parametrize("name,target", sorted(CONFIG["graphs"].items()))
def test_graph_loads_from_its_file_path(name, target):
    path, _, attr = target.partition(":")
    spec = importlib.util.spec_from_file_location(f"studio_{name}", ROOT / path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    graph = getattr(module, attr)
    assert isinstance(graph, CompiledStateGraph)
    assert graph.checkpointer is None  # the server adds its own
    # the method's own settings class (loaded again from the file, so compared by name)
    method = studio_graphs()[name][0]
    assert graph.context_schema is not None and graph.context_schema.__name__ == method.context.__name__


@pytest.fixture(scope="module", params=["langgraph dev", "introspect serve"])
def studio(request, tmp_path_factory):
    """One server for the module, of each kind: ``langgraph dev`` (in memory) and a deployment
    (``introspect serve`` on Postgres and Redis, tests.support.deployment); yields its URL and
    log file."""
    folder = tmp_path_factory.mktemp("studio")
    if request.param == "langgraph dev":
        with langgraph_dev(folder) as served:
            yield served
    else:
        with deployment(folder, workers=1) as deployed:
            yield deployed.url, deployed.workers[0].log


@pytest.mark.slow
def test_langgraph_dev_serves_every_graph(studio):
    url, _ = studio
    assistants = post(f"{url}/assistants/search", {"limit": 50})
    served = {a["graph_id"]: a["assistant_id"] for a in assistants}
    assert set(served) == set(CONFIG["graphs"])
    with urllib.request.urlopen(f"{url}/assistants/{served['laser']}/graph", timeout=5) as r:
        drawn = json.loads(r.read())
    assert {"search", "results", "item"} <= {n["id"] for n in drawn["nodes"]}


@pytest.mark.slow
@pytest.mark.browser
async def test_studio_runs_every_graph_to_its_result(studio, tmp_path):
    """Each graph runs over the LangGraph API as Studio starts a run: a thread, the graph's
    input, the Context as the run's context (a scripted model), to its final state; the
    server's blockbuster, which refuses blocking calls on its event loop, logs nothing."""
    from langgraph_sdk import get_client

    url, log = studio
    client = get_client(url=url)

    async def run(graph: str) -> tuple[str, dict, dict]:
        scenario = SCENARIOS[graph]
        spec = scenario.write_script(tmp_path / f"{graph}.jsonl")
        thread = await client.threads.create()
        final = await client.runs.wait(
            thread["thread_id"],
            graph,
            input=scenario.graph_input,
            context=scenario.context_for(spec),
            raise_error=False,
        )
        runs = await client.runs.list(thread["thread_id"])
        return graph, final, runs[0]

    results = await asyncio.gather(*(run(graph) for graph in CONFIG["graphs"]))
    text = log.read_text(errors="replace")
    assert "BlockingError" not in text and "Blocking call" not in text, text[-5000:]
    for graph, final, record in results:
        assert record["status"] == "success", (graph, final)
        SCENARIOS[graph].check(final)


@pytest.mark.slow
async def test_a_confirm_pause_is_answered_over_the_langgraph_api(studio, tmp_path):
    """Context.confirm over HTTP as Studio and langgraph-sdk see it: the run pauses before Buy
    Now with the question in the thread's interrupts; a rejection (Command resume) reaches the
    agent, which chooses Buy Now again; an approval buys."""
    from dataclasses import replace

    from langgraph_sdk import get_client

    url, log = studio
    client = get_client(url=url)
    scenario = SCENARIOS["laser"]
    again = scenario.replies[-BUY_REPLIES:]  # Buy_Now once more
    spec = replace(scenario, replies=scenario.replies + again).write_script(tmp_path / "l.jsonl")
    context = {**scenario.context_for(spec), "confirm": True}
    thread = (await client.threads.create())["thread_id"]

    async def asked() -> list[dict]:
        return (await client.threads.get_state(thread))["interrupts"]

    await client.runs.wait(thread, "laser", input=scenario.graph_input, context=context)
    first = await asked()
    assert [q["value"]["proposal"] for q in first] == ["click[Buy Now]"]
    await client.runs.wait(
        thread, "laser", command={"resume": {"decision": "reject", "reason": "not yet"}}, context=context
    )
    again = await asked()
    assert [q["value"]["proposal"] for q in again] == ["click[Buy Now]"] and again[0]["id"] != first[0]["id"]
    final = await client.runs.wait(thread, "laser", command={"resume": {"decision": "approve"}}, context=context)
    assert await asked() == []
    assert final["success"] is True and final["reward"] == 1.0
    refused = [s for s in final["trajectory"] if not s["valid"]]
    assert [s["action"] for s in refused] == ["click[Buy Now]"] and "not yet" in refused[0]["feedback"]
    assert "BlockingError" not in log.read_text(errors="replace")
