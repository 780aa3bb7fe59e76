"""langgraph.json serves every graph: loaded by file path as Studio loads them, and by a
real ``langgraph dev`` server answering the LangGraph API."""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from langgraph.graph.state import CompiledStateGraph

from graphs.app import generated

ROOT = Path(__file__).resolve().parents[2]
CONFIG = json.loads((ROOT / "langgraph.json").read_text())


def test_langgraph_json_and_the_readme_tables_are_generated_from_the_registry():
    """Run ``python -m graphs.app.generated`` after changing a Method or a graph."""
    assert generated.stale() == []
    assert set(CONFIG["graphs"]) == {"laser", "structured_reflection", "devils_advocate", "autoplan",
                                     "autoplan_training"}


def test_the_environment_step_is_execute_in_every_method():
    """One vocabulary: ``execute`` steps the env everywhere; ``act`` is always the model's choice."""
    from graphs import compiled, method_named

    for name in ("laser", "structured_reflection", "devils_advocate", "autoplan"):
        nodes = set(compiled(method_named(name), "graph").get_graph().nodes)
        assert "execute" in nodes and "step" not in nodes, name
    sr = set(compiled(method_named("sr"), "graph").get_graph().nodes)
    assert "act" not in sr and "plan" in sr  # SR's model chooses its actions in plan


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
    assert graph.context_schema is not None and graph.context_schema.__name__ == "Context"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _post(url: str, body: dict) -> object:
    request = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=5) as response:
        return json.loads(response.read())


@pytest.mark.slow
def test_langgraph_dev_serves_every_graph():
    cli = Path(sys.executable).with_name("langgraph")
    if not cli.exists():
        pytest.skip("langgraph-cli is not installed (pip install -e '.[studio]')")
    port = _free_port()
    env = {**os.environ, "LANGGRAPH_CLI_NO_ANALYTICS": "1", "LANGGRAPH_NO_VERSION_CHECK": "1"}
    server = subprocess.Popen([str(cli), "dev", "--no-browser", "--no-reload", "--port", str(port)], cwd=ROOT,
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 90
        assistants = None
        while time.monotonic() < deadline and assistants is None:
            try:
                assistants = _post(f"http://127.0.0.1:{port}/assistants/search", {"limit": 50})
            except OSError:
                time.sleep(1)
        assert assistants is not None, "langgraph dev did not answer"
        served = {a["graph_id"]: a["assistant_id"] for a in assistants}
        assert set(served) == set(CONFIG["graphs"])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/assistants/{served['laser']}/graph", timeout=5) as r:
            drawn = json.loads(r.read())
        assert {"search", "results", "item"} <= {n["id"] for n in drawn["nodes"]}
    finally:
        server.terminate()
        server.wait(timeout=20)
