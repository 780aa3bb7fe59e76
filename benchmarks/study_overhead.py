"""What the study layer costs over plain ``eval``: the shipped matrix study (studies/matrix.toml,
17 method x env cells offline) run as one ``introspect study run``, against the same runs

- ``inline``: as the evaluation alone, every run's ``evaluate`` one after another in one process
  with one checkpoint file (the study minus its layer: spec checks, journal, metering, report
  and pages): the study's overhead is ``study - inline``;
- ``plain``: as a user writes it today, a series of ``introspect eval`` commands followed by
  ``introspect report`` and ``introspect view`` over their files, each its own process.

Measured: wall time of each (``plain`` also without its report and pages), the peak memory of
the largest process (``ru_maxrss`` of the child), and the size of the study folder by part
(checkpoints, results, journal, report, views). Each starts from nothing (fresh folders and
checkpoint files). Alternated ``--runs`` times (the order rotated each time) on a shared
machine; medians reported.

``--cells N`` takes the matrix's first N runs only.

Usage: .venv/bin/python benchmarks/study_overhead.py [--runs 3] [--cells 17] [--small]
Writes benchmarks/results/study_overhead.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.machine import load_report, parse_args, write_report  # noqa: E402

MATRIX = ROOT / "studies" / "matrix.toml"
RUNS_TABLE = "\n[[runs]]\n"


def write_spec(work: Path, cells: int | None) -> Path:
    """The matrix with its first ``cells`` runs (all: None) as WORK/matrix.toml, which every
    variant reads (its paths are the checkout's, relative: the commands run from its root)."""
    head, *runs = MATRIX.read_text(encoding="utf-8").split(RUNS_TABLE)
    spec = work / "matrix.toml"
    spec.write_text(RUNS_TABLE.join([head, *runs[:cells]]), encoding="utf-8")
    return spec


def child(args: list[str], home: Path, program: list[str] | None = None) -> tuple[float, int]:
    """``introspect ARGS`` (or ``program ARGS``) from the checkout's root: its wall seconds and
    peak RSS in MiB."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "INTROSPECT_HOME": str(home)}
    started = time.perf_counter()
    process = subprocess.Popen(
        [*(program or [sys.executable, "-m", "introspect.cli"]), *args],
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


def eval_commands(spec: Path, folder: Path) -> list[list[str]]:
    """The study's runs as ``eval`` commands, each into its own results file."""
    from introspect.study.spec import load

    commands = []
    for run in load(spec).runs:
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
    evals = [child(args, work / "home-plain") for args in eval_commands(work / "matrix.toml", folder)]
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


def inline(work: Path) -> dict[str, Any]:
    """Every run's evaluation in one child process (``--inline`` below)."""
    folder = work / "inline"
    seconds, peak = child_python(["--inline", str(folder)], work / "home-inline")
    return {"seconds": round(seconds, 2), "peak_rss_mib": peak}


def child_python(args: list[str], home: Path) -> tuple[float, int]:
    """This script with ``args`` in a child process: its wall seconds and peak RSS in MiB."""
    return child(args, home, [sys.executable, str(Path(__file__).resolve())])


async def evaluate_inline(folder: Path) -> None:
    """The matrix's runs through ``evaluate`` alone, as the study runs them, without the study."""
    from introspect.checkpoint import open_checkpointer
    from introspect.evaluate import evaluate
    from introspect.study.spec import load

    folder.mkdir(parents=True)
    async with open_checkpointer(f"sqlite:///{folder / 'checkpoints.sqlite'}") as saver:
        for run in load(folder.parent / "matrix.toml").runs:
            results = folder / f"{run.label}.jsonl"
            await evaluate(run.method, run.context, run.tasks, results, saver, run.concurrency)


def evals_db(folder: Path) -> str:
    return f"sqlite:///{folder / 'checkpoints.sqlite'}"


def study(work: Path) -> dict[str, Any]:
    """The matrix as one study; and its folder's size by part."""
    out = work / "study"
    seconds, peak = child(["study", "run", str(work / "matrix.toml"), "--out", str(out)], work / "home-study")
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
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", help="comma-separated variants (default study,inline,plain)")
    parser.add_argument("--cells", type=int, help="the matrix's first N runs (default all)")
    parser.add_argument("--inline", metavar="DIR", help=argparse.SUPPRESS)  # the inline variant's child
    args = parse_args(parser, small={"runs": 1, "cells": 1})
    if args.inline:
        asyncio.run(evaluate_inline(Path(args.inline)))
        return
    before = load_report()
    variants: list[tuple[str, Callable[[Path], dict[str, Any]]]] = [
        ("study", study),
        ("inline", inline),
        ("plain", plain),
    ]
    if args.only:
        variants = [(name, measure) for name, measure in variants if name in args.only.split(",")]
    measured: dict[str, list[dict[str, Any]]] = {name: [] for name, _ in variants}
    for number in range(args.runs):
        for name, measure in variants[number % len(variants) :] + variants[: number % len(variants)]:
            with tempfile.TemporaryDirectory() as work:
                write_spec(Path(work), args.cells)
                measured[name].append(measure(Path(work)))
                print(name, measured[name][-1], flush=True)

    def median(side: str, key: str) -> float | None:
        return statistics.median(float(m[key]) for m in measured[side]) if measured.get(side) else None

    report: dict[str, Any] = {
        "cells": args.cells or len(eval_commands(MATRIX, Path("/nonexistent"))),
        "runs": args.runs,
        "study_seconds": median("study", "seconds"),
        "study_peak_rss_mib": median("study", "peak_rss_mib"),
        "inline_seconds": median("inline", "seconds"),
        "inline_peak_rss_mib": median("inline", "peak_rss_mib"),
        "plain_eval_seconds": median("plain", "eval_seconds"),
        "plain_eval_report_view_seconds": median("plain", "seconds"),
        "plain_peak_rss_mib": median("plain", "peak_rss_mib"),
        "study_folder_bytes": measured["study"][-1]["folder_bytes"] if measured.get("study") else None,
        "measured": measured,
        "machine_before": before,
    }
    if measured.get("study") and measured.get("inline"):
        overheads = [s["seconds"] - i["seconds"] for s, i in zip(measured["study"], measured["inline"])]
        report["study_overhead_seconds_paired_median"] = round(statistics.median(overheads), 2)
    for key, value in report.items():
        if key not in ("measured", "machine_before"):
            print(f"{key:36} {json.dumps(value)}")
    write_report("study_overhead", report, args.small)


if __name__ == "__main__":
    main()
