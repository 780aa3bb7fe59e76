"""The progress of a running study on stderr, as ``eval`` shows its own: one tqdm bar over
every run's and repeat's task runs (those reused from earlier sessions counted done), with
the success so far, the model calls, the cost (or tokens, for an unpriced model) and tqdm's
time left."""

from __future__ import annotations

import sys
from typing import Any

from tqdm import tqdm

from nodes.runtime.usage import add_costs


class Progress:
    def __init__(self, total: int, reused: int, name: str) -> None:
        self.bar = tqdm(total=total, desc=f"study {name}", unit="task", file=sys.stderr)
        self.bar.update(reused)
        self.ran = self.successes = self.errors = self.calls = self.tokens = 0
        self.cost: float | None = 0.0

    def row(self, row: dict[str, Any]) -> None:
        """One task's row was written."""
        self.errors += bool(row.get("error"))
        self.ran += not row.get("error")
        self.successes += bool(row.get("success"))
        self.calls += int(row.get("model_calls") or 0)
        self.tokens += int(row.get("input_tokens") or 0) + int(row.get("output_tokens") or 0)
        self.cost = add_costs(self.cost, row.get("cost_usd"))
        spent = {"cost": f"${self.cost:.4f}"} if self.cost is not None else {"tokens": self.tokens}
        success = f"{self.successes}/{self.ran}"
        self.bar.set_postfix(success=success, errors=self.errors, calls=self.calls, **spent, refresh=False)
        self.bar.update(1)

    def write(self, line: str) -> None:
        """A line above the bar."""
        self.bar.write(line, file=sys.stderr)

    def close(self) -> None:
        self.bar.close()
