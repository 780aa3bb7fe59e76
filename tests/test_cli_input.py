"""Bad input to the ``introspect`` command: one line on stderr and exit 2, before any step
runs and with nothing written (no checkpoint database, no results file, no directory)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from graphs.app.cli import main
from tests.support.laser_demo import DEMO, ROOT, write_demo_script

TASK = DEMO["task_id"]


def tree(root: Path) -> dict[str, str]:
    """Every file and directory under ``root`` with a hash of its bytes."""
    return {
        str(p.relative_to(root)): hashlib.sha1(p.read_bytes()).hexdigest() if p.is_file() else "dir"
        for p in sorted(root.rglob("*"))
    }


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """A current directory holding a valid script, a corrupt database, a plain file and a
    directory; INTROSPECT_HOME inside it."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("INTROSPECT_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("INTROSPECT_CHECKPOINT", raising=False)
    write_demo_script(tmp_path / "script.jsonl")
    (tmp_path / "corrupt.sqlite").write_bytes(b"this is not a database\n" * 200)
    (tmp_path / "afile").write_text("a plain file\n")
    (tmp_path / "adir").mkdir()
    return tmp_path


MODEL = ["--model", "scripted:script.jsonl"]
RUN = ["run", "laser", "--task", TASK, *MODEL]
EVAL = ["eval", "laser", "--tasks", TASK, *MODEL]

CASES = {
    "set not an integer": (
        RUN + ["--set", "max_actions=abc"],
        "max_actions='abc' is not allowed: expected an integer >= 1",
    ),
    "set below the minimum": (RUN + ["--set", "max_actions=-3"], "max_actions=-3 is not allowed"),
    "set of another method": (
        EVAL + ["--set", "remedies=3", "--set", "planning=iterative"],
        "laser has no setting 'remedies'; its settings: backup, detail_text, max_actions, tool_mode; shared: model,",
    ),
    "set not a choice": (
        RUN + ["--set", "tool_mode=bogus"],
        "tool_mode='bogus' is not allowed: expected one of tools, json",
    ),
    "negative max tokens": (RUN + ["--max-tokens", "-5"], "max_tokens=-5 is not allowed: expected an integer >= 1"),
    "negative temperature": (EVAL + ["--temperature", "-1"], "temperature=-1.0 is not allowed"),
    "unknown provider": (
        ["run", "laser", "--task", TASK, "--model", "nonsense:foo"],
        "unknown model provider 'nonsense'",
    ),
    "unreachable postgres": (
        RUN + ["--checkpoint", "postgresql://nobody:hunter2@127.0.0.1:1/db"],
        "cannot use Postgres checkpointer postgresql://nobody:***@127.0.0.1:1/db",
    ),
    "corrupt sqlite": (
        RUN + ["--checkpoint", "sqlite:corrupt.sqlite"],
        "cannot use corrupt.sqlite as a SQLite checkpoint database",
    ),
    "path cannot be created": (RUN + ["--checkpoint", "sqlite:afile/sub/x.sqlite"], "afile is not a directory"),
    "results is a directory": (EVAL + ["--results", "adir"], "--results adir is a directory"),
    "results under a file": (EVAL + ["--results", "afile/r.jsonl"], "afile is not a directory"),
    "INTROSPECT_HOME is a file": (RUN, "(INTROSPECT_HOME=afile)"),
    "zero concurrency": (EVAL + ["--concurrency", "0"], "expected a whole number >= 1, got 0"),
    "training batch of zero": (
        ["train", "autoplan", "--env", "hotpotqa", "--split", "dev[:2]", "--batch", "0", *MODEL],
        "batch_size=0 is not allowed",
    ),
    "fork without thread": (RUN + ["--fork"], "--fork and --force name an existing thread"),
}


def run_main(capsys, args: list[str]) -> tuple[int, str, str]:
    try:
        code = main(args)
    except SystemExit as exit_info:  # argparse's own usage errors
        code = int(exit_info.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("name", CASES)
def test_bad_input_is_one_line_exit_2_and_writes_nothing(capsys, monkeypatch, workdir, name):
    args, message = CASES[name]
    if name == "INTROSPECT_HOME is a file":
        monkeypatch.setenv("INTROSPECT_HOME", "afile")
    before = tree(workdir)
    code, out, err = run_main(capsys, args)
    assert code == 2, (out, err)
    assert message in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert out == ""  # no step ran, not even the run's header
    assert tree(workdir) == before


@pytest.mark.parametrize("name", ["set not an integer", "unknown provider", "corrupt sqlite", "unreachable postgres"])
def test_bad_input_as_a_user_meets_it(workdir, name):
    args, message = CASES[name]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    before = tree(workdir)
    done = subprocess.run(
        [sys.executable, "-m", "graphs.app.cli", *args],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and message in done.stderr and "Traceback" not in done.stderr
    assert done.stdout == ""
    assert tree(workdir) == before
