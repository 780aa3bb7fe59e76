"""The command on a real model: the embedded one (``--model local``, the default of ``run``
without a key) and llama-cpp-python's own OpenAI-compatible server reached through
OPENAI_BASE_URL, the path a user with their own llama.cpp, vLLM or Ollama takes. Each method
runs one short task on it to its own stop reason, never a traceback or an error row; a server
killed mid-evaluation leaves an error row that says so, and the same command continues it."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from nodes.runtime import local
from tests.support.cli import ROOT, child_env, command_line, output, spawn
from tests.test_study_papers import BROWSER, SMALL, assert_the_paper_beside, small_study

# a real model on two shared cores: a call takes seconds, a task minutes when the machine is busy
pytestmark = [pytest.mark.slow, pytest.mark.local, pytest.mark.timeout(1200)]

ALFWORLD_GAME = (
    "json_2.1.1/valid_unseen/pick_heat_then_place_in_recep-Apple-None-GarbageCan-10/trial_T20190908_145050_918567"
)
# one short task of each method on its paper's benchmark (Devil's Advocate's: the local shop
# WebArena tasks run on, since WebArena's own sites are not here), at small limits
SHORT_TASKS = {
    "laser": ["--env", "webshop", "--task", "12", "--set", "max_actions=1"],
    "structured_reflection": ["--env", "miniwob", "--task", "click-button/1", "--set", "max_trials=1"],
    "devils_advocate": [
        *("--env", "webarena", "--task", "shop-0"),
        *("--set", "max_episodes=1", "--set", "max_actions=1"),
    ],
    "autoplan": ["--env", "alfworld", "--task", ALFWORLD_GAME, "--set", 'max_actions={"alfworld": 3}'],
}

# replies of at most 64 tokens: this model often writes to the limit (512 by default), and
# generating is what a call on two shared cores spends its time on; a cut reply is one a method
# must handle anyway
SHORT_REPLIES = ("--set", "max_tokens=64")


def without_openai(**extra: str) -> dict[str, str]:
    """The tests' environment with no OpenAI key or server and one llama.cpp thread (on cores
    the other tests share, a second thread mostly waits for the first), then ``extra``."""
    env = child_env()
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        env.pop(name, None)
    return {**env, "INTROSPECT_LOCAL_THREADS": "1", **extra}


def run_command(args: list[str], *, cwd: Path, env: dict[str, str], timeout: float = 600) -> tuple[int, str, str]:
    done = subprocess.run(
        [sys.executable, "-m", "introspect.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return done.returncode, done.stdout, done.stderr


def test_the_main_job_runs_on_the_embedded_model_without_a_key(tmp_path: Path):
    """README's main job on a fresh machine: no key, no server, no --model."""
    status, out, err = run_command(["run", "laser", "--task", "12"], cwd=tmp_path, env=without_openai())
    assert status == 0, err
    assert "model: local, the embedded SmolLM2-135M-Instruct" in err and "solves little" in err
    finished = [line for line in out.splitlines() if line.startswith("finished:")]
    assert finished and "model_calls=" in finished[0] and "cost=unpriced" in finished[0]
    assert "Traceback" not in out + err


@pytest.mark.parametrize("command", ["eval", "study"])
def test_commands_of_many_tasks_ask_for_a_named_model(tmp_path: Path, command: str):
    if command == "eval":
        args = ["eval", "laser", "--tasks", "12", "--results", str(tmp_path / "r.jsonl")]
    else:
        (tmp_path / "s.toml").write_text('name = "s"\n[[runs]]\nmethod = "laser"\ntasks = "12"\n')
        args = ["study", "run", str(tmp_path / "s.toml")]
    before = sorted(tmp_path.rglob("*"))
    status, out, err = run_command(args, cwd=tmp_path, env=without_openai(INTROSPECT_HOME=str(tmp_path / "home")))
    assert status == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "local" in err and "no model named" in err
    assert sorted(tmp_path.rglob("*")) == before


@pytest.mark.parametrize("content", [None, b"GGUF" + bytes(range(256)) * 16])
def test_a_missing_or_corrupt_gguf_file_is_one_line_and_exit_2(tmp_path: Path, content: bytes | None):
    path = tmp_path / "model.gguf"
    if content is not None:
        path.write_bytes(content)
    results = tmp_path / "r.jsonl"
    args = ["eval", "laser", "--tasks", "12", "--model", f"gguf:{path}", "--results", str(results)]
    status, out, err = run_command(args, cwd=tmp_path, env=without_openai(INTROSPECT_HOME=str(tmp_path / "home")))
    assert status == 2, err
    assert len(err.strip().splitlines()) == 1 and str(path) in err
    assert not results.exists() and not (tmp_path / "home").exists()


