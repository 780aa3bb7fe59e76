"""API keys never reach what a run leaves behind. Each method runs through the ``introspect``
command with ChatOpenAI against the local stub and a distinctive key, in a directory of its
own (INTROSPECT_HOME, results, stdout and stderr there): an ``eval`` meeting retried faults,
a ``run`` whose server refuses the key and echoes it in its error (as some servers do), and a
``run`` in a child process SIGKILLed mid-episode (its SQLite write-ahead log is left on disk). Then every file
under that directory is searched for the key and the Authorization header's value."""

from __future__ import annotations

import os
import signal

import pytest

from graphs import METHODS
from tests.conftest import STUB_KEY
from tests.support.artefacts import files_under, leaks
from tests.support.cli import child_env, output, run_main, spawn, wait_for_lines
from tests.support.openai_stub import Faults, Reply
from tests.support.scenarios import SCENARIOS

MODEL = ["--model", "openai:gpt-4o-mini", "--set", "timeout=2"]


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.parametrize("method", list(METHODS))
def test_no_artefact_of_a_run_holds_the_key(method, openai_stub, tmp_path, monkeypatch):
    scenario = SCENARIOS[method]
    run_dir = tmp_path / "run"
    logs = run_dir / "logs"
    run_dir.mkdir()
    monkeypatch.chdir(run_dir)
    monkeypatch.setenv("INTROSPECT_HOME", str(run_dir / ".introspect"))
    plan = []
    if "plan" in scenario.context:
        (run_dir / "plan.txt").write_text(scenario.context["plan"])
        plan = ["--plan", "plan.txt"]

    openai_stub.faults = Faults(rate=0.3, seed=1, timeout_s=3)
    openai_stub.replies.extend(scenario.stub_replies())
    code = run_main(
        [
            "eval",
            method,
            "--env",
            scenario.env,
            "--tasks",
            scenario.graph_input["task_id"],
            *MODEL,
            *plan,
            "--record",
            "recording.jsonl",
        ],
        logs=logs,
        name="eval",
    )
    assert code == 0, output(logs, "eval")
    assert openai_stub.faults.injected  # retry notices were printed
    results = next((run_dir / "results").glob("*.jsonl"))  # its pages in the viewer
    assert run_main(["view", str(results), "--out", "views"], logs=logs, name="view") == 0, output(logs, "view")

    openai_stub.faults = None
    openai_stub.replies[:] = [
        Reply(status=401, error=f"Incorrect API key provided: {STUB_KEY}. You sent 'Authorization: Bearer {STUB_KEY}'.")
    ]
    code = run_main(
        [
            "run",
            method,
            "--env",
            scenario.env,
            "--task",
            scenario.graph_input["task_id"],
            *MODEL,
            *plan,
            "--thread",
            "refused",
        ],
        logs=logs,
        name="refused",
    )
    assert code == 1, output(logs, "refused")
    assert "401" in output(logs, "refused")[1]

    openai_stub.replies[:] = [
        Reply(content=r.content, tool_calls=r.tool_calls, delay=0.3) for r in scenario.stub_replies()
    ]
    killed = spawn(
        [
            "run",
            method,
            "--env",
            scenario.env,
            "--task",
            scenario.graph_input["task_id"],
            *MODEL,
            *plan,
            "--thread",
            "killed",
        ],
        cwd=run_dir,
        env=child_env(),
        logs=logs,
        name="killed",
    )
    wait_for_lines(killed, logs / "killed.out", 3)
    os.kill(killed.pid, signal.SIGKILL)
    killed.wait(timeout=30)

    names = {p.name for p in files_under(run_dir)}
    assert {"checkpoints.sqlite", "checkpoints.sqlite-wal", "eval.out", "eval.err", "refused.err"} <= names, names
    assert {"recording.jsonl", "index.html"} <= names, names  # the model exchanges, the viewer's pages
    assert {h.get("authorization") for h in openai_stub.headers} == {f"Bearer {STUB_KEY}"}  # the key was used
    assert leaks(run_dir, [STUB_KEY, f"Bearer {STUB_KEY}"]) == []
