"""How loaded the machine was while a benchmark ran (it is shared: say so with the figures)."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

# where the JSON goes: benchmarks/results/, or INTROSPECT_BENCH_RESULTS (the tests' small runs write to a tmp folder)
RESULTS = Path(os.environ.get("INTROSPECT_BENCH_RESULTS") or Path(__file__).resolve().parent / "results")


def load_report() -> dict[str, Any]:
    """CPU count and the 1/5/15-minute load averages (runnable processes per core above 1
    mean other work competed with the benchmark)."""
    one, five, fifteen = os.getloadavg()
    return {"cpus": os.cpu_count(), "load_1m": round(one, 2), "load_5m": round(five, 2), "load_15m": round(fifteen, 2)}


def parse_args(parser: argparse.ArgumentParser, small: dict[str, Any]) -> argparse.Namespace:
    """The command line, with every benchmark's ``--small``: the same code on the smallest
    counts (``small``, the options' values in small mode; options given still win), so that CI
    runs each benchmark in seconds and a benchmark the code broke fails there (its figures mean
    nothing)."""
    parser.add_argument("--small", action="store_true", help="seconds, not minutes: the smallest counts (CI)")
    args = parser.parse_args()
    if args.small:
        parser.set_defaults(**small)
        args = parser.parse_args()
    return args


def write_report(name: str, report: dict[str, Any], small: bool = False) -> Path:
    """Write ``report`` to benchmarks/results/NAME.json (NAME_small.json for a ``--small`` run,
    which leaves a real run's figures alone), with the load after the run (unless the
    benchmark already took it)."""
    report.setdefault("machine_after", load_report())
    report["small"] = small
    out = RESULTS / f"{name}{'_small' if small else ''}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {out}")
    return out
