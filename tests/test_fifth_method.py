"""A fifth method is its own modules plus one registry entry: the ReAct loop of
tests/support/react_method (its graph, prompts, view structures and report table, none of it in
the app), registered by an ``introspect.methods`` entry point of an installed distribution
(tests.support.entry_points), runs from the CLI in a child process, is listed by ``introspect
graphs``, loads as Studio loads a graph, with its Context's schema, gets its own structures in
``introspect view`` and its own table in ``introspect report``. Without the entry point nothing
knows it, and a broken entry point is one line naming it, exit 2."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from graphs import METHODS, registry
from introspect import generated, reference
from tests.support.cli import ROOT, child_env, run_cli
from tests.support.entry_points import install_methods

MODULE = "tests.support.react_method.graph"
REPLIES = [
    "Thought: search for the pillow.\nAction: search[Ambesonne Abstract Throw Pillow Cushion Cover]",
    "Thought: B0743JKHBV matches the goal.\nAction: click[B0743JKHBV]",
    'Thought: the size the user wants.\nAction: click[28" x 28"]',
    "Thought: everything matches, buy it.\nAction: click[Buy Now]",
]


@pytest.fixture
def react(monkeypatch, tmp_path):
    """The ReAct method installed for this test only."""
    install_methods(monkeypatch, tmp_path / "site", react=MODULE)


def script(folder: Path) -> str:
    path = folder / "react.jsonl"
    path.write_text("".join(json.dumps({"content": r}) + "\n" for r in REPLIES), encoding="utf-8")
    return f"scripted:{path}"


def test_a_fifth_method_runs_views_and_reports_without_app_code(react, capsys, tmp_path):
    db, model = f"sqlite:///{tmp_path / 'runs.sqlite'}", script(tmp_path)
    run = ["run", "react", "--env", "webshop", "--task", "synthetic-0", "--model", model, "--thread", "r1"]
    child = subprocess.run(  # the entry point reaches a child process: its distribution is on its path
        [sys.executable, "-m", "introspect.cli", *run, "--checkpoint", db],
        cwd=tmp_path,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert child.returncode == 0, child.stderr
    assert "method: react" in child.stdout and "think       everything matches, buy it." in child.stdout
    assert "finished: success=True reward=1.000 steps=4 model_calls=4" in child.stdout

    code, out, err = run_cli(capsys, "graphs")
    assert code == 0 and "react  envs: webshop  nodes: start, think, execute, finish  settings: max_actions=10" in out

    code, out, err = run_cli(capsys, "view", "r1", "--checkpoint", db, "--out", str(tmp_path / "views"))
    assert code == 0, err
    page = (tmp_path / "views" / "r1.html").read_text()
    assert page.count("<section class='step'") == 4
    assert page.count("<summary>thoughts so far</summary>") == 4  # its own structure on every step
    assert "<td>B0743JKHBV matches the goal.</td>" in page
    assert page.count("<details class='call'>") == 4 and "not recorded" not in page  # model_node kept each call

    results = tmp_path / "results.jsonl"
    code, out, err = run_cli(
        capsys, "eval", "react", "--tasks", "synthetic-0", "--model", model, "--results", str(results)
    )
    assert code == 0, err
    assert json.loads(results.read_text())["thoughts"] == 4  # its result fields in the row
    code, out, err = run_cli(capsys, "report", str(results))
    assert code == 0, err
    table = out.split("ReAct: thoughts per purchase", 1)[1]
    assert "#1 react webshop       1       100.0        4.0" in table


def test_studio_serves_the_fifth_method_s_graph_and_schemas(react):
    target = json.loads(generated.langgraph_json())["graphs"]["react"]
    assert target == "./tests/support/react_method/graph.py:graph"
    path, _, attribute = target.partition(":")
    spec = importlib.util.spec_from_file_location("studio_react", ROOT / path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # as `langgraph dev` loads a graph: by file path
    graph = getattr(module, attribute)
    assert graph.checkpointer is None  # the server adds its own
    fields = graph.get_context_jsonschema()["properties"]  # Studio's form: the method's own settings class
    assert {"model", "env", "max_actions"} <= set(fields) and fields["max_actions"]["default"] == 10
    assert "remedies" not in fields and "backup" not in fields
    assert {"task_id", "thoughts", "success"} <= set(graph.builder.channels)  # its state, input and output
    assert '??? note "`step`"' in reference.prompts("react")  # its own prompt folder, documented


def test_the_installed_method_follows_the_shipped_ones_in_the_registry(react):
    assert registry() == {**METHODS, "react": MODULE}


def test_without_its_entry_point_nothing_knows_the_fifth_method(capsys):
    code, out, err = run_cli(capsys, "run", "react", "--task", "synthetic-0")
    assert code == 2 and err.startswith("introspect: unknown method 'react'")
    assert "react" not in json.loads(generated.langgraph_json())["graphs"]


@pytest.mark.parametrize(
    "value,message",
    [
        (
            "tests.support.no_such_module",
            "entry point react = 'tests.support.no_such_module' (introspect.methods): "
            "no module 'tests.support.no_such_module'",
        ),
        (
            "tests.support.broken_method",
            "entry point react = 'tests.support.broken_method' (introspect.methods): its module "
            "'tests.support.broken_method' cannot be imported: No module named 'a_package_nobody_installed'",
        ),
        (
            "tests.support.cli",
            "entry point react = 'tests.support.cli' (introspect.methods): "
            "module 'tests.support.cli' declares no METHOD",
        ),
        (
            "tests.support.react_method.graph:graph",
            "entry point react = 'tests.support.react_method.graph:graph' (introspect.methods): "
            "its value names the module that declares METHOD, not 'graph'",
        ),
    ],
)
def test_a_broken_entry_point_is_one_line_naming_it_exit_2(capsys, monkeypatch, tmp_path, value, message):
    install_methods(monkeypatch, tmp_path, react=value)
    code, out, err = run_cli(capsys, "run", "react", "--task", "synthetic-0")
    lines = err.strip().splitlines()
    assert code == 2 and lines == [f"introspect: {message}"], err
