"""The calibration of the methods' own verdicts (introspect.report.calibration) on hand-built
rows, each figure computed here by hand: agreement, the Brier score, the reliability bins, the
report's table and its reliability diagram."""

from __future__ import annotations

from typing import Any

import pytest

from introspect.report import write_report
from introspect.report.calibration import Judged, agreement, brier, calibration_table, judged, reliability
from introspect.report.load import configurations
from tests.graphs.test_report_tables import cells, row, write


def verdict(kind: str, says: bool, graded: float | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": kind, "value": "YES" if says else "NO", "says": says, "node": "complete"}
    return out if graded is None else {**out, "graded": graded}


DA_ROWS = [
    # task_done said YES on a success and on a failure, NO on a failure: 2 of 3 agree
    row("1", "devils_advocate", "webarena", success=True, reward=1.0, verdicts=[verdict("task_done", True)]),
    row("2", "devils_advocate", "webarena", verdicts=[verdict("task_done", True), verdict("task_done", False)]),
    # subtask_done, graded: 0.25 and 0.75 on a success, 0.5 on a failure
    row("3", "devils_advocate", "webarena", success=True, verdicts=[verdict("subtask_done", True, 0.25)]),
    row("3b", "devils_advocate", "webarena", success=True, verdicts=[verdict("subtask_done", True, 0.75)]),
    row("4", "devils_advocate", "webarena", verdicts=[verdict("subtask_done", True, 0.5)]),
    row("5", "devils_advocate", "webarena"),  # a run without verdicts: left out
]


def test_agreement_and_brier_by_hand():
    found = judged(DA_ROWS, "task_done")
    assert found == [Judged(True, 1.0, True, 1.0), Judged(True, 1.0, False), Judged(False, 0.0, False)]
    assert agreement(found) == pytest.approx(2 / 3)
    assert brier(found) == pytest.approx((0 + 1 + 0) / 3)  # yes/no: 1 - agreement
    graded = judged(DA_ROWS, "subtask_done")
    assert [v.predicted for v in graded] == [0.25, 0.75, 0.5]
    assert agreement(graded) == pytest.approx(2 / 3)  # says success on two successes and one failure
    assert brier(graded) == pytest.approx((0.75**2 + 0.25**2 + 0.5**2) / 3)
    assert agreement([]) is None and brier([]) is None


def test_reliability_bins_by_hand():
    verdicts = [Judged(True, p, o) for p, o in [(0.1, False), (0.15, True), (0.5, False), (0.9, True), (1.0, True)]]
    bins = reliability(verdicts, bins=5)  # [0, .2), [.2, .4), [.4, .6), [.6, .8), [.8, 1]
    assert [(round(b.predicted, 3), b.observed, b.count) for b in bins] == [
        (0.125, 0.5, 2),
        (0.5, 0.0, 1),
        (0.95, 1.0, 2),
    ]


def test_the_report_shows_the_calibration_table_and_a_reliability_diagram(tmp_path):
    results = write(tmp_path / "r.jsonl", DA_ROWS)
    table = calibration_table(configurations([results]))
    assert table is not None
    assert cells(table, "devils_advocate|task_done")[2:8] == ["3", "2", "66.7", "66.7", "0.333", "0.500 / 0.000"]
    graded = cells(table, "devils_advocate|subtask_done (graded)")
    assert graded[2:8] == ["3", "3", "100.0", "66.7", "0.292", "0.000 / -"]  # no verdict said failure
    page = write_report([results], tmp_path / "report")
    assert (tmp_path / "report" / "reliability_devils_advocate.png").stat().st_size > 0
    assert "Calibration of the methods' own verdicts" in (page.parent / "report.md").read_text()


def test_no_table_without_verdicts(tmp_path):
    old = [{k: v for k, v in r.items() if k != "verdicts"} for r in DA_ROWS]  # rows from before verdicts
    assert calibration_table(configurations([write(tmp_path / "r.jsonl", old)])) is None
