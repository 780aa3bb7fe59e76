"""The estimate of ``study run``, on the matrix study run twice (offline: scripts and recordings):
no row of the first run exceeds its method's declared bound, and on the second run, in a new
folder with the first's results given as ``--earlier``, every run's calls and tokens are within
25% of the expectation from those rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from introspect.evaluate import read_rows
from introspect.study.estimate import estimate
from introspect.study.spec import load
from tests.support.cli import ROOT, output, run_main

MATRIX = ROOT / "studies" / "matrix.toml"


def run_study(out: Path, logs: Path, name: str, *extra: str) -> int:
    """Run the matrix into ``out``; once more if a task errored (a page that did not load in
    time on a loaded machine: running the study again tries it again)."""
    status = run_main(["study", "run", str(MATRIX), "--out", str(out), *extra], logs=logs, name=name)
    if status == 1:
        status = run_main(["study", "run", str(MATRIX), "--out", str(out), *extra], logs=logs, name=f"{name}-again")
    return status


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.timeout(1500)
def test_the_matrix_keeps_to_its_bound_then_to_its_expectation(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)  # the study's model paths are relative to the checkout's root
    study = load(MATRIX)
    first, second = tmp_path / "first", tmp_path / "second"
    bounds = {run.label: estimate(run, first).bound for run in study.runs}  # nothing run yet: every task to do
    assert run_study(first, tmp_path, "first") == 0
    said, _ = output(tmp_path, "first")
    assert "no expectation yet" in said  # a real run prints its estimate before it starts
    for run in study.runs:
        bound = bounds[run.label]
        assert bound is not None, run.label  # every shipped method declares its cost structure
        rows = read_rows(first / run.results(1))
        assert len(rows) >= len(run.tasks), run.label
        per_task = bound.calls // len(run.tasks)
        for row in rows:
            assert row["model_calls"] <= per_task, (run.label, row["task_id"], row["model_calls"], per_task)
            assert row["output_tokens"] <= bound.output_tokens // len(run.tasks), (run.label, row["task_id"])

    earlier = sorted((first / "results").glob("*.jsonl"))
    given = [arg for path in earlier for arg in ("--earlier", str(path))]
    expected = {run.label: estimate(run, second, earlier).expected for run in study.runs}
    assert all(expected.values()), [label for label, e in expected.items() if e is None]
    assert run_study(second, tmp_path, "second", *given) == 0
    said, _ = output(tmp_path, "second")
    assert said.count("earlier rows of this configuration") == len(study.runs)
    for run in study.runs:
        guess = expected[run.label]
        assert guess is not None
        rows = read_rows(second / run.results(1))
        latest = {r["task_id"]: r for r in rows}
        actual = {key: sum(r[key] for r in latest.values()) for key in ("model_calls", "input_tokens", "output_tokens")}
        for key, want in (
            ("model_calls", guess.calls),
            ("input_tokens", guess.input_tokens),
            ("output_tokens", guess.output_tokens),
        ):
            assert abs(actual[key] - want) <= 0.25 * want, (run.label, key, actual[key], want)
