"""Bad input to the ``introspect`` command: one line on stderr and exit 2, before any step
runs and with nothing written (no checkpoint database, no results file, no directory).
Which errors those are is their type's say (``errors.UserError``), for every one of them."""

from __future__ import annotations

import hashlib
import importlib
import os
import pkgutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from envs.webarena.login import LoginFailed
from errors import IntrospectError, UserError
from introspect import cli
from introspect.cli import main
from introspect.gaveup import GaveUp
from nodes.runtime.llm import ModelCallError
from nodes.runtime.parse import ParseError
from prompts import PromptError
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
    os.mkfifo(tmp_path / "afifo")
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
        "laser has no setting 'remedies'; its settings: argument_enums, backtracking, backup, backup_check, customise, "
        "detail_text, history_shown, max_actions, tool_mode; shared: model,",
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
    "results is a FIFO": (EVAL + ["--results", "afifo"], "--results afifo is not a regular file"),
    "results is /dev/full": (EVAL + ["--results", "/dev/full"], "--results /dev/full is not a regular file"),
    "empty slice": (["eval", "laser", "--tasks", "5:2", *MODEL], "--tasks 5:2 selects no task of the split's"),
    "no task named": (["eval", "laser", "--tasks", ",,", *MODEL], "--tasks ',,' names no task"),
    "slice past the end": (
        ["eval", "laser", "--tasks", "0:99999999", *MODEL],
        "--tasks 0:99999999 reaches past the split's",
    ),
    "INTROSPECT_HOME is a file": (RUN, "(INTROSPECT_HOME=afile)"),
    "zero concurrency": (EVAL + ["--concurrency", "0"], "expected a whole number >= 1 or auto, got '0'"),
    "training batch of zero": (
        ["train", "autoplan", "--env", "hotpotqa", "--split", "dev[:2]", "--batch", "0", *MODEL],
        "batch_size=0 is not allowed",
    ),
    "fork without thread": (RUN + ["--fork"], "--fork and --force name an existing thread"),
    "spaCy model not installed": (
        RUN + ["--env-option", "spacy_model=en_core_web_lg"],
        "WebShop's type reward needs the spaCy model 'en_core_web_lg' (package 'en_core_web_lg')",
    ),
    "unknown spaCy model": (
        RUN + ["--env-option", "spacy_model=en_core_web_xx"],
        "unknown spacy_model 'en_core_web_xx'; choose one of: en_core_web_sm, en_core_web_lg",
    ),
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


UNWRITABLE_HOME = "/proc/introspect"  # nobody, not even root, can create a folder in /proc
STUDY = f'name = "s"\nmodel = "scripted:script.jsonl"\n[[runs]]\nmethod = "laser"\nenv = "webshop"\ntasks = "{TASK}"\n'


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (RUN, f"cannot create checkpoint directory {UNWRITABLE_HOME}"),
        (EVAL, f"cannot create checkpoint directory {UNWRITABLE_HOME}"),
        (["study", "run", "study.toml"], f"cannot create the study folder {UNWRITABLE_HOME}/studies/s"),
    ],
    ids=["run", "eval", "study run"],
)
def test_a_home_that_cannot_be_written_is_one_line_exit_2(args, message, capsys, monkeypatch, workdir):
    """INTROSPECT_HOME where no folder can be made: refused before anything runs or is printed
    (eval said how many tasks would run and drew its bar first, three lines in all)."""
    (workdir / "study.toml").write_text(STUDY, encoding="utf-8")
    monkeypatch.setenv("INTROSPECT_HOME", UNWRITABLE_HOME)
    before = tree(workdir)
    code, out, err = run_main(capsys, args)
    assert code == 2, (out, err)
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert out == "" and tree(workdir) == before and not Path(UNWRITABLE_HOME).exists()


@pytest.mark.parametrize("name", ["set not an integer", "unknown provider", "corrupt sqlite", "unreachable postgres"])
def test_bad_input_as_a_user_meets_it(workdir, name):
    args, message = CASES[name]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    before = tree(workdir)
    done = subprocess.run(
        [sys.executable, "-m", "introspect.cli", *args],
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


def project_exceptions() -> list[type[BaseException]]:
    """Every exception class the project's packages define (each of their modules imported)."""
    found: dict[str, type[BaseException]] = {}
    for package in ("errors", "prompts", "envs", "nodes", "graphs", "introspect"):
        root = importlib.import_module(package)
        for module in pkgutil.walk_packages(root.__path__, f"{package}."):
            if not module.name.startswith("envs.data") and ".static" not in module.name:
                importlib.import_module(module.name)
    for package in ("errors", "prompts", "envs", "nodes", "graphs", "introspect"):
        for name, module in list(sys.modules.items()):
            if name == package or name.startswith(f"{package}."):
                for value in vars(module).values():
                    if isinstance(value, type) and issubclass(value, BaseException) and value.__module__ == name:
                        found[f"{value.__module__}.{value.__qualname__}"] = value
    return [found[key] for key in sorted(found)]


EXCEPTIONS = project_exceptions()
USER_ERRORS = [cls for cls in EXCEPTIONS if issubclass(cls, UserError)]


def test_every_exception_of_the_project_is_an_introspect_error():
    """One base, so the command tells user errors from bugs by type, not by a list it keeps."""
    strays = [f"{cls.__module__}.{cls.__qualname__}" for cls in EXCEPTIONS if not issubclass(cls, IntrospectError)]
    assert not strays
    named = {cls.__name__ for cls in USER_ERRORS}
    assert {"UsageError", "ContextError", "UnknownMethodError", "EnvError", "UnknownTaskError", "ThreadError"} <= named
    assert {"CheckpointConfigError", "ModelConfigError", "ScriptError", "ReportInputError", "ServerError"} <= named


def raising(monkeypatch, error: BaseException) -> None:
    """``introspect graphs`` raises ``error`` (the commands are registered from COMMANDS when the parser is built)."""

    def handler(args):
        raise error

    commands = tuple(replace(c, run=handler) if c.name == "graphs" else c for c in cli.COMMANDS)
    monkeypatch.setattr(cli, "COMMANDS", commands)


@pytest.mark.parametrize("cls", USER_ERRORS, ids=lambda cls: f"{cls.__module__}.{cls.__name__}")
def test_every_user_error_is_one_line_and_exit_2(capsys, monkeypatch, cls):
    raising(monkeypatch, cls(f"what was wrong with the {cls.__name__} input"))
    code, out, err = run_main(capsys, ["graphs"])
    assert code == 2
    assert err == f"introspect: what was wrong with the {cls.__name__} input\n" and out == ""


@pytest.mark.parametrize(
    "error",
    [ModelCallError("model call failed after 5 attempts: RateLimitError"), GaveUp("gave up"), LoginFailed("no")],
    ids=lambda error: type(error).__name__,
)
def test_a_model_or_site_that_failed_is_one_line_and_exit_1(capsys, monkeypatch, error):
    raising(monkeypatch, error)
    code, out, err = run_main(capsys, ["graphs"])
    assert code == 1 and err == f"introspect: {error}\n" and out == ""


@pytest.mark.parametrize(
    "error",
    [PromptError("no prompt named 'laser/nope'"), ParseError("no JSON object found"), ValueError("a bug")],
    ids=lambda error: type(error).__name__,
)
def test_an_error_that_means_a_bug_is_not_a_user_error(capsys, monkeypatch, error):
    """A bug keeps its traceback (the command re-raises it) and is never exit 2."""
    raising(monkeypatch, error)
    with pytest.raises(type(error)) as raised:
        main(["graphs"])
    assert raised.value is error
    assert capsys.readouterr().err == ""