@pytest.mark.xdist_group("local-killed")  # on another worker than the main job's, at the same time
def test_a_killed_model_server_leaves_an_error_row_that_the_same_command_continues(tmp_path: Path):
    results = tmp_path / "r.jsonl"
    args = ["eval", "laser", "--model", "local", "--tasks", "12", "--set", "max_actions=1", *SHORT_REPLIES]
    args += ["--results", str(results)]
    env = without_openai(INTROSPECT_HOME=str(tmp_path / "home"))
    first = spawn(args, cwd=tmp_path, env=env, logs=tmp_path, name="first")
    try:
        server = _serving_child(first.pid)
        os.kill(server, signal.SIGKILL)
        assert first.wait(timeout=300) == 1  # a task errored
    finally:
        if first.poll() is None:
            first.kill()
    [row] = [json.loads(line) for line in results.read_text().splitlines()]
    assert f"the local model server (pid {server}) exited" in row["error"]
    assert "Traceback" not in output(tmp_path, "first")[1]
    status, _, err = run_command(args, cwd=tmp_path, env=env)
    assert status == 0, err
    last = json.loads(results.read_text().splitlines()[-1])
    assert last["task_id"] == "12" and not last["error"] and last["stop_reason"]
    assert last["thread_id"] == row["thread_id"]  # continued, not started over


def _serving_child(parent: int, timeout: float = 300) -> int:
    """The pid of the llama.cpp server that ``parent`` started (from any of its threads), once it
    has answered and ``parent`` has had two seconds to see that and send its first call (which
    takes many seconds on this model): killed then, it fails a call, not the server's start,
    which is another error (the model could not be served, exit 2)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for pid in _children(parent):
            if "nodes.runtime.llama_server" in command_line(pid) and _answers(pid):
                time.sleep(2)
                return pid
        time.sleep(0.1)
    raise TimeoutError(f"process {parent} started no answering llama.cpp server in {timeout} s")


def _answers(pid: int) -> bool:
    """Whether the server ``pid`` answers on a port it listens on."""
    for port in _listening_ports(pid):
        with contextlib.suppress(OSError):
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2):
                return True
    return False


def _children(parent: int) -> list[int]:
    """The processes whose parent is ``parent`` (read from /proc: a thread's children count)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            if ppid == parent:
                found.append(int(entry.name))
    return found


def _listening_ports(pid: int) -> list[int]:
    """The TCP ports ``pid`` listens on: its sockets' inodes matched in /proc/net/tcp (none once
    it has ended)."""
    inodes = set()
    with contextlib.suppress(OSError):
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            with contextlib.suppress(OSError):
                target = os.readlink(fd)
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
    ports = []
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[3] == "0A" and fields[9] in inodes:  # 0A: listening
            ports.append(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


@pytest.fixture(scope="module")
def llama_cpp_server() -> Iterator[str]:
    """llama-cpp-python's own server (``python -m llama_cpp.server``) on a free port, serving the
    embedded GGUF file as the model ``smollm2``; yields its OpenAI base URL."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [
        *(sys.executable, "-m", "llama_cpp.server", "--model", str(local.gguf_file("local"))),
        *("--model_alias", "smollm2", "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "8192"),
        *("--n_threads", "1", "--n_threads_batch", "1"),  # as without_openai's embedded model
    ]
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=1):
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("llama_cpp.server did not start") from None
                time.sleep(0.2)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)


@pytest.mark.browser
@pytest.mark.xdist_group("local-methods")  # the four share their server
@pytest.mark.parametrize("method", sorted(SHORT_TASKS))
def test_each_method_runs_a_short_task_on_a_real_llama_cpp_server(method: str, llama_cpp_server: str, tmp_path: Path):
    env = without_openai(OPENAI_BASE_URL=llama_cpp_server, INTROSPECT_HOME=str(tmp_path / "home"))
    status, out, err = run_command(
        ["run", method, *SHORT_TASKS[method], *SHORT_REPLIES, "--model", "openai:smollm2"],
        cwd=ROOT,
        env=env,
        timeout=900,
    )
    assert status == 0, err[-2000:]
    finished = [line for line in out.splitlines() if line.startswith("finished:")]
    assert finished and "model_calls=" in finished[0], out[-2000:]
    assert "Traceback" not in out + err


# one of the five paper studies in every run (the shortest); the other four are long (pytest
# --long): one paper study on this model is minutes of two shared cores, and the main job
# already runs LASER on WebShop on it
PAPERS_IN_CI = ("autoplan-hotpotqa",)


@pytest.mark.xdist_group("local-papers")  # beside the file's other tests, not after them on one worker
@pytest.mark.parametrize(
    "paper",
    [
        pytest.param(
            paper,
            marks=[
                *([] if paper in PAPERS_IN_CI else [pytest.mark.long]),
                *([pytest.mark.browser] * (paper in BROWSER)),
            ],
        )
        for paper in SMALL
    ],
)
def test_each_paper_study_runs_on_the_embedded_model_and_its_report_sets_the_paper_beside(
    paper: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """A paper study (studies/papers/) made small, one task per run at the smallest limits and
    short replies, on ``model = "local"``: the study ends (exit 0, no traceback) and its report
    prints the paper's published numbers beside the reproduced ones."""
    env = without_openai(INTROSPECT_HOME=str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)  # the plan paths are relative, for the command and for reading the study back
    spec = small_study(paper, "local", tmp_path, settings="max_tokens = 64, ")
    folder = tmp_path / paper
    status, out, err = run_command(
        ["study", "run", str(spec), "--out", str(folder)], cwd=tmp_path, env=env, timeout=1100
    )
    assert status == 0, f"{paper}: {err[-2000:]}"
    assert "Traceback" not in out + err
    assert_the_paper_beside(spec, folder / "report")
