"""What the study layer costs over plain ``eval``: the shipped matrix study (studies/matrix.toml,
17 method x env cells offline) run as one ``introspect study run``, against the same runs as a
hand-written series of ``introspect eval`` commands followed by ``introspect report`` and
``introspect view`` over their files (what the study does for you), each as its own process.

Measured: wall time of each side (the eval series also without its report and pages),
the peak memory of the largest process on each side (``ru_maxrss`` of the child), and the
size of the study folder by part (checkpoints, results, journal, report, views). Both
sides start from nothing (fresh folders and checkpoint files). Alternated ``--runs`` times
(the order swapped each time) on a shared machine; medians reported.

Usage: .venv/bin/python benchmarks/study_overhead.py [--runs 1]
Writes benchmarks/results/study_overhead.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.machine import load_report, write_report  # noqa: E402

MATRIX = ROOT / "studies" / "matrix.toml"


def child(args: list[str], home: Path) -> tuple[float, int]:
    """``introspect ARGS`` from the checkout's root: its wall seconds and peak RSS in MiB."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "INTROSPECT_HOME": str(home)}
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "graphs.app.cli", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        error = process.stderr.read().decode(errors="replace") if process.stderr else ""
        raise SystemExit(f"introspect {' '.join(args[:3])} exited {process.returncode}: {error[-400:]}")
    return seconds, usage.ru_maxrss // 1024


def eval_commands(folder: Path) -> list[list[str]]:
    """The study's runs as ``eval`` commands, each into its own results file."""
    from graphs.app.study.spec import load

    commands = []
    for run in load(MATRIX).runs:
        given = run.given
        args = ["eval", run.method.name, "--env", run.context.env, "--model", run.context.model]
        args += ["--tasks", ",".join(run.tasks), "--concurrency", str(run.concurrency)]
        args += ["--results", str(folder / f"{run.label}.jsonl")]
        args += ["--checkpoint", f"sqlite:///{folder / 'checkpoints.sqlite'}"]
        for key, value in given.get("settings", {}).items():
            args += ["--set", f"{key}={json.dumps(value)}"]
        for key, value in given.get("env_options", {}).items():
            args += ["--env-option", f"{key}={value}"]
        commands.append(args)
    return commands


def plain(work: Path) -> dict[str, Any]:
    """The matrix as eval commands, then report and view over their files."""
    folder = work / "plain"
    folder.mkdir()
    evals = [child(args, work / "home-plain") for args in eval_commands(folder)]
    files = sorted(str(p) for p in folder.glob("*.jsonl"))
    report = child(["report", *files, "--markdown", str(folder / "report.md"), "--plots", str(folder)], work)
    views = [
        child(["view", f, "--out", str(folder / "views" / Path(f).stem), "--checkpoint", evals_db(folder)], work)
        for f in files
    ]
    eval_seconds = sum(s for s, _ in evals)
    return {
        "eval_seconds": round(eval_seconds, 2),
        "seconds": round(eval_seconds + report[0] + sum(s for s, _ in views), 2),
        "peak_rss_mib": max(m for _, m in [*evals, report, *views]),
        "processes": len(evals) + 1 + len(views),
    }


def evals_db(folder: Path) -> str:
    return f"sqlite:///{folder / 'checkpoints.sqlite'}"


def study(work: Path) -> dict[str, Any]:
    """The matrix as one study; and its folder's size by part."""
    out = work / "study"
    seconds, peak = child(["study", "run", str(MATRIX.relative_to(ROOT)), "--out", str(out)], work / "home-study")
    return {"seconds": round(seconds, 2), "peak_rss_mib": peak, "folder_bytes": sizes(out)}


def sizes(folder: Path) -> dict[str, int]:
    """Bytes of each part of a study folder, and in all."""
    parts = {}
    for part in sorted(folder.iterdir()):
        files = [part] if part.is_file() else [p for p in part.rglob("*") if p.is_file()]
        parts[part.name] = sum(p.stat().st_size for p in files)
    parts["total"] = sum(parts.values())
    return parts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    before = load_report()
    measured: dict[str, list[dict[str, Any]]] = {"plain": [], "study": []}
    for number in range(args.runs):
        order = [("plain", plain), ("study", study)]
        for name, measure in order if number % 2 == 0 else order[::-1]:
            with tempfile.TemporaryDirectory() as work:
                measured[name].append(measure(Path(work)))
                print(name, measured[name][-1], flush=True)

    def median(side: str, key: str) -> float:
        return statistics.median(float(m[key]) for m in measured[side])

    report: dict[str, Any] = {
        "cells": len(eval_commands(Path("/nonexistent"))),
        "runs": args.runs,
        "plain_eval_seconds": median("plain", "eval_seconds"),
        "plain_eval_report_view_seconds": median("plain", "seconds"),
        "study_seconds": median("study", "seconds"),
        "plain_peak_rss_mib": median("plain", "peak_rss_mib"),
        "study_peak_rss_mib": median("study", "peak_rss_mib"),
        "study_folder_bytes": measured["study"][-1]["folder_bytes"],
        "measured": measured,
        "machine_before": before,
    }
    report["study_overhead_seconds"] = round(report["study_seconds"] - report["plain_eval_report_view_seconds"], 2)
    for key in ("plain_eval_seconds", "plain_eval_report_view_seconds", "study_seconds", "study_overhead_seconds"):
        print(f"{key:32} {report[key]}")
    print(f"peak RSS (MiB): plain {report['plain_peak_rss_mib']}, study {report['study_peak_rss_mib']}")
    print(f"study folder: {json.dumps(report['study_folder_bytes'])}")
    write_report("study_overhead", report)


if __name__ == "__main__":
    main()
