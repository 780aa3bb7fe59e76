"""How loaded the machine was while a benchmark ran (it is shared: say so with the figures)."""

from __future__ import annotations

import os
from typing import Any


def load_report() -> dict[str, Any]:
    """CPU count and the 1/5/15-minute load averages (runnable processes per core above 1
    mean other work competed with the benchmark)."""
    one, five, fifteen = os.getloadavg()
    return {"cpus": os.cpu_count(), "load_1m": round(one, 2), "load_5m": round(five, 2), "load_15m": round(fifteen, 2)}
