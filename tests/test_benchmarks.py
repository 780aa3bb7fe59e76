"""The benchmarks run: each in a small mode, as a subprocess, so a benchmark the code broke fails
CI (issue 27). Their figures are not checked here: timing belongs to the benchmarks, not the tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow  # about 12 s: the workload is recorded once, then each variant runs once
def test_orchestration_runs_laser_to_its_end(tmp_path: Path) -> None:
    """LASER's workload ran out of replies at call 65 once its customisation step existed."""
    env = {**os.environ, "INTROSPECT_BENCH_RESULTS": str(tmp_path), "INTROSPECT_HOME": str(tmp_path / "home")}
    done = subprocess.run(
        [sys.executable, "benchmarks/orchestration.py", "--runs", "1", "--only", "laser"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads((tmp_path / "orchestration.json").read_text())
    assert report["laser"]["steps"] > 30
