"""How long the ``introspect`` command takes to answer before it does any work.

Runs ``introspect --help`` (the installed entry point's code: ``python -m introspect.cli``) and,
for comparison, a bare ``python -c pass``, each many times in fresh processes, alternating;
reports medians and the difference (what the command itself costs), and which heavy
packages ``import introspect.cli`` pulls in (none should: the graph stack is imported by the
commands that run graphs).

Usage: .venv/bin/python benchmarks/cold_start.py [--runs 30] [--small]
Writes benchmarks/results/cold_start.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.machine import load_report, parse_args, write_report  # noqa: E402

HEAVY = ("langchain_core", "langgraph", "langsmith", "pydantic", "numpy", "openai")


def timed(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(
        command, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.DEVNULL, check=True
    )
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    args = parse_args(parser, small={"runs": 1})
    report: dict[str, object] = {"runs": args.runs, "machine_before": load_report()}
    help_s, bare_s = [], []
    for _ in range(args.runs):
        help_s.append(timed([sys.executable, "-m", "introspect.cli", "--help"]))
        bare_s.append(timed([sys.executable, "-c", "pass"]))
    probe = f"import sys, introspect.cli; print([m for m in {HEAVY!r} if m in sys.modules])"
    loaded = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    report.update(
        help_median_s=round(statistics.median(help_s), 3),
        help_p90_s=round(sorted(help_s)[int(0.9 * len(help_s))], 3),
        python_median_s=round(statistics.median(bare_s), 3),
        command_median_s=round(statistics.median(h - b for h, b in zip(help_s, bare_s)), 3),
        heavy_modules_imported=json.loads(loaded.replace("'", '"')),
    )
    report["machine_after"] = load_report()
    for key, value in report.items():
        print(f"{key:<24} {value}")
    write_report("cold_start", report, args.small)


if __name__ == "__main__":
    main()
