"""The ReAct test method's report: one table of success and thoughts per purchase."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from nodes.report import Config, Table, mean, number, percent, rate


def tables(mine: list[Config], training: Mapping[str, dict[str, Any]] | None = None) -> list[Table]:
    table = Table("ReAct: thoughts per purchase", ["configuration", "tasks", "success %", "thoughts"])
    for c in mine:
        thoughts = number(mean([float(r.get("thoughts") or 0) for r in c.ran]), 1)
        table.rows.append([c.label, str(len(c.ran)), percent(rate(c.ran)), thoughts])
    return [table]
