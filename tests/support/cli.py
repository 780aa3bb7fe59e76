"""The ``introspect`` command for tests that kill it or read what it left: in a child
process or in this one, its stdout and stderr written to files (so they can be grepped
afterwards); a test can wait until a child has printed some lines before acting."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def child_env(**extra: str) -> dict[str, str]:
    """This environment with this checkout first on the path and unbuffered output."""
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path, "PYTHONUNBUFFERED": "1", **extra}


def spawn(args: list[str], *, cwd: Path, env: dict[str, str], logs: Path, name: str) -> subprocess.Popen:
    """Start ``introspect ARGS``; its output goes to ``logs/NAME.out`` and ``logs/NAME.err``."""
    logs.mkdir(parents=True, exist_ok=True)
    with (logs / f"{name}.out").open("wb") as out, (logs / f"{name}.err").open("wb") as err:
        return subprocess.Popen(
            [sys.executable, "-m", "introspect.cli", *args], cwd=cwd, env=env, stdout=out, stderr=err
        )


def run_cli(capsys: Any, *args: str) -> tuple[int, str, str]:
    """``introspect ARGS`` in this process: its exit status (argparse's usage errors too) and
    what it printed, as pytest's ``capsys`` caught it."""
    from introspect.cli import main

    try:
        code = main(list(args))
    except SystemExit as exc:  # argparse's usage errors and --help
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def run_main(args: list[str], *, logs: Path, name: str) -> int:
    """``introspect ARGS`` in this process (faster than a child), its stdout and stderr
    written to ``logs/NAME.out`` and ``logs/NAME.err`` as a child's would be."""
    from introspect.cli import main

    logs.mkdir(parents=True, exist_ok=True)
    with (
        (logs / f"{name}.out").open("w") as out,
        (logs / f"{name}.err").open("w") as err,
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        return main(args)


def output(logs: Path, name: str) -> tuple[str, str]:
    return ((logs / f"{name}.out").read_text(errors="replace"), (logs / f"{name}.err").read_text(errors="replace"))


def ended(child: subprocess.Popen[bytes], logs: Path, name: str, timeout: float = 180) -> int:
    """``child``'s exit status, once it ends (its output in the assertion if it hangs)."""
    try:
        return child.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        child.kill()
        raise AssertionError(f"{name} did not end in {timeout} s: {output(logs, name)}") from None


def wait_for_lines(process: subprocess.Popen, path: Path, lines: int, timeout: float = 200.0) -> int:
    """Wait until ``path`` holds at least ``lines`` lines (or the process ended); returns the
    count seen."""
    deadline = time.monotonic() + timeout
    seen = 0
    while time.monotonic() < deadline:
        seen = path.read_text(errors="replace").count("\n") if path.exists() else 0
        if seen >= lines or process.poll() is not None:
            return seen
        time.sleep(0.01)
    raise TimeoutError(f"{path} had {seen} of {lines} lines after {timeout} s")


def children(pid: int) -> list[int]:
    """The pids of ``pid``'s child processes (none once it has ended)."""
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except FileNotFoundError:
        return []
    return [int(child) for child in text.split()]


def descendants(pid: int) -> list[int]:
    """The pids of every process under ``pid`` (children, their children, ...)."""
    found = children(pid)
    return [*found, *(grandchild for child in found for grandchild in descendants(child))]


def command_line(pid: int) -> list[str]:
    """A process's arguments ([] once it has ended)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except (FileNotFoundError, ProcessLookupError):
        return []


def wait_gone(pid: int, timeout: float = 60.0) -> None:
    """Wait until process ``pid`` (not necessarily a child) has exited and its files are closed.
    A zombie is not enough: the leader of a killed multi-threaded process is a zombie while its
    other threads are still closing the files they share."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if not os.listdir(f"/proc/{pid}/fd"):
                return
        except OSError:  # gone, or a zombie's (closed) files
            return
        time.sleep(0.02)
    raise TimeoutError(f"process {pid} still holds its files after {timeout} s")
