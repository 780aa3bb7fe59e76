"""The report's table of ``introspect ablate``'s rows (introspect.report.ablation): per method,
env and intervention, success with and without it paired by run, and what it added."""

from __future__ import annotations

import json

import pytest

from introspect.report.ablation import ablation_tables, read_ablations
from introspect.report.load import ReportInputError


def row(n: int, was: bool, now: bool, *, count: int = 1, error: str = "") -> dict:
    outcome = {"reward": 0.0, "model_calls": 0, "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0}
    return {
        "thread_id": f"t{n}",
        "task_id": str(n),
        "method": "laser",
        "env": "webshop",
        "intervention": "backup",
        "count": count,
        "fired": 2,
        "error": error,
        "with": {**outcome, "success": was, "reward": float(was), "model_calls": 10, "cost_usd": 0.01},
        "without": {**outcome, "success": now, "reward": float(now), "model_calls": 7, "cost_usd": 0.004},
    }


def test_success_with_and_without_paired_by_run_and_the_cost_it_added(tmp_path):
    rows = [row(n, True, n < 3) for n in range(10)] + [row(0, True, True, count=2), row(10, True, False, error="x")]
    path = tmp_path / "ablations.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + '{"thread_id": "t1', encoding="utf-8")  # torn
    [table] = ablation_tables(read_ablations(path))
    assert table.title == "LASER: what each intervention earned (counterfactual ablation)"
    [cells] = table.rows
    named = dict(zip(table.columns, cells))
    assert named["runs it happened in"] == "11" and named["times per run"] == "2.0"
    assert named["success % with"] == "100.0" and named["success % without"] == "30.0"  # the 10 that ran
    assert named["with - without (points) [95% CI]"].startswith("+70.0 [")
    assert float(named["p"]) < 0.05  # 7 runs of 10 lost their success, none gained one
    assert named["calls added"] == "3.0" and named["cost added"] == "$+0.0060" and named["forks errored"] == "1"


def test_a_file_that_is_not_ablations_is_refused(tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_text(json.dumps({"task_id": "1", "method": "laser", "success": True}) + "\n", encoding="utf-8")
    with pytest.raises(ReportInputError, match="line 1 is not a row of `introspect ablate`"):
        read_ablations(path)
