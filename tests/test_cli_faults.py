"""``introspect eval`` of every method through the real ChatOpenAI client against the local
stub, with 30% of requests failing (429, 500, 503, timeouts, dropped connections; seeded):
every run completes as the same run does without faults, and its results row reports each
retry."""

from __future__ import annotations

import json

import pytest

from graphs import METHODS
from graphs.app.cli import main
from tests.support.openai_stub import Faults
from tests.support.scenarios import SCENARIOS

CLIENT_TIMEOUT = 2.0  # seconds; an injected timeout holds its request for longer


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.parametrize("method", METHODS)
def test_every_run_completes_under_faults_and_reports_its_retries(method, openai_stub, tmp_path, capsys):
    scenario = SCENARIOS[method]
    openai_stub.replies.extend(scenario.stub_replies())
    openai_stub.faults = Faults(rate=0.3, seed=list(METHODS).index(method), timeout_s=CLIENT_TIMEOUT + 1)
    results = tmp_path / "results.jsonl"
    args = [
        "eval",
        method,
        "--env",
        scenario.env,
        "--tasks",
        scenario.graph_input["task_id"],
        "--model",
        "openai:gpt-4o-mini",
        "--set",
        f"timeout={CLIENT_TIMEOUT}",
        "--set",
        "retries=4",
        "--results",
        str(results),
        "--checkpoint",
        "memory",
    ]
    if "plan" in scenario.context:
        plan = tmp_path / "plan.txt"
        plan.write_text(scenario.context["plan"])
        args += ["--plan", str(plan)]

    code = main(args)
    err = capsys.readouterr().err

    injected = openai_stub.faults.injected
    assert code == 0, err
    [row] = [json.loads(line) for line in results.read_text().splitlines()]
    assert row["error"] in (None, ""), row["error"]
    assert row["success"] is True and row["reward"] == 1.0
    assert row["model_calls"] == len(scenario.replies)  # each answer used once: no call repeated or lost
    assert row["retries"] == len(injected) > 0
    assert err.count("retrying after ") == len(injected)  # each shown live, with its cause
    for kind in injected:
        assert f"retrying after {kind if kind.isdigit() else 'a timeout or dropped connection'}, attempt" in err
    assert not openai_stub.replies  # every scripted answer was asked for


def test_the_methods_runs_meet_every_kind_of_fault():
    """The seeds above inject each kind somewhere (the schedule depends only on the seed and
    the order of requests, so this is what the runs meet)."""
    met = set()
    for seed, method in enumerate(METHODS):
        faults, answered = Faults(rate=0.3, seed=seed), 0
        while answered < len(SCENARIOS[method].replies):
            answered += faults.draw() is None
        assert faults.injected, method
        met.update(faults.injected)
    assert met == {"429", "500", "503", "timeout", "drop"}
