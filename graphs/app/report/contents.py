"""What a report holds, in the order it is shown."""

from __future__ import annotations

from typing import Any

from graphs.app.report import autoplan, da, laser, sr
from graphs.app.report.load import Config
from graphs.app.report.tables import (
    Table,
    comparisons,
    configurations_table,
    failures,
    runs,
)


def report_tables(configs: list[Config], training: dict[str, dict[str, Any]]) -> list[Table]:
    """The configurations and their runs, the side-by-side comparison (several configurations), each method's paper
    tables, then the failures."""
    tables = [configurations_table(configs), runs(configs), *comparisons(configs)]
    tables += sr.tables(configs) + da.tables(configs) + laser.tables(configs) + autoplan.tables(configs, training)
    return [*tables, failures(configs)]
