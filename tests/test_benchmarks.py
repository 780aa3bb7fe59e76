"""The benchmarks run: each in its small mode (``--small``), as a subprocess, so that a benchmark
the code broke fails CI (issue 27). Their figures are not checked here: timing belongs to the
benchmarks, not the tests.

The scripts are found, not listed: every ``benchmarks/*.py`` that runs as a program except the
modules the benchmarks share, so a new benchmark runs here from the day it is added (and fails
here if it has no ``--small``)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.deployment import need_deployment

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 400  # seconds a small run may take on a loaded machine (then it is killed with what it started)
SHARED = {"machine", "replay", "workloads"}  # imported by the benchmarks, not benchmarks themselves
SCRIPTS = sorted(
    path.stem
    for path in (ROOT / "benchmarks").glob("*.py")
    if path.stem not in SHARED and 'if __name__ == "__main__":' in path.read_text(encoding="utf-8")
)
# what a small run needs beyond the base install (every one takes more than a few seconds)
NEEDS = {
    "checkpoint_growth": [pytest.mark.browser],  # Structured Reflection's workload is on MiniWoB++
    "concurrency": [pytest.mark.browser],
    "crash_under_load": [pytest.mark.browser],
    "local_model": [pytest.mark.local],
    "miniwob_env": [pytest.mark.browser],
    "study_overhead": [pytest.mark.browser],
}


def test_the_benchmarks_are_found() -> None:
    """The discovery sees the scripts (a change to the guard it looks for would empty it)."""
    assert {"orchestration", "cold_start", "checkpoint_growth"} <= set(SCRIPTS)


@pytest.mark.slow
@pytest.mark.timeout(LIMIT + 20)  # a loaded machine: deployment's small run starts three servers (2 min idle)
@pytest.mark.parametrize(
    "name",
    # each a group of its own: pytest-xdist spreads them over its workers (tests/conftest.py)
    [
        pytest.param(name, marks=[*NEEDS.get(name, []), pytest.mark.xdist_group(f"benchmark-{name}")])
        for name in SCRIPTS
    ],
)
def test_a_benchmark_runs_small(name: str, tmp_path: Path) -> None:
    """``benchmarks/NAME.py --small`` ends with exit 0 and writes its report (NAME_small.json)."""
    if name == "deployment":
        need_deployment()  # Postgres and Redis, as the deployment tests need them
    env = {**os.environ, "INTROSPECT_BENCH_RESULTS": str(tmp_path), "INTROSPECT_HOME": str(tmp_path / "home")}
    env["INTROSPECT_LOCAL_THREADS"] = "1"  # the embedded model's (local_model.py): the cores are shared
    # in a session of its own, so that a benchmark past its time goes with everything it started
    # (a deployment's servers, a model server) instead of leaving them running on the machine
    with subprocess.Popen(
        [sys.executable, f"benchmarks/{name}.py", "--small"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    ) as running:
        try:
            out, err = running.communicate(timeout=LIMIT)  # under the test's own, so a hung one shows its output
        except subprocess.TimeoutExpired:
            os.killpg(running.pid, signal.SIGKILL)
            out, err = running.communicate()
            pytest.fail(f"benchmarks/{name}.py --small ran past {LIMIT} s:\n{out[-2000:]}{err[-3000:]}")
    assert running.returncode == 0, out[-2000:] + err[-3000:]
    report = json.loads((tmp_path / f"{name}_small.json").read_text(encoding="utf-8"))
    assert report["small"] is True
