"""Enough tasks to decide (introspect.study.power): the sample size of a paired comparison against
hand-computed values, the discordance measured on earlier rows, and the dry run's lines."""

from __future__ import annotations

import json
import math

import pytest

from introspect.evaluate import fingerprint
from introspect.study.power import discordance_of, tasks_needed
from introspect.study.spec import StudyError, load, parse
from tests.support.cli import output, run_main

Z_975, Z_80 = 1.959964, 0.841621  # the normal quantiles at 0.975 and 0.8, from a table


def by_hand(delta: float, psi: float) -> int:
    return math.ceil((Z_975 * math.sqrt(psi) + Z_80 * math.sqrt(psi - delta**2)) ** 2 / delta**2)


def test_the_sample_size_matches_the_formula_computed_by_hand():
    # (1.959964 * sqrt(0.2) + 0.841621 * sqrt(0.1975))^2 / 0.0025 = 625.55
    assert by_hand(0.05, 0.2) == 626 and tasks_needed(0.05, 0.2) == 626
    # (1.959964 * sqrt(0.3) + 0.841621 * sqrt(0.29))^2 / 0.01 = 233.09
    assert by_hand(0.1, 0.3) == 234 and tasks_needed(0.1, 0.3) == 234
    assert tasks_needed(0.05, 0.2, alpha=0.05 / 3) > 626  # a stricter level needs more
    with pytest.raises(ValueError):
        tasks_needed(0.3, 0.2)  # a difference larger than the discordance cannot happen


def test_discordance_is_the_share_of_shared_task_runs_whose_success_differs():
    a = [{"task_id": str(t), "success": True} for t in range(4)] + [{"task_id": "4", "repeat": 2, "success": True}]
    b = [{"task_id": str(t), "success": t < 3} for t in range(4)] + [{"task_id": "9", "success": False}]
    assert discordance_of(a, b) == (0.25, 4)  # tasks 0-3 shared (repeat 1), task 3 differs
    assert discordance_of(a, []) is None


STUDY = """name = "p"
model = "scripted:none.jsonl"
{top}
[[runs]]
method = "laser"
env = "webshop"
label = "a"
tasks = "{tasks}"

[[runs]]
method = "laser"
env = "webshop"
label = "b"
tasks = "{tasks}"
repeats = 2
settings = {{max_actions = 9}}
"""
TASKS = ",".join(f"synthetic-{i}" for i in range(10))


def test_a_dry_run_says_how_many_task_runs_the_comparison_needs(tmp_path):
    spec = tmp_path / "study.toml"
    spec.write_text(STUDY.format(top="min_detectable = 0.1\ndiscordance = 0.3", tasks=TASKS))
    out = tmp_path / "out"
    assert run_main(["study", "run", str(spec), "--out", str(out), "--dry-run"], logs=tmp_path, name="dry") == 0
    said, _ = output(tmp_path, "dry")
    assert "power: to detect a difference of 10.0 points of success (min_detectable) with power 0.8" in said
    assert "over 1 comparison(s)" in said
    assert "webshop: 234 task runs (tasks x repeats) per configuration, at a discordance of 0.30 (the study's" in said
    assert "a: 10 tasks x 1 = 10: short by 224" in said and "b: 10 tasks x 2 = 20: short by 214" in said
    assert not out.exists()

    # earlier rows of both configurations on the ten tasks: b fails three that a wins -> 0.3 measured
    study = load(spec, models=False)
    rows = [
        {"task_id": f"synthetic-{i}", "method": "laser", "env": "webshop", "model": run.context.model,
         "fingerprint": fingerprint(run.method, run.context), "success": run.label == "a" or i < 7, "error": ""}
        for run in study.runs
        for i in range(10)
    ]  # fmt: skip
    earlier = tmp_path / "earlier.jsonl"
    earlier.write_text("".join(json.dumps(r) + "\n" for r in rows))
    spec.write_text(STUDY.format(top="min_detectable = 0.1", tasks=TASKS))
    args = ["study", "run", str(spec), "--out", str(out), "--dry-run", "--earlier", str(earlier)]
    assert run_main(args, logs=tmp_path, name="measured") == 0
    said, _ = output(tmp_path, "measured")
    assert "234 task runs (tasks x repeats) per configuration, at a discordance of 0.30 (measured on 10" in said


@pytest.mark.parametrize("top", ["min_detectable = 0", "min_detectable = 1.5", 'discordance = "high"'])
def test_a_study_refuses_a_min_detectable_or_discordance_that_is_not_a_share(top):
    with pytest.raises(StudyError, match="must be a share of tasks above 0 and at most 1"):
        parse(STUDY.format(top=top, tasks="synthetic-0"), "s.toml", models=False)
