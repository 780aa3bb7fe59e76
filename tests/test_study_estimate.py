"""The estimate of ``study run``, on the matrix study run twice (offline: scripts and recordings):
no row of the first run exceeds its method's declared bound, and on the second run, in a new
folder with the first's results given as ``--earlier``, every run's calls and tokens are within
25% of the expectation from those rows. CI runs five of its cells, each method's and both kinds
of run with a baseline arm, none in a browser; the whole matrix is long (pytest --long)."""

from __future__ import annotations

from pathlib import Path

import pytest

from introspect.evaluate import read_rows
from introspect.study.estimate import estimate
from introspect.study.spec import load
from tests.support.cli import ROOT, output, run_main

MATRIX = ROOT / "studies" / "matrix.toml"
# the matrix's runs CI estimates (1-based, in file order): LASER's WebShop demo replayed, SR on
# WebShop, Devil's Advocate on WebShop and on HotpotQA (each with its equal-cost baseline arm),
# AutoPlan on WebShop
CELLS = (1, 3, 8, 12, 13)


def matrix_of(cells: tuple[int, ...] | None, folder: Path) -> Path:
    """The matrix study, or a copy in ``folder`` with only its runs ``cells``."""
    if cells is None:
        return MATRIX
    head, *runs = MATRIX.read_text(encoding="utf-8").split("[[runs]]")
    kept = [runs[cell - 1] for cell in cells]
    spec = folder / "matrix-cells.toml"
    spec.write_text(head + "".join("[[runs]]" + run for run in kept), encoding="utf-8")
    return spec


def run_study(study: Path, out: Path, logs: Path, name: str, *extra: str) -> int:
    """Run the matrix into ``out``; once more if a task errored (a page that did not load in
    time on a loaded machine: running the study again tries it again)."""
    status = run_main(["study", "run", str(study), "--out", str(out), *extra], logs=logs, name=name)
    if status == 1:
        status = run_main(["study", "run", str(study), "--out", str(out), *extra], logs=logs, name=f"{name}-again")
    return status


@pytest.mark.slow
@pytest.mark.timeout(1500)
@pytest.mark.parametrize("cells", [CELLS, pytest.param(None, marks=[pytest.mark.long, pytest.mark.browser])])
def test_the_matrix_keeps_to_its_bound_then_to_its_expectation(cells, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)  # the study's model paths are relative to the checkout's root
    spec = matrix_of(cells, tmp_path)
    study = load(spec)
    first, second = tmp_path / "first", tmp_path / "second"
    bounds = {run.label: estimate(run, first).bound for run in study.runs}  # nothing run yet: every task to do
    assert run_study(spec, first, tmp_path, "first") == 0
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
    assert run_study(spec, second, tmp_path, "second", *given) == 0
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
