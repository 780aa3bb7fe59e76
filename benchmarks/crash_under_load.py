"""Crash recovery under load: browser crash tests run several times in a row while CPU-bound
processes compete for the cores (issue 18: an evaluation that outlived Chromium dying twice on
an idle machine ended in task errors under a full test run).

Starts ``--burners`` processes that spin (``while True: pass``; each is ended when this ends,
and ends itself after ``--burn-limit`` seconds whatever happens), then runs pytest on the test
ids ``--runs`` times in a row, each in a fresh process, and reports each run's outcome and
wall time with the load average. Nothing is timed in the tests themselves.

Usage: .venv/bin/python benchmarks/crash_under_load.py [--runs 5] [--burners 4] [--small] [TEST_ID ...]
(default test: the evaluation that Chromium dies under twice; with --small, a MiniWoB++ step
after the page crashed, seconds). Writes
benchmarks/results/crash_under_load.json; exits 1 if a run failed.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.machine import load_report, parse_args, write_report  # noqa: E402

DEFAULT_TESTS = ["tests/graphs/test_eval_chromium_crashes.py::test_an_evaluation_outlives_chromium_dying_twice"]
# small: a browser crash test of seconds (the default one is a minute, and CI runs it anyway)
SMALL_TESTS = ["tests/envs/test_browser_faults.py::test_miniwob_step_after_the_page_crashed_rebuilds_the_episode"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tests", nargs="*", default=DEFAULT_TESTS)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--burners", type=int, default=4, help="CPU-bound processes competing meanwhile")
    parser.add_argument("--burn-limit", type=float, default=1800.0, help="seconds after which a burner ends itself")
    args = parse_args(parser, small={"tests": SMALL_TESTS, "runs": 1, "burners": 1, "burn_limit": 5.0})
    burn = f"import time\nend = time.monotonic() + {args.burn_limit}\nwhile time.monotonic() < end: pass"
    burners = [subprocess.Popen([sys.executable, "-c", burn]) for _ in range(args.burners)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    command = [sys.executable, "-m", "pytest", *args.tests, "-q", "-p", "no:cacheprovider", "--timeout", "900"]
    runs = []
    try:
        time.sleep(2.0)  # the burners get going before the first run
        for n in range(1, args.runs + 1):
            started = time.perf_counter()
            done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
            last = (done.stdout.strip().splitlines() or [""])[-1]
            runs.append(
                {
                    "run": n,
                    "passed": done.returncode == 0,
                    "seconds": round(time.perf_counter() - started, 1),
                    "pytest": last,
                    "machine": load_report(),
                }
            )
            print(f"run {n}: {'passed' if done.returncode == 0 else 'FAILED'} ({last})", flush=True)
            if done.returncode != 0:
                print(done.stdout[-4000:], flush=True)
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
    passed = all(r["passed"] for r in runs)
    write_report(
        "crash_under_load",
        {"command": " ".join(command), "burners": args.burners, "runs": runs, "all_passed": passed},
        args.small,
    )
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
