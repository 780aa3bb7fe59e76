"""``introspect eval`` of every method through the real ChatOpenAI client against the local
stub, with 30% of requests failing (429, 500, 503, timeouts, dropped connections; seeded):
every run completes as the same run does without faults, and its results row reports each
retry."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from graphs import METHODS
from introspect.cli import main
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


def test_a_results_write_error_mid_run_stops_the_run_in_one_line(tmp_path):
    """A file size limit (RLIMIT_FSIZE: a write error as a full disk gives one) fails the
    first row's write: the run stops there with one line, exit 2, no traceback."""
    import resource

    from tests.support.cli import child_env
    from tests.support.laser_demo import write_demo_script

    script = write_demo_script(tmp_path / "demo.jsonl")

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (2000, 2000))

    args = ["eval", "laser", "--concurrency", "1", "--model", script, "--checkpoint", "memory"]
    env = child_env(PYTHONDONTWRITEBYTECODE="1", INTROSPECT_HOME=str(tmp_path / "home"))
    warm = [sys.executable, "-m", "introspect.cli", *args, "--tasks", "0:1", "--results", "warm.jsonl"]
    subprocess.run(warm, cwd=tmp_path, env=env, capture_output=True, timeout=300, check=True)  # the env's caches
    done = subprocess.run(
        [sys.executable, "-m", "introspect.cli", *args, "--tasks", "0:4", "--results", "r.jsonl"],
        cwd=tmp_path,
        env=env,
        preexec_fn=limit,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    *_, bar, last, end = done.stderr.split("\n")
    assert last.startswith("introspect: cannot write results file r.jsonl: File too large; the run stopped")
    # the error has a line of its own: the bar's line (tqdm redraws it after "\r") ended before it
    assert "laser on " in bar and "%|" in bar and "\r" not in last and end == "", done.stderr[-2000:]
    assert "4 of 4 tasks to run" in done.stderr
